"""``ismcts``: single-observer information-set Monte Carlo tree search (SO-ISMCTS).

The algorithm is SO-ISMCTS of Cowling, Powley & Whitehouse, "Information Set Monte Carlo Tree
Search", IEEE Transactions on Computational Intelligence and AI in Games 4(2), 2012. One tree is
grown over the searching seat's information sets: a node is a sequence of decisions (of every
seat, opponents included) from the current decision on, as the searching seat would see them
played. Each iteration:

1. **Determinize.** Sample one full game consistent with the seat's view
   (:meth:`Game.from_view <uno_mk_env.Game.from_view>`: the other hands and the draw-pile order
   re-dealt from the unseen cards, with a fresh generator, so the search knows neither hidden
   cards nor future shuffles), nudged by the ``strategic`` agent's public void-colour beliefs
   through ``from_view``'s ``condition`` hook (:meth:`ISMCTSAgent._deal`).
2. **Select.** From the root, while every action legal *in this determinization* already has a
   child, descend to the child maximising UCB1 with *availability* counts,
   ``mean + c * sqrt(ln(n_avail) / n)``, where ``n_avail`` counts the iterations in which the
   child's action was legal (ISMCTS's fix for actions that exist in some determinizations
   only). Opponents' decisions are tree nodes too: a node's value is the reward of the seat
   that decides there, so each seat maximises its own reward (single observer: opponents
   choose from the statistics of the searcher's tree, on the determinization's cards).
   ``CATCH_UNO``/``CALL_UNO`` are taken whenever legal (free, docs/rules.md R8) and forced
   moves need no choice, but they are still nodes, so that paths through the tree stay
   aligned across determinizations.
3. **Expand** one action legal here that has no child yet (the ``strategic`` agent's choice
   first at the root, else in the order of the default policy's preference).
4. **Simulate** with the default policy
   (:func:`~uno_mk_env.agents.ismcts_playout.rollout_action`) for every seat until the round
   ends or ``max_depth`` (4) decisions were played; at the cap the outcome is scored by a
   conditional-logit model of who wins
   (:func:`~uno_mk_env.agents.ismcts_playout.logit_rewards`: hand size, wilds, action cards,
   colours held and turn, fitted on ``strategic`` self-play,
   :func:`~uno_mk_env.agents.ismcts_playout.fit_leaf_weights`).
5. **Back up** :func:`uno_mk_env.engine.rewards.win_reward` (the winner ``+1``, every other seat
   ``-1/(N-1)``, ``0`` without a winner) for the deciding seat of every node on the path, and
   count one visit each.

At the root the ``strategic`` agent's choice gets a constant bonus ``prior_bonus`` (0.1) in UCB1
(progressive bias that does not fade): with budgets of a few hundred iterations the value
estimates are noisy, and the bonus keeps the search from leaving a sound heuristic move on
noise alone. The move played is the most visited root child (ties: the prior's, then the
higher mean). Search is skipped when only one action is legal, and ``CATCH_UNO``/``CALL_UNO``
are taken at once.

Why these settings (docs/evaluation.md#the-search-agent): the search's choices were scored
against ``strategic``'s on 1,500 positions of ``strategic`` self-play by the value of each move
when everyone plays ``strategic`` afterwards. With the hand-size model at the cut-off the
search preferred moves that are worse (it shed wilds that are worth keeping); full-length
rollouts of the fast policy were worse still; the logit model removed most of that bias.

Budget: ``ismcts:N`` runs ``N`` iterations per decision (deterministic given the agent's seed,
so tournaments with it are reproducible for any number of workers); ``ismcts:Tms`` searches
for ``T`` milliseconds of wall-clock time per decision (at least one iteration), which depends
on the machine and its load, so it is *not* reproducible. Options follow the budget as
``:key=value`` parts (``ismcts:200:c=0.5:depth=20``; see :data:`SPEC_OPTIONS`; colons, not
commas, so that a spec fits in a comma-separated agent list).

The agent never sees hidden state: it reads its :class:`~uno_mk_env.PlayerView` only, and every
game it simulates is built from that view.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from uno_mk_env import Game, PlayerView
from uno_mk_env import actions as A
from uno_mk_env.compiled import core
from uno_mk_env.engine.cards import COLOUR_OF
from uno_mk_env.engine.observation import action_mask as mask_of
from uno_mk_env.engine.observation import encode
from uno_mk_env.engine.phases import Phase
from uno_mk_env.engine.rewards import expected_win_rewards, win_reward

from .base import Agent, AgentSpecError, register
from .ismcts_params import (
    DEFAULT_SIMULATIONS,
    PPO_PRIORS,
    SPEC_LIMITS,
    SPEC_OPTIONS,
    SearchParams,
    parse_spec,
)
from .ismcts_playout import LOGIT_WEIGHTS, fit_leaf_weights, logit_rewards, rollout_action
from .ppo import PPOAgent
from .rule_based import StrategicAgent
from .shipped import shipped_path
from .view_reading import legal_ids, uno_reflex

# Re-exported: callers import these from here (the settings, the spec, the leaf model's fit).
__all__ = [
    "DEFAULT_SIMULATIONS", "ISMCTSAgent", "LOGIT_WEIGHTS", "PPO_PRIORS", "SPEC_LIMITS",
    "SPEC_OPTIONS", "SearchParams", "fit_leaf_weights", "parse_spec",
]


# ---------------------------------------------------------------------------------- the tree
class _Node:
    """A node of the tree: the decision sequence from the root to it, as seen by the searcher.

    ``visits``/``total``: simulations through it and the sum of their rewards for ``player``,
    the seat that chose the action leading here; ``avail``: iterations in which that action was
    legal at the parent (the availability count of ISMCTS).
    """

    __slots__ = ("children", "visits", "avail", "total", "squares", "player")

    def __init__(self, player: int) -> None:
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.avail = 0
        self.total = 0.0
        self.squares = 0.0  # sum of squared rewards (the root's test against the prior)
        self.player = player


class _CoreNode:
    """A node of a tree grown on the core (``TreeSearch``): :class:`_Node`'s fields, its
    children read from the core's tree on first use."""

    __slots__ = ("_tree", "_index", "_children", "visits", "avail", "total", "squares",
                 "player")

    def __init__(self, tree: Any, index: int) -> None:
        self._tree = tree
        self._index = index
        self._children: dict[int, _CoreNode] | None = None
        self.visits, self.avail, self.total, self.squares, self.player = tree.node(index)

    @property
    def children(self) -> dict[int, _CoreNode]:
        if self._children is None:
            self._children = {a: _CoreNode(self._tree, i)
                              for a, i in self._tree.children(self._index)}
        return self._children

    def __reduce__(self) -> tuple[Any, ...]:
        """Copied or pickled (an agent holding its last tree) as the :class:`_Node` tree."""
        return _python_node, (self.visits, self.avail, self.total, self.squares, self.player,
                              self.children)


