"""The rules engine: a mutable game state machine for UNO Mario Kart (RULES.md R1-R10).

Design (see DESIGN.md §4 and STYLE.md):

* State is plain ints and count vectors: ``hands[seat][kind]`` counts, piles as lists of kind ids,
  the active colour a field of the game (never written onto a card).
* One ``numpy.random.Generator`` per game; :meth:`Game.to_dict` stores its state, so a position
  round-trips exactly.
* Legal actions are computed once per decision and cached; :meth:`Game.legal_action_ids` is the
  fast path, :meth:`Game.legal_actions` the bool mask of DESIGN.md §3.
* Illegal input fails loudly (:class:`IllegalActionError`, :class:`StateError`); choosing an RL
  penalty is the env layer's job.

The engine imports neither gymnasium nor pettingzoo and never prints.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import actions as A
from .cards import (
    BANANA,
    CODES,
    COLOUR_OF,
    COLOURS,
    COPIES,
    DECK,
    DRAW_TWO,
    GREEN_SHELL,
    ITEM_NAMES,
    ITEM_OF,
    LIGHTNING,
    MUSHROOM,
    NUM_CARDS,
    NUM_COLOURS,
    NUM_KINDS,
    POINTS,
    RANK_OF,
    REVERSE,
    SKIP,
    W4,
    WB,
)
from .cards import colour as parse_colour
from .cards import kind as parse_kind
from .rules import Rules

PLAY, PLAY_DRAWN, CHOOSE_COLOUR, CHOOSE_TARGET, CHALLENGE, GAME_OVER = (
    A.PLAY, A.PLAY_DRAWN, A.CHOOSE_COLOUR, A.CHOOSE_TARGET, A.CHALLENGE_PHASE, A.GAME_OVER,
)

# Why the current ``choose_colour`` decision happens (decides what follows it).
COLOUR_AFTER_W4, COLOUR_AFTER_BOB_OMB, COLOUR_AT_START, COLOUR_NO_FLIP = range(4)
_COLOUR_CONTEXT_NAMES = ("w4", "bob_omb", "start", "no_flip")

_NO_CARD = -1
#: ``PlayerView.void_evidence`` of a seat that just drew voluntarily facing a colour (R4.2).
VOID_MEMORY = 8
#: ``evidence.translate(_FADE[k])``: every byte lowered by ``k``, floored at 0 (k drawn cards).
_FADE = tuple(bytes(max(v - k, 0) for v in range(256)) for k in range(VOID_MEMORY + 1))
_DRAW, _KEEP, _CALL_UNO, _CATCH_UNO = A.DRAW, A.KEEP, A.CALL_UNO, A.CATCH_UNO
STATE_FORMAT = 1
#: ``Game(event_log=...)``: ``"recent"`` keeps the current and the previous round's events (memory
#: bounded over a match of any length), ``"all"`` the whole match.
EVENT_LOGS = ("recent", "all")


def _as_action_id(action: Any) -> int:
    """Accepts any integer type (numpy ints too) but not bools, floats or strings."""
    if not isinstance(action, bool):
        try:
            return operator.index(action)
        except TypeError:
            pass
    raise IllegalActionError(
        f"action must be an int action id 0-{A.NUM_ACTIONS - 1}, got {action!r}"
    )


def _candidate_kinds(colour: int, rank: int) -> tuple[int, ...]:
    """Kinds that may be playable on a top card of ``rank`` (13: a wild) with ``colour`` active,
    ascending: the colour's 13 kinds, the same rank in the other colours, W4, WB (R4.1)."""
    same_rank = [13 * c + rank for c in range(4) if c != colour] if rank < 13 else []
    return tuple(sorted([*range(13 * colour, 13 * colour + 13), *same_rank, W4, WB]))


# _CANDIDATES[colour][rank or 13]: bitmask of the kinds that may be played; the play-phase legal
# moves are the set bits of ``held & candidates``.
_CANDIDATES = tuple(
    tuple(sum(1 << k for k in _candidate_kinds(c, r)) for r in range(14)) for c in range(4)
)

# _CANDIDATES_ON[colour][top kind]: the same masks indexed by the top card itself.
_CANDIDATES_ON = tuple(
    tuple(_CANDIDATES[c][top % 13 if top < W4 else 13] for top in range(NUM_KINDS))
    for c in range(4)
)
_UNO_KEY = 1 << NUM_KINDS  # set in a play-phase key when CALL_UNO is legal too


def _bit_ids(bits: int, base: int, tail: tuple[int, ...] = ()) -> tuple[tuple[int, ...], ...]:
    """``table[v]``: the ids ``base + i`` of the set bits ``i`` of ``v``, ascending, then
    ``tail``; for every ``v`` below ``2**bits``."""
    if bits <= 7:
        return tuple(
            (*(base + i for i in range(bits) if v >> i & 1), *tail) for v in range(1 << bits)
        )
    half = bits // 2  # v = low + high << half: concatenate the two halves' tables
    low, high = _bit_ids(half, base), _bit_ids(bits - half, base + half, tail)
    return tuple([a + b for b in high for a in low])


# The play-phase legal ids are a pure function of the key ``playable kinds' bitmask | UNO flag``.
# Split into 14-bit chunks, each chunk's ids come from a table, in ascending order; the last
# chunk (kinds 42-53 and the flag) ends with DRAW (and CALL_UNO when the flag is set).
_PLAY_IDS_0 = _bit_ids(14, 0)
_PLAY_IDS_1 = _bit_ids(14, 14)
_PLAY_IDS_2 = _bit_ids(14, 28)
_PLAY_IDS_3 = _bit_ids(12, 42, (_DRAW,)) + _bit_ids(12, 42, (_DRAW, _CALL_UNO))
assert _UNO_KEY >> 42 == 1 << 12

_COLOUR_ACTIONS = tuple(range(A.COLOUR_BASE, A.COLOUR_BASE + 4))
_CHALLENGE_ACTIONS = (A.CHALLENGE, A.ACCEPT)
_W4_BIT = 1 << W4
_WB_BIT = 1 << WB
_COLOUR_MASKS = tuple(sum(1 << k for k in range(13 * c, 13 * c + 13)) for c in range(4))


def _held_mask(counts: Sequence[int]) -> int:
    """Bit ``k`` set iff the hand holds kind ``k`` (kept beside the counts for fast legality)."""
    return sum(1 << k for k, c in enumerate(counts) if c)


def w4_is_legal(held: int, colour: int, item_box_counts: bool) -> bool:
    """R6.1: a Wild Draw Four is legal iff the hand (``held``: bit ``k`` set when it holds kind
    ``k``) has no card of the active ``colour`` and, when ``item_box_counts`` (the rule option
    ``item_box_counts_for_w4``), no Wild Item Box."""
    if held & _COLOUR_MASKS[colour]:
        return False
    return not (item_box_counts and held & _WB_BIT)


#: Green Shell targets TARGET(+1 .. +N-1) by player count N.
_TARGET_ACTIONS = {n: tuple(range(A.TARGET_BASE, A.TARGET_BASE + n - 1)) for n in range(2, 11)}


class IllegalActionError(ValueError):
    """An action that is not legal in the current state; names the action, phase and legal ids."""


class StateError(ValueError):
    """A malformed state dict given to :meth:`Game.from_dict`; names the field and the problem."""


