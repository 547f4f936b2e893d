"""Every backend stops a diverging run the same way: at the first non-finite loss or weights,
with one line and exit code 1, keeping the last finite policy and saying so in summary.json
(``"stopped_by": "diverged"``); and sb3's ``--bc-steps 0`` means no behaviour cloning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from uno_mk_env.agents.policy_file import load_policy
from uno_mk_env.agents.ppo import PPOAgent  # noqa: E402
from uno_mk_env.training import ppo_fast, train_ppo  # noqa: E402
from uno_mk_env.training.args import TrainingDiverged  # noqa: E402

#: Adam at this rate throws the weights beyond float32 at the first update.
DIVERGING = {"learning_rate": 1e30, "max_grad_norm": 1e30}


def sb3_args(tmp_path: Path, **changes: Any) -> train_ppo.Args:
    base: dict[str, Any] = dict(
        num_players=2, total_timesteps=512, seed=3, n_envs=1, vec_env="dummy",
        opponents="greedy", opponent_weights="", net_arch="16", n_steps=128, batch_size=64,
        n_epochs=1, eval_every=0, eval_games=2, final_eval_games=2, eval_opponents="greedy",
        snapshot_every=0, checkpoint_every=0, runs_dir=str(tmp_path / "runs"), progress=False)
    return train_ppo.Args(**{**base, **changes})


def finite_policy(path: str) -> None:
    actor, _ = load_policy(path)
    assert all(np.isfinite(w).all() and np.isfinite(b).all() for w, b in actor.layers)
    PPOAgent(path)  # plays


def test_sb3_bc_steps_0_clones_nothing(tmp_path: Path) -> None:
    """``--bc-teacher greedy --bc-steps 0`` trains exactly the run without a teacher."""
    cloned = train_ppo.train(sb3_args(tmp_path, bc_teacher="greedy", bc_steps=0))
    plain = train_ppo.train(sb3_args(tmp_path))
    config = json.loads((Path(cloned["run_dir"]) / "config.json").read_text())
    assert "behaviour_cloning" not in config
    a, b = load_policy(cloned["policy"])[0].layers, load_policy(plain["policy"])[0].layers
    assert all(np.array_equal(x, y) for pair in zip(a, b) for x, y in zip(*pair))
    with_bc = train_ppo.train(sb3_args(tmp_path, bc_teacher="greedy", bc_steps=200))
    config = json.loads((Path(with_bc["run_dir"]) / "config.json").read_text())
    assert config["behaviour_cloning"]["samples"] >= 200


def test_sb3_divergence_stops_with_one_line_and_keeps_the_last_finite_policy(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--num-players", "2", "--total-timesteps", "512", "--n-envs", "1",
            "--vec-env", "dummy", "--opponents", "greedy", "--opponent-weights", "",
            "--net-arch", "16", "--n-steps", "128", "--batch-size", "64", "--n-epochs", "1",
            "--eval-every", "0", "--eval-games", "2", "--final-eval-games", "2",
            "--eval-opponents", "greedy", "--snapshot-every", "0", "--checkpoint-every", "0",
            "--runs-dir", str(tmp_path / "runs"), "--no-progress",
            "--learning-rate", "1e30", "--max-grad-norm", "1e30"]
    assert train_ppo.main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "training diverged" in err[0] and "final.npz" in err[0], err
    (run_dir,) = (tmp_path / "runs").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["stopped_by"] == "diverged" and summary["complete"] is False
    assert summary["diverged"]["kept_timesteps"] == summary["timesteps"] < 512
    assert summary["final_eval"] == []
    finite_policy(str(run_dir / "final.npz"))


def test_fast_divergence_reports_the_same_way(tmp_path: Path) -> None:
    """The fast backend, for comparison: the same summary fields and a finite policy."""
    args = ppo_fast.Args(n_envs=4, n_steps=8, total_timesteps=64, batch_size=16, n_epochs=1,
                         net_arch="16", eval_games=2, final_eval_games=2, eval_every=0,
                         progress=False, env_workers=0, bc_teacher="",
                         runs_dir=str(tmp_path / "runs"), **DIVERGING)
    with pytest.raises(TrainingDiverged, match="training diverged") as e:
        ppo_fast.train(args)
    assert e.value.exit_code == 1
    (run_dir,) = (tmp_path / "runs").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["stopped_by"] == "diverged" and summary["timesteps"] == 0
    finite_policy(str(run_dir / "final.npz"))
