"""Baseline agents behind one interface (:class:`Agent`), named by string via :func:`make_agent`.

Importing the package registers ``random``, ``greedy``, ``strategic`` and ``ismcts:N``.
"""

from .base import Agent, RandomAgent, make_agent, register, registered
from .ismcts import ISMCTSAgent
from .rule_based import GreedyAgent, StrategicAgent, StrategicParams

__all__ = [
    "Agent", "RandomAgent", "GreedyAgent", "StrategicAgent", "StrategicParams", "ISMCTSAgent",
    "make_agent", "register", "registered",
]
