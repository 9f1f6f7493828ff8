"""The notebooks of notebooks/: stored without outputs, and each one runs headless from top to
bottom (nbclient; a cell that raises fails the test)."""

import glob
import json
import os

import pytest

from conftest import BUILD, ROOT

NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))


def test_there_are_notebooks():
    names = {os.path.basename(n) for n in NOTEBOOKS}
    assert {"engine.ipynb", "dates.ipynb", "gradient-flow.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_stored_without_outputs(path):
    with open(path, encoding="utf-8") as f:
        notebook = json.load(f)
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"cell {index} of {path} holds outputs"
            assert cell.get("execution_count") is None, f"cell {index} of {path} was run"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_runs_headless(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("SEQGRAD_BUILD", BUILD)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.dirname(path)}})
    client.execute()  # raises CellExecutionError naming the cell when one raises
