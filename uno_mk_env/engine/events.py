"""The event log's format: one tuple per event, the type first; cards are kind ids.

::

    ("deal", round, dealer)                  ("start_card", kind)
    ("play", seat, kind)                     ("draw", seat, (kinds...), reason)
    ("keep", seat)                           ("colour", seat, colour)
    ("flip", seat, kind)                     ("item", seat, item)
    ("target", seat, target_seat)            ("skip", seat)
    ("reverse", seat, new_direction)         ("accept", seat)
    ("challenge", challenger, w4_player, w4_was_illegal)
    ("reveal", w4_player, challenger, (kinds...))
    ("uno", seat)                            ("catch", catcher or -1 when automatic, offender)
    ("let_pass", seat, offender)             (a missed UNO not caught, phase uno_catch, R8)
    ("reshuffle", n_cards)                   ("stalemate",)
    ("round_end", winner_or_None, points, (scores...))

``Game.events`` is the omniscient log; :func:`event_for` is what one seat may see of an event
(private payloads hidden), and :func:`event_to_dict` its JSON-safe form.
"""

from __future__ import annotations

from typing import Any

from .cards import CODES, COLOURS, ITEM_NAMES

__all__ = ["DRAW_REASONS", "Event", "event_for", "event_to_dict"]

#: One event: a tuple, its type (a ``str``) first, then the fields of that type.
Event = tuple[Any, ...]

#: The ``reason`` of a ``draw`` event.
DRAW_REASONS = (
    "deal", "voluntary", "draw_two", "wild_draw_four", "challenge_failed", "challenge_won",
    "banana", "green_shell", "lightning", "bob_omb", "uno_penalty",
)


def event_for(event: Event, seat: int) -> Event | None:
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


def event_to_dict(event: Event) -> dict[str, Any]:
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
    if kind in ("catch", "let_pass"):
        return {"type": kind, "player": None if event[1] < 0 else event[1], "offender": event[2]}
    if kind == "reshuffle":
        return {"type": kind, "count": event[1]}
    if kind == "stalemate":
        return {"type": kind}
    if kind == "round_end":
        return {"type": kind, "winner": event[1], "points": event[2], "scores": list(event[3])}
    return {"type": kind, "player": event[1]}  # keep, skip, accept, uno
