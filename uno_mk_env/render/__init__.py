"""Rendering: text (:mod:`.text`, ANSI, no dependencies; its names are re-exported here) and
images (:mod:`.image`: Pillow, and pygame for ``render_mode="human"``; the ``render`` extra)."""

from .text import (
    PHASE_WORDS,
    KnownCards,
    RecentDecisions,
    action_label,
    action_text,
    event_text,
    events_text,
    known_cards,
    known_text,
    merge_lines,
    offered_actions,
    render_game,
    render_table,
)

__all__ = [
    "PHASE_WORDS", "KnownCards", "RecentDecisions", "action_label", "action_text", "event_text",
    "events_text", "known_cards", "known_text", "merge_lines", "offered_actions", "render_game",
    "render_table",
]
