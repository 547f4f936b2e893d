"""The table as a picture: ``render_mode="rgb_array"`` and ``"human"``.

:func:`draw_table` draws a table dict (:mod:`.table`, :func:`~.table.table_data`) with Pillow
into a ``HEIGHT × WIDTH × 3`` ``uint8`` array, the same size for every table of 2-10 players;
:func:`render_image` does both steps for a game. The replay viewer draws the same dict as SVG
with the same :data:`~.table.GEOMETRY` and :data:`~.table.PALETTE`.

Pillow is an optional dependency (``pip install 'uno-mk-env[render]'``, which also brings
pygame for the ``"human"`` window, :class:`Window`); the table dict needs neither, and the
envs import this module only when an image render mode is chosen.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.cards import CODES, COLOUR_NAMES, COLOURS, ITEM_NAMES, NAMES
from ..engine.game import Game
from .table import GEOMETRY, HEIGHT, PALETTE, WIDTH, card_label, last_decision_text, table_data

__all__ = [
    "Window", "draw_table", "hand_slots", "render_image", "require_pillow", "seat_centres",
]

# ------------------------------------------------------------------------------ geometry
def _round(value: float) -> int:
    """Halves round up, as JavaScript's ``Math.round`` (the viewer computes the same places)."""
    return math.floor(value + 0.5)


def seat_centres(num_players: int, bottom: int = 0) -> list[tuple[int, int]]:
    """Centre of each seat's panel (index = seat): on an ellipse, ``bottom`` at the bottom and
    the seats after it clockwise on screen (seat + 1 on its left, docs/rules.md R1)."""
    cx, cy = GEOMETRY["centre"]
    rx, ry = GEOMETRY["radii"]
    out = []
    for s in range(num_players):
        angle = 2 * math.pi * ((s - bottom) % num_players) / num_players
        out.append((_round(cx - rx * math.sin(angle)), _round(cy + ry * math.cos(angle))))
    return out


