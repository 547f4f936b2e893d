"""Does each speed trick pay? Every fast path against its plain form, on the same inputs.

The engine and env keep a few precomputed tables and caches; each stays only if this script
shows it pays, and each has a test that compares it with the plain form:

* ``play ids``: the play-phase legal ids from five 11-bit chunk tables vs a lowest-set-bit loop
  (test: ``tests/test_legality.py``);
* ``held mask``: a hand's held-kinds bitmask via ``bytes.translate`` + ``int(..., 2)`` vs a sum
  over the 54 counts (``tests/test_legality.py``, ``tests/test_engine_oracles.py``);
* ``mask cache``: the env's read-only ``int8`` masks shared by legal-id tuple vs building one per
  step (``tests/test_env.py``, ``tests/test_engine_oracles.py``);
* ``encode``: the observation encoder (one ``b"".join`` of byte pieces) vs the plain reference
  encoder (``tests/test_observation.py`` compares them).

Inputs are recorded from real random games so the mix of hands and phases is realistic.

    python -m benchmarks.fast_paths [--decisions 20000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from benchmarks.references import plain_held_mask, plain_play_ids, reference_encode
from uno_mk_env import Game, Rules
from uno_mk_env import actions as A
from uno_mk_env.engine.legality import UNO_KEY, held_mask, play_phase_ids
from uno_mk_env.engine.observation import action_mask, encode


def _record(decisions: int, seed: int) -> tuple[list[int], list[bytes], list[tuple], list]:
    """Play-phase keys, hands, legal-id tuples and views seen along random 4-player games."""
    rng = np.random.default_rng(seed)
    keys, hands, legals, views = [], [], [], []
    g = Game(Rules(num_players=4), seed=seed)
    while len(legals) < decisions:
        if g.game_over:
            g = Game(Rules(num_players=4), seed=int(rng.integers(2**31)))
        p = g.current_player
        legal = g.legal_action_ids()
        legals.append(legal)
        hands.append(bytes(g.hands[p]))
        views.append(g.view(p))
        if g.phase == A.PLAY:
            plays = [a for a in legal if a < A.DRAW]
            keys.append(sum(1 << a for a in plays) | (UNO_KEY if A.CALL_UNO in legal else 0))
        g.step(legal[int(rng.integers(len(legal)))])
    return keys, hands, legals, views


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fast_paths",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    keys, hands, legals, views = _record(args.decisions, seed=1)
    cache: dict[tuple[int, ...], np.ndarray] = {}

    def cached_mask(legal: tuple[int, ...]) -> np.ndarray:
        mask = cache.get(legal)
        if mask is None:
            mask = cache[legal] = action_mask(legal)
        return mask

    pairs = {
        "play ids": (lambda: [play_phase_ids(k) for k in keys],
                     lambda: [plain_play_ids(k) for k in keys], len(keys)),
        "held mask": (lambda: [held_mask(h) for h in hands],
                      lambda: [plain_held_mask(h) for h in hands], len(hands)),
        "mask cache": (lambda: [cached_mask(x) for x in legals],
                       lambda: [action_mask(x) for x in legals], len(legals)),
        "encode": (lambda: [encode(v) for v in views[:2000]],
                   lambda: [reference_encode(v) for v in views[:2000]], 2000),
    }
    print(f"{'fast path':<12}{'fast ns':>10}{'plain ns':>10}{'speed-up':>10}")
    for name, (fast, plain, n) in pairs.items():
        assert [np.asarray(x).tolist() for x in fast()] == [
            np.asarray(x).tolist() for x in plain()], name
        t_fast = min(timeit.repeat(fast, number=1, repeat=args.repeats)) / n * 1e9
        t_plain = min(timeit.repeat(plain, number=1, repeat=args.repeats)) / n * 1e9
        print(f"{name:<12}{t_fast:>10.0f}{t_plain:>10.0f}{t_plain / t_fast:>9.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
