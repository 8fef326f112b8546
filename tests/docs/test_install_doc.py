"""docs/install.md (and README.md where it says the same) is true of this checkout: the
dependencies it names are pyproject.toml's, the suite's sizes it gives are near what
pytest collects, README.md and install.md give the suite the same times, and the first
build of the native hooks is what the page says it is."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

try:
    import tomllib
except ImportError:  # (Python 3.10)
    tomllib = pytest.importorskip("tomli")

PAGE = (ROOT / "docs" / "install.md").read_text()
README = (ROOT / "README.md").read_text()
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# How far the page's "about N tests" may be from the collected count: the suite grows
# (960 tests, then 1054, then 1149 within days), and a page that says "about 1,150" is
# true until the suite is a tenth bigger or smaller; then this fails, saying the count.
TOLERANCE = 0.10


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]+", requirement)[0].lower()


def _named(sentence: str) -> set[str]:
    """The package names in SENTENCE, a list 'a, b 2.1.x, c and d (what it is)'."""
    sentence = re.sub(r"\([^)]*\)", "", sentence)
    return {part.split()[0].lower() for part in re.split(r",\s*|\s+and\s+", sentence) if part.strip()}


def _sentence_after(text: str, start: str) -> str:
    rest = text[text.index(start) + len(start):]
    return re.split(r"(?<=[a-z)])\.[\s]", rest, maxsplit=1)[0]


def test_the_dependencies_the_page_names_are_pyprojects():
    wanted = {_name(r) for r in PROJECT["dependencies"]}
    assert _named(_sentence_after(PAGE, "Nothing else: ").split(" come from PyPI")[0]) == wanted
    assert _named(_sentence_after(PAGE, "This brings ")) == wanted


def test_the_extras_table_is_pyprojects():
    extras = {name: {_name(r) for r in requirements} for name, requirements in PROJECT["optional-dependencies"].items()}
    rows = dict(re.findall(r"^\| `\[(\w+)\]` \| ([^|]+) \|", PAGE, re.M))
    assert set(rows) == set(extras)
    for name, brings in rows.items():
        if name == "dev":
            others = set().union(*(extras[e] for e in extras if e != "dev"))
            assert brings.startswith("all of the above"), brings
            assert others | _named(brings.removeprefix("all of the above").removeprefix(", and")) == extras["dev"]
        else:
            assert _named(brings) == extras[name], name


def _collected() -> tuple[int, int]:
    """(the default suite's tests, the slow ones), as pytest collects them here."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-m", "slow"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    found = re.search(r"^(\d+)/\d+ tests collected \((\d+) deselected\)", done.stdout, re.M)
    assert found, done.stdout[-3000:] + done.stderr[-3000:]
    return int(found[2]), int(found[1])


def _about(text: str, after: str, unit: str) -> int:
    """The N of the first 'about N UNIT' after AFTER in TEXT."""
    rest = text[text.index(after):]
    return int(re.search(rf"about ([\d,]+) {unit}", rest)[1].replace(",", ""))


def test_the_suites_sizes_on_the_page_are_near_what_pytest_collects():
    default, slow = _collected()
    said = _about(PAGE, "runs the default suite", "tests"), _about(PAGE, "python -m pytest -q -m slow\n```", "tests")
    for name, page, real in (("default", said[0], default), ("slow", said[1], slow)):
        assert abs(page - real) <= TOLERANCE * real, (
            f"docs/install.md says the {name} suite has about {page} tests; pytest collects {real}: "
            f"say about {real} (and measure its time again)")


def test_readme_and_the_page_give_the_suites_the_same_times():
    page = _about(PAGE, "runs the default suite", "minutes"), _about(PAGE, "python -m pytest -q -m slow\n```", "minutes")
    readme = _about(README, "second line runs the suite", "minutes"), _about(README, "-m slow` adds the slow tests",
                                                                               "minutes")
    assert readme == page


def test_the_hooks_first_build_is_what_the_page_says():
    from komorebi.sim.native import hooks

    line = f"komorebi-sim: building {hooks.HOOKS_ANNOUNCE}..."
    assert f"```text\n{line}\nkomorebi-sim: built the simulator's hooks (" in PAGE
    files = len(hooks.SOURCES)
    assert f"its {files} C files" in PAGE and f"a compile of {files} C files" in README
