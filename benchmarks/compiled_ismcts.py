"""IS-MCTS iterations/s on each engine (docs/compiled.md): the same searches (default settings,
the same tree policy) from the same positions, with the determinizations and simulations on the
Python engine (``UNO_MK_ENGINE=python``) and on the compiled core. Positions: the searching
seat's decisions with a choice in games of one ``ismcts`` seat against ``strategic``; CPU time
(``time.process_time``) of the searches only, best of ``--repeats``; ``--profile`` prints where
a compiled search spends its time (cProfile, top functions by own time).

    PYTHONPATH=. python benchmarks/compiled_ismcts.py [--players 2 4] [--iterations 200]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import time
from typing import Any

from uno_mk_env import Game, PlayerView, Rules
from uno_mk_env.agents.ismcts import ISMCTSAgent, SearchParams
from uno_mk_env.agents.rule_based import StrategicAgent
from uno_mk_env.compiled import ENGINE_VARIABLE
from uno_mk_env.engine.observation import action_mask


def positions(n: int, count: int, seed: int = 0) -> list[tuple[PlayerView, int]]:
    """``count`` searched positions (the view and the prior's choice) of seat 0, from games of
    ``strategic`` at every seat."""
    found: list[tuple[PlayerView, int]] = []
    game_seed = seed
    while len(found) < count:
        game = Game(Rules(num_players=n), seed=game_seed)
        agents = [StrategicAgent(s) for s in range(n)]
        while not game.game_over and len(found) < count:
            p = game.current_player
            view = game.view(p)
            action = agents[p].act(None, action_mask(view.legal_actions), view)
            if p == 0 and len(view.legal_actions) > 2:
                found.append((view, action))
            game.step(action)
        game_seed += 1
    return found


def iterations_per_second(engine: str, spots: list[tuple[PlayerView, int]],
                          iterations: int) -> float:
    os.environ[ENGINE_VARIABLE] = engine  # read at every search
    agent = ISMCTSAgent(0, params=SearchParams(simulations=iterations))
    start = time.process_time()
    for view, prior in spots:
        agent.search(view, prior)
    return len(spots) * iterations / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--positions", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    print(f"IS-MCTS iterations/s, default settings, {args.iterations} iterations a search, "
          f"{args.positions} positions, CPU time, best of {args.repeats}")
    print(f"{'players':>7} {'python':>10} {'compiled':>10} {'speed-up':>9}")
    for n in args.players:
        spots = positions(n, args.positions)
        figures: dict[str, Any] = {
            engine: max(iterations_per_second(engine, spots, args.iterations)
                        for _ in range(args.repeats)) for engine in ("python", "compiled")}
        print(f"{n:>7} {figures['python']:10,.0f} {figures['compiled']:10,.0f} "
              f"{figures['compiled'] / figures['python']:8.1f}x")
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(iterations_per_second, "compiled", spots, args.iterations)
            pstats.Stats(profile).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
