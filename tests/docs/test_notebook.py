"""tutorial/notebooks/: the notebook runs from top to bottom in a real Jupyter kernel
(nbclient and ipykernel), and each mistake's cell shows its cache map."""

from __future__ import annotations

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


def test_the_notebook_runs_and_shows_each_mistake_with_its_picture():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
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
