"""The notebooks run top to bottom (nbclient, kernel ``python3`` = this interpreter) and are
committed without outputs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = ["01_quickstart.ipynb", "02_train_and_evaluate.ipynb"]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_top_to_bottom(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    # jupyter_client starts the "python3" kernel with sys.executable (this venv's python).
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    start = time.perf_counter()
    client.execute()
    assert time.perf_counter() - start < 90
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_committed_without_outputs(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
