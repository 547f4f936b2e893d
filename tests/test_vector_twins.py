"""Hidden twins (docs/api.md#rewards-and-episodes): two worlds that differ only in cards the
learner cannot see give it the same observations, masks, rewards and infos over whole episodes,
truncation included, in the Gymnasium wrapper env and in the vector env.

The twin of a table swaps a few cards of every opponent's hand with cards from the bottom of
the draw pile (so the hidden hand points differ, the hand sizes do not). The opponents draw and
keep whatever they hold (a decision that does not depend on their hands), so both worlds stay
twins for the whole episode: every card that reaches an opponent stays hidden, and the learner
never draws as deep as the swapped cards (checked). At a game's end the only difference allowed
is the end-of-game scoring the rules show every seat (R10.2): the winner's score counts the
points left in every hand (the final scores, the scores in the last observation, the points
reward).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from uno_mk_env import actions as A
from uno_mk_env.engine.game import Game
from uno_mk_env.engine.observation import OBS_SLICES
from uno_mk_env.engine.rewards import places
from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv
from uno_mk_env.envs.vector import STATS_KEY, UnoMarioKartVectorEnv


def passive(observation: np.ndarray, mask: np.ndarray) -> int:
    """Draws, keeps, accepts: a decision that depends on no card of its own hand."""
    for action in (A.DRAW, A.KEEP, A.ACCEPT):
        if mask[action]:
            return action
    return int(np.flatnonzero(mask)[0])


#: Cards of each opponent's hand swapped with the bottom of the draw pile.
SWAPPED = 3
#: The hand size of the truncated (``False``) and the whole (``True``) episodes: small hands
#: for whole games, which then end before the opponents, who draw every turn, empty the pile.
HAND = {False: 7, True: 3}
#: How often the learner plays a random legal action in those episodes (whole games: rarely,
#: since each voluntary draw makes them longer).
EXPLORE = {False: 0.2, True: 0.05}
#: When the draw pile comes within this many cards of the swapped ones, the learner ends the
#: episode with an illegal action (the same in both worlds), before one step could draw them.
MARGIN = 12


def twin(game: Game, learner: int) -> tuple[Game, int]:
    """``game`` with :data:`SWAPPED` cards of every opponent's hand swapped with cards from the
    bottom of the draw pile; returns it and how many bottom cards were swapped."""
    d = game.to_dict()
    pile = d["draw_pile"]  # top first
    depth = 0
    for seat, hand in enumerate(d["hands"]):
        if seat == learner:
            continue
        k = min(len(hand), SWAPPED)
        bottom = pile[len(pile) - depth - k: len(pile) - depth]
        pile[len(pile) - depth - k: len(pile) - depth] = hand[:k]
        d["hands"][seat] = bottom + hand[k:]
        depth += k
    other = Game.from_dict(d)
    assert other.view(learner) == game.view(learner)
    return other, depth


def learner_action(rng: np.random.Generator, mask: np.ndarray, illegal: float,
                   explore: float) -> int:
    """UNO when it may be called, else mostly the lowest legal id (plays end games sooner),
    with probability ``explore`` a random legal one, and with probability ``illegal`` an
    illegal one (the episode ends on it)."""
    if rng.random() < illegal:
        return int(np.flatnonzero(~mask)[0])
    if mask[A.CALL_UNO]:  # else every last card costs two more (R8)
        return A.CALL_UNO
    legal = np.flatnonzero(mask)
    return int(legal[0] if rng.random() >= explore else rng.choice(legal))


def assert_same(a: Any, b: Any, path: str = "") -> None:
    if isinstance(a, tuple | list) and not np.isscalar(a):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for key in a:
            assert_same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    else:
        np.testing.assert_array_equal(a, b, err_msg=path)


def hide_scoring(observation: np.ndarray) -> np.ndarray:
    """A game's last observation without the scores, which count every hand (R10.2)."""
    out = observation.copy()
    out[OBS_SLICES["scores"]] = 0.0
    return out


# ------------------------------------------------------------------ the Gymnasium wrapper env
@pytest.mark.parametrize(("num_players", "max_steps", "reward"), [
    (2, 6, "points"), (4, 6, "win"), (3, 9, "points"), (2, None, "points"), (3, None, "win"),
], ids=["2p-truncated", "4p-truncated", "3p-truncated", "2p-whole", "3p-whole"])
def test_gym_env_twins_are_the_same_to_the_learner(num_players: int, max_steps: int | None,
                                                    reward: str) -> None:
    ended = {"terminated": 0, "truncated": 0}
    for episode in range(12):
        envs = [UnoMarioKartGymEnv(num_players, opponents=passive, reward=reward,
                                   max_steps=max_steps, hand_size=HAND[max_steps is None])
                for _ in range(2)]
        outs = [env.reset(seed=episode) for env in envs]
        envs[1]._game, depth = twin(envs[0].game, envs[0].seat)
        assert envs[0].game.to_dict()["hands"] != envs[1].game.to_dict()["hands"]
        rngs = [np.random.default_rng(episode) for _ in envs]
        while True:
            assert_same(outs[0], outs[1])
            assert len(envs[0].game.draw_pile) > depth  # the swapped cards were never drawn
            masks = [env.action_masks() for env in envs]
            np.testing.assert_array_equal(masks[0], masks[1])
            actions = [learner_action(rng, masks[0], 0.02, EXPLORE[max_steps is None])
                       for rng in rngs]
            if len(envs[0].game.draw_pile) <= depth + MARGIN:
                actions = [int(np.flatnonzero(~masks[0])[0])] * 2
            outs = [env.step(a) for env, a in zip(envs, actions)]
            _, _, terminated, truncated, _ = outs[0]
            if not (terminated or truncated):
                continue
            if envs[0].game.game_over:  # the end-of-game scoring shows the hands (R10.2)
                for j, env in enumerate(envs):
                    obs, reward_, term, trunc, info = outs[j]
                    assert info.pop("scores") == list(env.game.scores)
                    # the winner's +points/100 counts them too
                    outs[j] = (hide_scoring(obs), 0.0 if reward == "points" else reward_,
                               term, trunc, info)
            assert_same(outs[0], outs[1])
            ended["terminated" if terminated else "truncated"] += 1
            break
    if max_steps is None:
        assert ended["terminated"] >= 9
    else:
        assert ended["truncated"] >= 8


