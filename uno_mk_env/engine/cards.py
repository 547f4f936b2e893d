"""Card kinds, codes, items and points (docs/rules.md R2, docs/api.md#card-kinds).

A card *kind* is an int in ``0..53``: ``13 * colour + rank`` for coloured cards (rank 0-9 numbers,
10 Skip, 11 Reverse, 12 Draw Two), ``52`` Wild Draw Four, ``53`` Wild Item Box. The engine never
stores strings or card objects; the codes (``R7``, ``GS``, ``W4``, ...) exist only at the edges
(state dicts, logs, rendering).
"""

from __future__ import annotations

from collections.abc import Iterable

COLOURS: tuple[str, ...] = ("R", "Y", "G", "B")
COLOUR_NAMES: tuple[str, ...] = ("Red", "Yellow", "Green", "Blue")
NUM_COLOURS = 4
RANKS_PER_COLOUR = 13

SKIP, REVERSE, DRAW_TWO = 10, 11, 12
W4 = 52
WB = 53
NUM_KINDS = 54
NUM_CARDS = 112

RANK_CODES: tuple[str, ...] = tuple("0123456789") + ("S", "R", "D")
RANK_NAMES: tuple[str, ...] = tuple("0123456789") + ("Skip", "Reverse", "Draw Two")

# Items (R2): fixed by the card's colour; both wild kinds show the Bob-omb.
MUSHROOM, BANANA, GREEN_SHELL, LIGHTNING, BOB_OMB = range(5)
ITEM_NAMES: tuple[str, ...] = ("Mushroom", "Banana Peel", "Green Shell", "Lightning", "Bob-omb")
NUM_ITEMS = 5


def _kind_code(kind: int) -> str:
    if kind == W4:
        return "W4"
    if kind == WB:
        return "WB"
    return COLOURS[kind // 13] + RANK_CODES[kind % 13]


def _kind_name(kind: int) -> str:
    if kind == W4:
        return "Wild Draw Four"
    if kind == WB:
        return "Wild Item Box"
    return f"{COLOUR_NAMES[kind // 13]} {RANK_NAMES[kind % 13]}"


CODES: tuple[str, ...] = tuple(_kind_code(k) for k in range(NUM_KINDS))
NAMES: tuple[str, ...] = tuple(_kind_name(k) for k in range(NUM_KINDS))
CODE_TO_KIND: dict[str, int] = {c: k for k, c in enumerate(CODES)}

#: Colour index of each kind, ``-1`` for the two wild kinds.
COLOUR_OF: tuple[int, ...] = tuple(k // 13 if k < W4 else -1 for k in range(NUM_KINDS))
#: Rank of each kind (0-12), ``-1`` for wilds.
RANK_OF: tuple[int, ...] = tuple(k % 13 if k < W4 else -1 for k in range(NUM_KINDS))
#: Item shown on each kind (R2).
ITEM_OF: tuple[int, ...] = tuple(COLOUR_OF[k] if k < W4 else BOB_OMB for k in range(NUM_KINDS))
#: Points of each kind when left in a hand at the end of a round (R2, R10.2).
POINTS: tuple[int, ...] = tuple(
    (k % 13 if k % 13 < 10 else 20) if k < W4 else 50 for k in range(NUM_KINDS)
)
#: Copies of each kind in the 112-card deck (R2).
COPIES: tuple[int, ...] = tuple(
    (1 if k % 13 == 0 else 2) if k < W4 else (4 if k == W4 else 8) for k in range(NUM_KINDS)
)
#: The full deck as a tuple of kinds, in kind order (shuffled by the engine).
DECK: tuple[int, ...] = tuple(k for k in range(NUM_KINDS) for _ in range(COPIES[k]))
assert len(DECK) == NUM_CARDS


def kind(code: str) -> int:
    """Parses a card code (``"R7"``, ``"GS"``, ``"W4"``...) into its kind id.

    Raises:
        ValueError: naming the code and the accepted forms.
    """
    try:
        return CODE_TO_KIND[code]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown card code {code!r}: expected a colour letter R/Y/G/B followed by 0-9, "
            "S (Skip), R (Reverse) or D (Draw Two), or W4 / WB"
        ) from None


def code(kind_id: int) -> str:
    """The code of a kind id (``0..53``)."""
    return CODES[kind_id]


def kinds(codes: Iterable[str]) -> list[int]:
    """Parses a sequence of card codes."""
    return [kind(c) for c in codes]


def codes(kind_ids: Iterable[int]) -> list[str]:
    """Codes of a sequence of kind ids."""
    return [CODES[k] for k in kind_ids]


def counts_to_kinds(counts: Iterable[int]) -> tuple[int, ...]:
    """A count vector over kinds as the sorted kinds (``[0, 2, ...]`` -> ``(1, 1)``)."""
    out: list[int] = []
    for k, n in enumerate(counts):
        if n:
            out += [k] * n
    return tuple(out)


def counts_to_codes(counts: Iterable[int]) -> list[str]:
    """A count vector over kinds as a sorted list of codes (``[0, 2, ...]`` -> ``["R1", "R1"]``)."""
    return [CODES[k] for k, n in enumerate(counts) for _ in range(n)]


def colour(letter: str) -> int:
    """Parses a colour letter ``R``/``Y``/``G``/``B``."""
    try:
        return COLOURS.index(letter)
    except ValueError:
        raise ValueError(f"unknown colour {letter!r}: expected one of R, Y, G, B") from None


def hand_points(counts: Iterable[int]) -> int:
    """Points of a hand given as counts per kind (R10.2)."""
    return sum(n * p for n, p in zip(counts, POINTS))
#: A card field that holds no card.
NO_CARD = -1
