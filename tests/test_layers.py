"""The shape of the code: what imports what (issues 12 and 30). An import counts wherever
it is written: at the top, inside a function, or under TYPE_CHECKING (a type checker
follows those too). No module reaches itself through its imports; komorebi's API reaches
the machine only through its seam; the seam's data (komorebi._records) imports nothing of
either side; only one module of the machine imports Unicorn; and the machine's layers
point one way, as docs/simulator.md draws them ("The layers")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import ROOT

SIM = ROOT / "sim"


def _module_names() -> dict[str, Path]:
    """Every module of komorebi/, sim/ and kmx_runtime/, by its installed name (sim/ is
    komorebi.sim)."""
    out = {}
    for top, package in ((ROOT / "komorebi", "komorebi"), (SIM, "komorebi.sim"),
                         (ROOT / "kmx_runtime", "komorebi.kmx_runtime")):
        for path in top.rglob("*.py"):
            parts = path.relative_to(top).with_suffix("").parts
            name = ".".join((package, *parts))
            out[name.removesuffix(".__init__")] = path
    return out


MODULES = _module_names()


def _imports(name: str, type_checking: bool = True) -> set[str]:
    """The modules NAME imports (TYPE_CHECKING: with those under TYPE_CHECKING), by name:
    `from .x import y` imports .x.y when that is a module of ours, else .x."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    skip = set()
    if not type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(id(n) for n in ast.walk(node))
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            module = f"komorebi.{module}" if module == "sim" or module.startswith("sim.") else module
            for alias in node.names:
                found.add(f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module)
    found = {f"komorebi.{m}" if m == "sim" or m.startswith("sim.") else m for m in found}
    return {m for m in found if m != name and m != package}


