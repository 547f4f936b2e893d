"""Session-wide test hygiene: no test may leave files in the temporary directory or the
repository.

The whole session (each xdist worker its own) runs with ``TMPDIR`` (and ``tempfile.tempdir``)
pointing at a fresh folder, which subprocesses, notebook kernels and libraries inherit: whatever
they write through the temporary directory (stable-baselines3's ``SB3-<time>`` logs, a
notebook's ``uno_ppo_*`` folder) lands there. At the end of the session the folder must be
empty but for :data:`ALLOWED` (pytest's own folders and caches cleaned or reused by their
owners); leftovers fail the session, and the folder is deleted either way, so a run leaves
nothing in /tmp. pytest's ``tmp_path`` folders stay where pytest puts them (the base
temporary folder is fixed before ``TMPDIR`` changes).

The repository: the controller process (not an xdist worker) notes ``git status`` at the start
of the session (:func:`repo_status`) and fails the session if it ends with an entry that was not
there at the start: a new untracked or ignored file, or a clean tracked file modified or deleted.
The virtualenv, caches and build output (:data:`SCRATCH_IN_REPO`) do not count; outside a git
checkout (tests run from an sdist) there is no check.
"""

from __future__ import annotations

import os
import shutil
import subprocess
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


# -------------------------------------------------------------------------------- repository
ROOT = Path(__file__).resolve().parents[1]
#: Git pathspec globs of what may change in the checkout: the virtualenv, caches, build output
#: (site/: the documentation site of `make docs`).
SCRATCH_IN_REPO = ("**/.venv/**", "**/__pycache__/**", "**/.pytest_cache/**", "**/.ruff_cache/**",
                   "**/*.egg-info/**", "build/**", "site/**")
_STATUS_AT_START = pytest.StashKey[frozenset[str]]()
_LEFT_IN_REPO = pytest.StashKey[list[str]]()


def _git(root: Path, *argv: str) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run(["git", "-C", str(root), *argv], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None


def repo_status(root: Path = ROOT) -> frozenset[str] | None:
    """The ``git status --porcelain --ignored --untracked-files=all`` entries (``"XY path"``) of
    the checkout whose top folder is ``root``, without :data:`SCRATCH_IN_REPO`; ``None`` when
    ``root`` is not the top of a git checkout (an unpacked sdist) or git is missing."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or top.returncode or Path(os.fsdecode(top.stdout.strip())) != root.resolve():
        return None
    excludes = [f":(exclude,glob){glob}" for glob in SCRATCH_IN_REPO]
    status = _git(root, "status", "--porcelain", "-z", "--ignored", "--untracked-files=all",
                  "--", ".", *excludes)
    if status is None or status.returncode:
        return None
    fields = iter(os.fsdecode(status.stdout).split("\0"))
    entries = set()
    for field in fields:
        if field:
            entries.add(field)
            if field[0] in "RC":  # a rename or copy: its source path follows
                next(fields, None)
    return frozenset(entries)


def _controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")  # xdist workers have it


def pytest_sessionstart(session: pytest.Session) -> None:
    if _controller(session.config):
        status = repo_status()
        if status is not None:
            session.config.stash[_STATUS_AT_START] = status


def pytest_sessionfinish(session: pytest.Session) -> None:
    before = session.config.stash.get(_STATUS_AT_START, None)
    after = repo_status() if before is not None else None
    new = sorted(after - before) if after is not None else []
    if new:
        session.config.stash[_LEFT_IN_REPO] = new
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            config: pytest.Config) -> None:
    new = config.stash.get(_LEFT_IN_REPO, [])
    if new:
        terminalreporter.section("the tests left files in the repository", red=True, bold=True)
        for entry in new:
            terminalreporter.line(entry, red=True)
