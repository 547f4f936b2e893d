"""Learner steps/s of the vector envs (``uno_mk_env.envs.vector``) on each engine
(docs/compiled.md):
``UnoMarioKartVectorEnv`` with 64 tables against ``random`` and ``strategic`` opponents (the
Python agents, which the compiled core plays as its built-in twins), and ``SelfPlayVectorEnv``,
on the Python engine (``UNO_MK_ENGINE=python``) and on the compiled core, the whole Gymnasium
``step`` included (observations, masks, rewards, infos). The learner's actions are uniformly
random legal ones drawn by numpy from the masks. CPU time (``time.process_time``), best of
``--repeats``.

    PYTHONPATH=. python benchmarks/compiled_vector.py [--steps 2000] [--players 2 4]
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from uno_mk_env.agents.base import build_agent
from uno_mk_env.compiled import ENGINE_VARIABLE
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.envs.self_play import SelfPlayVectorEnv
from uno_mk_env.envs.vector import UnoMarioKartVectorEnv

TABLES = 64


def make(engine: str, n: int, opponents: str | None) -> Any:
    os.environ[ENGINE_VARIABLE] = engine  # read once, when the env is built
    if opponents is None:
        env: Any = SelfPlayVectorEnv(TABLES, n)
    else:
        env = UnoMarioKartVectorEnv(
            TABLES, n, opponents=lambda i: build_agent(opponents, seed=derive_seed(1, i)))
    assert env.engine == engine, (engine, env.engine)
    return env


def learner_steps(engine: str, n: int, opponents: str | None, steps: int
                  ) -> tuple[float, float]:
    """Learner steps/s (tables x vector steps / CPU seconds): the loop with the learner's
    random legal picks, and ``step`` alone."""
    env = make(engine, n, opponents)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    in_step = 0.0
    start = time.process_time()
    for _ in range(steps):
        actions = np.argmax(env.action_masks() * rng.random((TABLES, 73)), axis=1)
        before = time.process_time()
        env.step(actions)
        in_step += time.process_time() - before
    total = time.process_time() - start
    return steps * TABLES / total, steps * TABLES / in_step


def best(run: Callable[[], tuple[float, float]], repeats: int) -> tuple[float, float]:
    runs = [run() for _ in range(repeats)]
    return max(r[0] for r in runs), max(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=2000,
                        help="vector steps of a compiled run (the Python engine's: a tenth)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    args = parser.parse_args()
    print(f"learner steps/s, {TABLES} tables, one core, CPU time, best of {args.repeats}: the "
          "loop with numpy's random legal picks (step alone)")
    print(f"{'players':>7} {'opponents':<11} {'python':>20} {'compiled':>22} {'speed-up':>9}")
    for n in args.players:
        for opponents in ("random", "strategic", None):
            py, c = (best(functools.partial(learner_steps, engine, n, opponents, steps),
                          args.repeats)
                     for engine, steps in (("python", max(args.steps // 10, 1)),
                                           ("compiled", args.steps)))
            name = opponents or "self-play"
            print(f"{n:>7} {name:<11} {py[0]:9,.0f} ({py[1]:8,.0f}) {c[0]:10,.0f} "
                  f"({c[1]:9,.0f}) {c[0] / py[0]:8.1f}x")


if __name__ == "__main__":
    main()
