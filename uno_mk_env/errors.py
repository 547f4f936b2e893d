"""The project's one error type, :class:`UnoMkError`, the base of every exception the package
defines (each keeps its standard base too, so ``except ValueError`` still catches a
``RulesError``); the engine's two errors; and :func:`quote`, how every error message of the
project quotes a value it was given: bounded, on one line."""

from __future__ import annotations

import reprlib
from typing import Any

__all__ = [
    "IllegalActionError", "StateError", "UnoMkError", "missing_env_extra", "one_line", "quote",
]


class UnoMkError(Exception):
    """The base of every exception ``uno_mk_env`` defines: ``except UnoMkError`` catches any of
    them (the command line does, printing the message as one line).

    Attributes:
        exit_code: the command line's exit code for it: 2 (bad input: an argument, a rule, a
            file; the default) or 1 (a failure during the run: an agent, a worker process).
    """

    exit_code: int = 2


class IllegalActionError(UnoMkError, ValueError):
    """An action that is not legal in the current state; names the action, phase and legal ids."""


class StateError(UnoMkError, ValueError):
    """A malformed or inconsistent state (``Game.from_dict``) or view (``Game.from_view``);
    names the field and the problem."""


_REPR = reprlib.Repr()  # keyword arguments only from Python 3.12
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxtuple = 3, 4, 6, 6
_REPR.maxstring, _REPR.maxlong, _REPR.maxother = 60, 30, 60


def one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line (whitespace runs become one space) of at most ``limit`` characters,
    ending in ``…`` when cut: for a message taken from another exception."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(value: Any, limit: int = 80) -> str:
    """``repr(value)`` for an error message, bounded (:mod:`reprlib`, then at most ``limit``
    characters, ending in ``…`` when cut): a hostile file's 100,000-character field, deep list,
    5,000-digit number (by its size) or failing ``__repr__`` is quoted in a few words, on one
    line."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**18:
        return f"an int of about {int(value.bit_length() * 0.30103) + 1} digits"
    try:
        text = _REPR.repr(value)
    except Exception:  # an int past Python's digit limit, a hostile __repr__
        text = f"<{type(value).__name__}>"
    return one_line(text, limit)


def missing_env_extra(error: ImportError) -> ImportError:
    """The one ``ImportError`` of the env modules (``uno_mario_kart_v0``, ``envs.aec``,
    ``envs.gym_env``) when the ``env`` extra is missing; ``error`` is the import that failed."""
    return ImportError(f"the UNO Mario Kart envs need {error.name or 'gymnasium and pettingzoo'}"
                       ": pip install 'uno-mk-env[env]'", name=error.name)
