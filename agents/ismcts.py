"""``ismcts``: determinized Monte Carlo search over the root's legal actions.

Information-set Monte Carlo in its flat form (determinized UCB1 at the root, as in Cowling,
Powley & Whitehouse's IS-MCTS with a one-level tree). Each simulation:

1. takes a sampled full game consistent with the seat's view (:meth:`Game.from_view
   <uno_mk_env.Game.from_view>`: hidden hands and the draw-pile order re-dealt from the unseen
   cards, with a fresh generator, so the search knows neither hidden cards nor future shuffles),
   nudged by the ``strategic`` prior's public void inferences (:meth:`ISMCTSAgent._deal`);
2. picks a root action by UCB1 over the statistics so far (each action once first), plus a
   small bonus for the ``strategic`` agent's choice (``prior_bonus``): with budgets of tens of
   simulations the value estimates are noisy, and the bonus keeps the search from leaving a
   sound heuristic move on noise alone;
3. plays it, then the fast default policy :func:`rollout_action` for every seat, until the round
   ends or ``max_depth`` decisions have been made;
4. backs up the value: ``+1`` if the searching seat won the round, ``-1/(N-1)`` if another seat
   did (the zero-sum "win" reward of DESIGN.md §7), ``0`` for a stalemate, and at the depth cap
   the expected reward under a hand-size model, ``P(win) ∝ size ** -k`` (fitted on games of the
   rule agents). Short rollouts scored this way beat full-length ones in tuning (at 50
   simulations, 2 players, against ``strategic``: depth 10 won 43% of 300 games, depth 30 41%,
   depth 300 34%): the outcome of a long rollout of a weak policy is mostly noise.

Common random numbers: the ``m``-th simulation of every root action uses the same sampled deal
and the same rollout seed, so actions are compared on the same hidden cards and the deal's luck
largely cancels out of their difference.

The move played is the most visited root action (ties: the prior's, then the higher mean).
Search is skipped when only one action is legal, and ``CATCH_UNO``/``CALL_UNO`` are always
taken at once (free, R8). The agent is deterministic given its seed: every random choice
(deals, rollout tie-breaks) comes from its own generator.

Registered as ``ismcts`` with the spec ``ismcts:N`` (``N`` simulations per move, default 100).
"""

from __future__ import annotations

import math
import random

import numpy as np

from uno_mk_env import Game, PlayerView
from uno_mk_env import actions as A
from uno_mk_env.cards import COLOUR_OF, SKIP, W4, WB
from uno_mk_env.legality import held_mask, w4_is_legal
from uno_mk_env.phases import Phase
from uno_mk_env.rewards import win_reward

from .base import Agent, register
from .rule_based import StrategicAgent, _uno_reflex, legal_ids

__all__ = ["ISMCTSAgent", "rollout_action", "DEFAULT_SIMULATIONS"]

DEFAULT_SIMULATIONS = 100


def _most_held_colour(hand: list[int]) -> int:
    counts = [sum(hand[0:13]), sum(hand[13:26]), sum(hand[26:39]), sum(hand[39:52])]
    return counts.index(max(counts))


