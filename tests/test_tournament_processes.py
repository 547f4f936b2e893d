"""Tournament worker processes under stress, each in a fresh interpreter: a worker killed with
SIGKILL ends the run with one line (it used to hang forever), SIGTERM of the main process ends
the workers without a traceback, and a script read from standard input that asks for workers
fails once, clearly (spawned workers used to be restarted endlessly).

The timeouts below only guard against the old hangs; a healthy run ends well within them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="finds worker processes through /proc")

REPO = Path(__file__).resolve().parents[1]
HANG_GUARD = 20  # seconds; the run ends in about one once the signal is sent


def _children(pid: int) -> list[int]:
    try:
        import psutil
    except ImportError:
        kids: list[int] = []
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                kids += [int(x) for x in (task / "children").read_text().split()]
            except OSError:
                pass
        return kids
    try:
        return [c.pid for c in psutil.Process(pid).children()]
    except psutil.NoSuchProcess:
        return []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _workers(pid: int) -> list[int]:
    """The worker processes of ``pid`` (not multiprocessing's resource tracker)."""
    out = []
    for child in _children(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"resource_tracker" not in cmdline:
            out.append(child)
    return out


def _start_tournament(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """``uno-mk tournament`` with two workers and enough games (to 500 points) to run for a
    minute; returns once both workers are playing."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "uno_mk_env.cli", "tournament", "--agents",
         "strategic,greedy,random", "--players", "3", "--games", "3000", "--rounds-to-500",
         "--workers", "2", "--no-plot", "--out", str(tmp_path / "out")],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        workers = _workers(proc.pid)
        if len(workers) >= 2:
            time.sleep(0.5)  # let them start on their chunks
            return proc, workers
        time.sleep(0.1)
    proc.kill()
    out, err = proc.communicate()
    pytest.fail(f"the workers did not start: {err}")


def _finish(proc: subprocess.Popen) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        for pid in _workers(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.communicate()
        pytest.fail("the tournament did not end")


def _without_progress(err: str) -> list[str]:
    """stderr's lines without the progress lines (``tournament: ...``, printed also to a log)."""
    return [line for line in err.strip().splitlines() if not line.startswith("tournament: ")]


def _assert_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "a worker outlived the tournament"


def test_a_killed_worker_ends_the_tournament_with_one_line(tmp_path: Path) -> None:
    proc, workers = _start_tournament(tmp_path)
    os.kill(workers[0], signal.SIGKILL)
    _, err = _finish(proc)
    assert proc.returncode == 1, err
    errors = _without_progress(err)
    assert len(errors) == 1 and "Traceback" not in err, err
    assert "a worker process died" in err and f"pid {workers[0]}, killed by SIGKILL" in err
    assert not (tmp_path / "out" / "tournament.json").exists()
    _assert_gone(workers)


def test_sigterm_of_the_main_process_ends_the_workers_quietly(tmp_path: Path) -> None:
    proc, workers = _start_tournament(tmp_path)
    proc.send_signal(signal.SIGTERM)
    _, err = _finish(proc)
    assert proc.returncode == 143
    assert _without_progress(err) == ["uno-mk tournament: terminated"], err
    _assert_gone(workers)


@pytest.mark.parametrize("model", ["ppo_2p.zip", "ppo_2p.npz"])
def test_a_script_read_from_stdin_with_workers_fails_once_or_plays(model: str) -> None:
    """A ``.zip`` policy loads torch, so workers are spawned, and a spawned worker cannot
    re-import a script read from standard input: one clear error, no worker started. A ``.npz``
    policy needs no torch: the workers are forked and the tournament plays."""
    if model.endswith(".zip"):
        pytest.importorskip("torch")
    script = (
        "import sys\n"
        "from uno_mk_env.evaluation.tournament import TournamentError, run_tournament\n"
        "try:\n"
        f"    result = run_tournament(['ppo:models/{model}', 'greedy'], 2, games=8, seed=1,\n"
        "                            workers=2)\n"
        "except TournamentError as e:\n"
        "    print(f'TournamentError: {e}', file=sys.stderr)\n"
        "    sys.exit(3)\n"
        "print('games', sum(r['games'] for r in result.leaderboard()))\n"
    )
    proc = subprocess.run([sys.executable, "-"], input=script, cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    if model.endswith(".zip"):
        assert proc.returncode == 3
        assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
        assert "'<stdin>', not a file" in proc.stderr and "workers=1" in proc.stderr
    else:
        assert proc.returncode == 0 and proc.stdout.strip() == "games 16", proc.stderr