# --------------------------------------------------------------------------------------------
# Events. A tuple per event, first element the type. Cards are kind ids. Private payloads
# (cards drawn, a revealed hand) are hidden from other seats by :func:`event_for`.
# ("deal", round, dealer)                  ("start_card", kind)
# ("play", seat, kind)                     ("draw", seat, (kinds...), reason)
# ("keep", seat)                           ("colour", seat, colour)
# ("flip", seat, kind)                     ("item", seat, item)
# ("target", seat, target_seat)            ("skip", seat)
# ("reverse", seat, new_direction)         ("accept", seat)
# ("challenge", challenger, w4_player, w4_was_illegal)
# ("reveal", w4_player, challenger, (kinds...))
# ("uno", seat)                            ("catch", catcher, offender)
# ("reshuffle", n_cards)                   ("stalemate",)
# ("round_end", winner_or_None, points, (scores...))
# --------------------------------------------------------------------------------------------

DRAW_REASONS = (
    "deal", "voluntary", "draw_two", "wild_draw_four", "challenge_failed", "challenge_won",
    "banana", "green_shell", "lightning", "bob_omb", "uno_penalty",
)


class PlayerView(NamedTuple):
    """Everything one seat may know, and nothing else. Agents and the observation encoder see only
    this. Card kinds are ids (``uno_mk_env.cards``); ``-1`` means "none". Counts per kind
    (``hand``, ``discard_counts``, ``revealed_hand``) are ``bytes`` of 54: ``hand[k]`` is the
    number of cards of kind ``k`` (an int; ``np.frombuffer(view.hand, np.uint8)`` for an array);
    per-seat fields are tuples indexed by absolute seat.

    Fields: ``phase`` (int, ``uno_mk_env.actions.PHASE_NAMES``), ``drawn_card`` (only when this
    seat is deciding in ``play_drawn``), ``w4_player``/``w4_prev_colour`` (the round's latest W4),
    ``revealed_hand``/``revealed_by`` (the W4 player's hand shown to this seat by its challenge),
    ``last_item`` (``uno_mk_env.cards.ITEM_NAMES`` index), ``uno_catchable`` (a seat whose missed
    UNO may be caught now, ``uno_catch="next_player"`` only), ``uno_pending`` (a seat left with
    one card and no UNO call whose penalty or catch is still open, any ``uno_catch``),
    ``colour_context`` (why a colour is
    being chosen: 0 W4, 1 Bob-omb, 2 start card, 3 nothing to flip), ``idle_turns`` (R9 stalemate
    count), ``turn_player``/``previous_turn_player`` (whose turn it is / was before),
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
assert len(PlayerView._fields) == 33, "Game.view builds PlayerView positionally: update it"


class Game:
    """One game of UNO Mario Kart (one or several rounds, per ``rules.match``).

    Args:
        rules: the rule options (default ``Rules()``: 4 players).
        seed: seed for the game's own ``numpy.random.Generator`` (or a Generator to own).
        event_log: ``"recent"`` (default): ``events`` holds the current round's events and the
            previous round's, so a match of any length runs in bounded memory; ``"all"``: the
            whole match (grows with it).

    Attributes (read-only for users): ``current_player`` (the decider, ``-1`` when the game is
    over), ``phase`` (int, see ``phase_name``), ``direction``, ``dealer``, ``scores``, ``winner``,
    ``round_over`` (the last step ended a round; in multi-round matches the next round is
    already dealt), ``round_winner`` and ``round_hand_points`` (each seat's hand points when the
    latest round ended), ``game_over``, ``events`` (the omniscient log, see ``event_log``;
    ``events_for(seat)`` filters it), ``events_start`` (how many earlier events were dropped).
    """

    __slots__ = (
        "rules", "num_players", "_rng", "_rng_source", "hands", "held", "sizes", "draw_pile",
        "discard", "discard_counts", "colour",
        "current_player", "direction", "phase", "dealer", "scores", "round", "drawn",
        "uno_called", "uno_miss", "w4_player", "w4_prev_colour", "w4_illegal", "w4_hand_size",
        "colour_context",
        "reveal", "last_item", "idle_turns", "turn_player", "previous_turn_player",
        "void_evidence",
        "round_over", "game_over", "winner", "round_winner", "round_hand_points", "num_steps",
        "events", "events_start", "event_log", "_round_start", "_legal",
        "_uno_on", "_catch_auto", "_w4_strict",
    )

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int | np.random.Generator | None = None,
        event_log: str = "recent",
    ):
        self._setup(rules if rules is not None else Rules(), seed, event_log)
        self._deal(self.rng.integers(self.num_players).item())

    # ---------------------------------------------------------------- construction helpers
    def _setup(
        self, rules: Rules, seed: int | np.random.Generator | None, event_log: str = "recent"
    ) -> None:
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a uno_mk_env.Rules, got {type(rules).__name__}")
        if event_log not in EVENT_LOGS:
            raise ValueError(f"event_log={event_log!r} is not allowed; allowed: {EVENT_LOGS}")
        self.event_log = event_log
        self.rules = rules
        n = self.num_players = rules.num_players
        if isinstance(seed, np.random.Generator):
            self.rng = seed
        else:  # created on first use: clones and determinized copies often never shuffle
            self._rng = None
            self._rng_source = seed
        self.scores = [0] * n
        self.round = 0
        self.round_over = False
        self.game_over = False
        self.winner: int | None = None
        self.round_winner: int | None = None
        self.round_hand_points: tuple[int, ...] | None = None
        self.num_steps = 0
        self.events: list[tuple] = []
        self.events_start = 0
        self._round_start = 0
        self._uno_on = rules.uno == "on"
        self._catch_auto = rules.uno_catch == "auto"
        self._w4_strict = rules.w4_strict
        self._reset_round_state()

    def _reset_round_state(self) -> None:
        n = self.num_players
        self.hands = [bytearray(NUM_KINDS) for _ in range(n)]
        self.held = [0] * n
        self.sizes = [0] * n
        self.draw_pile: list[int] = []
        self.discard: list[int] = []
        self.discard_counts = bytearray(NUM_KINDS)
        self.colour = 0
        self.current_player = 0
        self.direction = 1
        self.phase = PLAY
        self.drawn = _NO_CARD
        self.uno_called = [False] * n
        self.uno_miss = -1
        self.w4_player = -1
        self.w4_prev_colour = -1
        self.w4_illegal = False
        self.w4_hand_size = -1
        self.colour_context = -1
        self.reveal: tuple[int, int, tuple[int, ...]] | None = None
        self.last_item = -1
        self.idle_turns = 0
        self.turn_player = -1
        self.previous_turn_player = -1
        self.void_evidence = [bytearray(NUM_COLOURS) for _ in range(n)]
        self._legal: tuple[int, ...] | None = None

    def _deal(self, dealer: int) -> None:
        """R3: shuffle, deal one at a time from the dealer's left, flip the start card."""
        self._reset_round_state()
        self.round += 1
        self.dealer = dealer
        n = self.num_players
        if self.event_log == "recent":  # keep the round that just ended and the new one
            drop = self._round_start
            del self.events[:drop]
            self.events_start += drop
            self._round_start = len(self.events)
        self.events.append(("deal", self.round, dealer))
        pile = list(DECK)
        self.rng.shuffle(pile)
        self.draw_pile = pile
        hands = self.hands
        for _ in range(self.rules.hand_size):
            for j in range(1, n + 1):
                hands[(dealer + j) % n][pile.pop()] += 1
        self.sizes = [self.rules.hand_size] * n
        self.held = [_held_mask(h) for h in hands]
        for seat in range(n):
            self.events.append(("draw", seat, _counts_to_kinds(hands[seat]), "deal"))
        reflip = self.rules.start_action_cards == "reflip"
        while True:
            card = pile.pop()
            if card == W4:  # R3.3: back into the pile, reshuffle, flip again
                # Terminates: the pile always holds a card other than a W4 here (at most 107 of
                # the 112 cards are dealt, and a reflip needs one left, below).
                pile.append(card)
                self.rng.shuffle(pile)
                continue
            self.discard.append(card)
            self.discard_counts[card] += 1
            self.events.append(("start_card", card))
            if reflip and card < W4 and RANK_OF[card] >= SKIP and any(k != W4 for k in pile):
                continue  # Czech text: ignore a coloured action card and flip another onto it
            # R3.3 ruling: with nothing left to flip but W4s, the last action card stays and
            # applies as under "apply".
            break
        left = (dealer + 1) % n
        if card == WB:  # R3.3: no item; a player names the colour, then left of dealer starts
            chooser = dealer if self.rules.start_item_box_chooser == "dealer" else left
            self.current_player = chooser
            self.phase = CHOOSE_COLOUR
            self.colour_context = COLOUR_AT_START
            return
        self.colour = card // 13
        rank = card % 13
        if rank < SKIP:
            self._begin_turn(left)
        elif rank == SKIP:
            self.events.append(("skip", left))
            self._begin_turn((dealer + 2) % n)
        elif rank == REVERSE:
            self.direction = -1
            self._begin_turn(dealer)
        else:  # DRAW_TWO
            self._draw(left, 2, "draw_two")
            self.events.append(("skip", left))
            self._begin_turn((dealer + 2) % n)

    # ---------------------------------------------------------------- properties
    @property
    def rng(self) -> np.random.Generator:
        """The game's own generator (R3 shuffles, R9 reshuffles)."""
        rng = self._rng
        if rng is None:
            source = self._rng_source
            if isinstance(source, dict):  # a bit-generator state (from clone)
                rng = np.random.Generator(getattr(np.random, source["bit_generator"])())
                rng.bit_generator.state = source
            else:
                rng = np.random.default_rng(source)
            self._rng = rng
            self._rng_source = None
        return rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self._rng = value
        self._rng_source = None

    @property
    def phase_name(self) -> str:
        """The current phase as its DESIGN.md §3 name."""
        return A.PHASE_NAMES[self.phase]

    @property
    def top_card(self) -> int:
        """Kind id of the top card of the discard pile."""
        return self.discard[-1]

    @property
    def active_colour(self) -> int:
        """Colour index (0-3: R, Y, G, B) that must be matched."""
        return self.colour

    def hand(self, seat: int) -> list[int]:
        """A copy of ``seat``'s hand as counts per kind."""
        return list(self.hands[seat])

    def hand_points(self, seat: int) -> int:
        """Points of the cards in ``seat``'s hand (R10.2)."""
        return sum(n * POINTS[k] for k, n in enumerate(self.hands[seat]) if n)

    def next_seat(self, seat: int, steps: int = 1) -> int:
        """The seat ``steps`` turns after ``seat`` in the current direction."""
        return (seat + self.direction * steps) % self.num_players

    # ---------------------------------------------------------------- legal actions
    def legal_action_ids(self) -> tuple[int, ...]:
        """Legal action ids, ascending (empty when the game is over). The fast path."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal

    def legal_actions(self) -> np.ndarray:
        """Bool mask of shape ``(73,)`` over action ids (DESIGN.md §3)."""
        mask = np.zeros(A.NUM_ACTIONS, dtype=bool)
        mask[list(self.legal_action_ids())] = True
        return mask

    def _compute_legal(self) -> tuple[int, ...]:
        phase = self.phase
        p = self.current_player
        ids: tuple[int, ...]
        if phase == PLAY:
            # R4.1: the active colour's kinds, the top card's rank in other colours, both wilds.
            key = self.held[p] & _CANDIDATES_ON[self.colour][self.discard[-1]]
            if self._w4_strict and key & _W4_BIT and not self._w4_is_legal(p):
                key ^= _W4_BIT
            if self.sizes[p] == 2 and self._uno_on and not self.uno_called[p]:
                key |= _UNO_KEY
            ids = (_PLAY_IDS_0[key & 0x3FFF] + _PLAY_IDS_1[key >> 14 & 0x3FFF]
                   + _PLAY_IDS_2[key >> 28 & 0x3FFF] + _PLAY_IDS_3[key >> 42])
        elif phase == PLAY_DRAWN:
            ids = (self.drawn, _KEEP)
            if self.sizes[p] == 2 and self._uno_on and not self.uno_called[p]:
                ids += (_CALL_UNO,)
        elif phase == CHOOSE_COLOUR:
            ids = _COLOUR_ACTIONS
        elif phase == CHOOSE_TARGET:
            ids = _TARGET_ACTIONS[self.num_players]
        elif phase == CHALLENGE:
            ids = _CHALLENGE_ACTIONS
        else:
            return ()
        m = self.uno_miss
        if m >= 0 and not self._catch_auto and m != p and self.sizes[m] == 1:
            ids += (_CATCH_UNO,)
        return ids

    def _w4_is_legal(self, seat: int) -> bool:
        """R6.1: no card of the active colour in hand (a held WB counts as a match by default)."""
        return self._w4_is_legal_for(seat, self.colour)

    def _w4_is_legal_for(self, seat: int, colour: int) -> bool:
        return w4_is_legal(self.held[seat], colour, self.rules.item_box_counts_for_w4)

    def _playable(self, card: int) -> bool:
        """R4.1 for one card of the current player's hand (the candidates include both wilds;
        a strict W4 must also be legal, R6.2)."""
        return bool(_CANDIDATES_ON[self.colour][self.discard[-1]] >> card & 1) and (
            card != W4 or not self._w4_strict or self._w4_is_legal(self.current_player)
        )

    # ---------------------------------------------------------------- step
    def step(self, action: int) -> None:
        """Applies the current decider's ``action`` (an id of DESIGN.md §3).

        Raises:
            IllegalActionError: if ``action`` is not legal now (nothing is changed).
        """
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if action.__class__ is not int:
            action = _as_action_id(action)
        if action not in legal:
            self._raise_illegal(action, legal)
        self._legal = None
        self.round_over = False
        self.num_steps += 1
        p = self.current_player
        if self.uno_miss >= 0 and not self._catch_auto and p != self.uno_miss:
            if action == _CATCH_UNO:  # R8: caught; the catcher still decides
                offender = self.uno_miss
                self.uno_miss = -1
                self.events.append(("catch", p, offender))
                self._draw(offender, self.rules.uno_penalty, "uno_penalty")
                return
            self.uno_miss = -1  # the catch window closes with the next decider's first action
        phase = self.phase
        if phase == PLAY:
            if action < _DRAW:
                self._play(p, action)
            elif action == _DRAW:
                self._voluntary_draw(p)
            else:
                self._call_uno(p)
        elif phase == PLAY_DRAWN:
            if action < _DRAW:
                self._play(p, action)
            elif action == _KEEP:
                self.events.append(("keep", p))
                self._begin_turn((p + self.direction) % self.num_players)
            else:
                self._call_uno(p)
        elif phase == CHOOSE_COLOUR:
            self._choose_colour(p, action - A.COLOUR_BASE)
        elif phase == CHOOSE_TARGET:
            target = (p + action - A.TARGET_BASE + 1) % self.num_players
            self.events.append(("target", p, target))
            self._draw(target, 1, "green_shell")
            self._after_item(p)
        else:  # CHALLENGE
            self._resolve_challenge(p, action == A.CHALLENGE)

    def _raise_illegal(self, a: int, legal: tuple[int, ...]) -> None:
        name = A.ACTION_NAMES[a] if 0 <= a < A.NUM_ACTIONS else f"out of 0-{A.NUM_ACTIONS - 1}"
        if self.game_over:
            raise IllegalActionError(f"action {a} ({name}): the game is over, no action is legal")
        raise IllegalActionError(
            f"illegal action {a} ({name}) for player {self.current_player} in phase "
            f"'{self.phase_name}'; legal: {list(legal)} "
            f"({', '.join(A.ACTION_NAMES[x] for x in legal)})"
        )

    # ---------------------------------------------------------------- turn flow
    def _begin_turn(self, seat: int) -> None:
        """Starts ``seat``'s turn (a normal or an extra one)."""
        m = self.uno_miss
        if m >= 0 and self._catch_auto:  # R8: an uncalled UNO is caught when the next turn begins
            self.uno_miss = -1
            if self.sizes[m] == 1:
                self.events.append(("catch", -1, m))
                self._draw(m, self.rules.uno_penalty, "uno_penalty")
        if seat != self.turn_player:
            self.previous_turn_player = self.turn_player
            self.turn_player = seat
        if self.sizes[seat] != 1:
            self.uno_called[seat] = False
        self.current_player = seat
        self.phase = PLAY
        self.drawn = _NO_CARD

    def _pass_turn(self, seat: int, skip: int = 0) -> None:
        """Play passes on from ``seat``, skipping ``skip`` players."""
        self._begin_turn((seat + self.direction * (1 + skip)) % self.num_players)

    def _call_uno(self, p: int) -> None:
        self.uno_called[p] = True
        self.events.append(("uno", p))

    def _voluntary_draw(self, p: int) -> None:
        """R4.2: draw one; play it at once if playable (or keep it), else the turn ends."""
        pile = self.draw_pile
        if not pile:
            self._refill()
            pile = self.draw_pile
            if not pile:  # R9: nothing to draw; the turn ends. N such turns in a row: stalemate.
                self.void_evidence[p][self.colour] = VOID_MEMORY
                self.events.append(("draw", p, (), "voluntary"))
                self.idle_turns += 1
                if self.idle_turns >= self.num_players:
                    self.events.append(("stalemate",))
                    self._end_round(self._stalemate_winner())
                else:
                    self._begin_turn((p + self.direction) % self.num_players)
                return
        card = pile.pop()
        self.hands[p][card] += 1
        self.held[p] |= 1 << card
        self.sizes[p] += 1
        if p == self.uno_miss:  # R8: no longer holding one uncalled card
            self.uno_miss = -1
        evidence = self.void_evidence[p]
        evidence[:] = evidence.translate(_FADE[1])  # the drawn card fades the earlier signs
        evidence[self.colour] = VOID_MEMORY
        self.uno_called[p] = False
        self.idle_turns = 0
        self.events.append(("draw", p, (card,), "voluntary"))
        if self._playable(card):  # R4.2: play it at once or keep it
            self.phase = PLAY_DRAWN
            self.drawn = card
        else:
            self._begin_turn((p + self.direction) % self.num_players)

    def _play(self, p: int, card: int) -> None:
        hand = self.hands[p]
        hand[card] -= 1
        if not hand[card]:
            self.held[p] ^= 1 << card
        self.drawn = _NO_CARD
        self.sizes[p] -= 1
        size = self.sizes[p]
        self.idle_turns = 0
        prev_colour = self.colour
        self.discard.append(card)
        self.discard_counts[card] += 1
        self.events.append(("play", p, card))
        if size == 1 and self._uno_on and not self.uno_called[p]:
            self.uno_miss = p
        out = size == 0
        if card == W4:
            if out:  # R6.4 / R10.1: always legal, no challenge, no colour; next draws 4
                self._draw(self.next_seat(p), 4, "wild_draw_four")
                self._end_round(p)
                return
            self.w4_player = p
            self.w4_prev_colour = prev_colour
            self.w4_illegal = not self._w4_is_legal(p)
            self.w4_hand_size = size
            self.phase = CHOOSE_COLOUR
            self.colour_context = COLOUR_AFTER_W4
            return
        if card == WB:
            self._item_box(p, out)
            return
        self.colour = COLOUR_OF[card]
        rank = RANK_OF[card]
        if rank < SKIP:
            if out:
                self._end_round(p)
            else:
                self._begin_turn((p + self.direction) % self.num_players)
        elif rank == DRAW_TWO:
            victim = self.next_seat(p)
            self._draw(victim, 2, "draw_two")
            if out:
                self._end_round(p)
            else:
                self.events.append(("skip", victim))
                self._pass_turn(p, 1)
        elif out:
            self._end_round(p)
        elif rank == SKIP or (self.num_players == 2 and self.rules.two_player_reverse_skips):
            self.events.append(("skip", self.next_seat(p)))
            self._pass_turn(p, 1)
        else:  # REVERSE
            self.direction = -self.direction
            self.events.append(("reverse", p, self.direction))
            self._pass_turn(p)

    def _choose_colour(self, p: int, colour: int) -> None:
        self.colour = colour
        self.events.append(("colour", p, colour))
        ctx = self.colour_context
        self.colour_context = -1
        if ctx == COLOUR_AFTER_W4:
            victim = self.next_seat(p)
            if self.rules.w4_strict:
                self._draw(victim, 4, "wild_draw_four")
                self.events.append(("skip", victim))
                self._pass_turn(p, 1)
            else:
                self.current_player = victim
                self.phase = CHALLENGE
        elif ctx == COLOUR_AT_START:
            self._begin_turn((self.dealer + 1) % self.num_players)
        elif self.sizes[p] == 0:  # a last-card WB whose Bob-omb drew nothing (R7.4 "full")
            self._end_round(p)
        else:  # Bob-omb or nothing to flip: play passes on
            self._pass_turn(p)

    def _resolve_challenge(self, victim: int, challenge: bool) -> None:
        """R6.3: accept (draw 4, lose the turn) or challenge (hand shown to the challenger)."""
        w4p = self.w4_player
        if not challenge:
            self.events.append(("accept", victim))
            self._draw(victim, 4, "wild_draw_four")
            self.events.append(("skip", victim))
            self._pass_turn(victim)
            return
        illegal = self.w4_illegal
        self.events.append(("challenge", victim, w4p, illegal))
        shown = _counts_to_kinds(self.hands[w4p])
        self.reveal = (w4p, victim, shown)
        self.events.append(("reveal", w4p, victim, shown))
        if illegal:
            self._draw(w4p, 4, "challenge_won")
            self._begin_turn(victim)
        else:
            self._draw(victim, 6, "challenge_failed")
            self.events.append(("skip", victim))
            self._pass_turn(victim)

    def _item_box(self, p: int, out: bool) -> None:
        """R7: flip the top of the draw pile and fire its item."""
        if out and self.rules.last_item_box == "none":
            self._end_round(p)
            return
        if not self.draw_pile:
            self._refill()
        if not self.draw_pile:
            # R7.3 says this cannot happen at a real table (111 cards in hands); the engine
            # still handles it: nothing flips, no item fires, the player names a colour.
            if out:
                self._end_round(p)
                return
            self.phase = CHOOSE_COLOUR
            self.colour_context = COLOUR_NO_FLIP
            return
        flipped = self.draw_pile.pop()
        self.discard.append(flipped)
        self.discard_counts[flipped] += 1
        self.events.append(("flip", p, flipped))
        item = ITEM_OF[flipped]
        self.last_item = item
        self.events.append(("item", p, item))
        if flipped < W4:
            self.colour = COLOUR_OF[flipped]
        resolve_self = not out or self.rules.last_item_box == "full"
        if item == MUSHROOM:
            self._after_item(p, extra_turn=True)
        elif item == BANANA:
            if self.rules.banana_target == "previous_seat":
                victim = self.next_seat(p, -1)
            else:
                victim = self.previous_turn_player if self.previous_turn_player >= 0 else (
                    self.next_seat(p, -1))
            self._draw(victim, 2, "banana")
            self._after_item(p)
        elif item == GREEN_SHELL:
            self.phase = CHOOSE_TARGET
        elif item == LIGHTNING:
            n_draw = self.rules.lightning_draw
            for i in range(1, self.num_players):
                self._draw(self.next_seat(p, i), n_draw, "lightning")
            self._after_item(p, extra_turn=True)
        elif resolve_self:  # BOB_OMB: draw 2, then name the colour of the flipped wild
            self._draw(p, 2, "bob_omb")
            self.phase = CHOOSE_COLOUR
            self.colour_context = COLOUR_AFTER_BOB_OMB
        else:
            self._end_round(p)

    def _after_item(self, p: int, extra_turn: bool = False) -> None:
        if self.sizes[p] == 0:  # R7.4: the player went out with the WB
            self._end_round(p)
        elif extra_turn:
            self._begin_turn(p)
        else:
            self._pass_turn(p)

    # ---------------------------------------------------------------- piles
    def _refill(self) -> None:
        """R9: shuffle the discard pile except its top card into a new draw pile."""
        if len(self.discard) <= 1:
            return
        top = self.discard.pop()
        pile = self.discard
        self.rng.shuffle(pile)
        self.draw_pile = pile
        self.discard = [top]
        counts = self.discard_counts = bytearray(NUM_KINDS)
        counts[top] = 1
        self.events.append(("reshuffle", len(pile)))

    def _draw(self, seat: int, n: int, reason: str) -> tuple[int, ...]:
        """``seat`` draws up to ``n`` cards (fewer if both piles run out, R9)."""
        pile = self.draw_pile
        hand = self.hands[seat]
        got = []
        bits = 0
        for _ in range(n):
            if not pile:
                self._refill()
                pile = self.draw_pile
                if not pile:
                    break
            card = pile.pop()
            hand[card] += 1
            bits |= 1 << card
            got.append(card)
        if got:
            self.held[seat] |= bits
            self.sizes[seat] += len(got)
            if seat == self.uno_miss:  # R8: no longer holding one uncalled card
                self.uno_miss = -1
            evidence = self.void_evidence[seat]
            evidence[:] = evidence.translate(_FADE[min(len(got), VOID_MEMORY)])
            self.uno_called[seat] = False
            self.idle_turns = 0
        result = tuple(got)
        self.events.append(("draw", seat, result, reason))
        return result

    # ---------------------------------------------------------------- end of round / game
    def _stalemate_winner(self) -> int | None:
        if self.rules.stalemate == "no_score":
            return None
        values = [self.hand_points(s) for s in range(self.num_players)]
        low = min(values)
        return values.index(low) if values.count(low) == 1 else None

    def _end_round(self, winner: int | None) -> None:
        """R10: score the round, then end the game or deal the next round."""
        hand_points = tuple(self.hand_points(s) for s in range(self.num_players))
        points = 0
        if winner is not None:
            points = sum(hand_points) - hand_points[winner]
            self.scores[winner] += points
        self.round_winner = winner
        self.round_hand_points = hand_points
        self.round_over = True
        self.events.append(("round_end", winner, points, tuple(self.scores)))
        rules = self.rules
        if rules.match == "single_round":
            self._finish(winner)
        elif rules.match == "target_score":
            if winner is not None and self.scores[winner] >= rules.target_score:
                self._finish(winner)
            else:
                self._deal((self.dealer + 1) % self.num_players)
        elif self.round >= rules.rounds:  # fixed_rounds
            best = max(self.scores)
            self._finish(self.scores.index(best) if self.scores.count(best) == 1 else None)
        else:
            self._deal((self.dealer + 1) % self.num_players)

    def _finish(self, winner: int | None) -> None:
        self.game_over = True
        self.winner = winner
        self.phase = GAME_OVER
        self.current_player = -1
        self._legal = ()

    # ---------------------------------------------------------------- views
    def view(self, seat: int) -> PlayerView:
        """What ``seat`` may know (DESIGN.md §5), as an immutable :class:`PlayerView`."""
        if not 0 <= seat < self.num_players:
            raise ValueError(f"seat {seat} out of range 0-{self.num_players - 1}")
        decider = self.current_player == seat
        reveal = self.reveal
        revealed = None
        if reveal is not None and reveal[1] == seat:
            counts = bytearray(NUM_KINDS)
            for k in reveal[2]:
                counts[k] += 1
            revealed = bytes(counts)
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
            self.drawn if decider else _NO_CARD,
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
            reveal[0] if revealed is not None else -1,  # type: ignore[index]
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

    @property
    def event_count(self) -> int:
        """Events logged since the game began, including those ``event_log="recent"`` dropped:
        ``events[i]`` is event number ``events_start + i``."""
        return self.events_start + len(self.events)

    def events_for(self, seat: int | None) -> list[tuple]:
        """The event log as ``seat`` may see it (``None``: the full, omniscient log)."""
        if seat is None:
            return list(self.events)
        return [seen for e in self.events if (seen := event_for(e, seat)) is not None]

    def determinize(self, seat: int, rng: np.random.Generator) -> Game:
        """A game consistent with ``view(seat)`` whose hidden cards are resampled.

        Built from the view alone (:meth:`from_view`), so it cannot carry hidden information.
        """
        return Game.from_view(self.view(seat), rng)

    @classmethod
    def from_view(
        cls,
        view: PlayerView,
        rng: np.random.Generator,
        condition: Callable[[list[bytearray], list[int], np.random.Generator], None] | None = None,
    ) -> Game:
        """A full game sampled uniformly among those consistent with ``view``.

        The cards the seat cannot see (deck minus its hand minus the discard pile) are shuffled
        and dealt to the other hands (same sizes) and the draw pile (same size); the game gets a
        fresh generator drawn from ``rng``, so it cannot know future shuffles either. The discard
        pile keeps its top card (its order below is not public and never matters: it is shuffled
        when reused, R9). Knowledge the view holds only as history (a hand revealed by an earlier
        challenge) is kept as history but does not constrain the sample. If another seat is
        deciding whether to play a card it just drew, that card is sampled among the unseen kinds
        that are playable. The hidden W4 legality of a pending challenge is
        recomputed from the sampled hand of the W4 player.

        ``condition(hands, draw_pile, rng)``, if given, may then move the hidden cards between
        the other seats' hands (``bytearray`` counts per kind) and the draw pile (a list of kinds,
        top last) in place, to bias the sample with a belief (an agent's guess of who lacks a
        colour, say). It must keep every hand's size, the draw pile's length, the viewer's hand,
        and the card a deciding seat just drew in its hand; the game's derived state (playable
        kinds, W4 legality) is computed after it.

        Raises:
            StateError: ``condition`` broke one of those rules (the sample is discarded).
        """
        g = cls.__new__(cls)
        g._setup(view.rules, int(rng.integers(2**63)))
        seat = view.seat
        n = view.num_players
        unseen = list(COPIES)
        for k in range(NUM_KINDS):
            unseen[k] -= view.hand[k] + view.discard_counts[k]
        pool = _counts_to_kinds(unseen)
        pool = [pool[i] for i in rng.permutation(len(pool))]
        g.colour = view.active_colour
        g.current_player = view.current_player
        g.direction = view.direction
        g.phase = view.phase
        g.dealer = view.dealer
        g.scores = list(view.scores)
        g.round = view.round
        g.uno_called = list(view.uno_called)
        g.uno_miss = view.uno_pending
        g.w4_player = view.w4_player
        g.w4_prev_colour = view.w4_prev_colour
        g.w4_hand_size = view.w4_hand_size
        g.colour_context = view.colour_context
        g.last_item = view.last_item
        g.idle_turns = view.idle_turns
        g.turn_player = view.turn_player
        g.previous_turn_player = view.previous_turn_player
        g.void_evidence = [
            bytearray(view.void_evidence[s * NUM_COLOURS:(s + 1) * NUM_COLOURS]) for s in range(n)
        ]
        g.game_over = view.phase == GAME_OVER
        top = view.top_card
        below = [k for k in range(NUM_KINDS) for _ in range(view.discard_counts[k] - (k == top))]
        g.discard = below + [top]
        g.discard_counts = bytearray(view.discard_counts)
        g.hands[seat] = bytearray(view.hand)
        g.sizes = list(view.hand_sizes)
        if view.revealed_hand is not None:
            g.reveal = (view.revealed_by, seat, _counts_to_kinds(view.revealed_hand))
        decider = view.current_player
        if view.phase == PLAY_DRAWN:
            if decider == seat:
                g.drawn = view.drawn_card
            else:
                g.drawn = _sample_drawn_card(g, pool, view.hand_sizes[decider] - 1, rng)
        for s in range(n):
            if s == seat:
                continue
            need = view.hand_sizes[s] - sum(g.hands[s]) if s == decider else view.hand_sizes[s]
            hand = g.hands[s]
            for _ in range(need):
                hand[pool.pop()] += 1
        g.draw_pile = pool[:view.draw_pile_size]
        if condition is not None:
            _apply_condition(g, view, condition, rng)
        g.held = [_held_mask(h) for h in g.hands]
        if view.w4_illegal >= 0:  # the viewer played it and knows
            g.w4_illegal = bool(view.w4_illegal)
        elif view.phase == CHALLENGE or view.colour_context == COLOUR_AFTER_W4:
            g.w4_illegal = _sample_w4_illegal(g, view, rng)
        if g.game_over:
            g.current_player = -1
            g._legal = ()
        return g

    # ---------------------------------------------------------------- copy / serialise
    def clone(self) -> Game:
        """An independent deep copy (RNG included): stepping it never affects this game."""
        g = Game.__new__(Game)
        for name in Game.__slots__:
            setattr(g, name, getattr(self, name))
        if self._rng is not None:
            g._rng = None
            g._rng_source = self._rng.bit_generator.state
        g.hands = [h[:] for h in self.hands]
        g.held = self.held[:]
        g.sizes = self.sizes[:]
        g.draw_pile = self.draw_pile[:]
        g.discard = self.discard[:]
        g.discard_counts = self.discard_counts[:]
        g.scores = self.scores[:]
        g.uno_called = self.uno_called[:]
        g.void_evidence = [bytearray(e) for e in self.void_evidence]
        g.events = self.events[:]
        return g

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def to_dict(self, include_events: bool = False) -> dict[str, Any]:
        """The full state as JSON-safe data (DESIGN.md §4); ``Game.from_dict`` inverts it."""
        n = self.num_players
        state = self.rng.bit_generator.state
        d: dict[str, Any] = {
            "format": STATE_FORMAT,
            "rules": self.rules.to_dict(),
            "hands": [_counts_to_codes(self.hands[s]) for s in range(n)],
            "draw_pile": [CODES[k] for k in reversed(self.draw_pile)],
            "discard_pile": [CODES[k] for k in self.discard],
            "active_colour": COLOURS[self.colour],
            "current_player": self.current_player if not self.game_over else None,
            "direction": self.direction,
            "phase": self.phase_name,
            "dealer": self.dealer,
            "scores": list(self.scores),
            "round": self.round,
            "drawn_card": CODES[self.drawn] if self.drawn != _NO_CARD else None,
            "uno_called": list(self.uno_called),
            "uno_miss": self.uno_miss if self.uno_miss >= 0 else None,
            "w4": None if self.w4_player < 0 else {
                "player": self.w4_player,
                "previous_colour": COLOURS[self.w4_prev_colour],
                "illegal": self.w4_illegal,
                "hand_size": self.w4_hand_size,
            },
            "colour_context": (
                _COLOUR_CONTEXT_NAMES[self.colour_context] if self.colour_context >= 0 else None
            ),
            "reveal": None if self.reveal is None else {
                "player": self.reveal[0], "to": self.reveal[1],
                "hand": [CODES[k] for k in self.reveal[2]],
            },
            "last_item": ITEM_NAMES[self.last_item] if self.last_item >= 0 else None,
            "idle_turns": self.idle_turns,
            "turn_player": self.turn_player,
            "previous_turn_player": self.previous_turn_player,
            "void_evidence": [list(e) for e in self.void_evidence],
            "round_over": self.round_over,
            "game_over": self.game_over,
            "winner": self.winner,
            "round_winner": self.round_winner,
            "round_hand_points": (
                None if self.round_hand_points is None else list(self.round_hand_points)
            ),
            "num_steps": self.num_steps,
            "rng": _jsonable_rng_state(state),
        }
        if include_events:
            d["events"] = [event_to_dict(e) for e in self.events]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], seed: int | None = None) -> Game:
        """Builds a game from a state dict: a full ``to_dict()`` or a minimal position.

        Minimal positions need ``hands``, ``draw_pile``, ``discard_pile``, ``active_colour``,
        ``current_player`` and ``direction`` (``rules`` defaults to ``{}``, with ``num_players``
        taken from the number of hands when absent); everything else is filled as at the start of
        a fresh turn. Without an ``rng`` entry the game's generator is seeded with ``seed``.

        Raises:
            StateError: naming the field and what is wrong (unknown card code, too many copies of
                a card, wrong number of hands, bad phase, ...).
        """
        return _from_dict(cls, d, seed)


