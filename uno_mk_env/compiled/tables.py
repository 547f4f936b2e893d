"""The vector envs' bridge to the compiled core (docs/compiled.md): whether a vector env's tables
can run on :class:`BatchedTables`, and with which of the core's built-in opponents.

The core plays an opponent itself only when the Python agent names its compiled twin
(:meth:`uno_mk_env.envs.agent.Agent.compiled_twin`: ``random``, ``greedy``, ``strategic``, the exact
classes, and the training's opponent pools of those without self-play) and the twin would draw
from the same streams: every table holds its own agent objects
(an agent shared between tables interleaves one stream across them, which only Python
reproduces), the seats of a table hold distinct agents or one agent for all, every table seats
the same kinds, and the greedy and strategic settings are the core's. Anything else (a policy
network, a callable, a subclass) keeps the vector env on the Python engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import core

__all__ = ["OpponentSpec", "compiled_opponents"]

#: What :class:`BatchedTables` takes as ``opponents``, and its ``strategic_params``.
OpponentSpec = tuple[str | tuple[Any, ...] | None, Any]


def _kind(spec: tuple[str, Any], settings: dict[str, Any]) -> str:
    """The kind of a twin ``(kind, setting)``; raises ``LookupError`` for a setting the core
    cannot take (``settings``: the core's greedy setting, and the strategic weights met so
    far)."""
    kind, setting = spec
    if kind == "greedy" and setting != settings["greedy"]:
        raise LookupError(spec)
    if kind == "strategic" and settings.setdefault("strategic", setting) != setting:
        raise LookupError(spec)  # two strategic weightings: the core takes one
    return str(kind)


def _twin(policy: Any, settings: dict[str, Any]) -> str | tuple[Any, ...]:
    """``policy``'s compiled twin as the core's opponent spec: a kind, or an opponent pool's
    ``("pool", kinds, cdf)`` (its twin ``("pool", twins, cdf)``); raises ``LookupError`` when
    it has none or a setting the core cannot take."""
    twin = getattr(policy, "compiled_twin", None)
    spec = twin() if callable(twin) else None
    if spec is None:
        raise LookupError(policy)
    if spec[0] == "pool":
        _, twins, cdf = spec
        return ("pool", tuple(_kind(t, settings) for t in twins), tuple(cdf))
    return _kind(spec, settings)


def _table_spec(opponents: Sequence[Any], seen: set[int],
                settings: dict[str, Any]) -> str | tuple[Any, ...] | None:
    """One table's seats (``opponents[k]``: ``k + 1`` seats after the learner) as the core's
    ``opponents``."""
    agents = [p for p in opponents if p is not None]
    ids = {id(p) for p in agents}
    if ids & seen:
        raise LookupError("an agent shared between tables")
    seen |= ids
    if not agents:
        return None
    if len(agents) == len(opponents) and len(ids) == 1:
        twin = _twin(agents[0], settings)  # one agent at every seat
        if not isinstance(twin, tuple):
            return twin
        if len(opponents) > 1:
            raise LookupError("one opponent pool at several seats")
        return (twin,)  # a pool: the per-seat form
    if len(ids) != len(agents):
        raise LookupError("an agent at some seats but not all")
    return tuple(None if p is None else _twin(p, settings) for p in opponents)


def compiled_opponents(tables: Sequence[Sequence[Any]]) -> OpponentSpec | None:
    """``(opponents, strategic_params)`` for :class:`BatchedTables` playing the opponents
    ``tables[i]`` (the single env's parsed ``opponents`` of table ``i``), or ``None`` when the
    compiled core does not run (``UNO_MK_ENGINE``, not built) or cannot reproduce them."""
    module = core()
    if module is None:
        return None
    seen: set[int] = set()
    settings: dict[str, Any] = {"greedy": module.GREEDY_CHALLENGE_HAND}
    try:
        specs = {_table_spec(opponents, seen, settings) for opponents in tables}
    except LookupError:
        return None
    if len(specs) != 1:
        return None
    return specs.pop(), settings.get("strategic")

