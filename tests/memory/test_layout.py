"""The shape of the code: what imports what (issue 12). komorebi/ reaches the machine only
through its seam; only one module of the machine imports Unicorn; the machine's modules
import each other without a circle."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

SIM = ROOT / "sim"


def _imports(path: Path, package: str) -> set[str]:
    """The modules PATH (of PACKAGE) imports at run time (not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text())
    skip = set()
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
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def _sim_modules() -> dict[str, Path]:
    out = {}
    for path in SIM.rglob("*.py"):
        parts = path.relative_to(SIM).with_suffix("").parts
        name = ".".join(("komorebi", "sim", *parts))
        out[name.removesuffix(".__init__")] = path
    return out


def test_komorebi_reaches_the_machine_only_through_its_seam():
    for path in (ROOT / "komorebi").glob("*.py"):
        reached = {m for m in _imports(path, "komorebi") if m.startswith("komorebi.sim")}
        if path.name == "_simulator.py":
            assert reached, "the seam imports the machine"
        else:
            assert reached == set(), f"{path.name} imports {sorted(reached)}"


def test_only_the_engine_module_imports_unicorn():
    users = sorted(
        name for name, path in _sim_modules().items()
        if any(m == "unicorn" or m.startswith("unicorn.") for m in _imports(path, name.rsplit(".", 1)[0] if path.name != "__init__.py" else name))
    )
    assert users == ["komorebi.sim.hart.engine"]


def test_the_machines_modules_import_each_other_without_a_circle():
    modules = _sim_modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        graph[name] = {m for m in _imports(path, package) if m in modules and m != name and m != package}
    seen, stack, circles = set(), [], []

    def visit(node):
        if node in stack:
            circles.append(stack[stack.index(node):] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        stack.append(node)
        for other in sorted(graph[node]):
            visit(other)
        stack.pop()

    for name in sorted(graph):
        visit(name)
    assert circles == []
