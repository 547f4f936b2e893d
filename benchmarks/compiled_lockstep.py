"""The long lockstep run of docs/compiled.md#bit-exactness: at least ten million decisions of
random legal play on the Python engine and the compiled core side by side, cycling through every
rule option set of ``tests/test_compiled_lockstep.py`` and 2-10 players.

At every decision the two engines must offer the same legal actions to the same decider and
show it the same observation; at the end of every game (or every ``--cap`` decisions) their
whole state, events included, must be equal. The first difference stops the run with the game's
rules, seed and step. Outside the test suite (minutes of CPU).

    PYTHONPATH=. python -m benchmarks.compiled_lockstep [--decisions 10000000] [--cap 2000]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

import numpy as np

from tests.test_compiled_lockstep import OPTION_SETS, choose, rules_of
from uno_mk_env import Game
from uno_mk_env.compiled._core import CompiledGame
from uno_mk_env.engine.observation import encode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--decisions", type=int, default=10_000_000)
    parser.add_argument("--cap", type=int, default=2000, help="decisions per game at most")
    args = parser.parse_args()
    decisions = games = 0
    start = time.process_time()
    cases = itertools.cycle(itertools.product(OPTION_SETS, range(2, 11)))
    for seed in itertools.count():
        name, n = next(cases)
        rules = rules_of(OPTION_SETS[name], n)
        py, c = Game(rules, seed=seed), CompiledGame(rules, seed=seed)
        pick = np.random.default_rng([seed, 7])
        while not py.game_over and py.num_steps < args.cap:
            legal = py.legal_action_ids()
            p = py.current_player
            if c.legal_action_ids() != legal or c.current_player != p or not np.array_equal(
                    c.observation(p), encode(py.view(p))):
                print(f"DIFFERENCE: {name}, {n} players, seed {seed}, step {py.num_steps}")
                return 1
            action = choose(legal, pick)
            py.step(action)
            c.step(action)
        if c.to_dict(True) != py.to_dict(True):
            print(f"DIFFERENCE in the state: {name}, {n} players, seed {seed}")
            return 1
        decisions += py.num_steps
        games += 1
        if games % 2000 == 0:
            print(f"{decisions:,} decisions, {games:,} games", flush=True)
        if decisions >= args.decisions:
            break
    print(f"identical: {decisions:,} decisions in {games:,} games ({len(OPTION_SETS)} option "
          f"sets x 2-10 players), {time.process_time() - start:,.0f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