def _python_node(visits: int, avail: int, total: float, squares: float, player: int,
                 children: dict[int, _Node]) -> _Node:
    node = _Node(player)
    node.visits, node.avail, node.total, node.squares = visits, avail, total, squares
    node.children = children
    return node


#: A search tree's node, grown in Python or on the core.
TreeNode = _Node | _CoreNode


def _ucb_choice(children: dict[int, _Node], actions: Sequence[int], c: float, prior: int,
                bonus: float) -> int:
    """The action of ``actions`` whose child maximises UCB1 with availability counts,
    ``mean + c * sqrt(ln(n_avail) / n)``, plus ``bonus`` for ``prior`` (the first on ties)."""
    log, sqrt = math.log, math.sqrt
    best_a, best_v = -1, -1e300
    for a in actions:
        child = children[a]
        v = child.total / child.visits + c * sqrt(log(child.avail) / child.visits)
        if a == prior:
            v += bonus
        if v > best_v:
            best_a, best_v = a, v
    return best_a


def _step_into(g: Game, node: _Node, a: int, path: list[_Node]) -> _Node:
    """Plays ``a`` in ``g`` from ``node``: its child for ``a`` (created for the seat deciding
    now if new), counted available and appended to ``path``."""
    child = node.children.get(a)
    if child is None:
        child = node.children[a] = _Node(g.current_player)
    child.avail += 1
    path.append(child)
    g.step(a)
    return child


