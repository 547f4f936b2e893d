"""The batched vector env (uno_mk_env.vector) against its oracle: N single Gymnasium wrapper envs
in gymnasium's own SyncVectorEnv (SAME_STEP autoreset), seeded ``seed + i`` and stepped with the
same actions, must give exactly the same trajectories (observations, masks, rewards, episode
ends, final observations and outcomes, episode statistics) at 2, 3 and 4 players, with random,
rule-based, callable, shipped-policy and self-play-pool opponents, both reward modes, across
many automatic resets."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from uno_mk_env import actions as A
from uno_mk_env.agents.base import build_agent
from uno_mk_env.agents.ppo import PPOAgent
from uno_mk_env.gym_env import UnoMarioKartGymEnv
from uno_mk_env.seeding import derive_seed
from uno_mk_env.vector import SelfPlayVectorEnv, UnoMarioKartVectorEnv, place_of

POLICY = "models/ppo_2p.npz"


def first_legal(observation: np.ndarray, mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def rule_based(i: int) -> list[Any]:
    return [build_agent(spec, seed=derive_seed(7, i, s))
            for s, spec in enumerate(["strategic", "greedy", "random"])]


def shipped_policy(i: int) -> Any:
    agent = PPOAgent(POLICY, seed=derive_seed(8, i), deterministic=i % 2 == 0)
    return agent


_SNAPSHOT = None


def league_pools(i: int, n: int = 4) -> list[Any]:
    """Self-play pools whose snapshots share one network object across tables (batched), each
    table with its own copies (own random streams), as the fast trainer builds them."""
    from uno_mk_env.training.vector_envs import BatchedOpponentPool

    global _SNAPSHOT
    if _SNAPSHOT is None:
        _SNAPSHOT = PPOAgent(POLICY, seed=1, deterministic=False)
    league = [copy.copy(_SNAPSHOT)]
    return [BatchedOpponentPool(["strategic", "random"], [0.5, 0.5], 0.6, league,
                                derive_seed(9, i, s)) for s in range(n - 1)]


def oracle(num_envs: int, num_players: int, opponents: Callable[[int], Any] | None,
           **kwargs: Any) -> SyncVectorEnv:
    def thunk(i: int) -> Callable[[], UnoMarioKartGymEnv]:
        return lambda: UnoMarioKartGymEnv(
            num_players, opponents=None if opponents is None else opponents(i), **kwargs)

    return SyncVectorEnv([thunk(i) for i in range(num_envs)],
                         autoreset_mode=AutoresetMode.SAME_STEP)


def assert_same_trajectories(num_envs: int, num_players: int, opponents: Any, steps: int,
                             seed: int, illegal_every: int = 0, **kwargs: Any) -> int:
    """Steps both envs with the same actions; returns the number of episodes that ended."""
    venv = UnoMarioKartVectorEnv(num_envs, num_players, opponents=opponents, **kwargs)
    ref = oracle(num_envs, num_players, opponents, **kwargs)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = venv.reset(seed=seed)
    ref_obs, ref_info = ref.reset(seed=seed)
    rng = np.random.default_rng(seed)
    returns = np.zeros(num_envs)
    lengths = np.zeros(num_envs, np.int64)
    ended = 0
    for step in range(steps):
        np.testing.assert_array_equal(obs, ref_obs)
        np.testing.assert_array_equal(info["action_mask"], ref_info["action_mask"])
        np.testing.assert_array_equal(info["learner_seat"], ref_info["learner_seat"])
        masks = venv.action_masks()
        np.testing.assert_array_equal(masks, ref_info["action_mask"].astype(bool))
        # mostly the lowest legal id (a play when there is one: games end sooner), else random
        actions = np.array([np.flatnonzero(m)[0] if rng.random() < 0.8
                            else rng.choice(np.flatnonzero(m)) for m in masks])
        if illegal_every and step % illegal_every == illegal_every - 1:
            illegal = np.flatnonzero(~masks[0])
            actions[0] = illegal[0]
        obs, rewards, terms, truncs, info = venv.step(actions)
        ref_obs, ref_rewards, ref_terms, ref_truncs, ref_info = ref.step(actions)
        np.testing.assert_array_equal(rewards, ref_rewards)
        np.testing.assert_array_equal(terms, ref_terms)
        np.testing.assert_array_equal(truncs, ref_truncs)
        returns += ref_rewards
        lengths += 1
        done = terms | truncs
        if not done.any():
            assert "final_obs" not in info and "final_obs" not in ref_info
            continue
        np.testing.assert_array_equal(info["_final_obs"], ref_info["_final_obs"])
        np.testing.assert_array_equal(info["_episode"], done)
        final, ref_final = info["final_info"], ref_info["final_info"]
        for i in np.flatnonzero(done):
            ended += 1
            np.testing.assert_array_equal(info["final_obs"][i], ref_info["final_obs"][i])
            won = ref_final.get("_winner", np.zeros(num_envs, bool))[i]
            assert final["winner"][i] == (ref_final["winner"][i] if won else -1)
            if won:
                assert list(final["scores"][i]) == list(ref_final["scores"][i])
            assert final["learner_seat"][i] == ref_final["learner_seat"][i]
            illegal = bool(ref_final.get("_illegal_action", np.zeros(num_envs, bool))[i])
            assert final["illegal_action"][i] == illegal
            assert info["episode"]["r"][i] == pytest.approx(returns[i], abs=1e-12)
            assert info["episode"]["l"][i] == lengths[i]
            assert 1 <= info["episode"]["place"][i] <= num_players
            if won and final["winner"][i] == final["learner_seat"][i]:
                assert info["episode"]["place"][i] == 1
            returns[i] = 0.0
            lengths[i] = 0
    return ended


@pytest.mark.parametrize("num_players,opponents,reward,extra", [
    (2, None, "win", {"hand_size": 4, "max_steps": 150}),
    (3, None, "points", {"match": "target_score", "target_score": 60}),
    (4, rule_based, "win", {}),
    (2, lambda i: first_legal, "points", {"max_steps": 40}),
    (3, lambda i: [first_legal, build_agent("greedy", seed=i)], "win", {"learner_seat": 1}),
], ids=["2p-random", "3p-random-points", "4p-rule-based", "2p-callable-truncated",
        "3p-mixed-fixed-seat"])
def test_same_trajectories_as_single_envs(num_players: int, opponents: Any, reward: str,
                                          extra: dict[str, Any]) -> None:
    ended = assert_same_trajectories(5, num_players, opponents, 600, seed=11, reward=reward,
                                     illegal_every=97, **extra)
    assert ended >= 10  # several automatic resets were compared


def test_batched_policies_match_single_envs() -> None:
    """Shipped .npz agents (deterministic and sampling) and self-play pools: their decisions
    are batched over the tables, and still every table is its single env."""
    assert assert_same_trajectories(6, 2, shipped_policy, 150, seed=3) >= 5
    assert assert_same_trajectories(4, 4, league_pools, 120, seed=5, reward="points") >= 3


def test_batched_forward_pass_is_shared() -> None:
    """Every table waiting on one network is decided in one forward pass."""
    calls: list[int] = []

    class Net:
        def logits(self, observations: np.ndarray) -> np.ndarray:
            calls.append(len(observations))
            return np.zeros((len(observations), A.NUM_ACTIONS), np.float32)

    net = Net()

    class Batched:
        needs_observation = True

        def batched_policy(self) -> Net:
            return net

        def choose(self, logits: np.ndarray, action_mask: np.ndarray) -> int:
            return int(np.flatnonzero(action_mask)[0])

        def act(self, observation: Any, action_mask: np.ndarray, view: Any) -> int:
            raise AssertionError("a batched agent is not asked one by one")

    venv = UnoMarioKartVectorEnv(8, 2, opponents=lambda i: Batched(), learner_seat=1)
    venv.reset(seed=0)
    assert calls and calls[0] > 1  # the tables where the opponent decides first, together
    for _ in range(20):
        venv.step(np.array([np.flatnonzero(m)[0] for m in venv.action_masks()]))
    assert max(calls) > 1 and sum(calls) > len(calls)


def test_same_seed_same_run_and_bad_input() -> None:
    runs = []
    for _ in range(2):
        venv = UnoMarioKartVectorEnv(3, 4, opponents=rule_based, reward="points")
        obs, _ = venv.reset(seed=42)
        trace = [obs]
        for _ in range(60):
            actions = np.array([np.flatnonzero(m)[-1] for m in venv.action_masks()])
            obs, rewards, *_ = venv.step(actions)
            trace += [obs, rewards]
        runs.append(trace)
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
    venv = UnoMarioKartVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros(2, np.int64))
    venv.reset(seed=1)
    before = venv.games()[0].to_dict()
    with pytest.raises(TypeError, match=r"shape \(2,\)"):
        venv.step(np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="integer"):
        venv.step(np.zeros(2))
    with pytest.raises(ValueError, match="0-72"):
        venv.step(np.array([0, 73]))
    assert venv.games()[0].to_dict() == before
    with pytest.raises(ValueError, match="num_envs"):
        UnoMarioKartVectorEnv(0)
    with pytest.raises(ValueError, match="reward"):
        UnoMarioKartVectorEnv(2, reward="score")


def test_is_a_gymnasium_vector_env() -> None:
    venv = UnoMarioKartVectorEnv(4, 3)
    assert isinstance(venv, gymnasium.vector.VectorEnv)
    obs, _ = venv.reset(seed=0)
    assert venv.observation_space.contains(obs)
    assert venv.single_action_space == gymnasium.spaces.Discrete(A.NUM_ACTIONS)


def test_place_is_the_tournament_ranking() -> None:
    from uno_mk_env.evaluation.tournament import places

    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(2, 6))
        winner = None if rng.random() < 0.2 else int(rng.integers(n))
        scores = rng.integers(0, 3, n).tolist()
        hand = rng.integers(0, 4, n).tolist()
        expected = places(winner, scores, hand)
        assert [place_of(s, winner, scores, hand) for s in range(n)] == expected


def test_self_play_env_is_the_aec_env() -> None:
    """Table for table, the self-play env plays the AEC env's games (``raw_env`` reset with
    ``seed + i``, then without a seed after each game): the decider, its observation and
    mask, every seat's reward, the episode ends (truncation included)."""
    from uno_mk_env.env import raw_env

    num_envs, n = 3, 3
    venv = SelfPlayVectorEnv(num_envs, n, reward="points", max_steps=150, hand_size=4)
    obs, info = venv.reset(seed=4)
    envs = [raw_env(num_players=n, reward="points", max_steps=150, hand_size=4)
            for _ in range(num_envs)]
    for i, env in enumerate(envs):
        env.reset(seed=4 + i)
    rng = np.random.default_rng(1)
    ends = {"terminated": 0, "truncated": 0}
    for _ in range(900):
        masks = venv.action_masks()
        for i, env in enumerate(envs):
            agent = env.agent_selection
            assert info["seat"][i] == env.seat(agent)
            seen = env.observe(agent)
            np.testing.assert_array_equal(obs[i], seen["observation"])
            np.testing.assert_array_equal(masks[i], seen["action_mask"].astype(bool))
        actions = np.array([np.flatnonzero(m)[0] if rng.random() < 0.8
                            else rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, terms, truncs, info = venv.step(actions)
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            np.testing.assert_allclose(rewards[i], [env.rewards[a] for a in env.possible_agents])
            assert terms[i] == all(env.terminations.values())
            assert truncs[i] == all(env.truncations.values())
            if terms[i] or truncs[i]:
                ends["terminated" if terms[i] else "truncated"] += 1
                env.reset()
    assert ends["terminated"] >= 2 and ends["truncated"] >= 2
