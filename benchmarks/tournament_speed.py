"""Tournament games per CPU second on the Python engine and on the compiled core
(``evaluation/match.py``: the seats whose agents have a compiled twin decide inside the core),
the same tournaments in one run, and whether their results are identical.

::

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/tournament_speed.py [--games 240]
        [--repeats 2]

Each line is one tournament (``run_tournament``, one worker, in this process, seed 0), timed
in CPU seconds, best of ``--repeats``; the engine is chosen with ``UNO_MK_ENGINE``. The
mixed line seats a PPO policy (``models/ppo_2p.npz``, numpy) against ``strategic``: the
policy decides in Python from the core's views, the opponent in C.
"""

from __future__ import annotations

import argparse
import os
import time

from uno_mk_env.compiled import ENGINE_VARIABLE
from uno_mk_env.evaluation.tournament import run_tournament

LINES = [
    (["strategic", "greedy", "random"], 2),
    (["strategic", "greedy", "random"], 4),
    (["strategic", "greedy", "random"], 10),
    (["ppo:models/ppo_2p.npz", "strategic"], 2),
]


def timed(specs: list[str], players: int, games: int, engine: str) -> tuple[float, list]:
    os.environ[ENGINE_VARIABLE] = engine
    cpu = time.process_time()
    result = run_tournament(specs, players, games, seed=0)
    return time.process_time() - cpu, result.records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=240)
    parser.add_argument("--repeats", type=int, default=2)
    a = parser.parse_args()
    timed(["random", "random"], 2, 2, "compiled")  # imports and agent discovery
    print("| entrants | players | games | Python engine | compiled | speed-up | identical |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for specs, players in LINES:
        games = max(players, a.games // (4 if players == 10 else 1))
        best: dict[str, float] = {}
        records = {}
        for _ in range(a.repeats):
            for engine in ("python", "compiled"):
                seconds, records[engine] = timed(specs, players, games, engine)
                best[engine] = min(best.get(engine, seconds), seconds)
        rate = {e: len(records[e]) / s for e, s in best.items()}
        print(f"| {', '.join(specs)} | {players} | {len(records['python'])} | "
              f"{rate['python']:,.0f} games/s | {rate['compiled']:,.0f} games/s | "
              f"{rate['compiled'] / rate['python']:.1f}x | "
              f"{records['python'] == records['compiled']} |")


if __name__ == "__main__":
    main()
