"""Which cards may be played (R4.1) and when a Wild Draw Four is legal (R6.1).

Hands are kept by the engine as count vectors plus a *held mask* (bit ``k`` set when the hand
holds kind ``k``). Two forms of each rule live here, side by side:

* the plain form (:func:`playable`, :func:`w4_is_legal`), read straight off the rule text;
* the engine's fast form for the ``play`` phase: :data:`CANDIDATES_ON` gives, for an active colour
  and a top card, the bitmask of the kinds that match; the legal ``PLAY`` ids are the set bits of
  ``held & candidates``, read from chunk tables (:func:`play_phase_ids`) instead of a bit loop.
  ``tests/test_engine_oracles.py`` checks the fast form against a plain reference at every step
  of thousands of random games.
"""

from __future__ import annotations

from . import actions as A
from .cards import COLOUR_OF, NUM_COLOURS, NUM_KINDS, RANK_OF, W4, WB

__all__ = [
    "CANDIDATES_ON", "PLAY_IDS", "UNO_KEY", "W4_BIT", "WB_BIT", "held_mask", "play_phase_ids",
    "playable", "w4_is_legal",
]

W4_BIT = 1 << W4
WB_BIT = 1 << WB
#: Bitmask of the 13 kinds of each colour.
COLOUR_MASKS = tuple(sum(1 << k for k in range(13 * c, 13 * c + 13)) for c in range(NUM_COLOURS))


_BIT_CHAR = b"0" + b"1" * 255  # bytes.translate: a count of 0 -> "0", any other -> "1"


def held_mask(counts: bytes | bytearray) -> int:
    """Bit ``k`` set iff the hand (counts per kind, one byte each) holds kind ``k``.

    Same as ``sum(1 << k for k, c in enumerate(counts) if c)``, ten times faster: the counts
    become a string of binary digits (kind 0 last) that ``int(..., 2)`` reads."""
    return int(bytes(counts).translate(_BIT_CHAR)[::-1], 2)


def w4_is_legal(held: int, colour: int, item_box_counts: bool) -> bool:
    """R6.1: a Wild Draw Four is legal iff the hand (``held``: its held mask) has no card of the
    active ``colour`` and, when ``item_box_counts`` (the rule option ``item_box_counts_for_w4``),
    no Wild Item Box. Number or symbol matches in other colours do not count."""
    if held & COLOUR_MASKS[colour]:
        return False
    return not (item_box_counts and held & WB_BIT)


def playable(card: int, top: int, colour: int) -> bool:
    """R4.1, plainly: ``card`` matches the active ``colour``, or the coloured ``top`` card's
    number or symbol, or is a wild (a W4's own legality, R6, is checked apart)."""
    if card >= W4:
        return True
    return COLOUR_OF[card] == colour or (top < W4 and RANK_OF[card] == RANK_OF[top])


#: ``CANDIDATES_ON[colour][top]``: bitmask of the kinds :func:`playable` on ``top`` with
#: ``colour`` active.
CANDIDATES_ON: tuple[tuple[int, ...], ...] = tuple(
    tuple(sum(1 << k for k in range(NUM_KINDS) if playable(k, top, c)) for top in range(NUM_KINDS))
    for c in range(NUM_COLOURS)
)

#: Set in a play-phase key when ``CALL_UNO`` is legal too (the bit after the 54 kinds).
UNO_KEY = 1 << NUM_KINDS
_CHUNK = 11  # 5 chunks of 11 bits cover the 54 kinds and the UNO flag


def _bit_ids(bits: int, base: int, tail: tuple[int, ...] = ()) -> tuple[tuple[int, ...], ...]:
    """``table[v]``: the ids ``base + i`` of the set bits ``i`` of ``v``, ascending, then
    ``tail``; for every ``v`` below ``2**bits``."""
    return tuple(
        (*(base + i for i in range(bits) if v >> i & 1), *tail) for v in range(1 << bits)
    )


#: ``PLAY_IDS[i][v]``: the ids of chunk ``i`` (kinds ``11 i`` to ``11 i + 10``) of a key whose
#: bits there are ``v``. The last chunk holds kinds 44-53 and the UNO flag: its ids end with
#: DRAW (and CALL_UNO).
PLAY_IDS = (
    *(_bit_ids(_CHUNK, _CHUNK * i) for i in range(4)),
    _bit_ids(10, 44, (A.DRAW,)) + _bit_ids(10, 44, (A.DRAW, A.CALL_UNO)),
)
_IDS_0, _IDS_1, _IDS_2, _IDS_3, _IDS_4 = PLAY_IDS
assert UNO_KEY >> (4 * _CHUNK) == 1 << 10


def play_phase_ids(key: int) -> tuple[int, ...]:
    """The ``play``-phase legal ids, ascending, of ``key`` = the held mask of the playable kinds,
    ``| UNO_KEY`` when ``CALL_UNO`` is legal: ``PLAY(k)`` for each set bit, ``DRAW``, then
    ``CALL_UNO`` if flagged. Five table lookups (about 1.7x faster than a lowest-set-bit loop
    on the hands of real games, ``python -m benchmarks.fast_paths``; ``Game`` inlines them)."""
    return (_IDS_0[key & 0x7FF] + _IDS_1[key >> 11 & 0x7FF] + _IDS_2[key >> 22 & 0x7FF]
            + _IDS_3[key >> 33 & 0x7FF] + _IDS_4[key >> 44])
