"""IS-MCTS iterations/s on each engine (docs/compiled.md): the same searches (default settings,
the same tree policy) from the same positions, the Python search on the Python engine
(``UNO_MK_ENGINE=python``, the reference) and the search on the compiled core (whole iterations
in C), and with ``--other CHECKOUT`` that checkout's Python search (e.g. an export of the 0.9.0
release, the search before the core) in a subprocess of the same run. Positions: seat 0's
decisions with a choice in games of ``strategic`` at every seat; CPU time
(``time.process_time``) of the searches only, best of ``--repeats``; ``--profile`` prints where
a compiled search spends its time (cProfile, top functions by own time).

``--callgrind``: instructions an iteration, counted by valgrind's callgrind (stable on a shared
machine): a run that builds the positions and searches each with ``--iterations`` iterations,
less a run that builds them only, divided by the iterations (so the searches' set-up, one a
position, is included; both runs first search once for one iteration, so that one-time costs,
the core's import among them, cancel).

    PYTHONPATH=. python benchmarks/compiled_ismcts.py [--players 2 4] [--iterations 200] \
        [--other /tmp/uno-0.9.0] [--callgrind]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from uno_mk_env import Game, PlayerView, Rules
from uno_mk_env.agents.ismcts import ISMCTSAgent, SearchParams
from uno_mk_env.agents.rule_based import StrategicAgent

try:
    from uno_mk_env.compiled import ENGINE_VARIABLE
    from uno_mk_env.engine.observation import action_mask
except ImportError:  # a child of --other in a checkout before the core (0.9.0): older paths
    from uno_mk_env.observation import action_mask  # type: ignore[no-redef]

    ENGINE_VARIABLE = "UNO_MK_ENGINE"


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


def search_all(spots: list[tuple[PlayerView, int]], iterations: int) -> float:
    """Searches every position once; returns the CPU seconds."""
    agent = ISMCTSAgent(0, params=SearchParams(simulations=iterations))
    start = time.process_time()
    for view, prior in spots:
        agent.search(view, prior)
    return time.process_time() - start


def iterations_per_second(engine: str, spots: list[tuple[PlayerView, int]],
                          iterations: int) -> float:
    os.environ[ENGINE_VARIABLE] = engine  # read at every search
    return len(spots) * iterations / search_all(spots, iterations)


def child(args: argparse.Namespace) -> None:
    """``--child``: one measurement in this process (its checkout from ``PYTHONPATH``)."""
    spots = positions(args.players[0], args.positions)
    if args.child == "time":
        best = max(iterations_per_second(args.engine, spots, args.iterations)
                   for _ in range(args.repeats))
        print(json.dumps(best))
    else:  # under callgrind: "search", or "build" (the positions only)
        os.environ[ENGINE_VARIABLE] = args.engine
        search_all(spots[:1], 1)  # first-use costs (the core's import) in both runs
        if args.child == "search":
            search_all(spots, args.iterations)


def _run_child(checkout: Path, mode: str, engine: str, n: int, args: argparse.Namespace,
               callgrind: bool = False) -> str:
    """This script's ``--child mode`` on ``checkout``'s package: its stdout, or with
    ``callgrind`` the instructions counted (as text)."""
    command = [sys.executable, __file__, "--child", mode, "--engine", engine, "--players",
               str(n), "--positions", str(args.positions), "--iterations", str(args.iterations),
               "--repeats", str(args.repeats)]
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONHASHSEED": "0",
           "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        if callgrind:
            command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
                       *command]
        proc = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    if callgrind:
        return re.findall(r"Collected : (\d+)", proc.stderr)[-1]
    return proc.stdout


def per_iteration(checkout: Path, engine: str, n: int, args: argparse.Namespace) -> float:
    """Instructions an iteration (callgrind): searching less building the positions."""
    runs = [int(_run_child(checkout, mode, engine, n, args, callgrind=True))
            for mode in ("search", "build")]
    return (runs[0] - runs[1]) / (args.positions * args.iterations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--positions", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--other", type=Path, action="append", default=[],
                        help="another checkout whose Python search to measure (repeatable)")
    parser.add_argument("--callgrind", action="store_true",
                        help="instructions an iteration instead of times")
    parser.add_argument("--child", choices=["time", "search", "build"], help=argparse.SUPPRESS)
    parser.add_argument("--engine", default="python", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    for path in args.other:
        if not (path / "uno_mk_env" / "agents" / "ismcts.py").is_file():
            parser.error(f"--other {str(path)!r} has no uno_mk_env/agents/ismcts.py (a checkout "
                         "of this project, its agents/ linked into uno_mk_env/)")
    here = Path(__file__).resolve().parent.parent
    unit = "instructions an iteration (callgrind)" if args.callgrind else (
        f"iterations/s, CPU time, best of {args.repeats}")
    print(f"IS-MCTS at its default settings, {args.iterations} iterations a search, "
          f"{args.positions} positions: {unit}")
    names = [*(f"other:{p.name}" for p in args.other), "python", "compiled"]
    print(f"{'players':>7} " + " ".join(f"{name:>14}" for name in names) + "  speed-ups")
    for n in args.players:
        if args.callgrind:
            figures = [per_iteration(p, "python", n, args) for p in args.other]
            figures += [per_iteration(here, engine, n, args) for engine in ("python", "compiled")]
            ratios = [figure / figures[-1] for figure in figures[:-1]]
        else:
            figures = [float(_run_child(p, "time", "python", n, args)) for p in args.other]
            spots = positions(n, args.positions)
            figures += [max(iterations_per_second(engine, spots, args.iterations)
                            for _ in range(args.repeats)) for engine in ("python", "compiled")]
            ratios = [figures[-1] / figure for figure in figures[:-1]]
        print(f"{n:>7} " + " ".join(f"{figure:14,.0f}" for figure in figures) + "  "
              + " ".join(f"{r:.1f}x" for r in ratios))
        if args.profile and not args.callgrind:
            profile = cProfile.Profile()
            profile.runcall(iterations_per_second, "compiled", spots, args.iterations)
            pstats.Stats(profile).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
