"""Session-wide test hygiene: no test may leave files in the temporary directory.

The whole session (each xdist worker its own) runs with ``TMPDIR`` (and ``tempfile.tempdir``)
pointing at a fresh folder, which subprocesses, notebook kernels and libraries inherit: whatever
they write through the temporary directory (stable-baselines3's ``SB3-<time>`` logs, a
notebook's ``uno_ppo_*`` folder) lands there. At the end of the session the folder must be
empty but for :data:`ALLOWED` (pytest's own folders and caches cleaned or reused by their
owners); leftovers fail the session, and the folder is deleted either way, so a run leaves
nothing in /tmp. pytest's ``tmp_path`` folders stay where pytest puts them (the base
temporary folder is fixed before ``TMPDIR`` changes).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

#: Entries allowed to remain: pytest's base folders, multiprocessing's ``pymp-*`` folders
#: (removed when their process exits, which may be after the session ends) and torch's
#: compile cache (one per user, reused by every run).
ALLOWED = ("pytest-of-", "pymp-", "torchinductor_")


def leftovers(folder: Path) -> list[str]:
    """The entries of ``folder`` that are not :data:`ALLOWED`."""
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(ALLOWED))


@pytest.fixture(scope="session", autouse=True)
def no_leftover_temporary_files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp_path_factory.getbasetemp()  # pytest's folder first, under the real temporary directory
    scratch = Path(tempfile.mkdtemp(prefix="uno-mk-tests-"))
    saved_env, saved_tempdir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = str(scratch)
    tempfile.tempdir = str(scratch)
    try:
        yield scratch
    finally:
        if saved_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_env
        tempfile.tempdir = saved_tempdir
        left = leftovers(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
    if left:
        pytest.fail(f"the tests left files in the temporary directory: {', '.join(left)}",
                    pytrace=False)
