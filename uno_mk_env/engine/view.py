"""What one seat may know: :class:`PlayerView`, built by ``Game.view(seat)``.

Agents and the observation encoder see only views, so they cannot see hidden cards.
"""

from __future__ import annotations

from typing import NamedTuple

from .cards import NO_CARD, NUM_KINDS
from .play import Play
from .rules import Rules

__all__ = ["PlayerView", "player_view"]



class PlayerView(NamedTuple):
    """Everything one seat may know, and nothing else. Agents and the observation encoder see only
    this. Card kinds are ids (``uno_mk_env.engine.cards``); ``-1`` means "none". Counts per kind
    (``hand``, ``discard_counts``, ``revealed_hand``) are ``bytes`` of 54: ``hand[k]`` is the
    number of cards of kind ``k`` (an int; ``np.frombuffer(view.hand, np.uint8)`` for an array);
    per-seat fields are tuples indexed by absolute seat.

    Fields: ``phase`` (int, ``uno_mk_env.engine.actions.PHASE_NAMES``), ``drawn_card`` (only when
    this
    seat is deciding in ``play_drawn``), ``w4_player``/``w4_prev_colour`` (the round's latest W4),
    ``revealed_hand``/``revealed_by`` (the W4 player's hand shown to this seat by its latest
    challenge this round; kept when other seats challenge later, R6.3),
    ``last_item`` (``uno_mk_env.engine.cards.ITEM_NAMES`` index), ``uno_catchable`` (a seat whose
    missed
    UNO may be caught now, ``uno_catch`` ``"next_player"``/``"any_player"`` only; in phase
    ``uno_catch`` the seat the decider is asked about), ``uno_pending`` (a seat left with
    one card and no UNO call whose penalty or catch is still open, any ``uno_catch``),
    ``colour_context`` (why a colour is being chosen: 0 W4, 1 Bob-omb, 2 start card; 3 is never
    used, R7.3), ``idle_turns`` (R9 stalemate count), ``turn_player``/``previous_turn_player``
    (whose turn it is / was before),
    ``void_evidence`` (``bytes``, index ``4 * seat + colour``: :data:`VOID_MEMORY` when the
    seat last drew voluntarily (R4.2) while that colour was active, minus one per card it drew
    since, floored at 0; 0 if it has not this round: how fresh the public sign is that it holds
    none of that colour), ``w4_hand_size`` (cards the latest W4's player held beside it when it
    played it, -1 if none: public, as hand sizes are), ``w4_illegal`` (whether that W4 broke R6.1,
    1/0, known only to its player; -1 for every other seat), ``legal_actions`` (ids, only for
    the decider).
    """

    seat: int
    num_players: int
    rules: Rules
    phase: int
    current_player: int
    hand: bytes
    top_card: int
    active_colour: int
    drawn_card: int
    direction: int
    hand_sizes: tuple[int, ...]
    uno_called: tuple[bool, ...]
    scores: tuple[int, ...]
    draw_pile_size: int
    discard_pile_size: int
    discard_counts: bytes
    w4_player: int
    w4_prev_colour: int
    revealed_hand: bytes | None
    revealed_by: int
    last_item: int
    uno_catchable: int
    uno_pending: int
    dealer: int
    round: int
    colour_context: int
    idle_turns: int
    turn_player: int
    previous_turn_player: int
    void_evidence: bytes
    w4_hand_size: int
    w4_illegal: int
    legal_actions: tuple[int, ...]

    @property
    def is_decider(self) -> bool:
        """True when this seat makes the current decision."""
        return self.current_player == self.seat

    def relative(self, seat: int) -> int:
        """Seat offset clockwise from this view's seat (0 = me)."""
        return (seat - self.seat) % self.num_players


_new_view = tuple.__new__
assert len(PlayerView._fields) == 33, "player_view builds PlayerView positionally: update it"


def player_view(self: Play, seat: int) -> PlayerView:
    """What ``seat`` may know (docs/api.md#playerview), as an immutable :class:`PlayerView`:
    ``Game.view`` (this function is that method)."""
    if not 0 <= seat < self.num_players:
        raise ValueError(f"seat {seat} out of range 0-{self.num_players - 1}")
    decider = self.current_player == seat
    revealed = None
    revealed_by = -1
    for w4p, to, shown in self.reveals:
        if to == seat:
            counts = bytearray(NUM_KINDS)
            for k in shown:
                counts[k] += 1
            revealed = bytes(counts)
            revealed_by = w4p
    m = self.uno_miss
    # Positional construction (fields in PlayerView order) is 4x faster than keywords; the
    # view is built at every decision by agents and the observation encoder.
    return _new_view(PlayerView, (
        seat,
        self.num_players,
        self.rules,
        self.phase,
        self.current_player,
        bytes(self.hands[seat]),
        self.discard[-1],
        self.colour,
        self.drawn if decider else NO_CARD,
        self.direction,
        tuple(self.sizes),
        tuple(self.uno_called),
        tuple(self.scores),
        len(self.draw_pile),
        len(self.discard),
        bytes(self.discard_counts),
        self.w4_player,
        self.w4_prev_colour,
        revealed,
        revealed_by,
        self.last_item,
        m if (m >= 0 and not self._catch_auto and self.sizes[m] == 1) else -1,
        m,
        self.dealer,
        self.round,
        self.colour_context,
        self.idle_turns,
        self.turn_player,
        self.previous_turn_player,
        b"".join(self.void_evidence),
        self.w4_hand_size,
        int(self.w4_illegal) if seat == self.w4_player else -1,
        self.legal_action_ids() if decider else (),
    ))
