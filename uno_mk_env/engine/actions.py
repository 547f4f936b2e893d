"""Action ids (docs/api.md#actions-and-phases): 73 ids, the same for every player count.

Declared as derived constants (as OpenSpiel's ``crazy_eights.h`` does) so nothing else hard-codes
an offset.
"""

from __future__ import annotations

from .cards import CODES, COLOUR_NAMES, NUM_COLOURS, NUM_KINDS
from .phases import DECISION_PHASES, PHASE_NAMES, TURN_PHASES, Phase  # noqa: F401  (re-exported)
from .rules import MAX_PLAYERS

PLAY_BASE = 0  #: ``PLAY(kind)`` = ``PLAY_BASE + kind``, kinds 0-53
DRAW = PLAY_BASE + NUM_KINDS  # 54
KEEP = DRAW + 1  # 55
COLOUR_BASE = KEEP + 1  # 56: COLOUR(c) = COLOUR_BASE + c
TARGET_BASE = COLOUR_BASE + NUM_COLOURS  # 60: TARGET(+k) = TARGET_BASE + k - 1
MAX_OPPONENTS = MAX_PLAYERS - 1
CHALLENGE = TARGET_BASE + MAX_OPPONENTS  # 69
ACCEPT = CHALLENGE + 1  # 70
CALL_UNO = ACCEPT + 1  # 71
CATCH_UNO = CALL_UNO + 1  # 72
NUM_ACTIONS = CATCH_UNO + 1  # 73

# The phases live in :mod:`uno_mk_env.engine.phases` (``Phase``); these names are kept for code
# written
# against package 0.3 (``CHALLENGE_PHASE`` because ``CHALLENGE`` is the action).
PLAY, PLAY_DRAWN, CHOOSE_COLOUR, CHOOSE_TARGET, CHALLENGE_PHASE, GAME_OVER, UNO_CATCH = Phase
NUM_PHASES = len(TURN_PHASES)  #: the observation's phase one-hot width (5, ``UNO_CATCH`` all 0)


def play(kind: int) -> int:
    """Action id of playing a card of ``kind``."""
    return PLAY_BASE + kind


def choose_colour(colour: int) -> int:
    """Action id of naming ``colour`` (0-3: R, Y, G, B)."""
    return COLOUR_BASE + colour


def target(offset: int) -> int:
    """Action id of aiming a Green Shell at the opponent ``offset`` seats clockwise (1-9)."""
    return TARGET_BASE + offset - 1


def _action_name(a: int) -> str:
    if a < DRAW:
        return f"PLAY({CODES[a - PLAY_BASE]})"
    if a == DRAW:
        return "DRAW"
    if a == KEEP:
        return "KEEP"
    if a < TARGET_BASE:
        return f"COLOUR({COLOUR_NAMES[a - COLOUR_BASE][0]})"
    if a < CHALLENGE:
        return f"TARGET(+{a - TARGET_BASE + 1})"
    names = {CHALLENGE: "CHALLENGE", ACCEPT: "ACCEPT", CALL_UNO: "CALL_UNO", CATCH_UNO: "CATCH_UNO"}
    return names[a]


ACTION_NAMES: tuple[str, ...] = tuple(_action_name(a) for a in range(NUM_ACTIONS))


def action_name(a: int) -> str:
    """Human-readable name of an action id (``"PLAY(R7)"``, ``"TARGET(+2)"``...)."""
    return ACTION_NAMES[a]


#: Rows of the action table of docs/environment.md: (id range, name, legal when). Single source
#: for the docs.
ACTION_TABLE: tuple[tuple[str, str, str], ...] = (
    (f"{PLAY_BASE}–{DRAW - 1}", "`PLAY(kind)` (id = kind id)",
     "`play`: any playable kind in hand; `play_drawn`: only the drawn card's kind"),
    (f"{DRAW}", "`DRAW`", "`play`"),
    (f"{KEEP}", "`KEEP` (keep the drawn card, end the turn)", "`play_drawn`"),
    (f"{COLOUR_BASE}–{TARGET_BASE - 1}", "`COLOUR(R/Y/G/B)`",
     "`choose_colour` (after W4, Bob-omb, start WB)"),
    (f"{TARGET_BASE}–{CHALLENGE - 1}", "`TARGET(+1 … +9)`: the opponent that many seats clockwise",
     "`choose_target` (Green Shell); only offsets < number of players"),
    (f"{CHALLENGE}", "`CHALLENGE`", "`challenge` (the player hit by a W4)"),
    (f"{ACCEPT}", "`ACCEPT` (take the 4 cards; in `uno_catch`: let the missed UNO pass)",
     "`challenge`; `uno_catch`"),
    (f"{CALL_UNO}", "`CALL_UNO`",
     "`play` / `play_drawn` while holding exactly 2 cards, not yet called; does not end the turn"),
    (f"{CATCH_UNO}", "`CATCH_UNO`",
     "a player was left with one uncalled card (R8): with `uno_catch=\"next_player\"` in the "
     "first decision of the next other decider (does not end its turn), or in `uno_catch`; with "
     "`uno_catch=\"any_player\"` in `uno_catch`"),
)
