"""README tables generated from the code's single sources of truth.

The README holds blocks delimited by ``<!-- BEGIN generated:NAME -->`` / ``<!-- END
generated:NAME -->``; :func:`render_readme` rewrites each block from :func:`sections`, and a test
fails when the committed README differs (so docs can't go stale). Regenerate with::

    python -m uno_mk_env.docs README.md
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from . import actions, cards
from .rules import options_table


def action_table() -> str:
    """The action-id table (DESIGN.md §3), from :data:`uno_mk_env.actions.ACTION_TABLE`."""
    rows = ["| ids | action | legal when (phase) |", "|---|---|---|"]
    rows += [f"| {ids} | {name} | {when} |" for ids, name, when in actions.ACTION_TABLE]
    return "\n".join(rows)


def card_table() -> str:
    """Kind ids, codes, names, copies, points and items of the 54 card kinds (R2, DESIGN §2)."""
    rows = ["| kind ids | codes | cards | copies each | points | item |", "|---" * 6 + "|"]
    for c, colour in enumerate(cards.COLOUR_NAMES):
        base = 13 * c
        item = cards.ITEM_NAMES[c]
        rows.append(f"| {base}–{base + 9} | `{cards.CODES[base]}`…`{cards.CODES[base + 9]}` | "
                    f"{colour} 0–9 | 1 (0), 2 (1–9) | face value | {item} |")
        rows.append(f"| {base + 10}, {base + 11}, {base + 12} | `{cards.CODES[base + 10]}`, "
                    f"`{cards.CODES[base + 11]}`, `{cards.CODES[base + 12]}` | {colour} Skip, "
                    f"Reverse, Draw Two | 2 | 20 | {item} |")
    for k in (cards.W4, cards.WB):
        rows.append(f"| {k} | `{cards.CODES[k]}` | {cards.NAMES[k]} | {cards.COPIES[k]} | "
                    f"{cards.POINTS[k]} | {cards.ITEM_NAMES[cards.ITEM_OF[k]]} |")
    return "\n".join(rows)


def _observation_layout() -> str:
    from . import observation  # numpy only; no gymnasium/pettingzoo import

    return observation.layout_markdown()


def _state_layout() -> str:
    from . import observation

    return observation.state_layout_markdown()


SECTIONS: dict[str, Callable[[], str]] = {
    "cards": card_table,
    "actions": action_table,
    "options": options_table,
    "observation": _observation_layout,
    "state": _state_layout,
}

_BLOCK = re.compile(
    r"(<!-- BEGIN generated:(?P<name>[a-z_]+) -->\n)(?P<body>.*?)"
    r"(<!-- END generated:(?P=name) -->)",
    re.S,
)


def render_readme(text: str) -> str:
    """``text`` with every generated block rewritten from the code.

    Raises:
        KeyError: for a block whose name is not in :data:`SECTIONS`.
    """

    def fill(m: re.Match[str]) -> str:
        return f"{m.group(1)}{SECTIONS[m.group('name')]()}\n{m.group(4)}"

    return _BLOCK.sub(fill, text)


def block_names(text: str) -> list[str]:
    """Names of the generated blocks present in ``text``."""
    return [m.group("name") for m in _BLOCK.finditer(text)]


def main(argv: list[str] | None = None) -> int:
    """Rewrites the generated blocks of the given README in place."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0] if args else "README.md")
    text = path.read_text(encoding="utf-8")
    path.write_text(render_readme(text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
