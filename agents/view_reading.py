"""What a seat reads from its own view: the legal actions, its hand by colour, R6.1 for its own
W4, and the hypergeometric chances of what the others hold among the unseen cards (the 112-card
deck minus the own hand minus the discard pile). The rule-based agents decide from these, and
the search agent shares the legal-action and UNO-reflex helpers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from uno_mk_env import PlayerView
from uno_mk_env import actions as A
from uno_mk_env.engine import legality
from uno_mk_env.engine.cards import POINTS, W4, WB
from uno_mk_env.engine.legality import held_mask

__all__ = [
    "COLOURED_PER_COLOUR", "colour_counts", "colour_points", "legal_ids", "most_held_colour",
    "p_holds_colour", "shell_target", "unseen_counts", "uno_reflex", "w4_is_legal",
]

COLOURED_PER_COLOUR = 25  # R2: one 0, two each of 1-9, Skip, Reverse, Draw Two


# ------------------------------------------------------------------------------------ helpers
def legal_ids(
    action_mask: np.ndarray | Sequence[int] | None, view: PlayerView
) -> tuple[int, ...]:
    """Legal action ids: the decider's view carries them (fast; the mask may then be ``None``);
    else read the mask."""
    if view.legal_actions:
        return view.legal_actions
    return tuple(np.flatnonzero(np.asarray(action_mask)).tolist())


def colour_counts(hand: Sequence[int]) -> list[int]:
    """Coloured cards held per colour (R, Y, G, B); wilds are not counted."""
    return [sum(hand[0:13]), sum(hand[13:26]), sum(hand[26:39]), sum(hand[39:52])]


def colour_points(hand: Sequence[int], colour: int) -> int:
    """Points (R2) of the cards of ``colour`` in ``hand``."""
    base = 13 * colour
    return sum(n * POINTS[base + i] for i, n in enumerate(hand[base:base + 13]))


def w4_is_legal(view: PlayerView, colour: int | None = None) -> bool:
    """R6.1 for the viewer's own hand: no card of the active colour (and, by default, no held WB).

    The W4 itself never counts, so this is also right for a W4 just drawn (``play_drawn``).
    """
    c = view.active_colour if colour is None else colour
    return legality.w4_is_legal(held_mask(view.hand), c, view.rules.item_box_counts_for_w4)


def unseen_counts(view: PlayerView) -> tuple[int, list[int], int]:
    """``(total unseen, unseen per colour, unseen WB)``: cards not in the own hand or discard."""
    hand, disc = view.hand, view.discard_counts
    per_colour = [
        COLOURED_PER_COLOUR - sum(hand[b:b + 13]) - sum(disc[b:b + 13]) for b in (0, 13, 26, 39)
    ]
    wb = 8 - hand[WB] - disc[WB]
    w4 = 4 - hand[W4] - disc[W4]
    return sum(per_colour) + wb + w4, per_colour, wb


def p_holds_colour(
    view: PlayerView, colour: int, holder: int, with_wb: bool, size: int | None = None
) -> float:
    """Probability that ``holder`` holds a card of ``colour`` (or a WB when ``with_wb``) among
    ``size`` of its cards (default: its whole hand).

    Hypergeometric: the holder's ``h`` cards are a uniform sample of the ``U`` unseen cards,
    ``m`` of which match, so ``P(none) = prod_{i<h} (U - m - i) / (U - i)``.
    """
    total, per_colour, wb = unseen_counts(view)
    matching = per_colour[colour] + (wb if with_wb else 0)
    p_none = 1.0
    for i in range(view.hand_sizes[holder] if size is None else size):
        if total - i <= 0:
            break
        p_none *= max(total - matching - i, 0) / (total - i)
    return 1.0 - p_none


def shell_target(view: PlayerView) -> int:
    """``TARGET(+k)`` at the opponent closest to going out (R7.2 Green Shell).

    Smallest hand first (one card from winning is the biggest threat); ties go to whoever plays
    soonest in the current direction, because they get the first chance to go out.
    """
    n, me = view.num_players, view.seat
    best_key, best_k = None, 1
    for k in range(1, n):
        turns_away = k if view.direction == 1 else n - k
        key = (view.hand_sizes[(me + k) % n], turns_away)
        if best_key is None or key < best_key:
            best_key, best_k = key, k
    return A.TARGET_BASE + best_k - 1


def most_held_colour(hand: Sequence[int]) -> int:
    """The colour with the most cards in ``hand``; ties by points, then R < Y < G < B."""
    counts = colour_counts(hand)
    return max(range(4), key=lambda c: (counts[c], colour_points(hand, c), -c))


def uno_reflex(legal: tuple[int, ...]) -> int | None:
    """Always catch, then always call (R8): both are free and keep the seat deciding."""
    if A.CATCH_UNO in legal:
        return A.CATCH_UNO
    if A.CALL_UNO in legal:
        return A.CALL_UNO
    return None
