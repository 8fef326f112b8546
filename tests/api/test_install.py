"""What an install puts in site-packages: komorebi's own names only, so that a user's
`sim.py` or `kmx_runtime.py` beside their program changes nothing. (The wheel itself is
built, installed in a fresh venv and run by .ci/run.)"""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests.conftest import ROOT

LESSON = ROOT / "tutorial" / "35_sharing_memory"
EXPECTED = (
    "the thread went through 1024 numbers\n"
    "first five tripled: [0, 3, 6, 9, 12]\n"
    "last five tripled: [3057, 3060, 3063, 3066, 3069]\n"
)


def test_lesson_35_runs_beside_a_users_own_sim_and_kmx_runtime(tmp_path):
    folder = tmp_path / "lesson"
    shutil.copytree(LESSON, folder)
    (folder / "sim.py").write_text('raise ImportError("the user\'s own sim.py was imported")\n')
    (folder / "kmx_runtime.py").write_text('raise ImportError("the user\'s own kmx_runtime.py was imported")\n')
    done = subprocess.run([sys.executable, "program.py"], cwd=folder, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED


def test_komorebi_imports_no_top_level_name_but_its_own(tmp_path):
    script = (
        "import sys, komorebi\n"
        "from komorebi._session import Session\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sim', 'kmx_runtime')))\n"
        "print(komorebi.sim.__name__, komorebi.kmx_runtime.__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[]", "komorebi.sim komorebi.kmx_runtime"]


def test_the_package_is_typed():
    assert (ROOT / "komorebi" / "py.typed").exists()


def test_the_wheel_lists_every_package_of_the_machine():
    """pyproject.toml names each package of sim/ (a folder with an __init__.py): one it
    left out would be missing from the wheel."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"komorebi.sim" + ("." + ".".join(p.parent.relative_to(ROOT / "sim").parts) if p.parent != ROOT / "sim" else "")
             for p in (ROOT / "sim").rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)


def test_import_costs_what_it_uses(tmp_path, kernels):
    """`import komorebi` imports no part of the simulator, and a Program (with an array
    region) and a Schedule need no engine: the machine comes with the first Session."""
    script = (
        "import sys, numpy as np, komorebi as km\n"
        "print(sorted(m for m in sys.modules if m.startswith('komorebi.sim') or m.split('.')[0] in ('unicorn', 'numpy'))[:1])\n"
        f"p = km.Program('p', kernels={str(kernels)!r})\n"
        f"p.thread(cluster=0, sources=[{str(LESSON / 'thread' / 'triple.c')!r}], regions={{'a': np.arange(8)}})\n"
        "km.Schedule.random(3)\n"
        "print([m for m in sys.modules if m.split('.')[0] == 'unicorn' or m in ('komorebi.sim.machine.card', 'komorebi.sim.hart.engine')])\n"
    )
    bare = "import sys, komorebi\nprint(sorted(m for m in sys.modules if m.startswith('komorebi.') or m.split('.')[0] in ('numpy', 'unicorn')))\n"
    done = subprocess.run([sys.executable, "-c", bare], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['komorebi._errors']"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == "[]"
