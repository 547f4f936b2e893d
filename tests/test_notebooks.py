"""The notebooks run top to bottom (nbclient, kernel ``python3`` = this interpreter), leave no
files behind in the temporary directory, and are committed without outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = ["01_quickstart.ipynb", "02_train_and_evaluate.ipynb"]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_top_to_bottom_and_leaves_no_temporary_files(name, tmp_path, monkeypatch):
    # The kernel's temporary directory is a fresh folder (the kernel inherits TMPDIR): the
    # notebook must leave it as it found it (02 used to leave /tmp/uno_ppo_<random> behind).
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    # jupyter_client starts the "python3" kernel with sys.executable (this venv's python).
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()  # shuts the kernel down at the end
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    assert sorted(p.name for p in scratch.iterdir()) == []


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_committed_without_outputs(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
