"""``openspiel-ismcts:N``: OpenSpiel's own IS-MCTS bot (``open_spiel.python.algorithms.ismcts``)
as an agent, an outside reference for our ``ismcts`` (docs/openspiel.md).

OpenSpiel's ``ISMCTSBot`` with its defaults: UCT with ``c = 2`` (``:c=X`` to change it), ``N``
simulations per decision, a fresh determinization per simulation (unlimited world samples),
one uniformly random rollout to the end of the game per leaf
(``open_spiel.python.algorithms.mcts.RandomRolloutEvaluator``; ``:rollout=M`` cuts it after
``M`` moves, its ``max_length``), the most visited root action played. It searches the game
:mod:`uno_mk_env.envs.openspiel` registers, whose ``resample_from_infostate`` is
:meth:`~uno_mk_env.Game.determinize`, in its sampled form (``chance="sampled"``): every
simulation starts from a fresh determinization, whose own generator then deals the draws, so
explicit chance nodes would give the search nothing but their cost (a chance node per card,
each a copy of the engine game: docs/openspiel.md measures it). The rollouts are stepped on
the engine game (:class:`EngineRandomRollout`), the bot class is OpenSpiel's with
``restart_at`` (:class:`ISMCTSBot`); nothing else differs.

It sees only its seat's :class:`~uno_mk_env.PlayerView`: each decision starts from a game
sampled from that view (:meth:`Game.from_view <uno_mk_env.Game.from_view>`), never from the
true game, and every simulation re-samples from the view again. Deterministic given the
agent's seed (the bot's generator and its resampler draw from the agent's ``rng``).

Needs OpenSpiel (``pip install 'uno-mk-env[openspiel]'``): without it this module does not
import, so the agent is not registered and asking for it names the extra.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import numpy as np

try:
    from open_spiel.python.algorithms import ismcts, mcts
except ImportError:  # one line naming the extra, not OpenSpiel's traceback
    raise ImportError(
        "openspiel-ismcts needs OpenSpiel: pip install 'uno-mk-env[openspiel]'"
    ) from None

from uno_mk_env import Game, PlayerView, Rules
from uno_mk_env.envs import openspiel as uno_openspiel

from .base import Agent, register

__all__ = [
    "EngineRandomRollout", "ISMCTSBot", "MAX_SIMULATIONS", "MIN_SIMULATIONS",
    "OpenSpielISMCTSAgent", "SPEC_OPTIONS", "parse_spec",
]

#: Simulations per decision allowed in a spec (each is a random rollout to the end of a game);
#: at least 2, as OpenSpiel's bot spends the first on expanding the root.
MIN_SIMULATIONS, MAX_SIMULATIONS = 2, 10_000
#: OpenSpiel's usual UCT constant (its examples' default).
DEFAULT_UCT_C = 2.0


class ISMCTSBot(ismcts.ISMCTSBot):
    """OpenSpiel's Python ``ISMCTSBot``, unchanged but for the two calls OpenSpiel's
    ``evaluate_bots`` makes of every bot: the bot keeps nothing between decisions (every
    ``step`` searches afresh), so ``restart_at`` only clears its tree and ``inform_action``
    has nothing to do (the shipped class leaves ``restart_at`` to pyspiel's base, which raises
    "not implemented")."""

    def restart_at(self, state: Any) -> None:
        self.reset()

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        pass


class EngineRandomRollout(mcts.RandomRolloutEvaluator):
    """OpenSpiel's ``RandomRolloutEvaluator`` (one rollout, uniform over the legal actions, to
    the end of the game or its ``max_game_length``; uniform priors) with the rollout stepped on
    the engine game itself rather than through pyspiel's per-move calls: the same policy, about
    three times faster a move, where the search's budget mostly goes (uniformly random play
    rarely ends a game of UNO quickly: a voluntary draw is always legal, R4.2). In either
    chance form: the rollout continues ``state.sample_engine`` (the explicit form's chance
    drawn from the evaluator's generator)."""

    def __init__(self, seed: int, max_length: int | None = None) -> None:
        super().__init__(n_rollouts=1, max_length=max_length)
        self._rnd = random.Random(seed)
        self._chance = np.random.default_rng(seed)

    def evaluate(self, state: Any) -> np.ndarray:
        g = state.sample_engine(self._chance)
        limit = state.max_length
        if self.max_length is not None:
            limit = min(limit, g.num_steps + self.max_length)
        randrange = self._rnd.randrange
        while not g.game_over and g.num_steps < limit:
            legal = g.legal_action_ids()
            g.step(legal[randrange(len(legal))])
        return np.array(uno_openspiel.engine_returns(g))


class OpenSpielISMCTSAgent(Agent):
    """OpenSpiel's ``ISMCTSBot`` with random rollouts, searching from the seat's view."""

    def __init__(
        self,
        simulations: int,
        seed: int | None = None,
        uct_c: float = DEFAULT_UCT_C,
        rollout_length: int | None = None,
    ) -> None:
        super().__init__(seed)
        self.simulations = simulations
        self.uct_c = uct_c
        self.rollout_length = rollout_length
        self._games: dict[Rules, Any] = {}  # pyspiel games by rules (immutable, shared)

    def __deepcopy__(self, memo: dict) -> OpenSpielISMCTSAgent:
        twin = copy.copy(self)
        twin.rng = copy.deepcopy(self.rng, memo)
        return twin

    def _game(self, rules: Rules) -> Any:
        game = self._games.get(rules)
        if game is None:
            params = uno_openspiel.game_parameters(rules, chance="sampled")
            game = self._games[rules] = uno_openspiel.UnoMarioKartGame(params)
        return game

    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, view: PlayerView
    ) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        game = self._game(view.rules)
        sample = Game.from_view(view, self.rng)  # the seat's view only, never the true game
        state = uno_openspiel.UnoMarioKartState(game, sample)
        random_state = np.random.RandomState(self.rng.integers(2**32, dtype=np.uint64))
        bot = ISMCTSBot(
            game,
            EngineRandomRollout(int(self.rng.integers(2**63)), self.rollout_length),
            self.uct_c,
            self.simulations,
            random_state=random_state,
        )
        draw = self.rng.random
        bot.set_resampler(lambda s, player: s.resample_from_infostate(player, draw))
        return int(bot.step(state))


