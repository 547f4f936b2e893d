"""Speed of the AEC loop users write, through ``raw_env`` and ``env()``, next to RLCard's UNO env.

The loop (the PettingZoo idiom, observations and masks included)::

    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else <uniform over obs["action_mask"]>
        env.step(action)

and ``env.reset()`` when the episode is over. Every ``env.step`` call counts as a step (the few
``None`` steps of finished agents included), as RLCard's ``env.step`` calls do in
:func:`benchmarks.peers.rlcard_env_steps`, which runs in the same process for the ratios
(RLCard's UNO env is 2-player only). Actions are drawn as in ``peers``: buffered uniform floats
from a seeded generator, ``legal[int(u * len(legal))]``. Uniformly random play makes long rounds,
so most episodes end by the default ``max_steps=2000`` truncation
(docs/api.md#rewards-and-episodes).

Run: ``python -m benchmarks.env_speed [--budget 100000] [--repeat 5] [--seed 0]``; each figure is
the best of ``--repeat`` runs (as ``timeit`` does: on a shared machine the best run is the one
least disturbed by other processes). A benchmark, not a test.

Targets (2 players): ``raw_env`` >= 100,000 steps/s and ``env()`` >= 40,000 steps/s.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.peers import BUFFER_SIZE, PeerUnavailableError, rlcard_env_steps
from uno_mk_env import uno_mario_kart_v0

TARGETS = {"raw_env": 100_000.0, "env()": 40_000.0}


def aec_steps(
    make: Callable[..., Any], budget: int, seed: int, num_players: int = 2
) -> tuple[float, int]:
    """Runs the AEC loop above for ``budget`` ``env.step`` calls.

    Args:
        make: ``uno_mario_kart_v0.raw_env`` or ``uno_mario_kart_v0.env``.
        budget: number of ``env.step`` calls.
        seed: seeds the env (first ``reset``) and the action sampler.
        num_players: seats at the table.

    Returns:
        ``(steps per second, episodes completed)``.
    """
    env = make(num_players=num_players)
    rng = np.random.default_rng(seed)
    buf: list[float] = rng.random(BUFFER_SIZE).tolist()
    j = 0
    steps = 0
    episodes = 0
    start = time.perf_counter()
    env.reset(seed=seed)
    while steps < budget:
        for _agent in env.agent_iter(budget - steps):
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]
                if j == BUFFER_SIZE:
                    buf = rng.random(BUFFER_SIZE).tolist()
                    j = 0
                action = legal[int(buf[j] * len(legal))]
                j += 1
            env.step(action)
            steps += 1
        if not env.agents:
            episodes += 1
            env.reset()
    elapsed = time.perf_counter() - start
    return steps / elapsed, episodes


def main(argv: list[str] | None = None) -> None:
    """Prints steps/s of each loop and its ratio to RLCard's UNO env measured in this run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=100_000, help="env.step calls per run")
    parser.add_argument("--repeat", type=int, default=5, help="runs per loop; the best counts")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    loops: dict[str, Callable[[], tuple[float, int]]] = {}
    try:
        rlcard_env_steps(10, args.seed)
    except PeerUnavailableError as exc:
        print(f"RLCard: unavailable ({exc})")
    else:
        loops["RLCard uno env (2 players)"] = lambda: rlcard_env_steps(args.budget, args.seed)
    for players in (2, 4):
        for label, make in (("raw_env", uno_mario_kart_v0.raw_env),
                            ("env()", uno_mario_kart_v0.env)):
            loops[f"{label} ({players} players)"] = (
                lambda make=make, players=players: aec_steps(make, args.budget, args.seed, players)
            )
    # Round robin, so that a burst of load on a shared machine hits every loop alike, each round
    # starting one loop later (the loop right after RLCard's runs ~8% slower: with --repeat at
    # least the number of loops, every loop has rounds where it does not follow RLCard); each
    # run starts from a collected heap.
    best: dict[str, tuple[float, int]] = {}
    names = list(loops)
    for r in range(args.repeat):
        for name in names[r % len(names):] + names[:r % len(names)]:
            gc.collect()
            best[name] = max(best.get(name, (0.0, 0)), loops[name]())
    rlcard = best.get("RLCard uno env (2 players)", (0.0, 0))[0]
    for name, (rate, episodes) in best.items():
        line = f"{name:<32}{rate:>12,.0f} steps/s"
        label = name.split(" (")[0]
        if rlcard and label in TARGETS:
            line += f"   ×{rate / rlcard:.2f} RLCard"
        if name.endswith("(2 players)") and label in TARGETS:
            met = "met" if rate >= TARGETS[label] else "NOT met"
            line += f"   target {TARGETS[label]:,.0f}: {met}"
        print(line + f"   ({episodes} episodes)")


if __name__ == "__main__":
    main()
