"""The table of one game: the seats' hands, the piles, the scores, the generator and the
event log, and the moves of cards between them (drawing, R9 reshuffles). Which moves happen is
decided by the rules in :mod:`.play`; :class:`~.game.Game` is the public class.
"""


from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

import numpy as np

from .cards import (
    NO_CARD,
    NUM_COLOURS,
    NUM_KINDS,
    POINTS,
)
from .events import Event, event_for
from .phases import (
    PHASE_NAMES,
    Phase,
)
from .rules import Rules

#: ``PlayerView.void_evidence`` of a seat that just drew voluntarily facing a colour (R4.2).
VOID_MEMORY = 8
#: ``Game(event_log=...)``: ``"recent"`` keeps the current and the previous round's events (memory
#: bounded over a match of any length), ``"all"`` the whole match.
EVENT_LOGS = ("recent", "all")
#: ``evidence.translate(FADE[k])``: every byte lowered by ``k``, floored at 0 (k drawn cards).
FADE = tuple(bytes(max(v - k, 0) for v in range(256)) for k in range(VOID_MEMORY + 1))

#: ``Game(deck=...)``: ``deck(pile)`` removes one card from the draw pile ``pile`` and returns its
#: kind; the engine calls it for every card dealt, drawn or flipped.
Deck = Callable[[list[int]], int]
PLAY = Phase.PLAY
_NO_CARD = NO_CARD


class Table:
    """The state of one game (its attributes: :class:`~.game.Game`); no rules."""

    __slots__ = (
        "rules", "num_players", "_rng", "_rng_source", "hands", "held", "sizes", "draw_pile",
        "discard", "discard_counts", "colour",
        "current_player", "direction", "phase", "dealer", "scores", "round", "drawn",
        "uno_called", "uno_miss", "w4_player", "w4_prev_colour", "w4_illegal", "w4_hand_size",
        "colour_context",
        "reveals", "last_item", "idle_turns", "turn_player", "previous_turn_player",
        "void_evidence",
        "round_over", "game_over", "winner", "round_winner", "round_hand_points", "num_steps",
        "num_keeps",
        "events", "events_start", "event_log", "_round_start", "_legal", "deck",
        "_uno_on", "_catch_auto", "_catch_any", "_w4_strict",
    )

    def _setup(
        self, rules: Rules, seed: int | np.random.Generator | None, event_log: str = "recent"
    ) -> None:
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a uno_mk_env.Rules, got {type(rules).__name__}")
        if event_log not in EVENT_LOGS:
            raise ValueError(f"event_log={event_log!r} is not allowed; allowed: {EVENT_LOGS}")
        self.event_log = event_log
        self.deck: Deck | None = None
        self.rules = rules
        n = self.num_players = rules.num_players
        if isinstance(seed, np.random.Generator):
            self.rng = seed
        else:  # created on first use: clones and determinized copies often never shuffle
            self._rng: np.random.Generator | None = None
            self._rng_source: int | Mapping[str, Any] | None = seed
        self.scores = [0] * n
        self.round = 0
        self.round_over = False
        self.game_over = False
        self.winner: int | None = None
        self.round_winner: int | None = None
        self.round_hand_points: tuple[int, ...] | None = None
        self.num_steps = 0
        self.num_keeps = 0
        self.events: list[Event] = []
        self.events_start = 0
        self._round_start = 0
        self._uno_on = rules.uno == "on"
        self._catch_auto = rules.uno_catch == "auto"
        self._catch_any = rules.uno_catch == "any_player"
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
        #: R6.3: ``(w4_player, challenger, shown kinds)`` per challenger this round, oldest
        #: first; a challenger's later challenge replaces its earlier reveal.
        self.reveals: tuple[tuple[int, int, tuple[int, ...]], ...] = ()
        self.last_item = -1
        self.idle_turns = 0
        self.turn_player = -1
        self.previous_turn_player = -1
        self.void_evidence = [bytearray(NUM_COLOURS) for _ in range(n)]
        self._legal: tuple[int, ...] | None = None

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
                rng = np.random.default_rng(cast("int | None", source))  # not a state: a seed
            self._rng = rng
            self._rng_source = None
        return rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self._rng = value
        self._rng_source = None

    @property
    def reveal(self) -> tuple[int, int, tuple[int, ...]] | None:
        """The round's latest challenge reveal ``(w4_player, challenger, shown kinds)`` or
        ``None``; :attr:`reveals` keeps one per challenger."""
        return self.reveals[-1] if self.reveals else None

    @property
    def public_steps(self) -> int:
        """Decisions every seat can count: :attr:`num_steps` without the ``KEEP`` decisions,
        which other seats cannot tell from the draw before them (R4.2). The env's
        ``max_steps``, the rendered tables and replays count these."""
        return self.num_steps - self.num_keeps

    @property
    def phase_name(self) -> str:
        """The current phase as its name (docs/api.md#actions-and-phases)."""
        return PHASE_NAMES[self.phase]

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

    def _take(self, pile: list[int]) -> int:
        """A card leaves the (non-empty) draw pile: the top one, or the one ``deck`` decides."""
        deck = self.deck
        return pile.pop() if deck is None else deck(pile)

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
            card = self._take(pile)
            hand[card] += 1
            bits |= 1 << card
            got.append(card)
        if got:
            self.held[seat] |= bits
            self.sizes[seat] += len(got)
            if seat == self.uno_miss:  # R8: no longer holding one uncalled card
                self.uno_miss = -1
            evidence = self.void_evidence[seat]
            evidence[:] = evidence.translate(FADE[min(len(got), VOID_MEMORY)])
            self.uno_called[seat] = False
            self.idle_turns = 0
        result = tuple(got)
        self.events.append(("draw", seat, result, reason))
        return result

    @property
    def event_count(self) -> int:
        """Events logged since the game began, including those ``event_log="recent"`` dropped:
        ``events[i]`` is event number ``events_start + i``."""
        return self.events_start + len(self.events)

    def events_for(self, seat: int | None) -> list[Event]:
        """The event log as ``seat`` may see it (``None``: the full, omniscient log)."""
        if seat is None:
            return list(self.events)
        return [seen for e in self.events if (seen := event_for(e, seat)) is not None]