def _back_up(path: list[_Node], rewards: list[float]) -> None:
    """Adds one visit and the reward of its deciding seat to every node of ``path``."""
    for node in path:
        r = rewards[node.player]
        node.visits += 1
        node.total += r
        node.squares += r * r


class _Search:
    """The state of one :meth:`ISMCTSAgent.search`: the settings, the tree and, with ``crn``,
    the deals and rollout seeds shared by the root actions' visits.

    ``prior`` is the prior's action (``-1``: none). Determinizations come from the agent's
    ``_deal`` (an ``oracle`` deals the true game) with the agent's generator; rollout randomness
    from ``master``, seeded from it. When the compiled core runs and ``_deal`` is the reference
    one, the determinizations are the core's (:func:`_compiled_dealer`: the same games, drawn
    the same way), and so are the simulations played on them; with the fast rollout whole
    iterations run on the core (``tree``: its ``TreeSearch``, the same tree policy).
    """

    __slots__ = ("deal", "leaf_rewards", "rng", "master", "view", "seat", "n", "prior", "root",
                 "root_legal", "voids", "c", "bonus", "depth_cap", "eps", "crn", "tested",
                 "logit", "helper", "deals", "seeds", "core", "leaf", "tree")

    def __init__(self, agent: ISMCTSAgent, view: PlayerView, prior: int) -> None:
        p = agent.params
        self.deal = agent._deal
        self.core = core() if (self.deal is _REFERENCE_DEAL and type(agent)._leaf_rewards
                               is ISMCTSAgent._leaf_rewards) else None
        carrier = None
        if self.core is not None:
            carrier = _carrier(view)
            self.deal = _compiled_dealer(view, carrier)
        self.leaf_rewards = agent._leaf_rewards
        self.rng = agent.rng
        self.master = self._random(int(self.rng.integers(2**63)))
        self.view = view
        self.seat = view.seat
        self.n = view.num_players
        self.prior = prior
        self.root = _Node(-1)
        self.root_legal = view.legal_actions
        self.voids = agent.prior.void_beliefs() if p.use_voids else []
        self.c = p.exploration
        self.bonus = p.prior_bonus
        self.depth_cap = p.max_depth
        self.eps = p.epsilon
        self.crn = p.crn
        self.tested = p.significance > 0 and prior in self.root_legal
        self.logit = p.value == "logit"
        self.helper = StrategicAgent(0) if p.rollout == "strategic" else None
        self.deals: list[Game] = []
        self.seeds: list[int] = []
        # the compiled simulation's cut-off model: logit weights, or the size model's exponent
        k = p.value_exponent if p.value_exponent is not None else (0.5 if self.n == 2 else 1.0)
        self.leaf = (LOGIT_WEIGHTS[2 if self.n == 2 else 4] if self.logit else None, k)
        self.tree = None
        if carrier is not None and self.helper is None:
            self.tree = self.core.TreeSearch(  # type: ignore[union-attr]
                carrier, self.seat, self.rng, self.master, self.root_legal, prior, self.c,
                self.bonus, self.depth_cap, self.eps, self.crn, self.tested,
                _beliefs(self.voids), *self.leaf)

    def run(self, limit: int, deadline: float | None) -> tuple[TreeNode, int]:
        """Runs iterations until ``limit`` or the ``deadline`` (``time.perf_counter``; at least
        one iteration) and returns the root and the number of iterations."""
        if self.tree is not None:
            seconds = None if deadline is None else deadline - time.perf_counter()
            it = self.tree.run(limit, seconds)
            return _CoreNode(self.tree, 0), it
        it = 0
        while it < limit:
            if deadline is not None and it and time.perf_counter() >= deadline:
                break
            it += 1
            self.iterate(it)
        return self.root, it

    def _random(self, seed: int) -> Any:
        """``random.Random(seed)``, or on the compiled core its ``SearchRandom`` (the same
        draws)."""
        return random.Random(seed) if self.core is None else self.core.SearchRandom(seed)

    def iterate(self, it: int) -> None:
        """Iteration ``it`` (from 1): determinize, select and expand, simulate, back up."""
        path: list[_Node] = []
        if self.crn:
            g, rnd, child = self._crn_root(it, path)
            if child.visits:  # a new root child is this iteration's expansion
                self._descend(g, child, path, rnd, it)
        else:
            g, rnd = self.deal(self.view, self.rng, self.voids), self.master
            self._descend(g, self.root, path, rnd, it)
        _back_up(path, self._simulate(g, rnd))

    def _crn_root(self, it: int, path: list[_Node]) -> tuple[Game, random.Random, _Node]:
        """Common random numbers: the root action is chosen first (every root action is legal in
        every determinization); its m-th visit plays the m-th sampled deal with the m-th rollout
        seed, so root actions are compared on the same cards. Returns the deal after the root
        action, the rollout generator and the root action's child (appended to ``path``)."""
        root_legal = self.root_legal
        prior = self.prior
        children = self.root.children
        if len(children) < len(root_legal):
            if prior in root_legal and prior not in children:
                a = prior
            else:
                a = next(x for x in root_legal if x not in children)
            child = children[a] = _Node(self.seat)
        elif self.tested and children[prior].visits * 4 < it:
            a = prior  # the test against the prior needs samples of it too
            child = children[a]
        else:
            a = _ucb_choice(children, root_legal, self.c, prior, self.bonus)
            child = children[a]
        for ch in children.values():
            ch.avail += 1
        m = child.visits
        if m == len(self.deals):
            self.deals.append(self.deal(self.view, self.rng, self.voids))
            self.seeds.append(self.master.getrandbits(63))
        g = self.deals[m].clone()
        rnd = self._random(self.seeds[m])
        g.step(a)
        path.append(child)
        return g, rnd, child

    def _descend(self, g: Game, node: _Node, path: list[_Node], rnd: random.Random,
                 it: int) -> None:
        """Selection and expansion from ``node``: reflex and forced moves are followed, then
        UCB1 descends while every action legal in ``g`` has a child, and the first node with an
        untried action gets one child. ``g`` is played along and ``path`` extended."""
        while not (g.round_over or g.game_over):
            legal = g.legal_action_ids()
            if legal[-1] >= A.CALL_UNO or len(legal) == 1:  # reflex or forced: no choice
                a = (A.CATCH_UNO if A.CATCH_UNO in legal else legal[-1]) if len(legal) > 1 \
                    else legal[0]
                node = _step_into(g, node, a, path)
                continue
            new = self._expansion(g, node, legal, rnd)
            if new is not None:
                _step_into(g, node, new, path)
                return
            a = self._selection(node, legal, it)
            node = node.children[a]
            path.append(node)
            g.step(a)

    def _expansion(self, g: Game, node: _Node, legal: Sequence[int],
                   rnd: random.Random) -> int | None:
        """The untried action to expand at ``node`` (``None``: every action legal in ``g`` has a
        child), after counting the tried ones available: at the root the prior's choice first,
        elsewhere the default policy's if untried, else the first untried in id order."""
        children = node.children
        untried = None
        for a in legal:
            child = children.get(a)
            if child is None:
                if untried is None:
                    untried = a
            else:
                child.avail += 1
        if untried is None:
            return None
        if node is self.root:
            prior = self.prior
            return prior if prior in legal and prior not in children else untried
        if self.core is None:
            a = rollout_action(g, rnd, 0.0)
        else:  # a compiled determinization
            a = g.rollout_action(rnd, 0.0)  # type: ignore[attr-defined]
        return untried if a in children else a

    def _selection(self, node: _Node, legal: Sequence[int], it: int) -> int:
        """The action UCB1 descends by at ``node`` (the root's prior gets ``bonus``, and enough
        visits for the test against it)."""
        if node is self.root:
            prior = self.prior
            if self.tested and node.children[prior].visits * 4 < it:
                return prior  # the test against the prior needs samples of it too
            return _ucb_choice(node.children, legal, self.c, prior, self.bonus)
        return _ucb_choice(node.children, legal, self.c, -1, 0.0)

    def _simulate(self, g: Game, rnd: random.Random) -> list[float]:
        """Plays the default policy from ``g`` until the round ends or ``max_depth`` decisions
        were played, and returns every seat's reward (:func:`~uno_mk_env.engine.rewards.win_reward`,
        or the value model's estimate at the cap)."""
        depth_cap, helper, eps = self.depth_cap, self.helper, self.eps
        if self.core is not None and helper is None:
            return g.simulate(rnd, depth_cap or 0, eps, *self.leaf)  # type: ignore[attr-defined]
        steps = 0
        while not (g.round_over or g.game_over):
            if depth_cap and steps >= depth_cap:
                break
            if helper is None:
                g.step(rollout_action(g, rnd, eps))
            else:
                g.step(helper.act(None, None, g.view(g.current_player)))
            steps += 1
        n = self.n
        if g.round_over or g.game_over:
            winner = g.round_winner
            if winner is None:
                return [0.0] * n
            return [win_reward(n, winner, s) for s in range(n)]
        return self.leaf_rewards(g.sizes) if not self.logit else logit_rewards(g)


