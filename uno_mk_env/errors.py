"""The engine's errors: both are ``ValueError``s that name what is wrong."""

from __future__ import annotations

__all__ = ["IllegalActionError", "StateError"]


class IllegalActionError(ValueError):
    """An action that is not legal in the current state; names the action, phase and legal ids."""


class StateError(ValueError):
    """A malformed or inconsistent state (``Game.from_dict``) or view (``Game.from_view``);
    names the field and the problem."""
