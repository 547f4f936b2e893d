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
4. **Simulate** with the default policy :func:`rollout_action` for every seat until the round
   ends or ``max_depth`` (4) decisions were played; at the cap the outcome is scored by a
   conditional-logit model of who wins (:func:`_logit_rewards`: hand size, wilds, action cards,
   colours held and turn, fitted on ``strategic`` self-play, :func:`fit_leaf_weights`).
5. **Back up** :func:`uno_mk_env.rewards.win_reward` (the winner ``+1``, every other seat
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
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from uno_mk_env import Game, PlayerView, Rules
from uno_mk_env import actions as A
from uno_mk_env.cards import COLOUR_OF, SKIP, W4, WB
from uno_mk_env.legality import held_mask, w4_is_legal
from uno_mk_env.phases import Phase
from uno_mk_env.rewards import expected_win_rewards, win_reward

from .base import Agent, AgentSpecError, register
from .rule_based import StrategicAgent, _uno_reflex, legal_ids

__all__ = [
    "DEFAULT_SIMULATIONS", "ISMCTSAgent", "LOGIT_WEIGHTS", "SearchParams", "SPEC_LIMITS",
    "SPEC_OPTIONS",
    "fit_leaf_weights", "leaf_features", "parse_spec", "rollout_action",
]

#: Iterations per decision of the plain ``ismcts`` spec.
DEFAULT_SIMULATIONS = 100


def _most_held_colour(hand: bytes | bytearray | list[int]) -> int:
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
    if phase == Phase.PLAY:
        return _rollout_play(g, legal, rnd, epsilon)
    if phase == Phase.PLAY_DRAWN:
        return legal[0]  # the drawn card (the smallest id; KEEP is 55)
    if phase == Phase.CHOOSE_COLOUR:
        return A.COLOUR_BASE + _most_held_colour(g.hands[g.current_player])
    if phase == Phase.CHOOSE_TARGET:
        return A.TARGET_BASE + _smallest_hand_offset(g) - 1
    if phase == Phase.CHALLENGE:
        return A.ACCEPT
    return legal[0]


def _rollout_play(g: Game, legal: Sequence[int], rnd: random.Random, epsilon: float) -> int:
    """:func:`rollout_action` in the play phase: a W4 against a next player on one or two cards,
    else a coloured card (:func:`_rollout_coloured`), else WB, else an honest W4, else draw."""
    p = g.current_player
    hand = g.hands[p]
    n = g.num_players
    threat = g.sizes[(p + g.direction) % n] <= 2
    if threat and W4 in legal and _honest_w4(g, hand):
        return W4
    coloured = [a for a in legal if a < W4]
    if coloured:
        return _rollout_coloured(coloured, hand, rnd, epsilon,
                                 2.0 if (n == 2 or threat) else 0.0)
    if WB in legal:
        return WB
    if W4 in legal and _honest_w4(g, hand):
        return W4
    return A.DRAW


def _rollout_coloured(coloured: list[int], hand: bytearray, rnd: random.Random, epsilon: float,
                      action_bonus: float) -> int:
    """The coloured card :func:`rollout_action` plays: with probability ``epsilon`` a random one,
    else the one of the colour held most, ``action_bonus`` added for Skip/Reverse/Draw Two (ties
    broken by a random jitter of up to 0.5)."""
    if len(coloured) == 1:
        return coloured[0]
    if rnd.random() < epsilon:
        return coloured[rnd.randrange(len(coloured))]
    best, best_key = coloured[0], -1.0
    for k in coloured:
        b = 13 * COLOUR_OF[k]
        key = sum(hand[b:b + 13]) + rnd.random() * 0.5
        if k - b >= SKIP:
            key += action_bonus
        if key > best_key:
            best, best_key = k, key
    return best


def _smallest_hand_offset(g: Game) -> int:
    """How many seats after the current player (in seat order, 1 to N-1) the smallest hand sits
    (the first such seat on ties): the Green Shell's target in :func:`rollout_action`."""
    n = g.num_players
    p = g.current_player
    sizes = g.sizes
    return min(range(1, n), key=lambda j: sizes[(p + j) % n])


#: Weights of :func:`_logit_rewards` by table size (2, or more), in the order of
#: :func:`leaf_features`. Maximum-likelihood fits of the eventual winner on positions of
#: ``strategic`` self-play: ``fit_leaf_weights(2)`` and ``fit_leaf_weights(4)``, rounded.
LOGIT_WEIGHTS = {
    2: (-0.678, 1.084, 0.387, 0.132, -0.203, 0.043, -0.043),
    4: (-1.293, 0.762, 0.594, 0.066, -0.014, 0.154, 0.038),
}


def leaf_features(g: Game, s: int) -> tuple[float, ...]:
    """Seat ``s``'s features for the cut-off model: log hand size, W4s, WBs, Skip/Reverse/Draw
    Two cards, colours held, deciding now, deciding next (1 or 0)."""
    h = g.hands[s]
    actions = colours = 0
    for b in (0, 13, 26, 39):
        actions += h[b + 10] + h[b + 11] + h[b + 12]
        if any(h[b:b + 13]):
            colours += 1
    dist = (s - g.current_player) * g.direction % g.num_players
    return (math.log(max(g.sizes[s], 1)), h[W4], h[WB], actions, colours, float(dist == 0),
            float(dist == 1))


def _logit_rewards(g: Game) -> list[float]:
    """Expected reward of every seat of a cut-off simulation: ``P(seat s wins) ∝ exp(w · f_s)``
    (:data:`LOGIT_WEIGHTS`, :func:`leaf_features`), as an expected reward
    (:func:`~uno_mk_env.rewards.expected_win_rewards`)."""
    n = g.num_players
    w = LOGIT_WEIGHTS[2 if n == 2 else 4]
    scores = [sum(a * b for a, b in zip(w, leaf_features(g, s))) for s in range(n)]
    top = max(scores)
    return expected_win_rewards([math.exp(x - top) for x in scores])


def fit_leaf_weights(num_players: int, games: int = 1500, seed: int | None = None,
                     sample: float = 0.15) -> tuple[float, ...]:
    """Fits :data:`LOGIT_WEIGHTS` for ``num_players``: ``games`` games of ``strategic`` self-play
    (game seeds ``seed * 100000 + i``, ``seed`` defaulting to ``7 + num_players``), each
    decision's position kept with probability ``sample``, labelled with the game's winner; a
    conditional-logit maximum-likelihood fit (Newton, a 1e-3 ridge) of ``P(winner = s) ∝
    exp(w · leaf_features(s))``."""
    seed = 7 + num_players if seed is None else seed
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for i in range(games):
        # Not uno_mk_env.seeding.derive_seed: LOGIT_WEIGHTS were fitted on these game seeds
        # (test_ismcts reproduces them exactly); other deals would change the constants.
        g = Game(Rules(num_players=num_players), seed=seed * 100000 + i)
        agents = [StrategicAgent(s) for s in range(num_players)]
        kept = []
        while not g.game_over and g.num_steps < 3000:
            if rng.random() < sample:
                kept.append([leaf_features(g, s) for s in range(num_players)])
            p = g.current_player
            g.step(agents[p].act(None, None, g.view(p)))
        if g.winner is not None:
            xs += kept
            ys += [g.winner] * len(kept)
    x, y = np.array(xs, dtype=float), np.array(ys)
    m, _, d = x.shape
    w = np.zeros(d)
    for _ in range(50):
        sc = x @ w
        prob = np.exp(sc - sc.max(axis=1, keepdims=True))
        prob /= prob.sum(axis=1, keepdims=True)
        mean = (prob[:, :, None] * x).sum(axis=1)
        grad = (x[np.arange(m), y] - mean).sum(axis=0) - 1e-3 * w
        hess = np.einsum("ms,msd,mse->de", prob, x, x) - mean.T @ mean + 1e-3 * np.eye(d)
        step = np.linalg.solve(hess, grad)
        w += step
        if np.abs(step).max() < 1e-9:
            break
    return tuple(round(float(v), 3) for v in w)


def _honest_w4(g: Game, hand: bytearray) -> bool:
    """R6.1 on the sampled hand: no card of the active colour, and no WB when that counts."""
    return w4_is_legal(held_mask(hand), g.colour, g.rules.item_box_counts_for_w4)


# ------------------------------------------------------------------------------ parameters
@dataclass(frozen=True)
class SearchParams:
    """The search's settings (spec options in brackets, see :data:`SPEC_OPTIONS`).

    Attributes:
        simulations: iterations per decision when ``milliseconds`` is ``None``.
        milliseconds: wall-clock search time per decision instead (not reproducible) [ms].
        exploration: UCB1 constant ``c``; rewards lie in ``[-1/(N-1), 1]`` [c].
        max_depth: default-policy decisions per simulation before it is scored by the
            ``value`` model; ``0``: play every simulation to the end of the round [depth].
        epsilon: randomness of the default policy (:func:`rollout_action`) [eps].
        prior_bonus: added at the root to the UCB value of the prior's choice [bonus].
        prior: whose choice gets the bonus: ``"strategic"`` (the rule agent) or ``"ppo"`` (the
            shipped PPO policy for the table size, :data:`PPO_PRIORS`: ``ppo_2p`` at two
            players, ``ppo_4p``, trained at four, at three to ten; package data,
            :mod:`uno_mk_env.agents.shipped`) [prior].
        significance: ``z`` of the test that lets the search overrule the prior: the most
            visited root action is played instead of the prior's only if its mean exceeds the
            prior's by more than ``z`` standard errors of the difference (the prior then gets at
            least a quarter of the iterations, so that both means are measured); ``0``: no
            test [z].
        value: the model that scores a simulation cut off at ``max_depth``: ``"size"``
            (``P(win) ∝ size ** -k``) or ``"logit"`` (:func:`_logit_rewards`: a conditional
            logit on hand size, wilds, action cards, colours held and turn) [value].
        value_exponent: ``k`` of the hand-size model ``P(win) ∝ size ** -k``; ``None``: 0.5 at
            two players, 1.0 at more (maximum-likelihood fits on games of the rule agents) [k].
        use_voids: bias determinizations by the ``strategic`` agent's void beliefs [voids].
        rollout: the default policy: ``"fast"`` (:func:`rollout_action`) or ``"strategic"``
            (the ``strategic`` agent, without its table memory, for every seat; slower)
            [rollout].
        crn: common random numbers at the root: the root action is chosen before the
            determinization, and the ``m``-th visit of every root action plays the same
            ``m``-th sampled deal and rollout seed [crn].
    """

    simulations: int = DEFAULT_SIMULATIONS
    milliseconds: float | None = None
    exploration: float = 0.7
    max_depth: int = 4
    epsilon: float = 0.1
    prior_bonus: float = 0.1
    value_exponent: float | None = None
    use_voids: bool = True
    rollout: str = "fast"
    crn: bool = False
    prior: str = "strategic"
    significance: float = 0.0
    value: str = "logit"


#: Values of the string options.
CHOICES = {"rollout": ("fast", "strategic"), "prior": ("strategic", "ppo"),
           "value": ("size", "logit")}
#: The shipped PPO policies (:mod:`uno_mk_env.agents.shipped`) used by ``prior="ppo"``, by
#: table size: the key 2 at two players, the key 4 at every larger table.
PPO_PRIORS = {2: "ppo_2p", 4: "ppo_4p"}
#: Spec option names (``ismcts:200:c=0.5``) and the :class:`SearchParams` field each sets.
SPEC_OPTIONS = {
    "c": "exploration", "depth": "max_depth", "eps": "epsilon", "bonus": "prior_bonus",
    "prior": "prior", "z": "significance", "value": "value",
    "k": "value_exponent", "voids": "use_voids", "rollout": "rollout",
    "crn": "crn",
}
#: The range (inclusive) of every number a spec or :class:`ISMCTSAgent` takes, by
#: :class:`SearchParams` field: the budget stops at 100,000 iterations (seconds to a minute per
#: move) or 60,000 ms per move, so that every move ends.
SPEC_LIMITS: dict[str, tuple[float, float]] = {
    "simulations": (1, 100_000), "milliseconds": (1, 60_000), "exploration": (0, 100),
    "max_depth": (0, 10_000), "epsilon": (0, 1), "prior_bonus": (0, 100),
    "significance": (0, 100), "value_exponent": (0, 100),
}
_SPEC_HELP = ("'ismcts', 'ismcts:N' (N iterations per move, 1-100000), 'ismcts:Tms' (T "
              "milliseconds per move, 1-60000), optionally followed by :key=value options ("
              + ", ".join(SPEC_OPTIONS) + "), as in 'ismcts:200' or 'ismcts:100ms:c=0.5'")


def _spec_number(name: str, text: str) -> float:
    """The number ``text`` for the :class:`SearchParams` field ``name``: an int or a float as
    the field is, within ``SPEC_LIMITS[name]`` (read only up to 20 characters, so Python's
    integer-string limit is never met).

    Raises:
        ValueError: (no message) anything else.
    """
    is_int = "int" in str({f.name: f.type for f in fields(SearchParams)}[name])
    if len(text) > 20 or (is_int and not text.isdigit()):
        raise ValueError
    value = int(text) if is_int else float(text)
    low, high = SPEC_LIMITS[name]
    if not low <= value <= high:  # also NaN
        raise ValueError
    return value


def _allowed(name: str) -> str:
    """What the spec option for the field ``name`` takes (for error messages)."""
    if name in CHOICES:
        return " or ".join(CHOICES[name])
    if name not in SPEC_LIMITS:
        return "0, 1, true or false"
    kind = "an int" if "int" in str({f.name: f.type for f in fields(SearchParams)}[name]) else (
        "a number")
    return f"{kind} from {SPEC_LIMITS[name][0]:g} to {SPEC_LIMITS[name][1]:g}"


def parse_spec(arg: str | None) -> SearchParams:
    """:class:`SearchParams` from the text after ``ismcts:`` (``None``: the defaults); every
    number within :data:`SPEC_LIMITS`.

    Raises:
        AgentSpecError: (a ``ValueError``) one line naming the bad part and what is allowed.
    """
    params = SearchParams()
    if arg is None:
        return params
    budget, *options = [part.strip() for part in arg.split(":")]
    m = re.fullmatch(r"(\d{1,20})(ms)?", budget)
    try:
        if not m:
            raise ValueError
        field = "milliseconds" if m.group(2) else "simulations"
        budget_value: Any = _spec_number(field, m.group(1))  # an int or a float
        params = replace(params, **{field: budget_value})
    except ValueError:
        raise AgentSpecError(f"agent 'ismcts': bad budget {budget[:40]!r}; allowed: "
                             f"{_SPEC_HELP}") from None
    types = {f.name: f.type for f in fields(SearchParams)}
    for option in options:
        key, sep, text = option.partition("=")
        if not sep or key not in SPEC_OPTIONS:
            raise AgentSpecError(f"agent 'ismcts': bad option {option[:40]!r}; allowed: "
                                 f"{_SPEC_HELP}")
        name = SPEC_OPTIONS[key]
        value: Any  # str, bool or a number, as the field is
        try:
            if name in CHOICES:
                if text not in CHOICES[name]:
                    raise ValueError
                value = text
            elif "bool" in str(types[name]):
                if text not in ("0", "1", "true", "false"):
                    raise ValueError
                value = text in ("1", "true")
            else:
                value = _spec_number(name, text)
        except ValueError:
            raise AgentSpecError(f"agent 'ismcts': bad value in {option[:40]!r}; {key} takes "
                                 f"{_allowed(name)}") from None
        params = replace(params, **{name: value})
    return params


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
    from ``master``, seeded from it.
    """

    __slots__ = ("deal", "leaf_rewards", "rng", "master", "view", "seat", "n", "prior", "root",
                 "root_legal", "voids", "c", "bonus", "depth_cap", "eps", "crn", "tested",
                 "logit", "helper", "deals", "seeds")

    def __init__(self, agent: ISMCTSAgent, view: PlayerView, prior: int) -> None:
        p = agent.params
        self.deal = agent._deal
        self.leaf_rewards = agent._leaf_rewards
        self.rng = agent.rng
        self.master = random.Random(int(self.rng.integers(2**63)))
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
        rnd = random.Random(self.seeds[m])
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
        a = rollout_action(g, rnd, 0.0)
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
        were played, and returns every seat's reward (:func:`~uno_mk_env.rewards.win_reward`,
        or the value model's estimate at the cap)."""
        depth_cap, helper, eps = self.depth_cap, self.helper, self.eps
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
        return self.leaf_rewards(g.sizes) if not self.logit else _logit_rewards(g)


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
        self.last_root: _Node | None = None  # the latest search tree (tests, diagnostics)
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
        reflex = _uno_reflex(legal)
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
        from uno_mk_env.observation import action_mask, encode

        if self._policy is None:
            from .ppo import PPOAgent
            from .shipped import shipped_path

            name = PPO_PRIORS[2 if view.num_players == 2 else 4]
            try:
                path = shipped_path(name)
            except LookupError as e:
                raise FileNotFoundError(f"ismcts prior=ppo needs the shipped policy: {e}"
                                        ) from None
            self._policy = PPOAgent(path, seed=0)
        return self._policy.act(encode(view), action_mask(view.legal_actions), view)

    # ------------------------------------------------------------------------ search
    def search(self, view: PlayerView, prior: int = -1) -> _Node:
        """Grows a tree from ``view`` (the searcher decides) and returns its root."""
        p = self.params
        run = _Search(self, view, prior)
        deadline = None
        if p.milliseconds is not None:
            deadline = time.perf_counter() + p.milliseconds / 1000.0
        limit = p.simulations if deadline is None else 1 << 62
        it = 0
        while it < limit:
            if deadline is not None and it and time.perf_counter() >= deadline:
                break
            it += 1
            run.iterate(it)
        self.iterations = it
        self.last_root = run.root
        return run.root

    def _leaf_rewards(self, sizes: list[int]) -> list[float]:
        """Expected reward of every seat at the depth cap: ``P(seat wins)`` modelled as
        proportional to ``size ** -k`` (a fit on games of the rule agents), as an expected reward
        (:func:`~uno_mk_env.rewards.expected_win_rewards`)."""
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


@register("ismcts", "information-set MCTS (SO-ISMCTS), spec ismcts:N (N iterations per move) "
          "or ismcts:Tms (T ms per move, not reproducible)", example="ismcts:20")
def _make_ismcts(arg: str | None, seed: int | None) -> Agent:
    return ISMCTSAgent(seed, params=parse_spec(arg))
