"""docs/your-project.md, made: the project its blocks show (pyproject.toml, the thread,
program.py, the tests), installed as the page says into an environment of its own, and
its tests run with plain `pytest`, with the plugin's strict options too; and the page's CI
steps as written, in a fresh environment that has only what the page gives it (komorebi-sim
from the wheel the page builds, the rest from the package index)."""

from __future__ import annotations

import os
import re
import subprocess
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.conftest import ROOT

PAGE = (ROOT / "docs" / "your-project.md").read_text()


def _block_after(phrase: str, language: str) -> str:
    rest = PAGE[PAGE.index(phrase):]
    found = re.search(rf"```{language}\n(.*?)```", rest, re.S)
    return found[1]


def _make_project(tmp_path) -> Path:
    """The project the page's blocks show, in tmp_path/my-project (no wheels/ yet)."""
    project = tmp_path / "my-project"
    (project / "threads").mkdir(parents=True)
    (project / "my_project").mkdir()
    (project / "tests").mkdir()
    (project / "kernels").mkdir()
    (project / "pyproject.toml").write_text(_block_after("`pyproject.toml` makes", "toml"))
    (project / "threads" / "scale.c").write_text(_block_after("The thread, `threads/scale.c`", "c"))
    (project / "threads" / "scale.h").write_text(_block_after("and `threads/scale.h`", "c"))
    (project / "my_project" / "__init__.py").write_text("")
    (project / "my_project" / "program.py").write_text(_block_after("`program.py` builds the program once", "python"))
    (project / "tests" / "test_scale.py").write_text(_block_after("## Tests, with the plugin", "python"))
    return project


INSTALL = 'pip install --find-links wheels -e ".[test]"'


@pytest.mark.slow
def test_the_project_on_the_page_installs_and_its_tests_pass(tmp_path):
    project = _make_project(tmp_path)
    install = _block_after("Install the project into the environment that runs the tests", "sh").strip()
    assert install == INSTALL
    # An environment of the project's own, which sees this one's packages (komorebi-sim
    # and its dependencies: nothing is downloaded), as if they had been installed there.
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(purelib, "parent.pth"), "w") as f:  # (its .pth files too: an editable install's)
        f.write(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # (-P: as the `pytest` command, which does not put the working folder on sys.path)
    before = subprocess.run([str(python), "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project,
                            capture_output=True, text=True, env=env)
    assert before.returncode != 0 and "No module named 'my_project'" in before.stdout + before.stderr
    # (the page's step, but for the dependencies, which this environment has: pip builds the
    # project with the setuptools its pyproject.toml asks for, from PyPI as for a user)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "-e", ".[test]"], cwd=project,
                   check=True, env=env)
    for options in ([], ["--km-strict", "--km-findings=error", "--km-seeds=2"]):
        done = subprocess.run([str(python), "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", *options], cwd=project,
                              capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"\b4 passed\b", done.stdout), done.stdout


@pytest.mark.slow
def test_the_pages_ci_steps_as_written_in_a_fresh_environment(tmp_path):
    """What a fresh CI machine does with the page: the wheel built with the page's command
    (komorebi-sim's clone is this checkout), then each `run:` step of the page's workflow,
    as written, in the project's folder, with a fresh virtual environment's python and pip
    first on PATH (as setup-python gives them) and nothing else installed in it."""
    project = _make_project(tmp_path)
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{environment / 'bin'}{os.pathsep}{env.get('PATH', '')}"

    def sh(command: str) -> subprocess.CompletedProcess:
        done = subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True, env=env,
                              timeout=1200)
        assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
        return done

    bare = subprocess.run([str(environment / "bin" / "python"), "-c", "import komorebi"], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    assert bare.returncode != 0  # (the fresh environment has no komorebi-sim of its own)
    wheel = _block_after("build its wheel from a clone of komorebi-sim", "sh").strip()
    assert wheel == "pip wheel --no-deps /path/to/komorebi-sim -w wheels/"
    sh(wheel.replace("/path/to/komorebi-sim", str(ROOT)))
    assert [p.name for p in (project / "wheels").iterdir()] == ["komorebi_sim-0.1.0-py3-none-any.whl"]
    steps = re.findall(r"^\s*- run: (.*)$", _block_after("## CI", "yaml"), re.M)
    assert steps[0] == INSTALL and steps[1].startswith("pytest "), steps
    done = [sh(step) for step in steps][-1]
    assert re.search(r"\b16 passed\b", done.stdout), done.stdout  # (two tests, eight seeds each)
    installed = subprocess.run([str(environment / "bin" / "python"), "-c", "import komorebi; print(komorebi.__file__)"],
                               capture_output=True, text=True, env=env, cwd=tmp_path, check=True).stdout
    assert str(environment) in installed and str(ROOT) not in installed, installed
