"""docs/your-project.md, made: the project its blocks show (pyproject.toml, the thread,
program.py, the tests), installed as the page says into an environment of its own, and
its tests run with plain `pytest`, with the plugin's strict options too."""

from __future__ import annotations

import os
import re
import subprocess
import sysconfig
import venv

import pytest

from tests.conftest import ROOT

PAGE = (ROOT / "docs" / "your-project.md").read_text()


def _block_after(phrase: str, language: str) -> str:
    rest = PAGE[PAGE.index(phrase):]
    found = re.search(rf"```{language}\n(.*?)```", rest, re.S)
    return found[1]


@pytest.mark.slow
def test_the_project_on_the_page_installs_and_its_tests_pass(tmp_path):
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
    install = _block_after("Install it into the environment that runs the tests", "sh").strip()
    assert install == 'pip install -e ".[test]"'
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
