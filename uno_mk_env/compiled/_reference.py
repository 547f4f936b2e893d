"""The Python reference engine, as the compiled core sees it: every name the core takes from
the readable engine (rules, the state-dict interchange, views, events, observation layout), in
one place, so that moving the engine (issue #36) changes only these imports.

The compiled core re-implements the rules (R1-R10) in C; everything else (validating rules and
state dicts, the format of events and views) stays the reference's, reached through here.
"""

from __future__ import annotations

from ..engine.actions import ACTION_NAMES, NUM_ACTIONS
from ..engine.cards import CODES, COPIES, NO_CARD, NUM_KINDS, W4, WB
from ..engine.events import DRAW_REASONS, Event, event_for
from ..engine.game import EVENT_LOGS, Game
from ..engine.observation import OBS_SIZE, OBS_SLICES
from ..engine.phases import PHASE_NAMES, Phase
from ..engine.rewards import REWARD_MODES
from ..engine.rules import MAX_PLAYERS, Rules
from ..engine.table import VOID_MEMORY
from ..engine.view import PlayerView
from ..errors import IllegalActionError, StateError, quote

__all__ = [
    "ACTION_NAMES", "CODES", "COPIES", "DRAW_REASONS", "EVENT_LOGS", "MAX_PLAYERS", "NO_CARD",
    "NUM_ACTIONS", "NUM_KINDS", "OBS_SIZE", "OBS_SLICES", "PHASE_NAMES", "REWARD_MODES",
    "VOID_MEMORY", "W4", "WB", "Event", "Game", "IllegalActionError", "Phase", "PlayerView",
    "Rules", "StateError", "event_for", "quote",
]