# ------------------------------------------------------------------------------------ helpers
def _parse_void_evidence(g: Game, d: Mapping[str, Any]) -> None:
    """Optional ``void_evidence``: n lists of 4 ints 0-VOID_MEMORY (default: all 0)."""
    n = g.num_players
    rows = d.get("void_evidence")
    if rows is None:
        return
    if not isinstance(rows, list | tuple) or len(rows) != n:
        raise StateError(
            f"'void_evidence' must be {n} lists of {NUM_COLOURS} ints 0-{VOID_MEMORY}, "
            f"got {rows!r}"
        )
    evidence = []
    for s, row in enumerate(rows):
        if (not isinstance(row, list | tuple) or len(row) != NUM_COLOURS
                or not all(type(x) is int and 0 <= x <= VOID_MEMORY for x in row)):
            raise StateError(
                f"'void_evidence'[{s}] must be {NUM_COLOURS} ints 0-{VOID_MEMORY}, got {row!r}"
            )
        evidence.append(bytearray(row))
    g.void_evidence = evidence


def _sample_w4_illegal(g: Game, view: PlayerView, rng: np.random.Generator) -> bool:
    """For :meth:`Game.from_view` of a seat that did not play the pending W4: whether it broke
    R6.1, judged on the hand its player held when playing it: the sampled hand minus the cards
    drawn since (a penalty for a caught UNO, say), i.e. a uniform pick of ``w4_hand_size`` of its
    cards, as every hidden card is equally likely to be either."""
    kinds = _counts_to_kinds(g.hands[view.w4_player])
    at_play = [kinds[i] for i in rng.permutation(len(kinds))[:view.w4_hand_size]]
    held = sum(1 << k for k in set(at_play))
    return not w4_is_legal(held, view.w4_prev_colour, g.rules.item_box_counts_for_w4)


