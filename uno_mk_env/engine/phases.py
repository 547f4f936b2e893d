"""Decision phases (docs/api.md#actions-and-phases): who decides what, in which order.

The decider of each phase is ``Game.current_player``; the same seat may decide several times in
a row (a colour after its W4, a Green Shell target after its Wild Item Box...). ``GAME_OVER`` is
the terminal phase: no decider, no legal action. ``UNO_CATCH`` is the one decision taken out of
turn: a player asked whether it catches a missed UNO at the start of the next turn (R8).
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "COLOUR_AFTER_BOB_OMB", "COLOUR_AFTER_W4", "COLOUR_AT_START", "COLOUR_CONTEXT_NAMES",
    "COLOUR_NO_FLIP", "DECISION_PHASES", "PHASE_NAMES", "Phase", "TURN_PHASES",
]


class Phase(IntEnum):
    """A phase id; ``str(phase)``/``phase.label`` is its name in state dicts and docs."""

    PLAY = 0  #: play a playable card, draw, or call UNO
    PLAY_DRAWN = 1  #: play the card just drawn or keep it (R4.2)
    CHOOSE_COLOUR = 2  #: name a colour (after a W4, a Bob-omb, a Wild Item Box start card)
    CHOOSE_TARGET = 3  #: aim a Green Shell (R7.2)
    CHALLENGE = 4  #: accept or challenge a Wild Draw Four (R6.3)
    GAME_OVER = 5  #: terminal
    #: answer a missed UNO out of turn: ``CATCH_UNO`` or let it pass (``ACCEPT``), R8; only
    #: under ``uno_catch="next_player"``/``"any_player"`` (after ``GAME_OVER`` so that the ids
    #: of package 0.6 stay)
    UNO_CATCH = 6

    @property
    def label(self) -> str:
        """The phase's name: ``"play"``, ``"play_drawn"``, ..."""
        return self.name.lower()

    def __str__(self) -> str:
        return self.label


#: Names of the phases by id (``PHASE_NAMES[Phase.CHALLENGE] == "challenge"``).
PHASE_NAMES: tuple[str, ...] = tuple(p.label for p in Phase)
#: The phases in which someone decides (every phase but ``GAME_OVER``).
DECISION_PHASES: tuple[Phase, ...] = tuple(p for p in Phase if p is not Phase.GAME_OVER)
#: The decision phases of the player whose turn it is or who was hit by a W4 (ids 0-4): the
#: observation's phase one-hot (``UNO_CATCH`` shows there as all 0 with ``uno_catchable`` set).
TURN_PHASES: tuple[Phase, ...] = tuple(p for p in Phase if p < Phase.GAME_OVER)
#: Why the current ``choose_colour`` decision happens (``PlayerView.colour_context``; it decides
#: what follows the choice): after a W4, after a Bob-omb, the start card. ``COLOUR_NO_FLIP``
#: never occurs (R7.3: a Wild Item Box always has a card to flip); it keeps its slot in the
#: observation's ``colour_context`` one-hot, whose size the trained policies rely on.
COLOUR_AFTER_W4, COLOUR_AFTER_BOB_OMB, COLOUR_AT_START, COLOUR_NO_FLIP = range(4)
#: Their names in state dicts.
COLOUR_CONTEXT_NAMES = ("w4", "bob_omb", "start", "no_flip")
