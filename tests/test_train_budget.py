"""``--max-minutes`` bounds the whole ``uno-mk train`` command (behaviour cloning, PPO, the
final evaluation and the outputs), counted from the start of the process, within 10 % or a
minute; behaviour cloning is sized to it. And the thread policy a training process sets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

from uno_mk_env.training.progress import Budget  # noqa: E402

#: The budget of the end-to-end test, in minutes: fractions are allowed.
MINUTES = 0.5


def test_a_commands_budget_counts_from_the_start_of_its_process() -> None:
    """``process_start`` is when the interpreter started, not when training began: a second
    spent before it is called (imports, here a sleep) is already spent."""
    code = ("import time; time.sleep(1.0); from uno_mk_env.training.progress import "
            "process_start; print(time.monotonic() - process_start())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert 1.0 <= float(out.stdout) < 60


def test_the_output_reserve_grows_with_the_wait_for_a_core() -> None:
    """The seconds kept for the outputs are ``WRITE_SECONDS`` times how much longer than its
    CPU time the process has run since the budget began (1 to ``MAX_SLOWDOWN``)."""
    now = {"wall": 100.0, "cpu": 7.0}
    budget = Budget(1.0, clock=lambda: now["wall"], cpu_clock=lambda: now["cpu"])
    now.update(wall=130.0, cpu=17.0)  # 30 s on the clock, 10 s on a core: 3 x
    assert budget.write_seconds() == 3 * Budget.WRITE_SECONDS
    now.update(wall=1000.0)
    assert budget.write_seconds() == Budget.MAX_SLOWDOWN * Budget.WRITE_SECONDS
    now.update(wall=110.0, cpu=27.0)  # two threads busy: never below the CPU seconds
    assert budget.write_seconds() == Budget.WRITE_SECONDS
    assert budget.left() == 60.0 - 10.0 and budget.at(0.5) == 110.0 + 25.0


def test_max_minutes_bounds_the_whole_command(tmp_path: Path) -> None:
    """``uno-mk train --num-players 2 --max-minutes 0.5`` (the defaults: behaviour cloning of
    100,000 decisions, 10 M steps) ends, process start to exit, within the budget plus a
    minute; it cloned fewer decisions than asked, stopped PPO on the budget and still wrote
    its final evaluation and policy."""
    runs = tmp_path / "runs"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "uno_mk_env", "train", "--num-players", "2",
                          "--max-minutes", str(MINUTES), "--runs-dir", str(runs),
                          "--no-progress"], capture_output=True, text=True, env=env,
                         timeout=600)
    wall = time.monotonic() - t0
    assert out.returncode == 0, out.stderr[-2000:]
    assert wall <= max(1.1 * 60 * MINUTES, 60 * MINUTES + 60), wall
    (run_dir,) = runs.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    config = json.loads((run_dir / "config.json").read_text())
    assert summary["stopped_by"] == "max_minutes" and summary["complete"] is False
    assert 0 < config["behaviour_cloning"]["samples"] < config["args"]["bc_steps"] == 100_000
    assert summary["final_eval"] and (run_dir / "final.npz").is_file()
    assert out.stdout.strip().splitlines()[-1] == f"agent: ppo:{run_dir / 'final.npz'}"


THREADS = """
import os, sys
from uno_mk_env.training import ppo_fast
assert "torch" not in sys.modules  # the policy must come first: OpenMP reads it when torch loads
args = ppo_fast.Args(n_envs=2, n_steps=8, total_timesteps=16, batch_size=8, n_epochs=1,
                     net_arch="8", eval_games=2, final_eval_games=2, eval_every=0,
                     progress=False, env_workers=0, bc_teacher="", torch_threads=1,
                     runs_dir=sys.argv[1])
ppo_fast.train(args)
import torch
print(os.environ["OMP_WAIT_POLICY"], os.environ["OMP_NUM_THREADS"], torch.get_num_threads())
"""


def test_training_sets_the_thread_policy_before_torch_loads(tmp_path: Path) -> None:
    """A training process's OpenMP threads sleep when idle (``OMP_WAIT_POLICY=PASSIVE``) and
    torch runs ``--torch-threads`` of them: set by ``train`` itself, before torch is imported,
    in a process whose environment says nothing about threads."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "OPENBLAS_NUM_THREADS",
                        "MKL_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", THREADS, str(tmp_path / "runs")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines()[-1].split() == ["PASSIVE", "1", "1"]


def test_the_sb3_backend_keeps_the_same_budget(tmp_path: Path) -> None:
    """sb3's ``--max-minutes`` bounds its whole run too: cloning sized to the budget, PPO
    stopped, the final evaluation cut to what fits (here from the default 4,000 games)."""
    from uno_mk_env.training import train_ppo

    args = train_ppo.Args(num_players=2, total_timesteps=10**6, n_envs=1, vec_env="dummy",
                          n_steps=256, batch_size=128, n_epochs=1, net_arch="32",
                          opponents="greedy", opponent_weights="", eval_opponents="greedy",
                          eval_every=0, eval_games=4, bc_teacher="greedy", bc_steps=100_000,
                          max_minutes=0.2, runs_dir=str(tmp_path / "runs"), progress=False)
    t0 = time.monotonic()
    summary = train_ppo.train(args)
    wall = time.monotonic() - t0
    assert wall <= 0.2 * 60 + 60, wall
    config = json.loads((Path(summary["run_dir"]) / "config.json").read_text())
    assert summary["stopped_by"] == "max_minutes" and summary["complete"] is False
    assert 0 < config["behaviour_cloning"]["samples"] < 100_000
    assert 2 <= summary["final_eval"][0]["games"] < 4000
