"""The replay page: a recording (:mod:`uno_mk_env.evaluation.replay`) made into one
self-contained HTML page with the viewer's assets (:mod:`uno_mk_env.evaluation.replay_viewer`),
written to a file (:func:`write_html`) or shown in a notebook (:class:`ReplayFrame`)."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from uno_mk_env.engine.cards import CODES, COLOUR_NAMES, COLOURS, ITEM_NAMES, NAMES
from uno_mk_env.errors import quote
from uno_mk_env.files import atomic_write_text, no_space
from uno_mk_env.render.table import GEOMETRY, ITEM_EFFECTS, PALETTE

from .replay_format import ReplayError, check_recording
from .replay_viewer import CSS, JS, PAGE

__all__ = ["ReplayFrame", "replay_html", "viewer_constants", "write_html"]


def _script_json(value: Any) -> str:
    """JSON safe inside ``<script>``: no ``<``, ``>`` or ``&`` (names are user text)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def viewer_constants() -> dict[str, Any]:
    """What the card and table drawing of ``replay_viewer.DRAW_JS`` reads (the replay page and
    the browser table): the image renderer's geometry and palette and the names of items,
    colours and cards (JSON-safe)."""
    return {
        "geometry": GEOMETRY, "palette": PALETTE, "item_names": ITEM_NAMES,
        "item_effects": ITEM_EFFECTS, "colours": COLOURS, "colour_names": COLOUR_NAMES,
        "card_names": dict(zip(CODES, NAMES)),
    }


def replay_html(data: Mapping[str, Any], title: str | None = None) -> str:
    """One self-contained HTML page showing the recording ``data`` (see the module docstring).

    Raises:
        ReplayError: ``data`` is not a recording.
    """

    check_recording(data)
    constants = viewer_constants()
    games = data["games"]
    title = title or (games[0]["title"] if len(games) == 1 else f"{len(games)} games")
    page = PAGE
    for key, value in (("TITLE", _html_escape("UNO Mario Kart replay: " + title)),
                       ("CSS", CSS), ("JS", JS), ("CONSTANTS", _script_json(constants)),
                       ("DATA", _script_json(dict(data)))):
        page = page.replace("{{" + key + "}}", value)
    return page


def _html_escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def write_html(data: Mapping[str, Any], path: str | Path, title: str | None = None) -> Path:
    """Writes :func:`replay_html` to ``path`` (parents created); returns the path.

    Raises:
        ReplayError: ``data`` is not a recording, or ``path`` cannot be written.
        OSError: no space for it (:func:`uno_mk_env.files.no_space`).
    """
    target = Path(path).expanduser()
    html = replay_html(data, title)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, html)  # never a half-written page
    except OSError as e:
        if no_space(e):  # not a bad path: the command line says so, exit 1
            raise
        raise ReplayError(f"cannot write {str(target)!r}: {e.strerror or e}") from None
    return target


class ReplayFrame:
    """A replay page (:func:`replay_html`) shown in a notebook:
    Jupyter displays it as an ``<iframe>`` holding the page itself (``srcdoc``; no file is
    written, nothing is fetched).

    IPython's ``HTML`` warns "Consider using IPython.display.IFrame" for an ``<iframe>`` alone,
    and its ``IFrame`` only loads a URL; an object with ``_repr_html_`` is IPython's own
    protocol for rich display.

    Args:
        page: the HTML page.
        height: the frame's height in CSS pixels (its width is the notebook's).

    Raises:
        ReplayError: ``height`` is not a positive integer.
    """

    def __init__(self, page: str, height: int = 860) -> None:
        if isinstance(height, bool) or not isinstance(height, int) or height < 1:
            raise ReplayError(f"height must be a positive integer of pixels, not {quote(height)}")
        self.page = page
        self.height = height

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{html.escape(self.page, quote=True)}" '
                f'style="width: 100%; height: {self.height}px; border: 0"></iframe>')
