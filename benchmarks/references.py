"""Plain reference forms of the engine's fast paths: slow, obvious code written from the
descriptions, against which the fast forms are compared (``benchmarks/fast_paths.py`` times
them; ``tests/test_observation.py`` checks the encoder against :func:`reference_encode`).
"""

from __future__ import annotations

import numpy as np

from uno_mk_env import actions
from uno_mk_env.engine import observation as O
from uno_mk_env.engine.legality import UNO_KEY
from uno_mk_env.engine.view import PlayerView


def plain_play_ids(key: int) -> tuple[int, ...]:
    """The play-phase legal ids of a chunk key, by a lowest-set-bit loop."""
    uno = key & UNO_KEY
    key &= UNO_KEY - 1
    ids = []
    while key:
        low = key & -key
        ids.append(low.bit_length() - 1)
        key ^= low
    ids.append(actions.DRAW)
    if uno:
        ids.append(actions.CALL_UNO)
    return tuple(ids)


def plain_held_mask(counts: bytes) -> int:
    """A hand's held-kinds bitmask, by a sum over the 54 counts."""
    return sum(1 << k for k, c in enumerate(counts) if c)


def reference_encode(view: PlayerView) -> np.ndarray:
    """A slow, independent encoder written from the layout's descriptions."""
    n, me = view.num_players, view.seat
    out = {p.name: np.zeros(p.size, np.float32) for p in O.OBS_PIECES}

    def rel(seat: int) -> int:
        return (seat - me) % n

    def hot(name: str, index: int) -> None:
        if index >= 0:
            out[name][index] = 1

    out["hand"][:] = list(view.hand)
    hot("top_card", view.top_card)
    hot("active_colour", view.active_colour)
    if view.phase < actions.NUM_PHASES:
        hot("phase", view.phase)
    hot("drawn_card", view.drawn_card)
    out["direction"][0] = 1 if view.direction == 1 else 0
    for seat in range(n):
        k = rel(seat)
        out["seat_present"][k] = 1
        out["hand_sizes"][k] = view.hand_sizes[seat]
        out["uno_called"][k] = view.uno_called[seat]
        out["scores"][k] = view.scores[seat] / 100
    for name, seat in (("decider", view.current_player),
                       ("previous_turn_player", view.previous_turn_player),
                       ("uno_catchable", view.uno_catchable), ("uno_pending", view.uno_pending),
                       ("w4_player", view.w4_player),
                       ("revealed_by", view.revealed_by)):
        if seat >= 0:
            hot(name, rel(seat))
    out["draw_pile_size"][0] = view.draw_pile_size
    out["discard_pile_size"][0] = sum(view.discard_counts)
    out["discard_counts"][:] = list(view.discard_counts)
    hot("w4_prev_colour", view.w4_prev_colour)
    if view.revealed_hand is not None:
        out["revealed_hand"][:] = list(view.revealed_hand)
    hot("last_item", view.last_item)
    hot("colour_context", view.colour_context)
    out["idle_turns"][0] = view.idle_turns
    out["round"][0] = min(view.round, O.MAX_ROUND)
    for seat in range(n):
        for colour in range(4):
            out["void_evidence"][4 * rel(seat) + colour] = view.void_evidence[4 * seat + colour]
    return np.concatenate([out[p.name] for p in O.OBS_PIECES])
