"""The Python reference engine, as the compiled core sees it: every name the core takes from
the readable engine (rules, the state-dict interchange, views, events, observation layout), in
one place, so that moving the engine (issue #36) changes only these imports.

The compiled core re-implements the rules (R1-R10) in C; everything else (validating rules and
state dicts, the format of events and views) stays the reference's, reached through here.
"""

from __future__ import annotations

from ..actions import ACTION_NAMES, NUM_ACTIONS
from ..cards import CODES, COPIES, NUM_KINDS, W4, WB
from ..errors import IllegalActionError, StateError, quote
from ..events import DRAW_REASONS, Event, event_for
from ..game import EVENT_LOGS, Game
from ..observation import OBS_SIZE, OBS_SLICES
from ..phases import PHASE_NAMES, Phase
from ..rewards import REWARD_MODES
from ..rules import MAX_PLAYERS, Rules
from ..view import NO_CARD, VOID_MEMORY, PlayerView

__all__ = [
    "ACTION_NAMES", "CODES", "COPIES", "DRAW_REASONS", "EVENT_LOGS", "MAX_PLAYERS", "NO_CARD",
    "NUM_ACTIONS", "NUM_KINDS", "OBS_SIZE", "OBS_SLICES", "PHASE_NAMES", "REWARD_MODES",
    "VOID_MEMORY", "W4", "WB", "Event", "Game", "IllegalActionError", "Phase", "PlayerView",
    "Rules", "StateError", "event_for", "quote",
]
