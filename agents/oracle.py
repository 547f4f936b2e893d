"""Reference agents that **cheat**: they see hidden cards. Used only to bracket the skill ceiling
(how much of a win rate the cards' information is worth); never a competitor.

The :class:`~uno_mk_env.agents.base.Agent` interface hands an agent its
:class:`~uno_mk_env.PlayerView` only, so a cheating agent needs the true game from its driver:
:class:`CheatingAgent` (``cheats = True``) has an :meth:`~CheatingAgent.observe_game` hook that
a driver calls before each of its decisions, and only when cheating is explicitly allowed. The
tournament (:func:`uno_mk_env.evaluation.tournament.run_tournament`, ``allow_cheating=True``;
``uno-mk tournament``/``uno-mk evaluate --allow-cheating``) is the only driver that does; every
other driver (``uno-mk play``, the Gymnasium wrapper's opponents) does not, and a cheating agent
asked to decide without having been shown the game raises (:func:`agent_action
<uno_mk_env.agents.base.agent_action>` turns that into a one-line ``AgentError``).

``oracle`` is the ``ismcts`` search (same tree, default policy and budget) with its
determinizations replaced by the true game:

* ``oracle`` (or ``oracle:hands``) sees every hand; the draw pile's order is reshuffled in each
  simulation (it knows which cards are in the pile, not their order);
* ``oracle:deck`` also sees the draw pile's order.

Neither knows how a future reshuffle of the discard pile (R9) will fall: every simulated game
gets a fresh generator. A budget and search options follow as in ``ismcts``:
``oracle:deck:400``, ``oracle:100ms``.
"""

from __future__ import annotations

import random

import numpy as np

from uno_mk_env import Game, PlayerView

from .base import Agent, AgentSpecError, register
from .ismcts import ISMCTSAgent, SearchParams, parse_spec

__all__ = ["CheatingAgent", "OracleAgent", "SEES"]

#: What an ``oracle`` may see: ``hands`` (every hand) or ``deck`` (every hand and the pile order).
SEES = ("hands", "deck")


class CheatingAgent(Agent):
    """An agent that reads the true game, not only its view. ``cheats = True`` marks it: tools
    that compare agents refuse it unless cheating is explicitly allowed.

    A driver that allows it calls :meth:`observe_game` with the live game before every decision
    of the agent; :meth:`true_game` returns it, checked against the decision's view.
    """

    cheats = True

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._game: Game | None = None

    def observe_game(self, game: Game) -> None:
        """Shows the agent the true game of the decision it is about to be asked (the agent must
        not change it)."""
        self._game = game

    def true_game(self, view: PlayerView) -> Game:
        """The game shown by :meth:`observe_game` for the decision of ``view`` (used once: the
        next decision needs a new call).

        Raises:
            RuntimeError: the driver did not show the game, or showed another decision's.
        """
        g, self._game = self._game, None
        if g is None:
            raise RuntimeError(
                f"{self.name!r} is a cheating agent and was not shown the game: only tournaments "
                "run with allow_cheating=True (uno-mk tournament/evaluate --allow-cheating) "
                "drive it"
            )
        if g.current_player != view.seat or g.view(view.seat) != view:
            raise RuntimeError(f"{self.name!r} was shown a game that does not match its view")
        return g


class OracleAgent(CheatingAgent, ISMCTSAgent):
    """The ``ismcts`` search on the true game (see the module docstring).

    Args:
        seed: the agent's seed.
        sees: ``"hands"`` or ``"deck"`` (:data:`SEES`).
        params: search settings (:class:`~uno_mk_env.agents.ismcts.SearchParams`).
    """

    name = "oracle"

    def __init__(
        self, seed: int | None = None, sees: str = "hands", params: SearchParams | None = None
    ) -> None:
        if sees not in SEES:
            raise ValueError(f"oracle sees {' or '.join(SEES)}, got {sees!r}")
        ISMCTSAgent.__init__(self, seed, params=params)
        self._game = None
        self.sees = sees
        self._truth: Game | None = None
        self._shuffle = random.Random(0)

    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, view: PlayerView
    ) -> int:
        self._truth = self.true_game(view)
        self._shuffle = random.Random(int(self.rng.integers(2**63)))
        try:
            return ISMCTSAgent.act(self, observation, action_mask, view)
        finally:
            self._truth = None

    def _deal(self, view: PlayerView, rng: np.random.Generator,  # type: ignore[override]
              voids: list[list[float]]) -> Game:
        """The true game, with a fresh generator and, unless it sees the deck, the draw pile
        reshuffled."""
        assert self._truth is not None
        g = self._truth.clone()
        g.rng = np.random.default_rng(int(rng.integers(2**63)))
        if self.sees == "hands":
            self._shuffle.shuffle(g.draw_pile)
        return g


@register("oracle", "CHEATS (sees every hand; oracle:deck also the draw pile): ismcts on the "
          "true game, a skill-ceiling reference; tournaments refuse it unless allowed",
          example="oracle:20")
def _make_oracle(arg: str | None, seed: int | None) -> Agent:
    sees = "hands"
    rest = arg
    if arg is not None:
        first, _, tail = arg.partition(":")
        if first in SEES:
            sees, rest = first, tail or None
    try:
        params = parse_spec(rest)
    except ValueError as e:
        raise AgentSpecError(
            str(e).replace("agent 'ismcts'", "agent 'oracle'")
            + "; oracle takes 'hands' or 'deck' first, as in 'oracle:deck:200'"
        ) from None
    return OracleAgent(seed, sees=sees, params=params)
