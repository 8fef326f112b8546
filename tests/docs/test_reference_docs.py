"""The reference pages cannot drift: docs/api.md has an entry for every public name of
komorebi, docs/c-api.md for every function and macro of kmx.h, and every relative link and
every lesson a page names exists."""

from __future__ import annotations

import dataclasses
import inspect
import re

import pytest

import komorebi as km
from komorebi import pytest_plugin
from tests.conftest import ROOT

DOCS = ROOT / "docs"


def _headings(page: str) -> set[str]:
    """The text of each `##`/`###` heading, and each name in it."""
    found = set()
    for line in page.splitlines():
        if line.startswith("##"):
            text = line.lstrip("#").strip()
            found.add(text)
            found.update(re.findall(r"[A-Za-z_][\w.-]*", text))
    return found


def _public_members(cls: type) -> set[str]:
    """CLS's public attributes and methods: its own, its dataclass fields, and what its
    __init__ sets on self."""
    members = {name for name in vars(cls) if not name.startswith("_")}
    if dataclasses.is_dataclass(cls):
        members |= {f.name for f in dataclasses.fields(cls)}
    try:
        source = inspect.getsource(vars(cls)["__init__"])
    except (KeyError, OSError, TypeError):  # (none of its own, or a dataclass's, made at run time)
        source = ""
    members |= set(re.findall(r"self\.([a-z]\w*)\s*(?::[^=\n]*)?=(?!=)", source))
    return members


def public_names() -> list[str]:
    names = []
    for name in km.__all__:
        names.append(f"km.{name}")
        obj = getattr(km, name)
        if inspect.isclass(obj):
            names += [f"{name}.{member}" for member in sorted(_public_members(obj))]
    return names


def test_every_public_name_of_komorebi_has_an_entry_in_api_md():
    headings = _headings((DOCS / "api.md").read_text())
    missing = [name for name in public_names() if name not in headings]
    assert not missing, f"docs/api.md has no entry (a ## or ### heading) for {missing}"


def test_the_check_sees_what_a_class_gains():
    class Gadget:
        def __init__(self) -> None:
            self.colour = "red"
            self._hidden = 1

        def spin(self) -> None: ...

        @property
        def speed(self) -> int:
            return 3

    assert _public_members(Gadget) == {"colour", "spin", "speed"}


def test_the_plugins_fixtures_and_options_have_entries():
    headings = _headings((DOCS / "api.md").read_text())
    source = inspect.getsource(pytest_plugin)
    options = re.findall(r'addoption\("(--km-[a-z-]+)"', source)
    fixtures = [name for name, value in vars(pytest_plugin).items() if hasattr(value, "_fixture_function_marker")
                or type(value).__name__ == "FixtureFunctionDefinition"]
    assert len(options) == 5 and set(fixtures) == {"km_session", "km_seed"}
    assert not [name for name in options + fixtures if name not in headings]


def kmx_h_names() -> list[str]:
    header = (ROOT / "kmx_runtime" / "kmx.h").read_text()
    functions = re.findall(r"^(?:KMX_API|static inline|void|int)\b[^(;]*?\b(kmx_?\w*)\(", header, re.M)
    macros = re.findall(r"^#define (\w+)", header, re.M)
    return sorted(set(functions) | set(macros))


def test_every_function_and_macro_of_kmx_h_has_an_entry_in_c_api_md():
    names = kmx_h_names()
    assert {"kmx_region", "kmx_print", "kmx_main", "kmx__call", "KMX_CALL_BARRIER", "KMX_API"} <= set(names)
    headings = _headings((DOCS / "c-api.md").read_text())
    missing = [name for name in names if name not in headings]
    assert not missing, f"docs/c-api.md has no entry for {missing}"


PAGES = sorted(DOCS.glob("*.md")) + [ROOT / "README.md", ROOT / "bench" / "README.md"]
LESSONS = {int(path.name[:2]) for path in DOCS.glob("[0-9][0-9]_*.md")}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    text = page.read_text()
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # (a web address)
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path) if path else page
        if not resolved.exists():
            broken.append(target)
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved.read_text()):
            broken.append(target)
    assert not broken, f"{page.name}: links to nothing: {broken}"


def _anchors(text: str) -> set[str]:
    """GitHub's anchors for a page's headings."""
    out = set()
    for line in text.splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_lesson_a_page_names_is_here(page):
    named = {int(n) for n in re.findall(r"\b[Ll]essons? (\d+)\b", page.read_text())}
    named |= {int(n) for pair in re.findall(r"\b[Ll]essons (\d+) ?(?:to|and|-|–) ?(\d+)\b", page.read_text())
              for n in pair}
    assert named <= LESSONS, f"{page.name} names lessons {sorted(named - LESSONS)}, which are not in docs/"
