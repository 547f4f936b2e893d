"""The single-agent Gymnasium wrapper (uno_mk_env.envs.gym_env): conformance, masks, rewards,
SB3."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from scenario import eager_policy as eager
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from uno_mk_env import IllegalActionError, RulesError, actions
from uno_mk_env.agents.base import Agent, RandomAgent
from uno_mk_env.engine.observation import OBS_SIZE, encode
from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv

pytestmark = pytest.mark.filterwarnings("ignore:.*environment not having a spec")


class EagerAgent(Agent):
    name = "eager"

    def act(self, observation, action_mask, view):
        return eager(action_mask, self.rng)


def run_episode(env, rng, seed=None):
    """Plays one episode eagerly; returns (total reward, steps, last info, terminated)."""
    obs, info = env.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        assert env.observation_space.contains(obs)
        mask = env.action_masks()
        np.testing.assert_array_equal(mask, info["action_mask"].astype(bool))
        np.testing.assert_array_equal(mask, env.game.legal_actions())
        assert env.game.current_player == env.seat
        obs, reward, terminated, truncated, info = env.step(eager(mask, rng))
        total += reward
        steps += 1
        if terminated or truncated:
            assert not env.action_masks().any() and not info["action_mask"].any()
            return total, steps, info, terminated


@pytest.mark.parametrize("kwargs", [
    {"num_players": 2},
    {"num_players": 4, "learner_seat": 2, "reward": "points"},
    {"num_players": 3, "opponents": RandomAgent(0), "uno_catch": "next_player"},
    {"num_players": 10, "hand_size": 3, "match": "target_score", "target_score": 100},
])
def test_gymnasium_and_sb3_check_env(kwargs):
    env = UnoMarioKartGymEnv(**kwargs)
    gym_check_env(env)
    sb3_check_env(env, warn=True)
    env_ansi = UnoMarioKartGymEnv(render_mode="ansi", **kwargs)
    gym_check_env(env_ansi)


def test_spaces():
    env = UnoMarioKartGymEnv(num_players=6)
    assert env.observation_space.shape == (OBS_SIZE,)
    assert env.observation_space.dtype == np.float32
    assert env.action_space.n == actions.NUM_ACTIONS


@pytest.mark.parametrize("n", (2, 3, 5))
def test_win_reward_is_the_learners_and_seats_vary(n):
    env = UnoMarioKartGymEnv(num_players=n, opponents=EagerAgent(1), hand_size=3, max_steps=None)
    rng = np.random.default_rng(n)
    seats, outcomes = set(), set()
    for episode in range(20):
        total, _, info, terminated = run_episode(env, rng, seed=episode)
        assert terminated
        seats.add(info["learner_seat"])
        winner = info["winner"]
        expected = 0.0 if winner is None else (1.0 if winner == env.seat else -1.0 / (n - 1))
        assert total == pytest.approx(expected)
        outcomes.add(expected)
    assert len(seats) > 1 and len(outcomes) > 1


def test_points_reward_is_accumulated_over_the_opponents_turns():
    """The round often ends on an opponent's turn: the learner still gets −(its hand)/100."""
    env = UnoMarioKartGymEnv(num_players=4, opponents=EagerAgent(2), reward="points",
                             hand_size=4, max_steps=None)
    rng = np.random.default_rng(0)
    lost = 0
    for episode in range(15):
        total, _, info, _ = run_episode(env, rng, seed=episode)
        g = env.game
        if info["winner"] == env.seat:
            assert total == pytest.approx(g.scores[env.seat] / 100)
        elif info["winner"] is not None:
            assert total == pytest.approx(-g.hand_points(env.seat) / 100)
            lost += total < 0
    assert lost > 0


def test_multi_round_points_sum_over_rounds():
    env = UnoMarioKartGymEnv(num_players=3, opponents=EagerAgent(3), reward="points",
                             hand_size=3, match="target_score", target_score=200, max_steps=None,
                             learner_seat=0)
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=4)
    total, rounds, seen, terminated, truncated = 0.0, [], 0, False, False
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(eager(env.action_masks(), rng))
        total += reward
        g = env.game  # its log keeps the last two rounds: read the new events after each step
        assert seen >= g.events_start, "round ends were dropped from the log before read"
        rounds += [e for e in g.events[seen - g.events_start:] if e[0] == "round_end"]
        seen = g.event_count
    assert terminated and env.game.round > 1 and len(rounds) == env.game.round
    won = sum(e[2] for e in rounds if e[1] == 0) / 100
    assert total <= won + 1e-9  # points won minus the hands left when others won
    if all(e[1] == 0 for e in rounds):
        assert total == pytest.approx(won)


def test_illegal_action_terminates_with_the_penalty():
    env = UnoMarioKartGymEnv(num_players=3, illegal_action_penalty=-2.5)
    obs, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (-2.5, True, False)
    assert info["illegal_action"] is True
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset()
    with pytest.raises(ValueError, match="out of the action space"):
        env.step(99)
    with pytest.raises(TypeError):
        env.step("DRAW")


@pytest.mark.parametrize("bad", [True, False, np.True_, np.array(True), 1.0, "DRAW", None],
                         ids=repr)
def test_a_non_integer_action_is_a_type_error_that_changes_nothing(bad):
    """A bool is not action 1 (PLAY(R1)): the same TypeError as in the AEC envs."""
    env = UnoMarioKartGymEnv(num_players=2)
    obs, info = env.reset(seed=0)
    before = env.game.to_dict()
    with pytest.raises(TypeError, match="action must be an int action id 0-72") as error:
        env.step(bad)
    assert repr(bad) in str(error.value)
    assert env.game.to_dict() == before
    legal = int(np.flatnonzero(info["action_mask"])[0])
    env.step(np.int64(legal))  # still usable; numpy integers are ids
    with pytest.raises(ValueError, match=r"action 73 is out of the action space Discrete\(73\)"):
        env.step(np.int64(73))