def rollout_action(g: Game, rnd: random.Random, epsilon: float = 0.1) -> int:
    """The default (rollout) policy: a fast, slightly randomised ``greedy``-like player.

    It reads the *sampled* game's internals directly (a determinization the searcher owns, so no
    real hidden state), skipping :class:`~uno_mk_env.PlayerView` construction: rollouts are the
    search's hot loop. Always catch and call UNO; play rather than draw; among coloured cards
    prefer the colour held most (a follow-up next turn) and Skip/Reverse/Draw Two when they
    count (two players: a second move; otherwise: the next player is on one or two cards), with
    probability ``epsilon`` a random coloured card instead (so rollouts do not all follow one
    line); wilds last (WB, then a legal W4; never bluff), except a W4 against a next player on
    one or two cards; play a drawn card; name the most-held colour; shell the smallest hand;
    accept every W4 (no rollout player bluffs, so a challenge would always fail).
    """
    legal = g.legal_action_ids()
    if len(legal) == 1:
        return legal[0]
    if legal[-1] >= A.CALL_UNO:  # CALL_UNO / CATCH_UNO come last in the ids
        return A.CATCH_UNO if A.CATCH_UNO in legal else A.CALL_UNO
    phase = g.phase
    p = g.current_player
    hand = g.hands[p]
    if phase == Phase.PLAY:
        n = g.num_players
        threat = g.sizes[(p + g.direction) % n] <= 2
        if threat and W4 in legal and _honest_w4(g, hand):
            return W4
        coloured = [a for a in legal if a < W4]
        if coloured:
            if len(coloured) == 1:
                return coloured[0]
            if rnd.random() < epsilon:
                return coloured[rnd.randrange(len(coloured))]
            action_bonus = 2.0 if (n == 2 or threat) else 0.0
            best, best_key = coloured[0], -1.0
            for k in coloured:
                b = 13 * COLOUR_OF[k]
                key = sum(hand[b:b + 13]) + rnd.random() * 0.5
                if k - b >= SKIP:
                    key += action_bonus
                if key > best_key:
                    best, best_key = k, key
            return best
        if WB in legal:
            return WB
        if W4 in legal and _honest_w4(g, hand):
            return W4
        return A.DRAW
    if phase == Phase.PLAY_DRAWN:
        return legal[0]  # the drawn card (the smallest id; KEEP is 55)
    if phase == Phase.CHOOSE_COLOUR:
        return A.COLOUR_BASE + _most_held_colour(hand)
    if phase == Phase.CHOOSE_TARGET:
        n = g.num_players
        sizes = g.sizes
        k = min(range(1, n), key=lambda j: sizes[(p + j) % n])
        return A.TARGET_BASE + k - 1
    if phase == Phase.CHALLENGE:
        return A.ACCEPT
    return legal[0]


def _honest_w4(g: Game, hand: list[int]) -> bool:
    """R6.1 on the sampled hand: no card of the active colour, and no WB when that counts."""
    return w4_is_legal(held_mask(hand), g.colour, g.rules.item_box_counts_for_w4)


