"""The compiled core's speed (docs/compiled.md#benchmarks), with its peers in the same run.

* decisions/s of uniformly random legal play at 2, 4 and 10 players: the core's own C loop
  (``random_play``, the engine's speed), the Python engine
  (``Game``), the compiled core driven from Python one decision at a time (``CompiledGame``, as
  pyspiel is driven), the compiled core's batched self-play tables (64 tables, the random legal
  actions drawn by numpy from the masks, observations and masks written), and OpenSpiel's
  ``crazy_eights`` through pyspiel (``benchmarks/peers.py``);
* learner steps/s of the batched tables (64 tables, one core, observation and mask included)
  against ``random`` and ``strategic`` opponents;
* ``--callgrind``: instructions of a decision (random legal play in C, ``random_play``) and of
  a batched learner step (obs, mask and the opponents' decisions included; the learner's
  action the first legal one), counted by valgrind's callgrind at 4 players (stable on a
  shared machine, unlike time).

Times are CPU time (``time.process_time``), best of ``--repeats``.

    python benchmarks/compiled_speed.py [--budget 200000] [--repeats 3] [--callgrind]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np

from uno_mk_env import Game, Rules
from uno_mk_env.compiled import _core

try:  # run as a script (python benchmarks/compiled_speed.py) or as a module
    import peers
except ImportError:  # pragma: no cover
    from benchmarks import peers

TABLES = 64


def python_engine(budget: int, n: int, seed: int = 0) -> float:
    return _one_by_one(Game, budget, n, seed)


def compiled_one_by_one(budget: int, n: int, seed: int = 0) -> float:
    return _one_by_one(_core.CompiledGame, budget, n, seed)


def _one_by_one(cls: Callable[..., object], budget: int, n: int, seed: int) -> float:
    rules = Rules(num_players=n)
    pick = np.random.default_rng(seed).random(budget).tolist()
    game = cls(rules, seed=seed)
    games = seed
    start = time.process_time()
    for u in pick:
        if game.game_over:  # type: ignore[attr-defined]
            games += 1
            game = cls(rules, seed=games)
        legal = game.legal_action_ids()  # type: ignore[attr-defined]
        game.step(legal[int(u * len(legal))])  # type: ignore[attr-defined]
    return budget / (time.process_time() - start)


def c_loop(budget: int, n: int, seed: int = 0) -> float:
    start = time.process_time()
    _core.random_play(Rules(num_players=n), budget, seed)
    return budget / (time.process_time() - start)


def batched_self_play(budget: int, n: int, seed: int = 0) -> float:
    tables = _core.BatchedTables(TABLES, num_players=n, self_play=True)
    tables.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = max(budget // TABLES, 1)
    start = time.process_time()
    for _ in range(steps):
        tables.step(np.argmax(tables.masks * rng.random((TABLES, 73)), axis=1))
    return steps * TABLES / (time.process_time() - start)


def batched_learner(budget: int, n: int, opponents: str, seed: int = 0) -> float:
    tables = _core.BatchedTables(TABLES, num_players=n, opponents=opponents)
    tables.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = max(budget // TABLES, 1)
    start = time.process_time()
    for _ in range(steps):
        tables.step(np.argmax(tables.masks * rng.random((TABLES, 73)), axis=1))
    return steps * TABLES / (time.process_time() - start)


def openspiel(budget: int, n: int, seed: int = 0) -> float:
    return peers.openspiel_crazy_eights_decisions(budget, seed, n)[0]


def best(run: Callable[[], float], repeats: int) -> float:
    return max(run() for _ in range(repeats))


def instructions(mode: str, amount: int) -> int:
    """Instructions (callgrind's ``Collected``) of this script's ``--callgrind-child`` run."""
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out", sys.executable,
             __file__, "--callgrind-child", mode, "--budget", str(amount)],
            check=True, capture_output=True, text=True)
    return int(re.findall(r"Collected : (\d+)", proc.stderr)[-1])


def per_unit(mode: str, amount: int) -> float:
    """Instructions per decision (``random``) or per learner step (``strategic``): the
    difference between a run of ``2 * amount`` and one of ``amount``, so start-up cancels."""
    return (instructions(mode, 2 * amount) - instructions(mode, amount)) / amount


def callgrind_child(mode: str, amount: int) -> None:
    rules = Rules(num_players=4)
    if mode == "random":  # engine decisions, random legal play, in C
        _core.random_play(rules, amount, 0)
        return
    tables = _core.BatchedTables(TABLES, num_players=4, opponents=mode)
    tables.reset(seed=0)
    actions = np.zeros(TABLES, np.int64)
    for _ in range(amount // TABLES):
        tables.step(np.argmax(tables.masks, axis=1, out=actions))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=int, default=200_000, help="decisions per run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4, 10])
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--callgrind-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.callgrind_child:
        callgrind_child(args.callgrind_child, args.budget)
        return
    b, r = args.budget, args.repeats
    have_spiel = peers.available()["open_spiel"]
    print(f"CPU time, best of {r}; {b:,} decisions per run; batched: {TABLES} tables")
    print(f"{'players':>7} {'engine':<34} {'decisions/s':>13} {'vs crazy_eights':>16}")
    for n in args.players:
        rows = {
            "compiled, C loop (random_play)": lambda n=n: c_loop(b * 20, n),
            "Python engine (Game)": lambda n=n: python_engine(b // 4, n),
            "compiled, one by one from Python": lambda n=n: compiled_one_by_one(b, n),
            "compiled, batched self-play": lambda n=n: batched_self_play(b * 4, n),
        }
        if have_spiel:
            rows["OpenSpiel crazy_eights (pyspiel)"] = lambda n=n: openspiel(b // 2, n)
        figures = {name: best(run, r) for name, run in rows.items()}
        ref = figures.get("OpenSpiel crazy_eights (pyspiel)")
        for name, dps in figures.items():
            ratio = f"{dps / ref:15.1f}x" if ref else ""
            print(f"{n:>7} {name:<34} {dps:13,.0f} {ratio:>16}")
    print(f"\nlearner steps/s, {TABLES} tables, one core (obs + mask written, numpy picks the "
          "learner's random legal actions)")
    for n in args.players:
        for opponents in ("random", "strategic"):
            sps = best(lambda n=n, o=opponents: batched_learner(b * 2, n, o), r)
            print(f"{n:>7} vs {opponents:<10} {sps:13,.0f}")
    if args.callgrind:
        print("\ninstructions (callgrind, 4 players):")
        print(f"  a decision, random legal play in C   {per_unit('random', 200_000):10,.0f}")
        for opponents in ("random", "strategic"):
            print(f"  a learner step vs {opponents:<10}"
                  f"         {per_unit(opponents, 64_000):10,.0f}")


if __name__ == "__main__":
    main()
