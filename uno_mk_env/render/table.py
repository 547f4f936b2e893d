"""The table dict: what a seat may see of a game, as JSON-safe data, and the look every picture
of it shares. The image renderer (:mod:`.image`, Pillow), the replay viewer's SVG
(:mod:`uno_mk_env.evaluation.replay_viewer`) and the browser table (:mod:`uno_mk_env.serve`)
all draw a table dict with the same :data:`GEOMETRY` and :data:`PALETTE`.

:func:`table_data` turns a game into a table dict, read only from ``game.view(seat)`` and
``game.events_for(seat)`` (plus the public ``game_over``, ``winner`` and ``public_steps``). With
``seat=None`` (a spectator) every seat's own view supplies its hand, face up. With a seat, only
that seat's view and its filtered event log are read: another seat's hand is ``None`` (drawn as
card backs; its size is public), so no hidden card can reach the dict, a picture or a replay
file's seat view. :func:`public_table_data` is the table of a spectator who sees no hand.

Table dict keys: ``players``, ``names``, ``viewer`` (seat or ``None``), ``round``, ``decision``
(public decisions taken, ``Game.public_steps``: a ``KEEP`` joins the draw before it, R4.2, so
the counter is the same whether another seat's drawn card was kept or could not be played),
``hands`` (per seat: card codes in kind order, or ``None`` when hidden),
``hand_sizes``, ``uno_called``, ``scores``, ``top_card`` (code), ``active_colour``
(``"R"``/``"Y"``/``"G"``/``"B"``), ``colour_pending`` (``True`` while the colour of a Wild Item
Box start card is being chosen, R3.3: there is no active colour yet and ``active_colour`` is a
placeholder, not drawn), ``direction`` (1 clockwise, -1), ``draw_pile``,
``discard_pile`` (sizes), ``current_player`` (-1 once over), ``phase`` (name), ``drawn_card``
(the card the decider just drew, when the viewer may see it, else ``None``), ``game_over``,
``winner``, ``item`` (the last item fired this round: ``{"seat", "item", "effect", "events"}``,
or ``None``) and ``last`` (the latest decision's events as one line of text, given by the
caller).
"""


from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..engine.cards import CODES, COLOURS, ITEM_NAMES, counts_to_codes
from ..engine.events import event_for
from ..engine.game import Game
from ..engine.phases import COLOUR_AT_START, PHASE_NAMES, Phase
from .text import events_text

__all__ = [
    "GEOMETRY", "HEIGHT", "ITEM_EFFECTS", "PALETTE", "PUBLIC", "WIDTH", "card_label",
    "last_decision_text", "public_table_data", "table_data",
]

WIDTH, HEIGHT = 1280, 800
#: Sizes and places shared by the image and the replay viewer's SVG (pixels).
GEOMETRY: dict[str, Any] = {
    "width": WIDTH, "height": HEIGHT,
    "centre": (640, 400), "radii": (500, 300),  # the ellipse the seat panels sit on
    "felt_radii": (400, 235),
    "panel": (256, 136),  # seat panel width, height
    "card": (30, 44), "big_card": (76, 110),
    "hand_area": (10, 38, 236),  # cards' x offset, y offset and width inside a panel
    "row_gap": 4, "one_row_max": 8, "max_shown": 36,
    "centre_box": (420, 230, 860, 540),  # free of panels for every player count
    "max_chars": 62,  # text lines in the centre box are cut to this many characters
    "name_chars": 20,
}
#: Colours (hex) shared by the image and the viewer.
PALETTE: dict[str, str] = {
    "background": "#17202a", "felt": "#22604a", "felt_edge": "#174534",
    "panel": "#f4f1e8", "panel_edge": "#8d8a80", "decider": "#ffb300", "viewer": "#3b82f6",
    "text": "#1d232b", "light_text": "#f4f1e8", "muted": "#5b6470",
    "R": "#d92b2b", "Y": "#f2c02c", "G": "#23965a", "B": "#1f6fd1", "W": "#202020",
    "card_edge": "#ffffff", "back": "#3a3f4b", "back_mark": "#d92b2b",
    "uno": "#d92b2b", "item_box": "#fff7d6",
}
#: What each item does for the player P who flipped it (docs/rules.md R7.2), item order.
ITEM_EFFECTS: tuple[str, ...] = (
    "another turn",
    "the player before draws 2",
    "an opponent draws 1",
    "all others draw, then another turn",
    "draws 2, names a colour",
)
_EFFECT_EVENTS = frozenset({"target", "draw", "colour", "reshuffle"})
_ITEM_DRAWS = frozenset({"banana", "green_shell", "lightning", "bob_omb"})
_RANK_LABELS = tuple("0123456789") + ("S", "R", "+2")


def card_label(code: str) -> str:
    """The short label printed on a card: ``"7"``, ``"S"`` (Skip), ``"R"`` (Reverse), ``"+2"``,
    ``"+4"`` (Wild Draw Four), ``"?"`` (Wild Item Box)."""
    if code == "W4":
        return "+4"
    if code == "WB":
        return "?"
    return _RANK_LABELS["0123456789SRD".index(code[1])]


