"""Baseline agents behind one interface (:class:`Agent`), named by string via :func:`make_agent`."""

from .base import Agent, RandomAgent, make_agent, register, registered

__all__ = ["Agent", "RandomAgent", "make_agent", "register", "registered"]