#: ``:key=value`` options of a spec: (parser, low, high, what it sets).
SPEC_OPTIONS = {
    "c": (float, 0.0, 100.0, "the UCT constant (default 2)"),
    "rollout": (int, 1, 100_000, "the most moves of a rollout (RandomRolloutEvaluator's "
                                 "max_length; default: to the end of the game)"),
}


def parse_spec(arg: str | None) -> tuple[int, dict[str, Any]]:
    """``N[:c=X][:rollout=M]`` → (simulations, options); one-line ``ValueError`` otherwise."""
    if not arg:
        raise ValueError("openspiel-ismcts needs a simulation count: openspiel-ismcts:N, "
                         f"N in {MIN_SIMULATIONS}-{MAX_SIMULATIONS}")
    count, *parts = arg.split(":")
    if not count.isdigit() or not MIN_SIMULATIONS <= int(count) <= MAX_SIMULATIONS:
        raise ValueError(f"openspiel-ismcts simulations {count!r} is not allowed; allowed: an "
                         f"int {MIN_SIMULATIONS}-{MAX_SIMULATIONS}")
    options: dict[str, Any] = {}
    allowed = ", ".join(f"{k}={t.__name__} {lo}-{hi}" for k, (t, lo, hi, _) in
                        SPEC_OPTIONS.items())
    for part in parts:
        key, _, text = part.partition("=")
        kind, low, high, _ = SPEC_OPTIONS.get(key, (None, 0, 0, ""))
        try:
            value = kind(text) if kind is not None else None
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise ValueError(f"openspiel-ismcts option {part!r} is not allowed; allowed: "
                             f"{allowed}")
        options[key] = value
    return int(count), options


@register("openspiel-ismcts", "OpenSpiel's IS-MCTS bot (random rollouts), N simulations per "
          "decision: openspiel-ismcts:N[:c=X][:rollout=M]", example="openspiel-ismcts:2:rollout=10")
def _make(arg: str | None, seed: int | None) -> Agent:
    simulations, options = parse_spec(arg)
    return OpenSpielISMCTSAgent(simulations, seed, options.get("c", DEFAULT_UCT_C),
                                options.get("rollout"))
