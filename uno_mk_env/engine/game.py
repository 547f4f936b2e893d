"""The rules engine: a mutable game state machine for UNO Mario Kart (rules R1-R10).

Design:

* State is plain ints and count vectors: ``hands[seat][kind]`` counts, piles as lists of kind ids,
  the active colour a field of the game (never written onto a card).
* One ``numpy.random.Generator`` per game; :meth:`Game.to_dict` stores its state, so a position
  round-trips exactly.
* Legal actions are computed once per decision and cached; :meth:`Game.legal_action_ids` is the
  fast path, :meth:`Game.legal_actions` the bool mask over the 73 action ids.
* Illegal input fails loudly (:class:`IllegalActionError`, :class:`StateError`); choosing an RL
  penalty is the env layer's job.

The other engine modules hold one idea each: :mod:`.legality` (R4.1/R6.1 and their fast tables),
:mod:`.view` (:class:`PlayerView`), :mod:`.events` (the event log's format), :mod:`.state`
(state dicts and their validation), :mod:`.sampling` (games consistent with a view).
The engine imports neither gymnasium nor pettingzoo and never prints.
"""


from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import IllegalActionError, StateError
from .play import Play
from .rules import Rules
from .sampling import Condition, game_from_view
from .state import game_from_dict, game_to_dict
from .table import EVENT_LOGS, Deck, Table
from .view import (
    PlayerView,
    player_view,
)

__all__ = ["EVENT_LOGS", "Game", "IllegalActionError", "PlayerView", "StateError"]


class Game(Play):
    """One game of UNO Mario Kart (one or several rounds, per ``rules.match``).

    Args:
        rules: the rule options (default ``Rules()``: 4 players).
        seed: seed for the game's own ``numpy.random.Generator`` (or a Generator to own).
        event_log: ``"recent"`` (default): ``events`` holds the current round's events and the
            previous round's, so a match of any length runs in bounded memory; ``"all"``: the
            whole match (grows with it).
        dealer: round 1's dealer (R3.1); ``None`` (default): drawn from the generator.
        deck: which card leaves the draw pile (:data:`Deck`); ``None`` (default): its top card,
            the pile being shuffled (R3.2, R3.3, R9). A chance-node driver (the OpenSpiel game's
            explicit form) decides each card instead, the pile's order then unused.

    Attributes (read-only for users): ``current_player`` (the decider, ``-1`` when the game is
    over), ``phase`` (int, see ``phase_name``), ``direction``, ``dealer``, ``scores``, ``winner``,
    ``round_over`` (the last step ended a round; in multi-round matches the next round is
    already dealt), ``num_steps`` (decisions taken; ``num_keeps`` of them ``KEEP``s, hidden from
    other seats, and :attr:`public_steps` the others), ``reveals`` (R6.3: each challenger's
    latest revealed hand this round), ``round_winner`` and ``round_hand_points`` (each seat's
    hand points when the latest round ended), ``game_over``, ``events`` (the omniscient log,
    see ``event_log``; ``events_for(seat)`` filters it), ``events_start`` (how many earlier
    events were dropped).
    """

    __slots__ = ()

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int | np.random.Generator | None = None,
        event_log: str = "recent",
        *,
        dealer: int | None = None,
        deck: Deck | None = None,
    ):
        self._setup(rules if rules is not None else Rules(), seed, event_log)
        self.deck = deck
        if dealer is None:
            dealer = self.rng.integers(self.num_players).item()
        elif isinstance(dealer, bool) or not isinstance(dealer, int) or not (
                0 <= dealer < self.num_players):
            raise StateError(f"dealer must be a seat 0-{self.num_players - 1}, got {dealer!r:.40}")
        self._deal(dealer)

    #: What ``seat`` may know (docs/api.md#playerview), as an immutable :class:`PlayerView`
    #: (:func:`uno_mk_env.engine.view.player_view`).
    view = player_view

    def determinize(self, seat: int, rng: np.random.Generator) -> Game:
        """A game consistent with ``view(seat)`` whose hidden cards are resampled.

        Built from the view alone (:meth:`from_view`), so it cannot carry hidden information.
        """
        return Game.from_view(self.view(seat), rng, validate=False)  # a view it just built

    @classmethod
    def from_view(
        cls,
        view: PlayerView,
        rng: np.random.Generator,
        condition: Condition | None = None,
        validate: bool = True,
    ) -> Game:
        """A full game sampled uniformly among those consistent with ``view``: see
        :func:`uno_mk_env.engine.sampling.game_from_view` (``condition``, ``validate``, what is
        kept).

        Raises:
            StateError: ``view`` could not come from a real game (a tampered field, named), or
                ``condition`` broke one of its rules (the sample is discarded).
        """
        return game_from_view(cls, view, rng, condition, validate)

    def clone(self) -> Game:
        """An independent deep copy (RNG included): stepping it never affects this game. The
        ``deck`` is not copied: the clone takes the top card of its own (shuffled) draw pile."""
        g = Game.__new__(Game)
        for name in Table.__slots__:
            setattr(g, name, getattr(self, name))
        g.deck = None  # a deck may hold its own progress: a clone draws from its own pile
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
        """The full state as JSON-safe data (docs/api.md#state-dicts); ``Game.from_dict`` inverts
        it."""
        return game_to_dict(self, include_events)

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
        return game_from_dict(cls, d, seed)

