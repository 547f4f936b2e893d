"""Learner steps per CPU second of ``uno-mk train`` (the fast backend, its defaults at
``--num-players 2``), and where the time goes: a few PPO iterations (rollout of 64 tables x 128
steps against the default opponents, then the update) timed in one process.

::

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/train_fast_profile.py [--iterations 4]
        [--players 2] [--opponents strategic] [--opponent-weights ""] [--self-play-prob 0]
        [--profile]

The tables play in this process (``--env-workers 0``) and torch runs one thread, so that CPU
time measures the work; the default run splits the tables over 2 worker processes, which
changes the wall clock but not the work. The first iteration is a warm-up and not counted.
``--profile`` adds the cProfile split of the iterations: the environment step (engine,
opponents, observations, masks), the opponents' decisions in Python (when they return to
Python), the learner's forward pass and sampling in the rollout, and the update. Prints which
engine the training tables run on (``engine``: ``compiled`` when the opponents run inside the
core).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import pstats
import time
from typing import Any

#: cProfile rows (function name, file suffix) summed into each part of the split.
PARTS = {
    "rollout, total (TableRollouts.rollout)": ("rollout", "training/rollouts.py"),
    "vector env step (UnoMarioKartVectorEnv.step)": ("step", "envs/vector.py"),
    "opponents in Python (OpponentPool.act)": ("act", "training/opponents.py"),
    "learner forward pass in the rollout (numpy actor)": ("logits", "agents/numpy_actor.py"),
    "learner sampling (sample_actions)": ("sample_actions", "training/rollouts.py"),
    "values and log-probabilities (Rollout.__init__)": ("__init__", "training/ppo_update.py"),
    "update (ppo_update.update)": ("update", "training/ppo_update.py"),
}


def build(players: int, opponents: str | None, weights: str,
          self_play_prob: float) -> tuple[Any, Any, Any]:
    """The default fast run's learner, optimizer and in-process tables."""
    import torch

    from uno_mk_env.training import ppo_fast as F
    from uno_mk_env.training.args import layer_sizes
    from uno_mk_env.training.envs import Tables
    from uno_mk_env.training.network import ActorCritic
    from uno_mk_env.training.ppo_update import optimizer
    from uno_mk_env.training.rollouts import TableRollouts

    torch.set_num_threads(1)
    changes: dict[str, Any] = {"num_players": players, "env_workers": 0, "torch_threads": 1,
                               "self_play_prob": self_play_prob, "opponent_weights": weights}
    if opponents is not None:
        changes["opponents"] = opponents
    args = F.table_size_defaults(dataclasses.replace(F.Args(), **changes))
    torch.manual_seed(args.seed)
    agent = ActorCritic(layer_sizes(args), args.activation)
    tables = TableRollouts(Tables.of(args), args.n_envs)
    tables.reset(args.seed)
    return args, agent, (optimizer(agent, args.learning_rate), tables)


def iterate(args: Any, agent: Any, opt: Any, tables: Any, rng: Any,
            seconds: dict[str, float]) -> None:
    """One PPO iteration; adds the CPU seconds of its rollout and of its update to
    ``seconds``."""
    from uno_mk_env.training.ppo_update import collect, update

    stats: dict[str, list[float]] = {"return": [], "length": [], "place": []}
    cpu = time.process_time()
    buf = collect(agent, tables, args, stats)
    adv, returns = buf.advantages(args.gamma, args.gae_lambda)
    middle = time.process_time()
    update(agent, opt, buf, adv, returns, args, rng)
    seconds["rollout"] += middle - cpu
    seconds["update"] += time.process_time() - middle


def main() -> None:
    import numpy as np
    from threadpoolctl import threadpool_limits

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--opponents", default=None, help="default: the fast backend's")
    parser.add_argument("--opponent-weights", default="")
    parser.add_argument("--self-play-prob", type=float, default=0.0)
    parser.add_argument("--profile", action="store_true")
    a = parser.parse_args()
    with threadpool_limits(limits=1, user_api="blas"):
        args, agent, (opt, tables) = build(a.players, a.opponents, a.opponent_weights,
                                         a.self_play_prob)
        rng = np.random.default_rng(0)
        seconds = {"rollout": 0.0, "update": 0.0}
        iterate(args, agent, opt, tables, rng, dict(seconds))  # warm-up
        profile = cProfile.Profile(time.process_time) if a.profile else None
        cpu = time.process_time()
        if profile is not None:
            profile.enable()
        for _ in range(a.iterations):
            iterate(args, agent, opt, tables, rng, seconds)
        if profile is not None:
            profile.disable()
        cpu = time.process_time() - cpu
    steps = a.iterations * args.n_envs * args.n_steps
    print(f"{a.players} players, opponents {args.opponents!r}, self-play "
          f"{args.self_play_prob}, engine {tables.venv.engine}: {steps} learner steps in "
          f"{cpu:.2f} CPU s = {steps / cpu:,.0f} steps/s"
          + (" (under cProfile)" if profile else "")
          + f"; rollout {seconds['rollout'] / steps * 1e6:.1f} µs a step (values and "
          f"advantages included), update {seconds['update'] / steps * 1e6:.1f} µs")
    if profile is not None:
        stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
        print("\n| part | CPU s | µs per learner step | share |\n|---|---:|---:|---:|")
        for label, (func, file) in PARTS.items():
            seconds = sum(v[3] for (f, _, name), v in stats.items()
                          if name == func and f.endswith(file))
            print(f"| {label} | {seconds:.2f} | {seconds / steps * 1e6:.0f} | "
                  f"{seconds / cpu:.0%} |")


if __name__ == "__main__":
    main()
