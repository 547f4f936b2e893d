"""The training env: tables (player count, rules preset) drawn per episode and seeded, the same
observation at every table, and the ``place`` reward."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from uno_mk_env.engine.observation import OBS_SIZE  # noqa: E402
from uno_mk_env.evaluation.tournament import places  # noqa: E402
from uno_mk_env.training.args import TrainingError  # noqa: E402
from uno_mk_env.training.envs import Tables, make_training_env  # noqa: E402
from uno_mk_env.training.train_ppo import Args, check_args  # noqa: E402


def _args(**changes) -> Args:
    return Args(**{"opponents": "greedy", "opponent_weights": "", **changes})


def _play(env, episodes: int, seed: int) -> list[tuple[int, dict, list[float]]]:
    """(player count, rules, rewards) of each episode, the learner playing its first legal
    action."""
    out = []
    env.reset(seed=seed)
    for _ in range(episodes):
        rewards, done = [], False
        table = (env.game.rules.num_players, env.game.rules.to_dict())
        while not done:
            action = int(np.flatnonzero(env.action_masks())[0])
            obs, reward, terminated, truncated, _ = env.step(action)
            assert obs.shape == (OBS_SIZE,)
            rewards.append(reward)
            done = terminated or truncated
        out.append((*table, rewards))
        env.reset()
    return out


def test_tables_are_drawn_per_episode_by_weight_and_seeded():
    args = _args(table_sizes="2:3,4,6", rule_presets="default,strict:2")
    runs = [_play(make_training_env(Tables.of(args), rank=0), 30, seed=7) for _ in range(2)]
    assert runs[0] == runs[1]
    sizes = {n for n, _, _ in runs[0]}
    assert sizes == {2, 4, 6}
    strict = [rules["w4_strict"] for _, rules, _ in runs[0]]
    assert any(strict) and not all(strict)
    other = _play(make_training_env(Tables.of(args), rank=1), 30, seed=8)
    assert [n for n, _, _ in other] != [n for n, _, _ in runs[0]]


def _play_episode(env, learner) -> tuple[list[float], bool]:
    """Plays the current episode to its end with ``learner``: the learner's reward at every step
    and whether the game ended (not truncated)."""
    from uno_mk_env.agents.base import agent_action

    rewards = []
    while True:
        _, got, terminated, truncated, _ = env.step(agent_action(learner, env.game))
        rewards.append(got)
        if terminated or truncated:
            return rewards, terminated


@pytest.mark.parametrize("kind", ["place", "win_place"])
@pytest.mark.parametrize("n", [2, 4])
def test_place_reward_ranks_the_learner_at_the_end(n, kind):
    from uno_mk_env.agents import make_agent
    from uno_mk_env.engine.rewards import win_reward

    env = make_training_env(
        Tables.of(_args(num_players=n, reward=kind, opponents="greedy,random")), rank=0)
    learner = make_agent("greedy", seed=0)
    env.reset(seed=3)
    seen = set()
    for _ in range(30):
        rewards, terminated = _play_episode(env, learner)
        assert rewards[:-1] == [0.0] * (len(rewards) - 1)
        got = rewards[-1]
        game = env.game
        place = places(game.winner, game.scores, [game.hand_points(s) for s in range(n)])
        by_place = 1 - 2 * (place[env.seat] - 1) / (n - 1)
        if kind == "win_place":
            by_place = (by_place + win_reward(n, game.winner, env.seat)) / 2
        assert got == pytest.approx(by_place if terminated else 0.0)
        seen.add(round(got, 3))
        env.reset()
    if kind == "place":
        assert seen <= {round(1 - 2 * k / (n - 1), 3) for k in range(n)} | {0.0}
    if kind == "win_place" and n == 4:
        assert seen <= {1.0, 0.0, -0.333, -0.667}
    assert len(seen) >= 2


@pytest.mark.parametrize("weight, paid", [
    (0.25, {1.0, -0.167, -0.333, -0.5}), (0.0, {1.0, -0.333}), (1.0, {1.0, 0.333, -0.333, -1.0}),
])
def test_place_weight_blends_win_and_place(weight, paid):
    """--place-weight w pays (1 - w) x win + w x place: at four players each place gets its own
    reward, w = 0 is the win reward and w = 1 the place reward."""
    from uno_mk_env.agents import make_agent

    env = make_training_env(Tables.of(_args(num_players=4, reward="win_place",
                                            place_weight=weight, opponents="greedy")), rank=0)
    learner = make_agent("greedy", seed=0)
    env.reset(seed=5)
    seen = set()
    for _ in range(60):
        rewards, terminated = _play_episode(env, learner)
        if terminated:
            seen.add(round(rewards[-1], 3))
        env.reset()
    assert seen == paid


@pytest.mark.parametrize("bad, message", [
    (dict(table_sizes="2,11"), "--table-sizes '2,11': 11 is not one of"),
    (dict(rule_presets="default,nope"), "'nope' is not one of"),
    (dict(table_sizes="2:x"), "cannot read '2:x'"),
    (dict(reward="rank"), "--reward 'rank': must be one of win, points, place, win_place"),
    (dict(eval_players="1"), "--eval-players '1': must be comma-separated table sizes, each 2-10"),
    (dict(final_eval_games=-1), "--final-eval-games -1: must be an integer from 0 to"),
    (dict(eval_games=-3), "--eval-games -3: must be an integer from 1 to"),
    (dict(bc_steps=-1), "--bc-steps -1: must be an integer from 0 to"),
    (dict(eval_every=-1), "--eval-every -1: must be an integer from 0 to"),
    (dict(max_minutes=-5.0), "--max-minutes -5.0: must be a number from 0 to"),
    (dict(self_play_prob=1.5), "--self-play-prob 1.5: must be a number from 0 to 1"),
    (dict(reward="win_place", place_weight=1.5),
     "--place-weight 1.5: must be a number from 0 to 1"),
    (dict(place_weight=0.25), "--place-weight 0.25: only --reward win_place uses it"),
    (dict(gamma=float("nan")), "--gamma nan: must be a number from 0 to 1"),
    (dict(learning_rate=0.0), "--learning-rate 0.0: must be a finite number > 0"),
    (dict(clip_range=-0.2), "--clip-range -0.2: must be a finite number > 0"),
    (dict(opponents="greedy,nosuchagent"), "--opponents: agent 'nosuchagent': unknown agent"),
    (dict(eval_opponents="ismcts:zz"), "--eval-opponents: agent 'ismcts:zz': "),
    (dict(bc_teacher="ppo:no/such/model.npz"), "--bc-teacher: agent 'ppo:no/such/model.npz': "),
])
def test_bad_arguments_are_one_line_errors(bad, message):
    """Each is refused by check_args, before anything is created: a zero final evaluation, say,
    used to be accepted and crash after the whole training had run."""
    with pytest.raises(TrainingError, match=re.escape(message)) as info:
        check_args(_args(**bad))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("bad", [dict(final_eval_games=-1), dict(eval_opponents="nosuchagent")])
def test_a_refused_run_creates_nothing(tmp_path, bad):
    from uno_mk_env.training.train_ppo import train

    with pytest.raises(TrainingError):
        train(_args(runs_dir=str(tmp_path / "runs"), **bad))
    assert not (tmp_path / "runs").exists()


def test_the_final_evaluation_follows_the_budget_unless_given():
    """``--final-eval-games 0`` (the default): one game per 250 training steps, 100-4000 per
    opponent, so a 4,096-step smoke run plays 100 games per opponent, not 4,000."""
    from uno_mk_env.training.args import final_eval_games
    from uno_mk_env.training.train_ppo import Args

    assert Args().final_eval_games == 0
    sizes = {steps: final_eval_games(Args(total_timesteps=steps)) for steps in
             (4096, 100_000, 1_000_000, 50_000_000)}
    assert sizes == {4096: 100, 100_000: 400, 1_000_000: 4000, 50_000_000: 4000}
    assert final_eval_games(Args(total_timesteps=4096, final_eval_games=7)) == 7


def test_the_place_rewards_live_in_rewards_and_training_uses_them():
    """The place reward's formula is in :mod:`uno_mk_env.engine.rewards`, next to ``places``;
    training's env (below evaluation in the layers) no longer imports the tournaments."""
    import ast
    import inspect

    from uno_mk_env.engine import rewards
    from uno_mk_env.training import envs

    assert [rewards.place_reward(4, p) for p in (1, 2, 3, 4)] == pytest.approx(
        [1, 1 / 3, -1 / 3, -1])
    assert rewards.place_reward(2, 2) == rewards.win_reward(2, 0, 1) == -1
    assert [rewards.win_place_reward(4, 0, s, s + 1, 0.5) for s in range(4)] == pytest.approx(
        [1, 0, -1 / 3, -2 / 3])
    imported = {node.module for node in ast.walk(ast.parse(inspect.getsource(envs)))
                if isinstance(node, ast.ImportFrom)}
    assert "uno_mk_env.evaluation.tournament" not in imported
