"""The registry that names agents by string (:func:`make_agent`, :func:`build_agent`), the
``random`` agent, and — re-exported from the core module :mod:`uno_mk_env.envs.agent`, where the
Gymnasium wrapper can reach them without importing this layer — the one interface every agent
implements (:class:`Agent`) and the one function that drives an agent for a seat
(:func:`agent_action`, which reports every failure as one :class:`AgentError` line).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from uno_mk_env import PlayerView
from uno_mk_env.envs.agent import Agent, AgentError, agent_action
from uno_mk_env.errors import UnoMkError

__all__ = [
    "Agent", "AgentError", "AgentSpecError", "RandomAgent", "agent_action", "build_agent",
    "discover_agents",
    "example_specs", "make_agent", "register", "registered",
]


class AgentSpecError(UnoMkError, ValueError):
    """An agent spec that cannot be built (unknown name, bad argument, missing or unreadable
    model file); the message is one line."""


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"

    def compiled_twin(self) -> tuple[str, Any] | None:
        return ("random", None) if type(self) is RandomAgent else None

    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, view: PlayerView
    ) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(len(legal))])


# ------------------------------------------------------------------------------ registry
AgentFactory = Callable[[str | None, int | None], Agent]
_REGISTRY: dict[str, tuple[AgentFactory, str, str]] = {}


def register(
    name: str, help: str, example: str | None = None
) -> Callable[[AgentFactory], AgentFactory]:
    """Registers ``factory(arg, seed) -> Agent`` under ``name`` (``arg`` is the text after
    ``name:`` in a spec like ``ppo:models/ppo_2p.npz``, else ``None``). ``example`` is a spec
    that builds it (default ``name``), used by the conformance tests and ``uno-mk agents``."""

    def deco(factory: AgentFactory) -> AgentFactory:
        _REGISTRY[name] = (factory, help, example or name)
        return factory

    return deco


def registered() -> dict[str, str]:
    """Registered agent names with their one-line help (after :func:`discover_agents`)."""
    discover_agents()
    return {name: h for name, (_, h, _) in _REGISTRY.items()}


def example_specs() -> dict[str, str]:
    """A spec that builds each registered agent (``{"ismcts": "ismcts:20", ...}``)."""
    discover_agents()
    return {name: ex for name, (_, _, ex) in _REGISTRY.items()}


def discover_agents(until: str | None = None) -> dict[str, str]:
    """Imports the modules of this package (alphabetically) so that each registers its agents;
    with ``until``, stops as soon as an agent of that name is registered (so asking for
    ``greedy`` does not import a learned agent's module).

    Returns:
        The modules that failed to import, mapped to a one-line reason (an optional dependency
        missing, say).
    """
    package = sys.modules[__package__]
    failures: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if until is not None and until in _REGISTRY:
            break
        if info.name.startswith("_") or info.name == "base":
            continue
        module = f"{__package__}.{info.name}"
        try:
            importlib.import_module(module)
        except Exception as e:  # a broken or half-written module must not hide the others
            failures[module] = f"{type(e).__name__}: {e}".splitlines()[0]
    return failures


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Builds an agent from a spec such as ``"random"``, ``"greedy"``, ``"ismcts:200"`` or
    ``"ppo:models/ppo_2p.npz"``, importing the agent modules on first use of an unknown name.

    Raises:
        AgentSpecError: (a ``ValueError``) an unknown name, listing the registered ones (and
            why, when an agent module that could not be imported names it). The agent's own
            errors (a bad argument, a missing model file) propagate; :func:`build_agent` turns
            them into one line.
    """
    if not isinstance(spec, str) or not spec.partition(":")[0]:
        raise AgentSpecError(f"an agent spec is a name, or name:argument; got {spec!r}")
    name, _, arg = spec.partition(":")
    failures: dict[str, str] = {}
    if name not in _REGISTRY:
        failures = discover_agents(until=name)
    if name not in _REGISTRY:
        msg = f"unknown agent {name!r}; registered agents: {', '.join(sorted(_REGISTRY))}"
        # Only a module whose failure names this agent ("openspiel-ismcts needs OpenSpiel: pip
        # install ...") explains it; the others are noise here ('uno-mk agents --verbose').
        named = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
        why = [reason for reason in failures.values() if named.search(reason)]
        if why:
            msg += f" ({'; '.join(why)})"
        raise AgentSpecError(msg)
    agent = _REGISTRY[name][0](arg or None, seed)
    agent.name = spec
    return agent


def build_agent(spec: str, seed: int | None = None) -> Agent:
    """:func:`make_agent` for drivers that report to users (tournaments, the command line).

    Raises:
        AgentSpecError: one line for anything that keeps the spec from building (unknown name,
            bad argument, missing or unreadable model file, missing optional dependency).
    """
    try:
        return make_agent(spec, seed)
    except AgentSpecError:
        raise
    except (ValueError, OSError, ImportError) as e:
        raise AgentSpecError(f"cannot build agent {spec!r}: {e}".splitlines()[0]) from e


@register("random", "uniform over the legal actions")
def _make_random(arg: str | None, seed: int | None) -> Agent:
    if arg:
        raise ValueError(f"agent 'random' takes no argument, got {arg!r}")
    return RandomAgent(seed)