class ISMCTSAgent(Agent):
    """Single-observer information-set MCTS (see the module docstring).

    Args:
        seed: seed of the agent's generator (determinizations and rollout randomness).
        simulations: iterations per decision (ignored when ``params`` is given).
        params: every setting (:class:`SearchParams`); overrides ``simulations``.
    """

    name = "ismcts"

    def __init__(
        self,
        seed: int | None = None,
        simulations: int = DEFAULT_SIMULATIONS,
        params: SearchParams | None = None,
    ) -> None:
        super().__init__(seed)
        if params is None:
            params = SearchParams(simulations=simulations)
        for name in ("simulations", "milliseconds"):
            value = getattr(params, name)
            low, high = SPEC_LIMITS[name]
            if value is not None and not low <= value <= high:
                raise ValueError(f"{name} must be from {low:g} to {high:g}, got {value!r}")
        self.params = params
        self.prior = StrategicAgent(seed)  # the table memory (void beliefs) and default prior
        self._policy: Agent | None = None  # prior="ppo": the PPO agent, loaded on first use
        if params.policy:  # a policy named in the spec is read now: a bad one fails here
            self._policy = _prior_policy(params.policy)
        self.last_root: TreeNode | None = None  # the latest search tree (tests, diagnostics)
        self.iterations = 0  # iterations of the latest search

    @property
    def simulations(self) -> int:
        return self.params.simulations

    def reset(self, seed: int | None = None) -> None:
        """New game: reseeds and resets the prior's memory."""
        super().reset(seed)
        self.prior.reset(seed)

    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, view: PlayerView
    ) -> int:
        legal = legal_ids(action_mask, view)
        # The prior sees every decision, so its table memory (void colours) stays current.
        prior = self.prior.act(observation, action_mask, view)
        if len(legal) == 1:
            return legal[0]
        reflex = uno_reflex(legal)
        if reflex is not None:
            return reflex
        if self.params.prior == "ppo":
            prior = self._ppo_choice(view)
        root = self.search(view, prior)
        best = max(
            legal,
            key=lambda a: (
                root.children[a].visits if a in root.children else -1,
                a == prior,
                root.children[a].total / root.children[a].visits
                if a in root.children and root.children[a].visits else -1.0,
            ),
        )
        z = self.params.significance
        if z > 0 and best != prior and prior in root.children:
            a, b = root.children[best], root.children[prior]
            if not b.visits:
                return prior
            mean_a, mean_b = a.total / a.visits, b.total / b.visits
            # a node seen once has no variance of its own: it borrows the other's
            var_a = a.squares / a.visits - mean_a * mean_a if a.visits > 1 else None
            var_b = b.squares / b.visits - mean_b * mean_b if b.visits > 1 else var_a
            var_a = var_b if var_a is None else var_a
            if var_a is None or var_b is None or mean_a - mean_b <= z * math.sqrt(
                    max(var_a, 0.0) / a.visits + max(var_b, 0.0) / b.visits):
                return prior
        return best

    def _ppo_choice(self, view: PlayerView) -> int:
        """The shipped PPO policy's choice for ``view`` (``prior="ppo"``)."""
        if self._policy is None:
            name = PPO_PRIORS[2 if view.num_players == 2 else 4]
            try:
                path = shipped_path(name)
            except LookupError as e:
                raise FileNotFoundError(f"ismcts prior=ppo needs the shipped policy: {e}"
                                        ) from None
            self._policy = _prior_policy(str(path))
        return self._policy.act(encode(view), mask_of(view.legal_actions), view)

    # ------------------------------------------------------------------------ search
    def search(self, view: PlayerView, prior: int = -1) -> TreeNode:
        """Grows a tree from ``view`` (the searcher decides) and returns its root."""
        p = self.params
        run = _Search(self, view, prior)
        deadline = None
        if p.milliseconds is not None:
            deadline = time.perf_counter() + p.milliseconds / 1000.0
        limit = p.simulations if deadline is None else 1 << 62
        root, self.iterations = run.run(limit, deadline)
        self.last_root = root
        return root

    def _leaf_rewards(self, sizes: list[int]) -> list[float]:
        """Expected reward of every seat at the depth cap: ``P(seat wins)`` modelled as
        proportional to ``size ** -k`` (a fit on games of the rule agents), as an expected reward
        (:func:`~uno_mk_env.engine.rewards.expected_win_rewards`)."""
        k = self.params.value_exponent
        n = len(sizes)
        if k is None:
            k = 0.5 if n == 2 else 1.0
        return expected_win_rewards([max(s, 1) ** -k for s in sizes])

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
        the swapped hands. The view was just built by the driver, so it is not re-validated.
        """
        if not voids or not any(any(row) for row in voids):
            return Game.from_view(view, rng, validate=False)

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

        return Game.from_view(view, rng, condition, validate=False)


_REFERENCE_DEAL = ISMCTSAgent._deal


def _prior_policy(policy: str) -> PPOAgent:
    """The PPO prior ``policy`` (a shipped name or a path, as ``ppo:`` takes it), deterministic.

    Raises:
        AgentSpecError: it cannot be read, naming it.
    """
    try:
        return PPOAgent(policy, seed=0)
    except (OSError, ValueError, LookupError) as e:
        raise AgentSpecError(f"agent 'ismcts': policy={policy[:200]!r}: {e}") from None


def _carrier(view: PlayerView) -> Any:
    """A compiled game carrying ``view``'s public state and the seat's hand (the core's
    ``view_carrier``), which the core determinizes from."""
    return core().view_carrier(view)  # type: ignore[union-attr]


def _beliefs(voids: list[list[float]]) -> np.ndarray | None:
    """The void beliefs as the core takes them (``None``: none held)."""
    believed = voids and any(any(row) for row in voids)
    return np.array(voids, np.float64) if believed else None


def _compiled_dealer(view: PlayerView, carrier: Any = None) -> Any:
    """:meth:`ISMCTSAgent._deal` for ``view`` on the compiled core: its
    ``CompiledGame.determinize`` (with the void condition) draws the same games from the same
    generator as ``Game.from_view`` and the condition, from ``carrier`` (:func:`_carrier`)."""
    carrier = _carrier(view) if carrier is None else carrier
    seat = view.seat

    conditioned: dict[int, Any] = {}  # the search's beliefs (one list), checked once

    def deal(view: PlayerView, rng: np.random.Generator, voids: list[list[float]]) -> Any:
        key = id(voids)
        if key not in conditioned:
            conditioned[key] = _beliefs(voids)
        return carrier.determinize(seat, rng, voids=conditioned[key])

    return deal


@register("ismcts", "information-set MCTS (SO-ISMCTS), spec ismcts:N (N iterations per move) "
          "or ismcts:Tms (T ms per move, not reproducible)", example="ismcts:20")
def _make_ismcts(arg: str | None, seed: int | None) -> Agent:
    return ISMCTSAgent(seed, params=parse_spec(arg))
