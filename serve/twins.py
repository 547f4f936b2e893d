"""Twin deals: a game the table has played, dealt again with cards one seat never saw
exchanged, to show from the outside (a real browser, tests/test_serve_traffic.py) that what the
seat receives depends only on what it may know.

World A is a finished game (:attr:`Table.recording <uno_mk_env.serve.table.Table.recording>`).
:func:`twin_of` follows its first round and finds the cards the seat never saw and that changed
nothing public: cards that stayed in the draw pile, and cards other seats drew or were dealt and
held to the round's end without playing them, showing them to the seat (R6.3) or playing them
straight after drawing them (R4.2). It exchanges pairs of them so that every public fact stays:
each hand's size and points (R10.2), and the colours held by a seat that plays a Wild Draw Four
in the round (R6). A :class:`Twin` in a :class:`~uno_mk_env.serve.table.TableConfig` deals the
table's first game with that seed, applies the exchanges before anything is shown, and plays the
other seats by replaying their decisions in A (:class:`ScriptAgent`). A seat that in A drew a
card it could not play may now draw one it can: it keeps it (the hidden ``KEEP`` of R4.2), and
the other way round. The seat's traffic must then be the same bytes in both worlds.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from uno_mk_env import Game, PlayerView, Rules
from uno_mk_env import actions as A
from uno_mk_env.agents.base import Agent
from uno_mk_env.engine.cards import COLOUR_OF, POINTS, W4, counts_to_kinds
from uno_mk_env.engine.legality import held_mask
from uno_mk_env.errors import UnoMkError

__all__ = ["Exchange", "ScriptAgent", "Twin", "twin_of"]

#: Where the deal put a card: ``("pile", index)`` (index from the bottom) or ``("hand", seat)``.
Place = tuple[str, int]


@dataclass(frozen=True)
class Exchange:
    """Two hidden cards of the deal trade places: ``kinds[i]`` was at ``places[i]``."""

    places: tuple[Place, Place]
    kinds: tuple[int, int]


@dataclass(frozen=True)
class Twin:
    """World B of one seat: ``pile`` (world A's draw pile after the deal, a check that the
    seed deals the same), the ``exchanges``, and each other seat's decisions in A as
    ``(action, made while deciding about a drawn card)``."""

    seat: int
    pile: tuple[int, ...]
    exchanges: tuple[Exchange, ...]
    scripts: Mapping[int, tuple[tuple[int, bool], ...]]

    def apply(self, game: Game) -> None:
        """Makes ``game`` (world A's deal, before its first decision) world B's."""
        if tuple(game.draw_pile) != self.pile or game.num_steps:
            raise UnoMkError("a twin applies to its world's deal, before the first decision")
        for ex in self.exchanges:
            for (where, at), old, new in zip(ex.places, ex.kinds, ex.kinds[::-1]):
                if where == "pile":
                    game.draw_pile[at] = new
                else:
                    game.hands[at][old] -= 1
                    game.hands[at][new] += 1
                    _redeal_event(game, at, old, new)
        game.held = [held_mask(h) for h in game.hands]

    def agent(self, seat: int) -> ScriptAgent:
        return ScriptAgent(self.scripts[seat])


def _redeal_event(game: Game, seat: int, old: int, new: int) -> None:
    """The omniscient log of the deal says ``seat`` got ``new`` where it got ``old``."""
    for i, event in enumerate(game.events):
        if event[0] == "draw" and event[1] == seat and old in event[2]:
            kinds = list(event[2])
            kinds[kinds.index(old)] = new
            game.events[i] = (*event[:2], tuple(kinds), *event[3:])
            return
    raise UnoMkError(f"the deal's log gives seat {seat} no card {old}")


class ScriptAgent(Agent):
    """Replays one seat's decisions of world A: asked about a drawn card A's seat did not
    decide about, it keeps it; A's keeps of a card that is not playable here are skipped."""

    name = "script"

    def __init__(self, script: Sequence[tuple[int, bool]]) -> None:
        super().__init__(None)
        self.script = tuple(script)
        self._left = deque(self.script)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._left = deque(self.script)

    def act(self, observation: np.ndarray | None, action_mask: np.ndarray,
            view: PlayerView) -> int:
        left = self._left
        if view.phase == A.PLAY_DRAWN:
            return left.popleft()[0] if left and left[0][1] else A.KEEP
        while left and left[0][1]:
            if left.popleft()[0] != A.KEEP:
                raise UnoMkError("world A decided about a drawn card this world never offers")
        if not left:
            raise UnoMkError("world A's decisions of this seat have run out")
        return left.popleft()[0]


@dataclass
class _Card:
    kind: int
    place: Place | None  # None: it passed through the discard pile (seen)
    holder: int = -1  # the seat holding it when the round ends; -1: the draw pile


class _Follower:
    """Follows the first round of world A, keeping track of where each dealt card is."""

    def __init__(self, game: Game, seat: int) -> None:
        self.seat = seat
        self.initial = list(game.draw_pile)
        self.pile: list[Place | None] = [("pile", i) for i in range(len(game.draw_pile))]
        self.in_flight: deque[Place | None] = deque()
        self.hands = {o: [_Card(k, ("hand", o), o) for k in counts_to_kinds(game.hands[o])]
                      for o in range(game.num_players) if o != seat}
        self.w4_players: set[int] = set()
        self.done = False

    def _take(self, kind: int) -> Place | None:
        place = self.in_flight.popleft() if self.in_flight else self.pile.pop()
        if place is not None and self.initial[place[1]] != kind:
            raise UnoMkError("the twin lost track of the draw pile")
        return place

    def _taint(self, seat: int, kind: int | None = None) -> None:
        for card in self.hands[seat]:
            if kind is None or card.kind == kind:
                card.place = None

    def event(self, e: tuple[Any, ...]) -> None:
        kind = e[0]
        if kind == "reshuffle":  # the pile ran out during a draw: its last cards are in flight
            self.in_flight.extend(reversed(self.pile))
            self.pile = [None] * e[1]
        elif kind == "flip":
            self._take(e[2])
        elif kind == "draw":
            for k in e[2]:
                place = self._take(k)
                if e[1] != self.seat:
                    self.hands[e[1]].append(_Card(k, place, e[1]))
        elif kind == "play" and e[1] != self.seat:
            self._taint(e[1], e[2])
            hand = self.hands[e[1]]
            hand.remove(next(c for c in hand if c.kind == e[2]))
            if e[2] == W4:
                self.w4_players.add(e[1])
        elif kind == "reveal" and e[2] == self.seat:
            self._taint(e[1])
        elif kind == "round_end":
            self.done = True

    def hidden(self) -> list[_Card]:
        cards = [c for hand in self.hands.values() for c in hand if c.place is not None]
        cards += [_Card(self.initial[p[1]], p) for p in self.pile if p is not None]
        return cards

    def fits(self, card: _Card, kind: int) -> bool:
        """Whether ``card``'s holder may hold ``kind`` instead with nothing public changed."""
        if card.holder < 0:
            return True
        if card.kind >= W4 or kind >= W4 or POINTS[card.kind] != POINTS[kind]:
            return False
        return COLOUR_OF[card.kind] == COLOUR_OF[kind] or card.holder not in self.w4_players


def twin_of(recorded: Mapping[str, Any], seat: int, rng: random.Random,
            exchanges: int = 12) -> Twin:
    """World B of ``seat`` for the recorded game ``recorded`` (one game of a recording), with up
    to ``exchanges`` exchanges picked with ``rng``.

    Raises:
        UnoMkError: the recording's decisions do not replay (not a recording of this engine).
    """
    game = Game(Rules.from_dict(recorded["rules"]), seed=recorded["seed"])
    follower = _Follower(game, seat)
    pile = tuple(game.draw_pile)
    scripts: dict[int, list[tuple[int, bool]]] = {o: [] for o in follower.hands}
    seen = game.event_count
    for step in recorded["steps"]:
        actor = step["actor"]
        if actor < 0:
            continue
        action = step["spectator"]["action"]
        drawn = game.phase == A.PLAY_DRAWN
        if actor != seat:
            scripts[actor].append((action, drawn))
            if drawn and action != A.KEEP and not follower.done:
                follower._taint(actor, game.drawn)  # its decision showed the card playable
        game.step(action)
        for e in game.events[seen - game.events_start:]:
            if follower.done:
                break
            follower.event(e)
        seen = game.event_count
    cards = follower.hidden()
    rng.shuffle(cards)
    cards.sort(key=lambda c: c.holder < 0)  # held cards first: their exchanges test the most
    chosen: list[Exchange] = []
    while cards and len(chosen) < exchanges:
        a = cards.pop(0)
        b = next((c for c in cards if c.kind != a.kind and c.place != a.place
                  and follower.fits(a, c.kind)
                  and follower.fits(c, a.kind)), None)
        if b is not None:
            cards.remove(b)
            assert a.place is not None and b.place is not None
            chosen.append(Exchange((a.place, b.place), (a.kind, b.kind)))
    return Twin(seat, pile, tuple(chosen), {o: tuple(s) for o, s in scripts.items()})