def _w4_legal_after_hook(g: Game, hand: bytearray) -> bool:
    """R6.1 for the decider's ``hand`` as a condition hook left it (its bitmask refreshed)."""
    g.held[g.current_player] = _held_mask(hand)
    return g._w4_is_legal_for(g.current_player, g.colour)


def _apply_condition(
    g: Game,
    view: PlayerView,
    condition: Callable[[list[bytearray], list[int], np.random.Generator], None],
    rng: np.random.Generator,
) -> None:
    """Runs :meth:`Game.from_view`'s ``condition`` hook on ``g`` and checks what it may not
    change: the hidden multiset, every hand size, the draw pile's length, the viewer's hand,
    the drawn card of a deciding seat."""
    def hidden(game: Game) -> list[int]:
        counts = [0] * NUM_KINDS
        for s, hand in enumerate(game.hands):
            if s != view.seat:
                for k in range(NUM_KINDS):
                    counts[k] += hand[k]
        for k in game.draw_pile:
            counts[k] += 1
        return counts

    before = hidden(g)
    condition(g.hands, g.draw_pile, rng)
    problems = []
    if g.hands[view.seat] != view.hand:
        problems.append(f"the viewer's hand (seat {view.seat}) changed")
    sizes = [sum(h) for h in g.hands]
    if sizes != list(view.hand_sizes):
        problems.append(f"hand sizes {sizes} differ from the view's {list(view.hand_sizes)}")
    if len(g.draw_pile) != view.draw_pile_size:
        problems.append(f"the draw pile holds {len(g.draw_pile)} cards, not "
                        f"{view.draw_pile_size}")
    if hidden(g) != before:
        problems.append("the hidden cards are not the same multiset")
    if g.phase == PLAY_DRAWN:
        hand = g.hands[g.current_player]
        if not hand[g.drawn]:
            problems.append(f"seat {g.current_player} no longer holds the card it drew")
        elif g.drawn == W4 and g.rules.w4_strict and not _w4_legal_after_hook(g, hand):
            problems.append(f"seat {g.current_player}'s drawn W4 is no longer playable (R6.2)")
    if problems:
        raise StateError("from_view condition: " + "; ".join(problems))