# ------------------------------------------------------------------ the vector env
def _twin_tables(worlds: list[UnoMarioKartVectorEnv], indices: list[int]) -> list[int]:
    depths = []
    for i in indices:
        a, b = worlds[0].tables[i], worlds[1].tables[i]
        b._game, depth = twin(a.game, a.seat)
        depths.append(depth)
    return depths


@pytest.mark.parametrize("mode", [AutoresetMode.DISABLED, AutoresetMode.NEXT_STEP,
                                  AutoresetMode.SAME_STEP])
@pytest.mark.parametrize(("num_players", "max_steps"), [(2, 6), (4, 6), (3, None)],
                         ids=["2p-truncated", "4p-truncated", "3p-whole"])
def test_vector_env_twins_are_the_same_to_the_learner(mode: AutoresetMode, num_players: int,
                                                       max_steps: int | None) -> None:
    """Every episode of every table has a twin under ``DISABLED`` (each deal is twinned after
    its reset); under the other modes the first episode of each table is (the later deals are
    the same in both worlds). Observations, masks, rewards, ends and every info agree, the
    episode statistics (``place`` included) at truncation too; at a game's end only the final
    scores may differ, and they are the rules' end-of-game scoring."""
    n = 6
    disabled = mode == AutoresetMode.DISABLED
    worlds = [UnoMarioKartVectorEnv(n, num_players, opponents=lambda i: passive,
                                    max_steps=max_steps, autoreset_mode=mode,
                                    hand_size=HAND[max_steps is None])
              for _ in range(2)]
    outs: list[tuple[Any, ...]] = [venv.reset(seed=3) for venv in worlds]
    depth = np.array(_twin_tables(worlds, list(range(n))))
    twinned = np.ones(n, bool)
    rngs = [np.random.default_rng(5) for _ in worlds]
    leaky_places = ended = 0
    for _ in range(300):
        assert_same(outs[0], outs[1])
        for t, d, on in zip(worlds[0].tables, depth, twinned):
            assert not on or len(t.game.draw_pile) > d  # the swapped cards were never drawn
        masks = [venv.action_masks() for venv in worlds]
        np.testing.assert_array_equal(masks[0], masks[1])
        explore = EXPLORE[max_steps is None]
        actions = [np.array([learner_action(rng, m, 0.02, explore) if m.any() else 0
                             for m in masks[0]]) for rng in rngs]
        for i, t in enumerate(worlds[0].tables):  # see MARGIN
            if twinned[i] and masks[0][i].any() and len(t.game.draw_pile) <= depth[i] + MARGIN:
                for a in actions:
                    a[i] = np.flatnonzero(~masks[0][i])[0]
        outs = [venv.step(a) for venv, a in zip(worlds, actions)]
        done = outs[0][2] | outs[0][3]
        if not done.any():
            continue
        infos = [out[4] for out in outs]
        assert all(info[f"_{STATS_KEY}"].tolist() == done.tolist() for info in infos)
        outcomes = infos if mode != AutoresetMode.SAME_STEP else [
            info["final_info"] for info in infos]
        for i in np.flatnonzero(done):
            ended += 1
            twinned[i] = disabled
            if outcomes[0]["winner"][i] >= 0:  # a finished game: its scoring is public
                for j, (outcome, venv) in enumerate(zip(outcomes, worlds)):
                    if mode != AutoresetMode.SAME_STEP:
                        assert outcome["scores"][i].tolist() == venv.games()[i].scores
                        outs[j][0][i] = hide_scoring(outs[j][0][i])
                    else:
                        infos[j]["final_obs"][i] = hide_scoring(infos[j]["final_obs"][i])
                    outcome["scores"][i] = 0
            elif outs[0][3][i] and mode != AutoresetMode.SAME_STEP:
                # truncated: would places by the hidden hand points have differed?
                seat = int(infos[0]["learner_seat"][i])
                by_points = [places(None, [0] * num_players,
                                    [g.hand_points(s) for s in range(num_players)])[seat]
                             for g in (venv.games()[i] for venv in worlds)]
                leaky_places += by_points[0] != by_points[1]
        assert_same(outs[0], outs[1])
        if disabled:
            outs = [venv.reset(options={"reset_mask": done.copy()}) for venv in worlds]
            depth[done] = _twin_tables(worlds, np.flatnonzero(done).tolist())
    assert ended >= 2 * n
    if num_players > 2 and max_steps is not None and mode != AutoresetMode.SAME_STEP:
        assert leaky_places > 0  # a place from the hidden hand points would have leaked