def test_max_steps_truncates():
    env = UnoMarioKartGymEnv(num_players=4, max_steps=30)
    rng = np.random.default_rng(0)
    _, steps, _, terminated = run_episode(env, rng, seed=1)
    assert not terminated or env.game.game_over
    assert steps <= 30


def test_same_seed_same_episode():
    def episode(seed):
        env = UnoMarioKartGymEnv(num_players=3, opponents=[RandomAgent(5), None])
        rng = np.random.default_rng(0)
        obs, info = env.reset(seed=seed)
        out = [obs]
        for _ in range(40):
            obs, r, term, trunc, info = env.step(eager(info["action_mask"], rng))
            out.append(obs)
            if term or trunc:
                break
        return np.array(out)

    np.testing.assert_array_equal(episode(3), episode(3))
    assert not np.array_equal(episode(3), episode(4))


def test_opponents_as_agents_and_callables():
    seen = {"agent": 0, "callable": 0}

    class ViewOnly(Agent):
        needs_observation = False

        def act(self, observation, action_mask, view):
            assert observation is None and view.is_decider
            np.testing.assert_array_equal(action_mask, np.isin(np.arange(73), view.legal_actions))
            seen["agent"] += 1
            return int(view.legal_actions[0])

    def policy(observation, action_mask):
        assert observation.shape == (OBS_SIZE,) and action_mask.dtype == np.int8
        seen["callable"] += 1
        return int(np.flatnonzero(action_mask)[-1])

    env = UnoMarioKartGymEnv(num_players=3, opponents=[ViewOnly(), policy], learner_seat=1)
    run_episode(env, np.random.default_rng(0), seed=0)
    assert seen["agent"] > 0 and seen["callable"] > 0
    with pytest.raises(ValueError, match="num_players - 1"):
        UnoMarioKartGymEnv(num_players=4, opponents=[policy])
    with pytest.raises(TypeError):
        UnoMarioKartGymEnv(num_players=3, opponents=[policy, 42])


def test_opponents_observation_is_their_own():
    def policy(observation, action_mask):
        g = env.game
        np.testing.assert_array_equal(observation, encode(g.view(g.current_player)))
        return int(np.flatnonzero(action_mask)[0])

    env = UnoMarioKartGymEnv(num_players=3, opponents=policy, learner_seat=0, max_steps=60)
    run_episode(env, np.random.default_rng(0), seed=2)


def test_an_illegal_opponent_is_a_bug_that_is_reported():
    env = UnoMarioKartGymEnv(num_players=2, opponents=lambda obs, mask: 72, learner_seat=1)
    with pytest.raises(IllegalActionError, match="opponent"):
        for seed in range(5):
            run_episode(env, np.random.default_rng(0), seed=seed)


def test_arguments_are_validated():
    with pytest.raises(RulesError, match="colours"):
        UnoMarioKartGymEnv(colours=3)
    with pytest.raises(ValueError, match="learner_seat"):
        UnoMarioKartGymEnv(num_players=2, learner_seat=2)
    with pytest.raises(ValueError, match="reward"):
        UnoMarioKartGymEnv(reward="winner")
    with pytest.raises(ValueError, match="^illegal_action_penalty must be a finite number"):
        UnoMarioKartGymEnv(illegal_action_penalty=float("nan"))


def test_render_is_the_learners_view():
    env = UnoMarioKartGymEnv(num_players=3, render_mode="ansi", learner_seat=2)
    env.reset(seed=0)
    text = env.render()
    assert "player_2 (you)" in text and "Your hand (player_2" in text


def test_maskable_ppo_smoke(tmp_path, monkeypatch):
    """A few thousand MaskablePPO steps on the wrapper complete without error."""
    import torch
    from sb3_contrib import MaskablePPO

    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))  # else SB3 makes /tmp/SB3-<time> per model
    torch.set_num_threads(1)
    env = UnoMarioKartGymEnv(num_players=2, opponents=EagerAgent(0))
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, n_epochs=2, seed=0,
                        policy_kwargs={"net_arch": [64, 64]}, device="cpu", verbose=0)
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    obs, info = env.reset(seed=1)
    for _ in range(50):
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        assert info["action_mask"][int(action)]
        obs, _, term, trunc, info = env.step(action)
        if term or trunc:
            obs, info = env.reset()


@pytest.mark.slow
def test_maskable_ppo_longer_run_beats_random(tmp_path, monkeypatch):
    """50k steps of MaskablePPO against a random opponent (2 players, win reward)."""
    import torch
    from sb3_contrib import MaskablePPO

    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))
    torch.set_num_threads(1)
    env = UnoMarioKartGymEnv(num_players=2, opponents=RandomAgent(0))
    model = MaskablePPO("MlpPolicy", env, n_steps=1024, batch_size=256, seed=0, device="cpu")
    model.learn(total_timesteps=50_000)
    wins = games = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(60):
            obs, info = env.reset(seed=1000 + seed)
            while True:
                action, _ = model.predict(obs, action_masks=env.action_masks())
                obs, reward, term, trunc, info = env.step(action)
                if term or trunc:
                    break
            games += term
            wins += term and reward > 0
    assert games > 0 and wins / games > 0.5