def _sample_drawn_card(g: Game, pool: list[int], rest: int, rng: np.random.Generator) -> int:
    """For :meth:`Game.from_view`: picks the card another seat is deciding whether to play, among
    the unseen cards that could be playable, and puts it in that seat's hand. Under ``w4_strict`` a
    drawn W4 is playable only if the rest of the hand has no active-colour card (nor a WB when it
    counts, R6.1), so that rest is then dealt from the cards compatible with it."""
    colour, top = g.colour, g.discard[-1]
    wb_counts = g.rules.item_box_counts_for_w4

    def beside_strict_w4(k: int) -> bool:
        return k // 13 != colour if k < W4 else (k == W4 or not wb_counts)

    strict_w4_ok = not g._w4_strict or sum(map(beside_strict_w4, pool)) - 1 >= rest
    playable = [
        i for i, k in enumerate(pool)
        if k == WB or (k == W4 and strict_w4_ok)
        or (k < W4 and (k // 13 == colour or (top < W4 and k % 13 == top % 13)))
    ]
    card = pool.pop(playable[int(rng.integers(len(playable)))])
    hand = g.hands[g.current_player]
    hand[card] += 1
    if card == W4 and g._w4_strict:
        allowed = [i for i, k in enumerate(pool) if beside_strict_w4(k)][:rest]
        for i in reversed(allowed):  # the pool is shuffled: the first ones are a uniform pick
            hand[pool.pop(i)] += 1
    return card


def _counts_to_kinds(counts: Sequence[int]) -> tuple[int, ...]:
    return tuple(k for k, c in enumerate(counts) for _ in range(c))


def _counts_to_codes(counts: Sequence[int]) -> list[str]:
    return [CODES[k] for k, c in enumerate(counts) for _ in range(c)]


def _jsonable_rng_state(state: dict[str, Any]) -> dict[str, Any]:
    """Bit-generator state with its big ints as strings (JSON readers other than Python's
    lose precision on integers beyond 2**53)."""
    out: dict[str, Any] = {}
    for k, v in state.items():
        if isinstance(v, dict):
            out[k] = _jsonable_rng_state(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            out[k] = str(v)
        else:
            out[k] = v
    return out


def _restore_rng_state(state: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in state.items():
        if isinstance(v, dict):
            out[k] = _restore_rng_state(v)
        elif isinstance(v, str) and k != "bit_generator":
            out[k] = int(v)
        else:
            out[k] = v
    return out


def event_for(event: tuple, seat: int) -> tuple | None:
    """``event`` as ``seat`` may see it, or ``None`` if it may not see it at all: other seats'
    drawn cards become ``None`` (the count stays visible), a revealed hand is shown only to its
    challenger, and another seat's ``keep`` is not seen: at a table a player who keeps a
    playable card it drew looks exactly like one whose card was not playable (R4.2)."""
    kind = event[0]
    if kind == "draw" and event[1] != seat:
        return ("draw", event[1], (None,) * len(event[2]), event[3])
    if kind == "reveal" and event[2] != seat:
        return ("reveal", event[1], event[2], None)
    if kind == "keep" and event[1] != seat:
        return None
    return event


def event_to_dict(event: tuple) -> dict[str, Any]:
    """A JSON-safe dict of an event (card kinds as codes, colours as letters, items by name)."""
    kind = event[0]
    if kind == "deal":
        return {"type": kind, "round": event[1], "dealer": event[2]}
    if kind == "start_card":
        return {"type": kind, "card": CODES[event[1]]}
    if kind in ("play", "flip"):
        return {"type": kind, "player": event[1], "card": CODES[event[2]]}
    if kind == "draw":
        cards = [None if k is None else CODES[k] for k in event[2]]
        return {"type": kind, "player": event[1], "count": len(cards), "cards": cards,
                "reason": event[3]}
    if kind == "colour":
        return {"type": kind, "player": event[1], "colour": COLOURS[event[2]]}
    if kind == "item":
        return {"type": kind, "player": event[1], "item": ITEM_NAMES[event[2]]}
    if kind == "target":
        return {"type": kind, "player": event[1], "target": event[2]}
    if kind == "reverse":
        return {"type": kind, "player": event[1], "direction": event[2]}
    if kind == "challenge":
        return {"type": kind, "player": event[1], "w4_player": event[2],
                "w4_was_illegal": event[3]}
    if kind == "reveal":
        hand = None if event[3] is None else [CODES[k] for k in event[3]]
        return {"type": kind, "player": event[1], "to": event[2], "hand": hand}
    if kind == "catch":
        return {"type": kind, "player": None if event[1] < 0 else event[1], "offender": event[2]}
    if kind == "reshuffle":
        return {"type": kind, "count": event[1]}
    if kind == "stalemate":
        return {"type": kind}
    if kind == "round_end":
        return {"type": kind, "winner": event[1], "points": event[2], "scores": list(event[3])}
    return {"type": kind, "player": event[1]}  # keep, skip, accept, uno


def _parse_cards(d: Mapping[str, Any], field: str) -> list[int]:
    value = d[field]
    if not isinstance(value, list | tuple):
        raise StateError(f"'{field}' must be a list of card codes, got {type(value).__name__}")
    out = []
    for i, c in enumerate(value):
        try:
            out.append(parse_kind(c))
        except ValueError as e:
            raise StateError(f"'{field}'[{i}]: {e}") from None
    return out


def _seat(d: Mapping[str, Any], field: str, n: int, allow_none: bool = False) -> int:
    v = d[field]
    if v is None and allow_none:
        return -1
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < n:
        raise StateError(f"'{field}' must be a seat 0-{n - 1}, got {v!r}")
    return v


_REQUIRED = ("hands", "draw_pile", "discard_pile", "active_colour", "current_player", "direction")


def _from_dict(cls: type[Game], d: Mapping[str, Any], seed: int | None) -> Game:
    from .rules import RulesError

    if not isinstance(d, Mapping):
        raise StateError(f"state must be a mapping, got {type(d).__name__}")
    missing = [f for f in _REQUIRED if f not in d]
    if missing:
        raise StateError(f"state is missing required field(s) {missing}; required: {_REQUIRED}")
    hands_in = d["hands"]
    if not isinstance(hands_in, list | tuple) or not all(isinstance(h, list | tuple)
                                                          for h in hands_in):
        raise StateError("'hands' must be a list with one list of card codes per seat")
    rules_given = d.get("rules") or {}
    if not isinstance(rules_given, Mapping):
        raise StateError(f"'rules' must be a mapping of rule options, got {rules_given!r}")
    rules_in = dict(rules_given)
    rules_in.setdefault("num_players", len(hands_in))
    try:
        rules = Rules(**rules_in)
    except RulesError as e:
        raise StateError(f"'rules': {e}") from None
    n = rules.num_players
    if len(hands_in) != n:
        raise StateError(f"'hands' has {len(hands_in)} hands but rules.num_players is {n}")
    g = cls.__new__(cls)
    g._setup(rules, seed)
    hands = [[0] * NUM_KINDS for _ in range(n)]  # ints: the copy check below comes first
    for s, h in enumerate(hands_in):
        for i, c in enumerate(h):
            try:
                hands[s][parse_kind(c)] += 1
            except ValueError as e:
                raise StateError(f"'hands'[{s}][{i}]: {e}") from None
        g.sizes[s] = len(h)
    g.draw_pile = _parse_cards(d, "draw_pile")[::-1]
    g.discard = _parse_cards(d, "discard_pile")
    if not g.discard:
        raise StateError("'discard_pile' must hold at least the top card")
    total = [0] * NUM_KINDS
    for h in hands:
        for k in range(NUM_KINDS):
            total[k] += h[k]
    for k in g.draw_pile + g.discard:
        total[k] += 1
    too_many = [f"{CODES[k]} ×{total[k]} (deck has {COPIES[k]})"
                for k in range(NUM_KINDS) if total[k] > COPIES[k]]
    if too_many:
        raise StateError(f"more copies than the {NUM_CARDS}-card deck holds: {', '.join(too_many)}")
    g.hands = [bytearray(h) for h in hands]
    g.held = [_held_mask(h) for h in g.hands]
    for k in g.discard:
        g.discard_counts[k] += 1
    try:
        g.colour = parse_colour(d["active_colour"])
    except ValueError as e:
        raise StateError(f"'active_colour': {e}") from None
    top = g.discard[-1]
    if top < W4 and top // 13 != g.colour:
        raise StateError(
            f"'active_colour' {d['active_colour']!r} contradicts the top card {CODES[top]} "
            "(a coloured top card sets the active colour)"
        )
    if type(d["direction"]) is not int or d["direction"] not in (1, -1):
        raise StateError(f"'direction' must be 1 or -1, got {d['direction']!r}")
    g.direction = d["direction"]
    phase_name = d.get("phase", "play")
    if phase_name not in A.PHASE_NAMES:
        raise StateError(f"'phase' {phase_name!r} unknown; phases: {list(A.PHASE_NAMES)}")
    g.phase = A.PHASE_NAMES.index(phase_name)
    game_over = bool(d.get("game_over", False))
    if (g.phase == GAME_OVER) != game_over:
        raise StateError("'phase' is 'game_over' exactly when 'game_over' is true")
    g.current_player = _seat(d, "current_player", n, allow_none=game_over)
    g.dealer = _seat(d, "dealer", n) if "dealer" in d else (g.current_player - g.direction) % n
    scores = d.get("scores", [0] * n)
    if (not isinstance(scores, list | tuple) or len(scores) != n
            or not all(isinstance(x, int) and x >= 0 for x in scores)):
        raise StateError(f"'scores' must be {n} non-negative ints, got {scores!r}")
    g.scores = list(scores)
    g.round = int(d.get("round", 1))
    uno_called = d.get("uno_called", [False] * n)
    if not isinstance(uno_called, list | tuple) or len(uno_called) != n:
        raise StateError(f"'uno_called' must be {n} booleans, got {uno_called!r}")
    g.uno_called = [bool(x) for x in uno_called]
    g.uno_miss = _seat(d, "uno_miss", n, allow_none=True) if "uno_miss" in d else -1
    drawn = d.get("drawn_card")
    if g.phase == PLAY_DRAWN:
        if drawn is None:
            raise StateError("phase 'play_drawn' needs 'drawn_card' (the card just drawn)")
        try:
            g.drawn = parse_kind(drawn)
        except ValueError as e:
            raise StateError(f"'drawn_card': {e}") from None
        if not g.hands[g.current_player][g.drawn]:
            raise StateError(f"'drawn_card' {drawn} is not in the current player's hand")
        if not g._playable(g.drawn):
            raise StateError(f"'drawn_card' {drawn} is not playable, so 'play_drawn' cannot be")
    elif drawn is not None:
        raise StateError("'drawn_card' is only allowed in phase 'play_drawn'")
    w4 = d.get("w4")
    if w4 is not None:
        try:
            g.w4_player = _seat(w4, "player", n)
            g.w4_prev_colour = parse_colour(w4["previous_colour"])
            g.w4_illegal = bool(w4["illegal"])
            g.w4_hand_size = int(w4.get("hand_size", g.sizes[g.w4_player]))
        except (KeyError, TypeError, ValueError) as e:
            raise StateError(f"'w4' must be {{player, previous_colour, illegal}}: {e}") from None
    if g.phase == CHALLENGE and w4 is None:
        raise StateError("phase 'challenge' needs 'w4' {player, previous_colour, illegal}")
    ctx = d.get("colour_context")
    if g.phase == CHOOSE_COLOUR:
        if ctx not in _COLOUR_CONTEXT_NAMES:
            raise StateError(
                f"phase 'choose_colour' needs 'colour_context' in {list(_COLOUR_CONTEXT_NAMES)}"
            )
        g.colour_context = _COLOUR_CONTEXT_NAMES.index(ctx)
        if g.colour_context == COLOUR_AFTER_W4 and w4 is None:
            raise StateError("'colour_context' 'w4' needs 'w4' {player, previous_colour, illegal}")
    reveal = d.get("reveal")
    if reveal is not None:
        try:
            g.reveal = (_seat(reveal, "player", n), _seat(reveal, "to", n),
                        tuple(parse_kind(c) for c in reveal["hand"]))
        except (KeyError, TypeError, ValueError) as e:
            raise StateError(f"'reveal' must be {{player, to, hand}}: {e}") from None
    last_item = d.get("last_item")
    if last_item is not None:
        if last_item not in ITEM_NAMES:
            raise StateError(f"'last_item' {last_item!r} unknown; items: {list(ITEM_NAMES)}")
        g.last_item = ITEM_NAMES.index(last_item)
    g.idle_turns = int(d.get("idle_turns", 0))
    g.turn_player = int(d.get("turn_player", g.current_player))
    g.previous_turn_player = int(d.get("previous_turn_player", -1))
    _parse_void_evidence(g, d)
    g.round_over = bool(d.get("round_over", False))
    g.game_over = game_over
    g.winner = d.get("winner")
    g.round_winner = d.get("round_winner")
    rhp = d.get("round_hand_points")
    g.round_hand_points = None if rhp is None else tuple(int(x) for x in rhp)
    g.num_steps = int(d.get("num_steps", 0))
    if g.game_over:
        g.current_player = -1
        g._legal = ()
    if "rng" in d:
        try:
            g.rng.bit_generator.state = _restore_rng_state(d["rng"])
        except (TypeError, ValueError, KeyError) as e:
            raise StateError(f"'rng': not a valid bit-generator state ({e})") from None
    return g
