"""Where one iteration of the default training goes: ``uno-mk train --num-players 2`` (the sb3
MaskablePPO backend, every other argument at its default), profiled over a few rollouts.

::

    python benchmarks/train_profile.py [--rollouts 2] [--out benchmarks/results/train_profile.md]

Two measurements, because the default steps its 2 envs in subprocesses, where the main
process's profiler cannot see:

* **wall clock, default (SubprocVecEnv)**: the seconds of each rollout (environment side and
  policy side together) and of each update, timed around sb3's ``collect_rollouts`` and
  ``train``;
* **cProfile, the same run in process (DummyVecEnv)**: the split of a rollout into the
  environment (engine, observation, mask), the opponents' decisions, the policy forward pass,
  the mask lookup (``env_method``), the rollout storage; and the update.

Evaluation and snapshots are switched off (they happen every 50,000 steps, not in a rollout).
The split is written as a markdown table.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import pstats
import time
from pathlib import Path
from typing import Any


def build(vec: str, seed: int = 1) -> Any:
    import numpy as np
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from uno_mk_env.training import train_ppo as T

    args = dataclasses.replace(T.Args(), num_players=2, seed=seed, vec_env=vec, progress=False)
    np.random.seed(seed)  # noqa: NPY002 - as train_ppo does for SB3's buffer
    torch.manual_seed(seed)
    torch.set_num_threads(args.torch_threads)
    torch.distributions.Distribution.set_default_validate_args(False)
    thunks = [T.make_env(args, rank) for rank in range(args.n_envs)]
    venv = SubprocVecEnv(thunks) if vec == "subproc" else DummyVecEnv(thunks)
    venv.seed(seed)
    hyper = dict(learning_rate=T.learning_rate(args), n_steps=args.n_steps,
                 batch_size=args.batch_size, n_epochs=args.n_epochs, gamma=args.gamma,
                 gae_lambda=args.gae_lambda, clip_range=args.clip_range, ent_coef=args.ent_coef,
                 vf_coef=args.vf_coef, max_grad_norm=args.max_grad_norm, verbose=0)
    model = T.new_model(args, venv, hyper)
    return args, venv, model


def wall_clock(rollouts: int) -> dict[str, float]:
    """Seconds per rollout and per update of the default (subprocess envs)."""
    args, venv, model = build("subproc")
    times: dict[str, list[float]] = {"rollout": [], "update": []}
    collect, train = model.collect_rollouts, model.train

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            out = fn(*a, **k)
            times[name].append(time.perf_counter() - t)
            return out
        return wrapper

    model.collect_rollouts = timed("rollout", collect)
    model.train = timed("update", train)
    steps = rollouts * args.n_envs * args.n_steps
    model.learn(steps)
    venv.close()
    per = args.n_envs * args.n_steps
    return {"steps_per_rollout": per, "rollout_s": sum(times["rollout"]) / rollouts,
            "update_s": sum(times["update"]) / rollouts}


#: cProfile rows (by function name and file) summed into each part of the split.
PARTS = {
    "opponents' decisions (OpponentPool.act)": ("act", "training/opponents.py"),
    "environment step, total (DummyVecEnv.step_wait)": ("step_wait", "dummy_vec_env.py"),
    "policy forward (MaskableActorCriticPolicy.forward)": ("forward", "maskable/policies.py"),
    "action masks (get_action_masks)": ("get_action_masks", "maskable/utils.py"),
    "rollout storage (buffer add)": ("add", "maskable/buffers.py"),
    "returns and advantages": ("compute_returns_and_advantage", "buffers.py"),
    "rollout, total (collect_rollouts)": ("collect_rollouts", "ppo_mask.py"),
    "update (MaskablePPO.train)": ("train", "ppo_mask.py"),
}


def profiled(rollouts: int) -> tuple[dict[str, float], float]:
    """Cumulative seconds per part (in process), and the total."""
    args, venv, model = build("dummy")
    profile = cProfile.Profile()
    t = time.perf_counter()
    profile.enable()
    model.learn(rollouts * args.n_envs * args.n_steps)
    profile.disable()
    total = time.perf_counter() - t
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    out = {}
    for label, (func, file) in PARTS.items():
        out[label] = sum(v[3] for (f, _, name), v in stats.items()
                         if name == func and f.endswith(file))
    return out, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=2)
    parser.add_argument("--out", default="")
    a = parser.parse_args()
    wall = wall_clock(a.rollouts)
    parts, total = profiled(a.rollouts)
    steps = wall["steps_per_rollout"] * a.rollouts
    lines = [
        f"Default `uno-mk train --num-players 2` (sb3 MaskablePPO), {a.rollouts} rollouts of "
        f"{wall['steps_per_rollout']} learner steps + their updates.", "",
        "Wall clock, default (2 envs in subprocesses):", "",
        "| part | s per rollout | µs per learner step |", "|---|---:|---:|",
        f"| rollout (env + policy) | {wall['rollout_s']:.2f} | "
        f"{wall['rollout_s'] / wall['steps_per_rollout'] * 1e6:.0f} |",
        f"| update (10 epochs) | {wall['update_s']:.2f} | "
        f"{wall['update_s'] / wall['steps_per_rollout'] * 1e6:.0f} |", "",
        f"cProfile, the same in process (DummyVecEnv), {total:.1f} s in all "
        "(the profiler's overhead included):", "",
        "| part | s (cumulative) | µs per learner step | share |", "|---|---:|---:|---:|",
    ]
    for label, seconds in parts.items():
        lines.append(f"| {label} | {seconds:.2f} | {seconds / steps * 1e6:.0f} | "
                     f"{seconds / total:.0%} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
