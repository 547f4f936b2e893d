"""The one interface every agent implements, and the registry that names agents by string."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np

from uno_mk_env import PlayerView


class Agent(ABC):
    """A policy for one seat.

    Drivers (the tournament runner, the Gymnasium wrapper, ``uno-mk play``) call
    :meth:`act` with the seat's observation vector, its action mask (``int8``/``bool`` array of
    73) and its :class:`~uno_mk_env.PlayerView`. An agent must return a legal action id and must
    never look at hidden state: it gets nothing else.

    Attributes:
        name: display name (the registry spec that built it, by default).
        needs_observation: when ``False`` drivers may pass ``observation=None`` (saves encoding
            time for agents that read only the view).
        rng: the agent's own ``numpy.random.Generator`` (agents never use global RNG).
    """

    name: str = "agent"
    needs_observation: bool = False

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Called at the start of each game; reseeds the agent's generator when given a seed."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, view: PlayerView
    ) -> int:
        """Returns a legal action id for the seat whose ``view`` is given."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"

    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, view: PlayerView
    ) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(len(legal))])


AgentFactory = Callable[[str | None, int | None], Agent]
_REGISTRY: dict[str, tuple[AgentFactory, str]] = {}


def register(name: str, help: str) -> Callable[[AgentFactory], AgentFactory]:
    """Registers ``factory(arg, seed) -> Agent`` under ``name`` (``arg`` is the text after
    ``name:`` in a spec like ``ppo:models/ppo_2p.zip``, else ``None``)."""

    def deco(factory: AgentFactory) -> AgentFactory:
        _REGISTRY[name] = (factory, help)
        return factory

    return deco


def registered() -> dict[str, str]:
    """Registered agent names with their one-line help."""
    return {name: h for name, (_, h) in _REGISTRY.items()}


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Builds an agent from a spec string such as ``"random"``, ``"greedy"``,
    ``"ismcts:200"`` or ``"ppo:path/to/model.zip"``.

    Raises:
        ValueError: for an unknown name (the message lists the registered ones) or a bad argument.
    """
    name, _, arg = spec.partition(":")
    if name not in _REGISTRY:
        raise ValueError(
            f"unknown agent {name!r}; registered agents: {', '.join(sorted(_REGISTRY))}"
        )
    agent = _REGISTRY[name][0](arg or None, seed)
    agent.name = spec
    return agent


@register("random", "uniform over the legal actions")
def _make_random(arg: str | None, seed: int | None) -> Agent:
    if arg:
        raise ValueError(f"agent 'random' takes no argument, got {arg!r}")
    return RandomAgent(seed)
