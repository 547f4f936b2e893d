"""Issue 35, items 1-4, 8 and 9, for ``uno-mk train``, on other inputs than the audit's: bad
flags are one line (exit 2) and create no run folder; output paths are checked before the
work; a diverging run stops with one line and keeps a finite policy; a file-size limit is one
line with whole files only; a broken ``config.json`` given to ``--resume`` is one line; Ctrl-C,
SIGTERM and SIGKILL end a run with env workers quietly.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from uno_mk_env.agents.policy_file import load_policy  # noqa: E402
from uno_mk_env.cli import main  # noqa: E402

UNO_MK = [sys.executable, "-m", "uno_mk_env.cli"]
#: A run of a few seconds (after the imports): 96 steps, two-game evaluations.
TINY = ["--n-envs", "4", "--n-steps", "8", "--total-timesteps", "96", "--batch-size", "16",
        "--n-epochs", "1", "--net-arch", "16", "--eval-games", "2", "--final-eval-games", "2",
        "--eval-every", "0", "--bc-teacher", "", "--no-progress", "--env-workers", "0"]


def train(argv: list[str], tmp_path: Path) -> tuple[int, str]:
    """``uno-mk train TINY argv`` in this process, runs into ``tmp_path/runs``: the exit code
    and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):  # argparse writes its refusals to sys.stderr
        code = main(["train", *TINY, "--runs-dir", str(tmp_path / "runs"), *argv],
                    stdout=out, stderr=err)
    return code, err.getvalue()


