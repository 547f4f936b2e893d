"""The notebooks run top to bottom (nbclient, kernel ``python3`` = this interpreter) without a
word on stderr, display their replay page, leave no files behind in the temporary directory,
and are committed without outputs."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from uno_mk_env.evaluation.replay_format import ReplayError
from uno_mk_env.evaluation.replay_page import ReplayFrame

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
    # torch's optimiser step lays out its compile cache (torchinductor_<user>) in TMPDIR: the
    # notebook's leftovers are measured apart from torch's own cache (as tests/conftest.py does)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "torchinductor"))
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
    # nothing on stderr: no warning (IPython's "Consider using IPython.display.IFrame" was
    # printed by both notebooks' replay cells, issue 34), no progress noise
    stderr = [o["text"] for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    assert stderr == []
    frames = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if "<iframe srcdoc=" in o.get("data", {}).get("text/html", "")]
    assert len(frames) == 1  # the replay page, displayed
    assert sorted(p.name for p in scratch.iterdir()) == []


def test_the_replay_frame_holds_the_page_and_names_a_bad_height():
    page = '<!DOCTYPE html><p class="x">a & "b"</p>'
    frame = ReplayFrame(page, height=500)._repr_html_()
    source = re.fullmatch(r'<iframe srcdoc="([^"]*)" style="width: 100%; height: 500px; '
                          r'border: 0"></iframe>', frame)
    assert source is not None and html.unescape(source.group(1)) == page
    for bad in (0, -5, 2.5, True, "860"):
        with pytest.raises(ReplayError, match=r"^height must be a positive integer"):
            ReplayFrame(page, height=bad)


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_committed_without_outputs(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
