"""Small helpers for the rule scenario tests (docs/rules.md R3-R10).

Positions are written as :meth:`Game.from_dict` dicts; hands and piles may be given as a string of
space-separated card codes (``"R7 G2 W4"``) instead of a list. Actions are taken by their names in
``uno_mk_env.engine.actions.ACTION_NAMES`` (``"PLAY(R7)"``, ``"DRAW"``, ``"COLOUR(G)"``,
``"TARGET(+2)"``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from uno_mk_env import Game, Rules
from uno_mk_env import actions as A
from uno_mk_env.engine.cards import CODES, W4
from uno_mk_env.engine.cards import kind as card_kind

ACTION_ID: dict[str, int] = {name: a for a, name in enumerate(A.ACTION_NAMES)}


def cards(spec: str | Iterable[str]) -> list[str]:
    """Card codes as a sorted list: ``cards("R7 G2") == ["G2", "R7"]``."""
    return sorted(spec.split() if isinstance(spec, str) else spec)


def _codes(spec: str | Iterable[str]) -> list[str]:
    return spec.split() if isinstance(spec, str) else list(spec)


def make(position: Mapping[str, Any], seed: int = 0) -> Game:
    """A game from a minimal position (``Game.from_dict``), with defaults for convenience.

    ``hands``, ``draw_pile`` and ``discard_pile`` may be strings of codes; ``draw_pile`` defaults
    to empty, ``current_player`` to 0, ``direction`` to +1 and ``active_colour`` to the colour of
    a coloured top card. The game's generator is seeded with ``seed`` (reshuffles, next deals).
    """
    d = dict(position)
    d["hands"] = [_codes(h) for h in d["hands"]]
    d["draw_pile"] = _codes(d.get("draw_pile", []))
    d["discard_pile"] = _codes(d["discard_pile"])
    d.setdefault("current_player", 0)
    d.setdefault("direction", 1)
    if "active_colour" not in d:
        top = d["discard_pile"][-1]
        if card_kind(top) >= W4:
            raise ValueError("a wild top card needs an explicit 'active_colour'")
        d["active_colour"] = top[0]
    return Game.from_dict(d, seed=seed)


def action_id(name: str) -> int:
    """Action id of an action name (``"PLAY(R7)"``, ``"KEEP"``, ...)."""
    return ACTION_ID[name]


def do(g: Game, *names: str) -> Game:
    """Steps ``g`` through the named actions, in order; returns ``g``."""
    for name in names:
        g.step(ACTION_ID[name])
    return g


def legal_names(g: Game) -> set[str]:
    """Names of the legal actions of the current decider."""
    return {A.ACTION_NAMES[a] for a in g.legal_action_ids()}


def hand_codes(g: Game, seat: int) -> list[str]:
    """``seat``'s hand as a sorted list of codes."""
    return sorted(g.to_dict()["hands"][seat])


def hand_sizes(g: Game) -> list[int]:
    """Number of cards in each hand."""
    return [len(h) for h in g.to_dict()["hands"]]


def top(g: Game) -> str:
    """Code of the top card of the discard pile."""
    return CODES[g.top_card]


def colour(g: Game) -> str:
    """The active colour as its letter."""
    return "RYGB"[g.active_colour]


def draw_pile(g: Game) -> list[str]:
    """The draw pile as codes, the next card drawn first."""
    return g.to_dict()["draw_pile"]


def discard_pile(g: Game) -> list[str]:
    """The discard pile as codes, the top card last."""
    return g.to_dict()["discard_pile"]


def events_of(g: Game, kind: str) -> list[tuple]:
    """The events of one type (``"draw"``, ``"start_card"``, ...), in order."""
    return [e for e in g.events if e[0] == kind]


def start_cards(g: Game) -> list[str]:
    """Codes of the cards flipped to start the round (several with ``reflip``)."""
    return [CODES[e[1]] for e in events_of(g, "start_card")]


def find_game(rules: Rules, wanted: Callable[[Game], bool], limit: int = 3000) -> Game:
    """The fresh game of the smallest seed in ``range(limit)`` for which ``wanted(game)`` holds.

    Deals are random (R3), so start-card scenarios scan seeds deterministically.
    """
    for seed in range(limit):
        g = Game(rules, seed=seed)
        if wanted(g):
            return g
    raise AssertionError(f"no seed below {limit} gives the wanted deal")


__all__ = [
    "ACTION_ID", "action_id", "cards", "colour", "discard_pile", "do", "draw_pile",
    "events_of", "find_game", "hand_codes", "hand_sizes", "legal_names", "make", "start_cards",
    "top",
]


def eager_policy(mask: np.ndarray, rng: np.random.Generator) -> int:
    """Random, but calls UNO and plays a card whenever it can (a short, eventful game)."""
    if mask[A.CALL_UNO]:
        return A.CALL_UNO
    legal = np.flatnonzero(mask)
    plays = [a for a in legal if a not in (A.DRAW, A.KEEP)]
    pool = plays or legal
    return int(pool[rng.integers(len(pool))])