def hand_slots(count: int) -> tuple[list[tuple[int, int]], int]:
    """Where the cards of a hand of ``count`` go in a panel: ``(x, y)`` offsets of each card
    shown, and how many are left out (shown as ``+N`` on the last card shown).

    One row up to ``one_row_max`` cards, else two rows, overlapping as needed; at most
    ``max_shown`` cards are drawn.
    """
    g = GEOMETRY
    x0, y0, width = g["hand_area"]
    card_w, card_h = g["card"]
    shown = min(count, g["max_shown"])
    hidden = count - shown
    if shown == 0:
        return [], 0
    rows = 1 if shown <= g["one_row_max"] else 2
    per_row = -(-shown // rows)
    step = card_w + 2 if per_row == 1 else min(card_w + 2, (width - card_w) / (per_row - 1))
    slots = [(_round(x0 + (i % per_row) * step), y0 + (i // per_row) * (card_h + g["row_gap"]))
             for i in range(shown)]
    return slots, hidden


def _arrow_points(
    clockwise: bool, cx: float, cy: float, r: float
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """A circular arrow (polyline points, arrowhead triangle) around ``(cx, cy)``."""
    start, end = 200, 480  # degrees, screen angles (y down: increasing is clockwise)
    pts = [(cx + r * math.cos(math.radians(a)), cy + r * math.sin(math.radians(a)))
           for a in range(start, end + 1, 10)]
    if not clockwise:
        pts = [(2 * cx - x, y) for x, y in pts]
    (x1, y1), (x2, y2) = pts[-2], pts[-1]
    dx, dy = x2 - x1, y2 - y1
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    head = [(x2 + ux * 9, y2 + uy * 9), (x2 - uy * 7, y2 + ux * 7), (x2 + uy * 7, y2 - ux * 7)]
    return [(round(x, 1), round(y, 1)) for x, y in pts], [(round(x, 1), round(y, 1))
                                                          for x, y in head]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def status_text(t: dict[str, Any]) -> str:
    """The centre box's status line: who decides in which phase, or the game's end."""
    names = t["names"]
    if t["game_over"]:
        w = t["winner"]
        return "Game over: no winner" if w is None else f"Game over: {names[w]} wins"
    text = f"{names[t['current_player']]} decides: {t['phase']}"
    if t["drawn_card"] is not None:
        text += f" (drew {t['drawn_card']})"
    return text


def header_text(t: dict[str, Any]) -> str:
    """The centre box's first line."""
    view = "spectator view" if t["viewer"] is None else f"{t['names'][t['viewer']]}'s view"
    return f"Round {t['round']} · decision {t['decision']} · {view}"


def item_lines(t: dict[str, Any]) -> tuple[str, str]:
    """The two text lines of the last-item box."""
    item = t["item"]
    if item is None:
        return "No item fired this round", ""
    who = "" if item["seat"] is None else f" ({t['names'][item['seat']]})"
    return f"{item['item']}{who}: {item['effect']}", item["events"]


# ------------------------------------------------------------------------------- drawing
def require_pillow(mode: str = "rgb_array") -> None:
    """Raises ``ImportError`` with the install command when Pillow is missing."""
    try:
        import PIL  # noqa: F401
    except ImportError:
        raise ImportError(
            f"render_mode={mode!r} needs Pillow: pip install 'uno-mk-env[render]'"
        ) from None


#: The bold face of card numerals and headings: DejaVu Sans Bold (its "3", "5", "6", "8" and
#: "S" stay distinct at 13 pixels, where a stroked regular face smears them).
BOLD_FONT_FILE = "DejaVuSans-Bold.ttf"


@lru_cache(maxsize=1)
def bold_font_path() -> str | None:
    """Where :data:`BOLD_FONT_FILE` is: matplotlib's bundled copy (the ``eval`` extra; found
    without importing matplotlib), else the system's (Debian's ``fonts-dejavu-core``); ``None``
    if neither is installed, and bold text then uses Pillow's own face (regular weight)."""
    places = []
    spec = importlib.util.find_spec("matplotlib")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        places.append(Path(folder) / "mpl-data" / "fonts" / "ttf" / BOLD_FONT_FILE)
    places.append(Path("/usr/share/fonts/truetype/dejavu") / BOLD_FONT_FILE)
    return next((str(p) for p in places if p.is_file()), None)


@lru_cache(maxsize=32)
def _font(size: int, bold: bool = False) -> Any:
    from PIL import ImageFont

    path = bold_font_path() if bold else None
    return ImageFont.truetype(path, size) if path else ImageFont.load_default(size)


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    red, green, blue = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return red, green, blue


def _pil_text(text: str) -> str:
    # The font Pillow ships (Aileron) has no arrows or dashes.
    return text.replace("→", "›").replace("—", "-").replace("–", "-").replace("×", "x")


class _Painter:
    """The few primitives the table is made of, on a Pillow image."""

    def __init__(self) -> None:
        from PIL import Image, ImageDraw

        self.image = Image.new("RGB", (WIDTH, HEIGHT), _rgb(PALETTE["background"]))
        self.draw = ImageDraw.Draw(self.image)

    def rect(self, x: float, y: float, w: float, h: float, r: float, fill: str | None,
             edge: str | None = None, width: int = 1) -> None:
        self.draw.rounded_rectangle(
            (x, y, x + w - 1, y + h - 1), radius=r, fill=_rgb(fill) if fill else None,
            outline=_rgb(edge) if edge else None, width=width,
        )

    def ellipse(self, cx: float, cy: float, rx: float, ry: float, fill: str | None,
                edge: str | None = None, width: int = 1) -> None:
        self.draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=_rgb(fill) if fill else None,
                          outline=_rgb(edge) if edge else None, width=width)

    def polygon(self, points: Sequence[tuple[float, float]], fill: str) -> None:
        self.draw.polygon([tuple(p) for p in points], fill=_rgb(fill))

    def line(self, points: Sequence[tuple[float, float]], colour: str, width: int) -> None:
        self.draw.line([tuple(p) for p in points], fill=_rgb(colour), width=width, joint="curve")

    def text(self, x: float, y: float, text: str, size: int, colour: str, anchor: str = "la",
             bold: bool = False) -> None:
        self.draw.text((x, y), _pil_text(text), fill=_rgb(colour), font=_font(size, bold),
                       anchor=anchor)


def _item_icon(p: _Painter, item: int, cx: float, cy: float, s: float) -> None:
    """A small picture of an item in a white disc of diameter ``s`` (same shapes as the SVG)."""
    p.ellipse(cx, cy, s / 2, s / 2, "#ffffff")
    k = s / 20  # the shapes are designed on a 20-pixel disc
    if item == 0:  # Mushroom: red cap with white spots, pale stem
        p.rect(cx - 3 * k, cy, 6 * k, 6 * k, 1, "#f0d9b5")
        p.polygon([(cx - 8 * k, cy + 1 * k), (cx - 7 * k, cy - 4 * k), (cx - 3 * k, cy - 7 * k),
                   (cx + 3 * k, cy - 7 * k), (cx + 7 * k, cy - 4 * k), (cx + 8 * k, cy + 1 * k)],
                  PALETTE["R"])
        p.ellipse(cx - 3 * k, cy - 3 * k, 1.6 * k, 1.6 * k, "#ffffff")
        p.ellipse(cx + 3 * k, cy - 3 * k, 1.6 * k, 1.6 * k, "#ffffff")
    elif item == 1:  # Banana Peel: a yellow crescent
        p.polygon([(cx - 7 * k, cy - 5 * k), (cx - 3 * k, cy + 4 * k), (cx + 4 * k, cy + 6 * k),
                   (cx + 8 * k, cy + 3 * k), (cx + 2 * k, cy + 2 * k), (cx - 3 * k, cy - 2 * k),
                   (cx - 5 * k, cy - 7 * k)], "#e0b000")
    elif item == 2:  # Green Shell: a green disc with a white rim and a pale centre
        p.ellipse(cx, cy, 7 * k, 7 * k, PALETTE["G"], "#ffffff", max(1, round(k)))
        p.ellipse(cx, cy, 3 * k, 3 * k, "#bfe8c9")
    elif item == 3:  # Lightning: a bolt
        p.polygon([(cx + 2 * k, cy - 8 * k), (cx - 5 * k, cy + 1 * k), (cx - 0.5 * k, cy + 1 * k),
                   (cx - 2 * k, cy + 8 * k), (cx + 5 * k, cy - 1 * k), (cx + 0.5 * k, cy - 1 * k)],
                  "#1f6fd1")
    else:  # Bob-omb: a black bomb with a fuse and a spark
        p.ellipse(cx - 1 * k, cy + 1.5 * k, 6 * k, 6 * k, "#202020")
        p.line([(cx + 3 * k, cy - 3 * k), (cx + 6 * k, cy - 6 * k)], "#8a6d3b", max(1, round(k)))
        p.ellipse(cx + 6.5 * k, cy - 6.5 * k, 1.8 * k, 1.8 * k, "#ff8c00")


def _item_of_code(code: str) -> int:
    return 4 if code in ("W4", "WB") else COLOURS.index(code[0])


def _card(p: _Painter, code: str, x: float, y: float, big: bool = False) -> None:
    """A face-up card: its colour, its label top left (centred when big), its item icon."""
    w, h = GEOMETRY["big_card" if big else "card"]
    colour = "W" if code in ("W4", "WB") else code[0]
    p.rect(x, y, w, h, 6 if big else 4, PALETTE[colour], PALETTE["card_edge"], 2 if big else 1)
    ink = PALETTE["text"] if colour == "Y" else "#ffffff"
    label = card_label(code)
    item = _item_of_code(code)
    if big:
        p.ellipse(x + w / 2, y + 42, 27, 31, "#ffffff" if colour != "W" else "#3a3a3a")
        p.text(x + w / 2, y + 42, label, 32, PALETTE[colour] if colour != "W" else "#ffffff",
               "mm", bold=True)
        p.text(x + 5, y + 4, label, 14, ink, "la", bold=True)
        _item_icon(p, item, x + w / 2, y + 86, 20)
        p.text(x + w / 2, y + h + 12, NAMES[CODES.index(code)], 12, PALETTE["light_text"], "ma")
    else:
        p.text(x + 3, y + 2, label, 14, ink, "la", bold=True)
        _item_icon(p, item, x + 9, y + h - 10, 14)


def _back(p: _Painter, x: float, y: float) -> None:
    w, h = GEOMETRY["card"]
    p.rect(x, y, w, h, 4, PALETTE["back"], PALETTE["card_edge"], 1)
    p.ellipse(x + w / 2, y + h / 2, w / 2 - 5, h / 2 - 9, PALETTE["back_mark"])


def _seat_panel(p: _Painter, t: dict[str, Any], seat: int, cx: int, cy: int) -> None:
    pw, ph = GEOMETRY["panel"]
    x, y = cx - pw // 2, cy - ph // 2
    deciding = seat == t["current_player"]
    edge, width = (PALETTE["decider"], 4) if deciding else (PALETTE["panel_edge"], 1)
    if seat == t["viewer"]:
        edge, width = (PALETTE["decider"], 4) if deciding else (PALETTE["viewer"], 3)
    p.rect(x, y, pw, ph, 10, PALETTE["panel"], edge, width)
    name = _cut(t["names"][seat], GEOMETRY["name_chars"])
    p.text(x + 10, y + 8, name, 14, PALETTE["text"], "la")
    size = t["hand_sizes"][seat]
    p.text(x + pw - 10, y + 8, f"{size} card{'s' if size != 1 else ''}", 13, PALETTE["text"],
           "ra")
    tags = []
    if t["uno_called"][seat]:
        tags.append(("UNO!", PALETTE["uno"]))
    if deciding:
        tags.append((t["phase"], "#b07800"))
    if seat == t["viewer"]:
        tags.append(("you", PALETTE["viewer"]))
    tx = x + 10
    for label, colour in tags:
        tw = _font(11).getlength(label) + 12
        p.rect(tx, y + 25, tw, 15, 7, colour)
        p.text(tx + tw / 2, y + 32, label, 11, "#ffffff", "mm")
        tx += tw + 5
    p.text(x + pw - 10, y + 26, f"score {t['scores'][seat]}", 11, PALETTE["muted"], "ra")
    hand = t["hands"][seat]
    slots, more = hand_slots(size)
    for i, (dx, dy) in enumerate(slots):
        if hand is None:
            _back(p, x + dx, y + dy)
        else:
            _card(p, hand[i], x + dx, y + dy)
    if more:
        dx, dy = slots[-1]
        cw, ch = GEOMETRY["card"]
        p.rect(x + dx, y + dy + ch - 16, cw, 16, 3, PALETTE["text"])
        p.text(x + dx + cw / 2, y + dy + ch - 8, f"+{more}", 11, "#ffffff", "mm")


def draw_table(t: dict[str, Any]) -> np.ndarray:
    """Draws a table dict (:func:`table_data`) into a ``(HEIGHT, WIDTH, 3)`` ``uint8`` array.

    Raises:
        ImportError: Pillow is not installed (``pip install 'uno-mk-env[render]'``).
    """
    require_pillow()
    p = _Painter()
    g = GEOMETRY
    cx, cy = g["centre"]
    fx, fy = g["felt_radii"]
    p.ellipse(cx, cy, fx, fy, PALETTE["felt"], PALETTE["felt_edge"], 8)
    bottom = t["viewer"] if t["viewer"] is not None else 0
    for seat, (sx, sy) in enumerate(seat_centres(t["players"], bottom)):
        _seat_panel(p, t, seat, sx, sy)
    x0, y0, x1, _ = g["centre_box"]
    mid = (x0 + x1) / 2
    light, limit = PALETTE["light_text"], g["max_chars"]
    p.text(mid, y0 + 4, _cut(header_text(t), limit), 13, light, "ma")
    p.text(mid, y0 + 22, _cut(status_text(t), limit), 16, "#ffffff", "ma", bold=True)
    bw, bh = g["big_card"]
    pile_y = y0 + 52
    # draw pile
    dx = x0 + 40
    p.rect(dx, pile_y, bw, bh, 6, PALETTE["back"], PALETTE["card_edge"], 2)
    p.ellipse(dx + bw / 2, pile_y + bh / 2, bw / 2 - 10, bh / 2 - 18, PALETTE["back_mark"])
    p.text(dx + bw / 2, pile_y + bh / 2, str(t["draw_pile"]), 22, "#ffffff", "mm", bold=True)
    p.text(dx + bw / 2, pile_y + bh + 12, "draw pile", 12, light, "ma")
    # top card inside a ring of the active colour
    tx = mid - bw / 2
    colour = t["active_colour"]
    pending = t.get("colour_pending", False)  # R3.3: no active colour before the start choice
    p.rect(tx - 8, pile_y - 8, bw + 16, bh + 16, 10, PALETTE["W" if pending else colour],
           "#ffffff", 1)
    _card(p, t["top_card"], tx, pile_y, big=True)
    name = "being chosen" if pending else COLOUR_NAMES[COLOURS.index(colour)]
    p.text(mid, pile_y + bh + 28, f"active colour: {name}", 12, light, "ma")
    # direction
    ax, ay = x1 - 78, pile_y + bh / 2 - 6
    line, head = _arrow_points(t["direction"] == 1, ax, ay, 30)
    p.line(line, light, 4)
    p.polygon(head, light)
    p.text(ax, ay + 46, "clockwise" if t["direction"] == 1 else "counter-clockwise", 12,
           light, "ma")
    p.text(ax, ay + 62, f"discard pile {t['discard_pile']}", 11, light, "ma")
    # last item
    iy = pile_y + bh + 44
    p.rect(x0 + 10, iy, x1 - x0 - 20, 52, 8, PALETTE["item_box"])
    first, second = item_lines(t)
    if t["item"] is not None:
        _item_icon(p, ITEM_NAMES.index(t["item"]["item"]), x0 + 36, iy + 26, 36)
    tx0 = x0 + 62 if t["item"] is not None else x0 + 24
    p.text(tx0, iy + 9, _cut(first, limit - 6), 13, PALETTE["text"], "la")
    p.text(tx0, iy + 29, _cut(second, limit - 6), 12, PALETTE["text"], "la")
    if t["last"]:
        p.text(mid, iy + 62, _cut("last: " + t["last"], limit + 8), 12, light, "ma")
    frame: np.ndarray = np.asarray(p.image, dtype=np.uint8).copy()
    return frame


def render_image(
    game: Game,
    seat: int | None = None,
    names: Sequence[str] | None = None,
    history: Iterable[tuple[int, int]] = (),
) -> np.ndarray:
    """:func:`draw_table` of :func:`table_data`; ``history`` is a
    :class:`~uno_mk_env.render.text.RecentDecisions` (its latest decision's events give the
    ``last`` line)."""
    entries = list(history)
    if names is None:
        names = [f"player_{i}" for i in range(game.num_players)]
    last = last_decision_text(game, entries[-1][1], seat, names) if len(entries) > 1 else ""
    return draw_table(table_data(game, seat, names, last))


# -------------------------------------------------------------------------------- window
class Window:
    """A pygame window showing images (``render_mode="human"``), opened on first use.

    ``fps`` caps how often :meth:`show` returns (PettingZoo's ``metadata["render_fps"]``).

    Raises:
        ImportError: pygame is not installed (``pip install 'uno-mk-env[render]'``).
    """

    def __init__(self, title: str = "UNO Mario Kart", fps: float = 2) -> None:
        try:
            import pygame
        except ImportError:
            raise ImportError(
                "render_mode='human' needs pygame: pip install 'uno-mk-env[render]'"
            ) from None
        self._pygame = pygame
        self.title = title
        self.fps = fps
        self._screen: Any = None
        self._clock: Any = None

    def show(self, image: np.ndarray) -> None:
        pygame = self._pygame
        if self._screen is None:
            # SDL turns SIGTERM into a quit event unless told not to: keep the default action
            # (the process ends) by setting its hint for the init, then restoring the variable.
            before = os.environ.get("SDL_NO_SIGNAL_HANDLERS")
            os.environ["SDL_NO_SIGNAL_HANDLERS"] = "1"
            try:
                pygame.display.init()
            finally:
                if before is None:
                    del os.environ["SDL_NO_SIGNAL_HANDLERS"]
                else:
                    os.environ["SDL_NO_SIGNAL_HANDLERS"] = before
            pygame.display.set_caption(self.title)
            self._screen = pygame.display.set_mode((image.shape[1], image.shape[0]))
            self._clock = pygame.time.Clock()
        surface = pygame.surfarray.make_surface(np.ascontiguousarray(image.swapaxes(0, 1)))
        self._screen.blit(surface, (0, 0))
        if any(e.type == pygame.QUIT for e in pygame.event.get()):  # the close button
            self.close()
            raise SystemExit(0)
        pygame.display.flip()
        if self.fps:
            self._clock.tick(self.fps)

    @property
    def is_open(self) -> bool:
        return self._screen is not None

    def close(self) -> None:
        if self._screen is not None:
            self._pygame.display.quit()
            self._screen = None

