"""tutorial/notebooks/: the notebook runs from top to bottom in a real Jupyter kernel
(nbclient and ipykernel), and each mistake's cell shows its cache map; docs/install.md's
headless command, run as the page has it, writes the executed notebook."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = ROOT / "tutorial" / "notebooks" / "coherence_mistakes.ipynb"


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def _svgs(cell) -> list[str]:
    return [o["data"]["image/svg+xml"] for o in cell.get("outputs", [])
            if o.get("output_type") in ("execute_result", "display_data") and "image/svg+xml" in o.get("data", {})]


def _check(notebook) -> None:
    """NOTEBOOK, executed, shows each mistake's findings and picture, and no error."""
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    errors = [o for cell in code for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    texts = [_text(cell) for cell in code]
    assert "read-before-invalidate at line" in texts[1]
    assert "unflushed-write at line" in texts[3]
    assert "invalidate-dropped-writes at line" in texts[5]
    assert "1024 of 1024 tripled numbers are right; findings: []" in texts[7]
    assert "1024 of 1024" not in texts[1] + texts[3] + texts[5]
    pictures = [_svgs(cell) for cell in code]
    for index in (2, 4, 6, 7):  # each mistake's run, and the right one, drawn as its cache map
        assert len(pictures[index]) == 1 and pictures[index][0].lstrip().startswith("<svg"), index
    assert len({pictures[i][0] for i in (2, 4, 6, 7)}) == 4  # four different pictures


def test_the_notebook_runs_and_shows_each_mistake_with_its_picture():
    """As Jupyter runs it: the kernel in the notebook's folder."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    _check(notebook)


def test_the_headless_command_writes_the_executed_notebook(tmp_path):
    """install.md's command, as written, from "the repository root" (here a folder whose
    tutorial/ is the checkout's, so that what it writes stays out of the checkout), with
    the environment's python: the notebook it names, written with every cell's output."""
    page = (ROOT / "docs" / "install.md").read_text()
    rest = page[page.index("To run it headless"):]
    command = re.search(r"```sh\n(.*?)\n```", rest, re.S)[1].strip()
    written = re.search(r"(\S+\.ipynb)$", command)[1]
    assert written != "tutorial/notebooks/coherence_mistakes.ipynb", command  # (the notebook itself stays as it is)
    (tmp_path / "tutorial").symlink_to(ROOT / "tutorial")
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    notebook = nbformat.read(tmp_path / written, as_version=4)
    _check(notebook)
    said = re.search(r"it prints `([^`]+)`", rest)
    assert said and said[1] in done.stdout, (said, done.stdout)
