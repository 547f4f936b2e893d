"""What a run writes as it trains: ``progress.csv`` (a row per training iteration, from RLlib's
result), TensorBoard, ``eval.csv`` and ``curve.png``; the versions recorded. Imports nothing of
Ray."""

from __future__ import annotations

import csv
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from ..curves import RLLIB_STEPS, plot_curve, write_eval_csv
from ..provenance import versions as package_versions
from .league import MAIN, League

__all__ = ["PROGRESS_COLUMNS", "Outputs", "iteration_row", "say", "versions"]

#: Columns of ``progress.csv`` (one row per training iteration).
PROGRESS_COLUMNS = [
    "iteration", "timesteps", "agent_steps", "main_steps", "episodes", "wall_s",
    "steps_per_s", "sample_s", "learn_s", "episode_len_mean", "policy_loss", "vf_loss",
    "vf_explained_var", "entropy", "mean_kl", "checked_actions", "masked_actions",
    "league_slots",
]


def _number(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if np.isfinite(x) else None


def _total(value: Any) -> float:
    """A number, or the sum of a dict of numbers (RLlib's per-agent counters); 0 if neither."""
    if isinstance(value, dict):
        return sum(_total(v) for v in value.values())
    return _number(value) or 0.0


def iteration_row(result: dict[str, Any], iteration: int, wall: float, steps_per_s: float,
                  league: League) -> dict[str, Any]:
    """A ``progress.csv`` row from an ``Algorithm.train()`` result."""
    runners = result.get("env_runners", {})
    learner = result.get("learners", {}).get(MAIN, {})
    timers = result.get("timers", {})
    return {
        "iteration": iteration,
        "timesteps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
        "agent_steps": int(_total(runners.get("num_agent_steps_sampled_lifetime"))),
        "main_steps": int(_total((runners.get("num_module_steps_sampled_lifetime") or {})
                                 .get(MAIN) if isinstance(runners.get(
                                     "num_module_steps_sampled_lifetime"), dict) else None)),
        "episodes": int(_number(runners.get("num_episodes_lifetime")) or 0),
        "wall_s": round(wall, 1), "steps_per_s": round(steps_per_s, 1),
        "sample_s": _number(timers.get("env_runner_sampling_timer")),
        "learn_s": _number(timers.get("learner_update_timer")),
        "episode_len_mean": _number(runners.get("episode_len_mean")),
        "policy_loss": _number(learner.get("policy_loss")),
        "vf_loss": _number(learner.get("vf_loss")),
        "vf_explained_var": _number(learner.get("vf_explained_var")),
        "entropy": _number(learner.get("entropy")),
        "mean_kl": _number(learner.get("mean_kl_loss")),
        "checked_actions": int(_number(runners.get("checked_actions")) or 0),
        "masked_actions": int(_number(runners.get("masked_actions")) or 0),
        "league_slots": len(league.slots),
    }


class Outputs:
    """The run directory's files: TensorBoard, ``progress.csv``, ``eval.csv`` and the curve."""

    def __init__(self, run_dir: Path, num_players: int) -> None:
        self.run_dir = run_dir
        self.num_players = num_players
        try:
            from torch.utils.tensorboard import SummaryWriter

            self.writer: Any = SummaryWriter(str(run_dir))
        except ImportError:  # tensorboard is in the 'train' extra
            self.writer = None
        self._progress = (run_dir / "progress.csv").open("a", newline="", encoding="utf-8")
        self._csv = csv.DictWriter(self._progress, fieldnames=PROGRESS_COLUMNS)
        if self._progress.tell() == 0:
            self._csv.writeheader()

    def scalars(self, values: dict[str, Any], step: int, prefix: str) -> None:
        if self.writer is not None:
            for key, value in values.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    self.writer.add_scalar(f"{prefix}/{key}", value, step)

    def progress(self, row: dict[str, Any]) -> None:
        self._csv.writerow(row)
        self._progress.flush()
        self.scalars({k: v for k, v in row.items() if k not in ("iteration", "timesteps")},
                     row["timesteps"], "train")

    def evals(self, rows: list[dict[str, Any]], all_rows: list[dict[str, Any]]) -> None:
        for r in rows:
            name = r["opponent"].replace(":", "_")
            self.scalars({f"win_rate_vs_{name}": r["win_rate"],
                          f"win_ci_low_vs_{name}": r["ci_low"],
                          f"win_ci_high_vs_{name}": r["ci_high"]}, r["timesteps"], r["kind"])
        write_eval_csv(all_rows, self.run_dir / "eval.csv")
        plot_curve(all_rows, self.num_players, self.run_dir / "curve.png", self.run_dir.name,
                   steps_label=RLLIB_STEPS)
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        self._progress.close()
        if self.writer is not None:
            self.writer.close()


def versions() -> dict[str, str]:
    out = package_versions()
    try:
        out["ray"] = version("ray")
    except PackageNotFoundError:
        pass
    return out


def say(text: str) -> None:
    print(text, flush=True)
