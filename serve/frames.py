"""What the browser table sends: every frame is built here, from one seat's view and the events
that seat may see, or (a spectator) from the public part of the table only.

A *state frame* (``{"type": "state", ...}``) is the whole table as the receiver may know it:

``table``
    :func:`uno_mk_env.render.table.table_data` of the seat (its own hand face up, every other
    hand as a count), or :func:`~uno_mk_env.render.table.public_table_data` for a spectator.
``legal``
    ``[[action id, label], ...]``: the decisions offered, from ``view.legal_actions`` (only the
    deciding seat has any, and only a seat played by a person is sent them).
``ask``
    the number of decisions this seat has been asked so far: a reply must name it, so a replayed
    or stale message is refused.
``log``
    the latest lines of the narrated event log as this receiver may read them.
``result``
    once the game is over: places and scores in words, from public facts only (the winner and
    the scores; seats with equal scores share a place, since the points left in hand are hidden).

Frames are JSON text with sorted keys, so two equal frames are equal bytes.

When a seat hides a decision (a ``KEEP`` of its drawn card, R4.2), no other receiver is sent
anything between its draw and its next public decision (:func:`sees_now`), so a drawn card that
was kept looks exactly like one that could not be played.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from uno_mk_env import Game, PlayerView
from uno_mk_env import actions as A
from uno_mk_env.errors import one_line
from uno_mk_env.evaluation.replay import action_label
from uno_mk_env.render.table import PUBLIC, last_decision_text, public_table_data, table_data

__all__ = ["error_frame", "frame_text", "last_text", "result_text", "sees_now", "state_frame"]

#: Lines of the event log a frame carries.
LOG_LINES = 40


def sees_now(game: Game, receiver: int | None) -> bool:
    """Whether ``receiver`` (a seat, ``None`` a spectator) may be shown the table now: not while
    another seat decides about the card it drew (that phase exists only when the card is
    playable, which the others must not learn, R4.2)."""
    return not (game.phase == A.PLAY_DRAWN and game.current_player != receiver)


def last_text(game: Game, start: int, receiver: int | None, names: Sequence[str]) -> str:
    """The events since event number ``start`` as ``receiver`` may read them, as one line."""
    return last_decision_text(game, start, PUBLIC if receiver is None else receiver, names)


def _legal(view: PlayerView, names: Sequence[str]) -> list[list[Any]]:
    return [[a, action_label(a, view.seat, names)] for a in view.legal_actions]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def result_text(table: dict[str, Any], receiver: int | None) -> str:
    """Places and scores in words, from the public table dict of a finished game: the winner
    first, then by score (equal scores share a place: the points left in hand are hidden)."""
    names, scores, winner = table["names"], table["scores"], table["winner"]
    n = len(names)

    def key(s: int) -> tuple[int, int]:
        return (0 if s == winner else 1, -scores[s])

    order = sorted(range(n), key=lambda s: (key(s), s))
    parts = []
    for s in order:
        place = 1 + sum(1 for o in range(n) if key(o) < key(s))
        joint = "joint " if sum(1 for o in range(n) if key(o) == key(s)) > 1 else ""
        who = "you" if s == receiver else names[s]
        points = f"{scores[s]} point{'s' if scores[s] != 1 else ''}"
        verb = "won" if s == winner else f"finished {joint}{_ordinal(place)}"
        parts.append(f"{who} {verb} with {points}")
    head = "Game over: " if winner is not None else "Game over, nobody won: "
    return head + "; ".join(parts) + "."


def state_frame(game: Game, receiver: int | None, names: Sequence[str], last: str,
                log: Sequence[str], ask: int, offer: bool) -> dict[str, Any]:
    """The state frame of ``receiver`` (a seat, or ``None``: a spectator); ``offer``: the seat is
    played from the browser, so its legal decisions are sent."""
    if receiver is None:
        table = public_table_data(game, names, last)
        legal: list[list[Any]] = []
    else:
        view = game.view(receiver)
        table = table_data(game, receiver, names, last)
        legal = _legal(view, names) if offer else []
    over = bool(table["game_over"])
    return {
        "type": "state", "seat": receiver, "table": table, "legal": legal, "ask": ask,
        "log": list(log[-LOG_LINES:]), "over": over,
        "result": result_text(table, receiver) if over else None,
    }


def error_frame(message: str) -> dict[str, Any]:
    """The one frame a refused message gets."""
    return {"type": "error", "message": one_line(message)[:300]}


def frame_text(frame: dict[str, Any]) -> str:
    """A frame as compact JSON with sorted keys (equal frames are equal bytes)."""
    return json.dumps(frame, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