def _ours(name: str) -> set[str]:
    """The modules of komorebi/ and sim/ that NAME imports, TYPE_CHECKING included."""
    return {m for m in _imports(name) if m in MODULES}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each set of modules that reach each other (Tarjan's strongly connected components),
    as one circle through them: [a, b, ..., a]."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            if len(component) > 1 or node in graph[node]:
                out.append(_circle_through(graph, set(component)))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def _circle_through(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, inside it."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for other in sorted(graph[node] & component):
                if other == start:
                    return paths[node] + [start]
                if other not in paths:
                    paths[other] = paths[node] + [other]
                    following.append(other)
        frontier = following
    return [start, start]


def test_the_circle_finder_finds_a_circle_and_names_it():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert _circles(graph) == [["a", "b", "c", "a"], ["e", "e"]]


def test_no_module_reaches_itself_through_its_imports():
    graph = {name: _ours(name) for name in MODULES}
    circles = [" -> ".join(c.removeprefix("komorebi.") for c in circle) for circle in _circles(graph)]
    assert circles == [], "import circles (TYPE_CHECKING imports included):\n" + "\n".join(circles)


def test_komorebi_reaches_the_machine_only_through_its_seam():
    for name in MODULES:
        if name.startswith("komorebi.sim"):
            continue
        reached = {m for m in _imports(name) if m.startswith("komorebi.sim")}
        if name == "komorebi._simulator":
            assert reached, "the seam imports the machine"
        else:
            assert reached == set(), f"{name} imports {sorted(reached)}"


def test_the_seams_data_imports_nothing_of_either_side():
    """komorebi._records: the standard library, and numpy only for the annotations."""
    assert {m for m in _imports("komorebi._records") if m.split(".")[0] in ("komorebi", "sim")} == set()
    assert {m.split(".")[0] for m in _imports("komorebi._records", type_checking=False)} <= {
        "__future__", "dataclasses", "enum", "pathlib", "typing"}


def test_the_machine_imports_of_komorebi_only_the_seams_data_and_the_runtime():
    allowed = {"komorebi", "komorebi._records", "komorebi.kmx_runtime"}
    for name in MODULES:
        if name.startswith("komorebi.sim"):
            api = {m for m in _imports(name) if m.startswith("komorebi") and not m.startswith("komorebi.sim")}
            assert api <= allowed, f"{name} imports {sorted(api - allowed)}"


def test_only_the_engine_module_imports_unicorn():
    users = sorted(name for name in MODULES
                   if any(m == "unicorn" or m.startswith("unicorn.") for m in _imports(name, type_checking=False)))
    assert users == ["komorebi.sim.hart.engine"]


def _layers_in_the_docs() -> list[dict[str, str]]:
    """The layers as docs/simulator.md's table draws them ("The layers"), bottom first:
    each level's groups, each the name of the module or package its part names first
    (`hart/` is komorebi.sim.hart, `komorebi/_records.py` komorebi._records)."""
    text = (ROOT / "docs" / "simulator.md").read_text()
    section = text.split("\n### The layers\n", 1)[1].split("\n#", 1)[0]
    levels = []
    for number, parts in re.findall(r"^\| (\d+) \| (.+) \|$", section, re.M):
        assert int(number) == len(levels), f"the table's levels go 0, 1, 2...: {number}"
        groups = {}
        for part in parts.split(";"):
            path = re.search(r"`([^`]+)`", part).group(1).rstrip("/").removesuffix(".py")
            if path.startswith("komorebi/"):
                name = path.replace("/", ".")
            elif path == "kmx_runtime":
                name = "komorebi.kmx_runtime"
            else:
                name = "komorebi.sim." + path.replace("/", ".")
            assert name in MODULES, f"docs/simulator.md's layers name {path}, which is no module or package"
            groups[path] = name
        levels.append(groups)
    return levels


# A module imports modules of its own group, and of the levels below its own: never of a
# level above, nor of another group of its level. A module belongs to the group that names
# the longest part of its name.
LAYERS = _layers_in_the_docs()


def _place(name: str) -> tuple[int, str] | None:
    """NAME's level and group (None: in no layer)."""
    best = None
    for level, groups in enumerate(LAYERS):
        for group, prefix in groups.items():
            if (name == prefix or name.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), level, group)
    return None if best is None else best[1:]


def test_every_module_of_the_machine_has_its_layer():
    assert len(LAYERS) > 5
    assert [name for name in MODULES if name.startswith("komorebi.sim.") and _place(name) is None] == []


def test_the_machines_layers_point_one_way():
    wrong = []
    for name in sorted(MODULES):
        place = _place(name)
        if place is None:
            continue
        for other in sorted(_ours(name)):
            there = _place(other)
            if there is None or there[0] > place[0] or (there[0] == place[0] and there[1] != place[1]):
                wrong.append(f"{name} ({place[1]}) imports {other} ({there[1] if there else 'no layer'})")
    assert wrong == [], "\n".join(wrong)


def _reaches(low: str, high: str) -> list[str]:
    """The modules of LOW (a package or module of the machine) that import one of HIGH."""
    return sorted(f"{name} -> {m}" for name in MODULES if name == low or name.startswith(low + ".")
                  for m in _ours(name) if m == high or m.startswith(high + "."))


def test_memory_does_not_import_the_cache_and_kmx_does_not_import_its_observers():
    """(The layers say so too; these two the review named, issue 30.)"""
    assert _reaches("komorebi.sim.memory", "komorebi.sim.cache") == []
    assert _reaches("komorebi.sim.kmx", "komorebi.sim.observe") == []


def test_the_machine_reads_no_environment():
    """The machine is told its options (sim.machine.config, made by komorebi._simulator);
    only the build (sim/build/) and the engine's binding, pointed at our build of
    Unicorn (sim/hart/engine.py), touch the environment."""
    readers = []
    for name, path in MODULES.items():
        if not name.startswith("komorebi.sim.") or name.startswith("komorebi.sim.build") or name == "komorebi.sim.hart.engine":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            named = (node.attr,) if isinstance(node, ast.Attribute) else (
                tuple(a.name for a in node.names) if isinstance(node, ast.ImportFrom) and node.module == "os" else ())
            if set(named) & {"environ", "environb", "getenv"}:
                readers.append(f"{name}:{node.lineno}")
    assert readers == []
