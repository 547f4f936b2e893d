"""The fast forms of R4.1/R6.1 in :mod:`uno_mk_env.engine.legality` against plain ones."""

from __future__ import annotations

import numpy as np

from uno_mk_env import actions as A
from uno_mk_env.engine.cards import COLOUR_OF, NUM_COLOURS, NUM_KINDS, RANK_OF, W4, WB
from uno_mk_env.engine.legality import (
    CANDIDATES_ON,
    UNO_KEY,
    held_mask,
    play_phase_ids,
    playable,
    w4_is_legal,
)


def test_play_phase_ids_are_the_set_bits_then_draw_then_call_uno() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20000):
        kinds = sorted(set(rng.integers(0, NUM_KINDS, size=rng.integers(0, 20)).tolist()))
        uno = bool(rng.random() < 0.3)
        key = sum(1 << k for k in kinds) | (UNO_KEY if uno else 0)
        expected = (*kinds, A.DRAW, *((A.CALL_UNO,) if uno else ()))
        assert play_phase_ids(key) == expected


def test_candidates_are_exactly_the_playable_kinds() -> None:
    """R4.1: colour, or the coloured top card's number/symbol, or a wild."""
    for colour in range(NUM_COLOURS):
        for top in range(NUM_KINDS):
            for card in range(NUM_KINDS):
                plain = card >= W4 or COLOUR_OF[card] == colour or (
                    top < W4 and RANK_OF[card] == RANK_OF[top])
                assert playable(card, top, colour) == plain
                assert bool(CANDIDATES_ON[colour][top] >> card & 1) == plain


def test_held_mask_and_w4_legality_read_the_counts() -> None:
    """R6.1 on a count vector, read plainly."""
    rng = np.random.default_rng(1)
    for _ in range(3000):
        counts = bytearray((rng.integers(0, 3, NUM_KINDS) * (rng.random(NUM_KINDS) < 0.2)).tolist())
        held = held_mask(counts)
        assert held == sum(1 << k for k in range(NUM_KINDS) if counts[k])
        for colour in range(NUM_COLOURS):
            for wb_counts in (True, False):
                plain = not any(counts[13 * colour:13 * colour + 13]) and not (
                    wb_counts and counts[WB])
                assert w4_is_legal(held, colour, wb_counts) == plain