def uno_mk(argv: list[str], cwd: Path, limit: int | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess[str]:
    def file_size_limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([*UNO_MK, *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, preexec_fn=None if limit is None else file_size_limit)


# ------------------------------------------------------------------------- bad flags (item 1)
@pytest.mark.parametrize("argv, needle", [
    (["--net-arch", "1,,2"], "--net-arch '1,,2'"),
    (["--net-arch", "4097"], "--net-arch '4097'"),
    (["--net-arch", "0,4"], "--net-arch '0,4'"),
    (["--net-arch", "1,1,1,1,1,1,1,1,1"], "1 to 8 comma-separated layer sizes"),
    (["--net-arch", "1e3"], "--net-arch '1e3'"),
    (["--seed", "1.5"], "--seed"),
    (["--seed", str(2**64)], "--seed"),
    (["--exp-name", ".."], "--exp-name '..'"),
    (["--exp-name", "a\\b"], "--exp-name"),
    (["--exp-name", "x" * 300], "--exp-name"),
    (["--opponents", ","], "--opponents ','"),
    (["--opponent-weights", "1,-1", "--opponents", "greedy,random"], "--opponent-weights"),
    (["--opponent-weights", "0,0", "--opponents", "greedy,random"], "at least one > 0"),
    (["--opponent-weights", "nan,1", "--opponents", "greedy,random"], "--opponent-weights"),
    (["--opponent-weights", "1", "--opponents", "greedy,random"], "give one per agent"),
    (["--n-envs", "100000"], "--n-envs 100000"),
    (["--n-steps", "0"], "--n-steps 0"),
    (["--n-envs", "1024", "--n-steps", "4096"], "per rollout"),
    (["--learning-rate", "inf"], "--learning-rate inf"),
    (["--max-grad-norm", "nan"], "--max-grad-norm nan"),
    (["--gamma", "2"], "--gamma 2.0"),
    (["--total-timesteps", str(10**30)], "--total-timesteps"),
    (["--max-minutes", "nan"], "--max-minutes nan"),
    (["--env-workers", "100000"], "--env-workers 100000"),
    (["--bc-steps", str(10**15)], "--bc-steps"),
    (["--eval-opponents", ","], "--eval-opponents"),
    (["--activation", "relu6"], "--activation 'relu6'"),
    (["--init-policy", "/etc"], "--init-policy"),
], ids=lambda v: v if isinstance(v, str) else " ".join(v)[:40])
def test_bad_flags_are_one_line_and_create_no_run_folder(argv: list[str], needle: str,
                                                        tmp_path: Path) -> None:
    code, err = train(argv, tmp_path)
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("uno-mk train: error: ") and needle in err, err
    assert not (tmp_path / "runs").exists()


def test_a_bad_flag_in_the_console_script_is_one_line_without_traceback(tmp_path: Path) -> None:
    proc = uno_mk(["train", "--net-arch", "-7", "--runs-dir", "runs"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--net-arch '-7'" in proc.stderr
    assert not (tmp_path / "runs").exists()


# ------------------------------------------------------------ outputs checked first (item 3)
@pytest.mark.parametrize("make, argv, needle", [
    (lambda d: (d / "afile").touch(), ["--save-path", "{d}/afile/p.npz"], "not a directory"),
    (lambda d: (d / "x.npz").mkdir(), ["--save-path", "{d}/x.npz"], "is not a file"),
    (lambda d: (d / "y.json").mkdir(), ["--save-path", "{d}/y"], "'{d}/y.json'"),
    (lambda d: (d / "afile").touch(), ["--runs-dir", "{d}/afile"], "not a directory"),
    (lambda d: (d / "afile").touch(), ["--runs-dir", "{d}/afile/sub"], "not a directory"),
    (lambda d: None, ["--save-path", "/proc/p.npz"], "--save-path"),
], ids=["save-under-a-file", "save-onto-a-folder", "its-json-a-folder", "runs-a-file",
        "runs-under-a-file", "save-in-proc"])
def test_outputs_are_checked_before_any_work(make, argv: list[str], needle: str,
                                             tmp_path: Path) -> None:
    make(tmp_path)
    argv = [a.replace("{d}", str(tmp_path)) for a in argv]
    code, err = train(argv, tmp_path)
    assert code == 2 and err.count("\n") == 1, err
    assert needle.replace("{d}", str(tmp_path)) in err, err
    assert not (tmp_path / "runs").exists()


# -------------------------------------------------------------------- divergence (item 2)
@pytest.mark.parametrize("argv", [
    ["--ent-coef", "1e38", "--max-grad-norm", "1e38", "--learning-rate", "1"],
    ["--learning-rate", "1e15", "--max-grad-norm", "1e30"],
], ids=["entropy", "learning-rate"])
def test_a_diverging_run_stops_with_one_line_and_keeps_a_finite_policy(argv: list[str],
                                                                      tmp_path: Path) -> None:
    code, err = train(["--total-timesteps", "192", *argv], tmp_path)
    assert code == 1, err
    assert err.count("\n") == 1 and "training diverged at step" in err, err
    (run,) = (tmp_path / "runs").iterdir()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["stopped_by"] == "diverged" and not summary["complete"]
    assert summary["diverged"]["kept_timesteps"] < summary["diverged"]["at_timesteps"]
    weights, _ = load_policy(summary["policy"])
    assert all(np.isfinite(w).all() and np.isfinite(b).all() for w, b in weights.layers)
    assert not list(run.rglob("*.tmp"))


# ------------------------------------------------------------------- a full disk (item 4)
@pytest.mark.parametrize("limit", [0, pytest.param(5000, marks=pytest.mark.slow), 100_000])
def test_a_full_disk_ends_training_in_one_line_with_whole_files(limit: int,
                                                               tmp_path: Path) -> None:
    """0 bytes: not even config.json; 5,000: config.json only; 100,000: the policies fit and
    the last file (final.pt, torch.save's, which hid the error in a RuntimeError) does not."""
    proc = uno_mk(["train", *TINY, "--runs-dir", "runs"], tmp_path, limit)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "no space left, or a file-size limit" in proc.stderr
    for path in (tmp_path / "runs").rglob("*"):
        assert not path.name.endswith(".tmp"), path
        if path.suffix == ".json":
            json.loads(path.read_text())
        elif path.suffix == ".npz":
            load_policy(str(path))
        elif path.suffix == ".csv":
            assert path.read_bytes().endswith(b"\n")
    if limit == 100_000:
        assert "final.pt" in proc.stderr  # the one line names the file


# --------------------------------------------------- a broken config.json to resume (item 8)
def _sb3_checkpoint(run: Path) -> Path:
    from sb3_contrib import MaskablePPO

    from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv
    from uno_mk_env.training.policies import ScaledObservationExtractor

    path = run / "checkpoints" / "ppo_64_steps.zip"
    path.parent.mkdir(parents=True)
    MaskablePPO("MlpPolicy", UnoMarioKartGymEnv(2), n_steps=64, batch_size=32, device="cpu",
                policy_kwargs={"net_arch": [8],
                               "features_extractor_class": ScaledObservationExtractor}
                ).save(path)
    return path


@pytest.mark.parametrize("config", ["deep", "huge", "list"])
def test_a_broken_config_json_given_to_resume_is_one_line(config: str, tmp_path: Path) -> None:
    run = tmp_path / "old"
    checkpoint = _sb3_checkpoint(run)
    with open(run / "config.json", "wb") as f:
        if config == "deep":
            f.write(b"[" * 100_000 + b"]" * 100_000)
        elif config == "huge":
            f.truncate(65 * 2**20)  # sparse: larger than any JSON the package reads
        else:
            f.write(b"[1, 2]")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["train", "--backend", "sb3", "--resume", str(checkpoint),
                     "--total-timesteps", "128", "--eval-games", "2", "--final-eval-games", "2",
                     "--eval-every", "0", "--no-progress", "--vec-env", "dummy",
                     "--runs-dir", str(tmp_path / "runs")],
                    stdout=out, stderr=err)
    assert code == 2 and err.getvalue().count("\n") == 1, err.getvalue()
    assert "config.json" in err.getvalue()
    assert not (tmp_path / "runs").exists()


# ------------------------------------------------------------------------ signals (item 9)
def _start(tmp_path: Path) -> subprocess.Popen[str]:
    tmp_path.mkdir(exist_ok=True)
    argv = ["train", *TINY, "--total-timesteps", "100000000", "--env-workers", "2",
            "--runs-dir", "runs"]
    return subprocess.Popen([*UNO_MK, *argv], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _workers(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _wait_for_training(proc: subprocess.Popen[str], tmp_path: Path) -> list[int]:
    """Waits until the run has its env workers and has written its first evaluation."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        workers = _workers(proc.pid)
        if len(workers) >= 2 and list((tmp_path / "runs").glob("*/eval.csv")):
            return workers
        time.sleep(0.2)
    raise AssertionError("the run did not start training")


def _gone(pids: list[int], timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [p for p in pids if Path(f"/proc/{p}").exists()
                 and "zombie" not in Path(f"/proc/{p}/status").read_text(errors="replace")]
        if not alive:
            return True
        time.sleep(0.2)
    return False


def _signal_once(how: str, tmp_path: Path) -> None:
    proc = _start(tmp_path)
    try:
        workers = _wait_for_training(proc, tmp_path)
        if how == "ctrl-c":  # a terminal sends SIGINT to the whole process group
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, {"sigterm": signal.SIGTERM, "sigkill": signal.SIGKILL}[how])
        _, err = proc.communicate(timeout=120)  # EOF: the workers closed their stderr too
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    expected = {"ctrl-c": (130, "uno-mk train: interrupted\n"),
                "sigterm": (143, "uno-mk train: terminated\n"), "sigkill": (-9, "")}[how]
    assert (proc.returncode, err) == expected
    assert _gone(workers), "an env worker outlived the run"


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm", "sigkill"])
def test_a_signal_ends_training_and_its_workers_quietly(how: str, tmp_path: Path) -> None:
    """Ctrl-C: one line, exit 130; SIGTERM: one line, 143; SIGKILL of the main process: its
    env workers exit and print nothing (no EOFError or BrokenPipeError)."""
    _signal_once(how, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm", "sigkill"])
def test_signals_end_training_quietly_five_times_in_five(how: str, tmp_path: Path) -> None:
    for i in range(5):
        _signal_once(how, tmp_path / str(i))
