"""The one interface every agent implements (:class:`Agent`) and the one function that asks an
agent for a seat's decision (:func:`agent_action`).

They live in the core because the core's own Gymnasium wrapper drives its opponents with them;
the agents themselves, their registry and specs live one layer up, in :mod:`uno_mk_env.agents`
(which re-exports these names: ``uno_mk_env.agents.Agent`` is the usual way to reach them).

Every driver — tournaments, ``uno-mk play``, the Gymnasium wrapper's opponents, the tests — asks
an agent for a decision through :func:`agent_action`, so every agent gets the same inputs (its
``PlayerView``, its observation when it needs one, an ``int8`` mask) and every failure the same
one-line :class:`AgentError`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.game import Game
from ..engine.observation import action_mask
from ..engine.observation import encode as default_encode
from ..engine.view import PlayerView
from ..errors import UnoMkError, one_line, quote

__all__ = ["Agent", "AgentError", "agent_action"]


class AgentError(UnoMkError, RuntimeError):
    """An agent failed during a game (an illegal action or an exception); names the agent.
    The command line exits with 1 for it."""

    exit_code = 1


class Agent(ABC):
    """A policy for one seat.

    Drivers call :meth:`act` through :func:`agent_action` with the seat's observation vector,
    its action mask (``int8`` array of 73) and its :class:`~uno_mk_env.PlayerView`. An agent
    must return a legal action id and must never look at hidden state: it gets nothing else.

    Attributes:
        name: display name (the registry spec that built it, by default).
        needs_observation: when ``False`` drivers pass ``observation=None`` (saves encoding
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

    def compiled_twin(self) -> tuple[str, Any] | None:
        """The compiled core's built-in agent that chooses exactly as this one, seed for seed
        (docs/compiled.md): ``(kind, setting)``, kind ``"random"``, ``"greedy"`` (setting: its
        ``challenge_hand``) or ``"strategic"`` (its ``StrategicParams``). ``None`` (the
        default, and for any subclass): the vector envs play it in Python."""
        return None

    @abstractmethod
    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, view: PlayerView
    ) -> int:
        """Returns a legal action id for the seat whose ``view`` is given."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def _who(name: str, seat: int) -> str:
    """How an :class:`AgentError` names the agent: its name quoted on one line, and its seat."""
    return f"agent {one_line(repr(name))} (seat {seat})"


def agent_action(
    agent: Agent,
    game: Game,
    label: str | None = None,
    encode: Callable[[PlayerView], np.ndarray] | None = None,
) -> int:
    """Asks ``agent`` for the decision of ``game``'s current decider and returns its action id,
    checked legal (the caller steps the game).

    The agent gets the decider's view, its observation vector if ``agent.needs_observation``
    (``encode`` defaults to :func:`uno_mk_env.engine.observation.encode`) and the ``int8`` mask. Any
    object with an :meth:`Agent.act` method will do (``needs_observation`` defaults to true).

    Raises:
        AgentError: the agent raised (the exception is its ``__cause__``), or returned something
            that is not a legal action id (no cause); the message names the agent (``label``,
            default its name), the seat and the decision.
    """

    seat = game.current_player
    view = game.view(seat)
    legal = view.legal_actions
    name = label if label is not None else getattr(agent, "name", repr(agent))
    obs = None
    if getattr(agent, "needs_observation", True):
        if encode is None:

            encode = default_encode
        obs = encode(view)
    try:
        action = agent.act(obs, action_mask(legal), view)
    except Exception as e:
        raise AgentError(f"{_who(name, seat)} raised {type(e).__name__}: {one_line(str(e))} "
                         f"(decision {game.num_steps})") from e
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer) or (
            int(action) not in legal):
        raise AgentError(f"{_who(name, seat)} chose an illegal action {quote(action)} in phase "
                         f"'{game.phase_name}' (legal: {list(legal)}; decision "
                         f"{game.num_steps})")
    return int(action)
