"""Baseline agents behind one interface (:class:`Agent`), named by string via :func:`make_agent`.

Importing the package registers ``random``, ``greedy``, ``strategic``, ``ismcts:N`` and
``ppo:PATH`` (torch is imported only when a ``ppo`` agent is built).
"""

from .base import (
    Agent,
    AgentError,
    AgentSpecError,
    RandomAgent,
    agent_action,
    discover_agents,
    example_specs,
    make_agent,
    register,
    registered,
)
from .ismcts import ISMCTSAgent
from .ppo import PPOAgent
from .rule_based import GreedyAgent, StrategicAgent, StrategicParams

__all__ = [
    "Agent", "RandomAgent", "GreedyAgent", "StrategicAgent", "StrategicParams", "ISMCTSAgent",
    "PPOAgent", "AgentError", "AgentSpecError", "agent_action", "discover_agents", "example_specs",
    "make_agent", "register", "registered",
]