class ISMCTSAgent(Agent):
    """Flat information-set Monte Carlo with UCB1 at the root (see the module docstring).

    Args:
        seed: seed of the agent's generator (determinizations and rollout randomness).
        simulations: simulations (sampled deal + rollout) per decision.
        max_depth: decisions per rollout before it is cut off and scored by hand sizes.
        exploration: UCB1 constant ``c`` in ``mean + c * sqrt(ln(N) / n)`` (values lie in
            ``[-1, 1]``).
        epsilon: rollout policy randomness (:func:`rollout_action`).
        prior_bonus: added to the mean value of the ``strategic`` agent's choice in UCB1.
        value_exponent: ``k`` of the depth-cap value model ``P(win) ∝ size ** -k``; by
            default the maximum-likelihood fits on ``strategic``/``greedy`` games, 0.5 at two
            players and 1.0 at more.
        use_voids: bias the sampled deals by the prior's void-colour beliefs.
    """

    name = "ismcts"

    def __init__(
        self,
        seed: int | None = None,
        simulations: int = DEFAULT_SIMULATIONS,
        max_depth: int = 10,
        exploration: float = 0.7,
        epsilon: float = 0.1,
        prior_bonus: float = 0.2,
        value_exponent: float | None = None,
        use_voids: bool = True,
    ) -> None:
        super().__init__(seed)
        if simulations < 1:
            raise ValueError(f"simulations must be >= 1, got {simulations}")
        self.prior = StrategicAgent(seed)
        self.prior_choice = -1
        self.prior_bonus = prior_bonus
        self.value_exponent = value_exponent
        self.use_voids = use_voids
        self.simulations = simulations
        self.max_depth = max_depth
        self.exploration = exploration
        self.epsilon = epsilon

    def reset(self, seed: int | None = None) -> None:
        """New game: reseeds and resets the prior's memory."""
        super().reset(seed)
        self.prior.reset(seed)

    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, view: PlayerView
    ) -> int:
        legal = legal_ids(action_mask, view)
        # The prior sees every decision, so its table memory (void colours) stays current.
        prior = self.prior_choice = self.prior.act(observation, action_mask, view)
        if len(legal) == 1:
            return legal[0]
        reflex = _uno_reflex(legal)
        if reflex is not None:
            return reflex
        rng = self.rng
        n_actions = len(legal)
        visits = [0] * n_actions
        totals = [0.0] * n_actions
        deals: list[tuple[Game, int]] = []
        voids = self.prior.void_beliefs() if self.use_voids else []
        c = self.exploration
        bonus = [self.prior_bonus if a == prior else 0.0 for a in legal]
        for sim in range(self.simulations):
            if sim < n_actions:
                j = sim
            else:
                log_n = math.log(sim)
                j = max(
                    range(n_actions),
                    key=lambda i: (
                        totals[i] / visits[i] + bonus[i] + c * math.sqrt(log_n / visits[i])
                    ),
                )
            m = visits[j]
            if m == len(deals):
                deals.append((self._deal(view, rng, voids), int(rng.integers(2**63))))
            deal, rollout_seed = deals[m]
            g = deal.clone()
            g.step(legal[j])
            visits[j] += 1
            totals[j] += self._rollout(g, view.seat, random.Random(rollout_seed))
        return legal[max(
            range(n_actions),
            key=lambda i: (visits[i], bonus[i], totals[i] / visits[i] if visits[i] else -1.0),
        )]

    @staticmethod
    def _deal(view: PlayerView, rng: np.random.Generator, voids: list[list[float]]) -> Game:
        """A determinization (:meth:`Game.from_view`) nudged by the prior's void beliefs.

        ``from_view`` deals the unseen cards uniformly. The ``strategic`` prior also knows, from
        the table, which opponents probably lack a colour (they drew facing it, or played a W4
        on it). With that belief's probability each such opponent's cards of the colour are
        swapped with random other-coloured cards of the sampled draw pile (hand sizes, the
        unseen multiset and everything public stay the same), so the search plays against
        hands a careful player would expect. ``from_view`` runs this as its ``condition`` hook
        and then derives the engine's state (the W4 legality of a pending challenge, R6.1) from
        the swapped hands.
        """
        if not voids:
            return Game.from_view(view, rng)

        def condition(hands: list[bytearray], pile: list[int], rng: np.random.Generator) -> None:
            draws = rng.random((len(voids), 4))
            # A seat deciding on the card it just drew keeps its sampled hand (the card stays).
            drawing = view.current_player if view.phase == Phase.PLAY_DRAWN else -1
            for s, beliefs in enumerate(voids):
                if s == view.seat or s == drawing:
                    continue
                hand = hands[s]
                for c in range(4):
                    if beliefs[c] <= draws[s, c]:
                        continue
                    others = [i for i, k in enumerate(pile) if COLOUR_OF[k] != c]
                    for k in range(13 * c, 13 * c + 13):
                        while hand[k] and others:
                            i = others.pop(int(rng.integers(len(others))))
                            hand[k] -= 1
                            hand[pile[i]] += 1
                            pile[i] = k

        return Game.from_view(view, rng, condition)

    def _rollout(self, g: Game, seat: int, rnd: random.Random) -> float:
        """Plays ``g`` on with :func:`rollout_action` and returns the value for ``seat``."""
        eps = self.epsilon
        for _ in range(self.max_depth):
            if g.round_over or g.game_over:
                break
            g.step(rollout_action(g, rnd, eps))
        if g.round_over or g.game_over:
            return win_reward(g.num_players, g.round_winner, seat)
        return self._heuristic_value(g.sizes, seat)

    def _heuristic_value(self, sizes: list[int], seat: int) -> float:
        """Expected reward at the depth cap: ``P(seat wins)`` modelled as proportional to
        ``size ** -k`` (a fit on sensible-play games), as a reward ``+1`` / ``-1/(N-1)``."""
        k = self.value_exponent
        if k is None:
            k = 0.5 if len(sizes) == 2 else 1.0
        weights = [max(n, 1) ** -k for n in sizes]
        p_win = weights[seat] / sum(weights)
        n = len(sizes)  # E[win_reward] = p_win * 1 + (1 - p_win) * (-1 / (n - 1))
        return p_win * win_reward(n, 0, 0) + (1.0 - p_win) * win_reward(n, 0, 1)


@register("ismcts", "determinized Monte Carlo search, spec ismcts:N (N simulations per move)",
          example="ismcts:20")
def _make_ismcts(arg: str | None, seed: int | None) -> Agent:
    if arg is None:
        return ISMCTSAgent(seed)
    try:
        n = int(arg)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(
            f"agent 'ismcts' takes a positive number of simulations per move, as in "
            f"'ismcts:200'; got {arg!r}"
        )
    return ISMCTSAgent(seed, simulations=n)