# ---------------------------------------------------------------------------------- data
def last_decision_text(
    game: Game, start: int, seat: int | None, names: Sequence[str]
) -> str:
    """The events logged since event number ``start`` (``game.event_count`` before the latest
    decision) as one line, as ``seat`` may see them (``None``: everything)."""
    first = max(start - game.events_start, 0)
    events = game.events[first:]
    if seat is not None:
        events = [seen for e in events if (seen := event_for(e, seat)) is not None]
    return events_text(events, names, seat)


def _last_item(
    game: Game, item: int, names: Sequence[str], seat: int | None
) -> dict[str, Any] | None:
    """The item that fired last in this round and what it did, as ``seat`` may see it. Reads the
    log backwards from its end to the round's ``item`` event (or its ``deal``: none), so a frame
    costs the same early and late in a long game."""
    if item < 0:
        return None
    events = game.events
    at = next((i for i in range(len(events) - 1, -1, -1) if events[i][0] in ("item", "deal")),
              -1)
    if at < 0 or events[at][0] == "deal":  # a position built by from_dict: no item event
        return {"seat": None, "item": ITEM_NAMES[item], "effect": ITEM_EFFECTS[item],
                "events": ""}
    owner = events[at][1]
    effect = []
    for e in events[at + 1:]:
        seen = e if seat is None else event_for(e, seat)
        if seen is None:  # an event this seat does not see (another seat's KEEP)
            continue
        if seen[0] not in _EFFECT_EVENTS or (seen[0] == "draw" and seen[3] not in _ITEM_DRAWS):
            break
        effect.append(seen)
    item = events[at][2]
    return {"seat": owner, "item": ITEM_NAMES[item], "effect": ITEM_EFFECTS[item],
            "events": events_text(effect, names, seat)}


def table_data(
    game: Game,
    seat: int | None = None,
    names: Sequence[str] | None = None,
    last: str = "",
) -> dict[str, Any]:
    """The table as ``seat`` may see it (``None``: a spectator who sees every hand), as a
    JSON-safe dict (keys in the module docstring).

    Args:
        seat: the viewing seat, or ``None``.
        names: one display name per seat (default ``player_0`` ...).
        last: the latest decision's events as one line (:func:`last_decision_text`).

    Raises:
        ValueError: ``seat`` is not a seat of the game, or ``names`` has the wrong length.
    """
    n = game.num_players
    if seat is not None and (not isinstance(seat, int) or isinstance(seat, bool)
                             or not 0 <= seat < n):
        raise ValueError(f"seat must be None (a spectator) or a seat 0-{n - 1}, got {seat!r}")
    names = list(names) if names is not None else [f"player_{i}" for i in range(n)]
    if len(names) != n:
        raise ValueError(f"names must hold one name per seat ({n}), got {len(names)}")
    if seat is None:
        views = [game.view(s) for s in range(n)]
        view = views[0]
        hands: list[list[str] | None] = [counts_to_codes(v.hand) for v in views]
        decider = view.current_player
        drawn = views[decider].drawn_card if decider >= 0 else -1
    else:
        view = game.view(seat)
        hands = [counts_to_codes(view.hand) if s == seat else None for s in range(n)]
        drawn = view.drawn_card
    over = view.phase == Phase.GAME_OVER
    return {
        "players": n,
        "names": names,
        "viewer": seat,
        "round": view.round,
        "decision": game.public_steps,
        "hands": hands,
        "hand_sizes": list(view.hand_sizes),
        "uno_called": [bool(u) for u in view.uno_called],
        "scores": list(view.scores),
        "top_card": CODES[view.top_card],
        "active_colour": COLOURS[view.active_colour],
        "colour_pending": view.colour_context == COLOUR_AT_START,
        "direction": view.direction,
        "draw_pile": view.draw_pile_size,
        "discard_pile": view.discard_pile_size,
        "current_player": view.current_player,
        "phase": PHASE_NAMES[view.phase],
        "drawn_card": CODES[drawn] if drawn >= 0 else None,
        "game_over": over,
        "winner": game.winner if over else None,
        "item": _last_item(game, view.last_item, names, seat),
        "last": last,
    }


#: The seat no event names: :func:`~uno_mk_env.engine.events.event_for` of it keeps only what every
#: seat may see (drawn cards, revealed hands and KEEPs hidden).
PUBLIC = -1


def public_table_data(game: Game, names: Sequence[str] | None = None,
                      last: str = "") -> dict[str, Any]:
    """The table as a spectator who sees no hand sees it (the browser table's spectator,
    :mod:`uno_mk_env.serve`): :func:`table_data` of seat 0 with every hand hidden (``None``),
    no drawn card, ``viewer`` ``None``, and the item's events as every seat sees them. ``last``
    should be :func:`last_decision_text` of seat :data:`PUBLIC`."""
    t = table_data(game, 0, names, last)
    n = game.num_players
    item = game.view(0).last_item
    t.update(viewer=None, hands=[None] * n, drawn_card=None,
             item=_last_item(game, item, t["names"], PUBLIC))
    return t


