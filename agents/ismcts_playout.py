"""The search's default policy and cut-off model: :func:`rollout_action`, a fast, slightly
randomised ``greedy``-like player that reads a sampled game's internals (the searcher's own
determinization), and :func:`logit_rewards`, the conditional-logit estimate of who wins a
simulation cut off at ``max_depth`` (weights :data:`LOGIT_WEIGHTS`, fitted by
:func:`fit_leaf_weights` on ``strategic`` self-play)."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import numpy as np

from uno_mk_env import Game, Rules
from uno_mk_env import actions as A
from uno_mk_env.engine.cards import COLOUR_OF, SKIP, W4, WB
from uno_mk_env.engine.legality import held_mask, w4_is_legal
from uno_mk_env.engine.phases import Phase
from uno_mk_env.engine.rewards import expected_win_rewards

from .rule_based import StrategicAgent

__all__ = ["LOGIT_WEIGHTS", "fit_leaf_weights", "leaf_features", "logit_rewards", "rollout_action"]


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


#: Weights of :func:`logit_rewards` by table size (2, or more), in the order of
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


def logit_rewards(g: Game) -> list[float]:
    """Expected reward of every seat of a cut-off simulation: ``P(seat s wins) ∝ exp(w · f_s)``
    (:data:`LOGIT_WEIGHTS`, :func:`leaf_features`), as an expected reward
    (:func:`~uno_mk_env.engine.rewards.expected_win_rewards`)."""
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
        # Not uno_mk_env.engine.seeding.derive_seed: LOGIT_WEIGHTS were fitted on these game seeds
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
