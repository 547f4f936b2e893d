"""The batched vector env (uno_mk_env.envs.vector) against its oracle: N single Gymnasium wrapper
envs
in gymnasium's own SyncVectorEnv (in each autoreset mode: SAME_STEP, NEXT_STEP, DISABLED),
seeded ``seed + i`` and stepped with the same actions, must give exactly the same trajectories
(observations, masks, rewards, episode ends, final observations and outcomes, episode
statistics) at 2, 3 and 4 players, with random, rule-based, callable, shipped-policy and
self-play-pool opponents, both reward modes, across many resets. Then Gymnasium's vector
wrappers over it, and its refusals of bad input (a whole call checked before any table
changes). Each test runs on both engines (the ``engine`` fixture): the compiled core plays the
tables whose opponents it can play itself."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from uno_mk_env import actions as A
from uno_mk_env import compiled
from uno_mk_env.agents.base import build_agent
from uno_mk_env.agents.ppo import PPOAgent
from uno_mk_env.engine.rewards import episode_places, places
from uno_mk_env.engine.rules import Rules
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv
from uno_mk_env.envs.self_play import SelfPlayVectorEnv
from uno_mk_env.envs.vector import STATS_KEY, UnoMarioKartVectorEnv
from uno_mk_env.errors import IllegalActionError

POLICY = "models/ppo_2p.npz"
#: Every test runs on each engine that runs here (the compiled core when built and not forced
#: off by UNO_MK_ENGINE=python; tests/test_compiled_vector.py compares the two directly).
ENGINES = ["python", "compiled"] if compiled.available() else ["python"]


@pytest.fixture(autouse=True, params=ENGINES)
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(compiled.ENGINE_VARIABLE, request.param)
    return str(request.param)

PRESETS_2P = Rules(num_players=2)


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
           mode: AutoresetMode = AutoresetMode.SAME_STEP, **kwargs: Any) -> SyncVectorEnv:
    def thunk(i: int) -> Callable[[], UnoMarioKartGymEnv]:
        return lambda: UnoMarioKartGymEnv(
            num_players, opponents=None if opponents is None else opponents(i), **kwargs)

    return SyncVectorEnv([thunk(i) for i in range(num_envs)], autoreset_mode=mode)


def _flag(info: dict[str, Any], key: str, i: int) -> bool:
    return bool(info.get(f"_{key}", np.zeros(i + 1, bool))[i])


def assert_same_trajectories(num_envs: int, num_players: int, opponents: Any, steps: int,
                             seed: int, illegal_every: int = 0,
                             mode: AutoresetMode = AutoresetMode.SAME_STEP,
                             **kwargs: Any) -> int:
    """Steps both envs with the same actions (``DISABLED``: and resets the ended tables of both
    with the same ``reset_mask``); returns the number of episodes that ended."""
    venv = UnoMarioKartVectorEnv(num_envs, num_players, opponents=opponents,
                                 autoreset_mode=mode, **kwargs)
    ref = oracle(num_envs, num_players, opponents, mode, **kwargs)
    assert venv.metadata["autoreset_mode"] == mode
    obs, info = venv.reset(seed=seed)
    ref_obs, ref_info = ref.reset(seed=seed)
    rng = np.random.default_rng(seed)
    returns = np.zeros(num_envs)
    lengths = np.zeros(num_envs, np.int64)
    resetting = np.zeros(num_envs, bool)  # NEXT_STEP: dealt again by this step
    ended = 0
    for step in range(steps):
        np.testing.assert_array_equal(obs, ref_obs)
        masks = venv.action_masks()
        np.testing.assert_array_equal(masks, np.stack([e.action_masks() for e in ref.envs]))
        np.testing.assert_array_equal(info["action_mask"], masks.astype(np.int8))
        np.testing.assert_array_equal(info["learner_seat"],
                                      [e.unwrapped.seat for e in ref.envs])
        # mostly the lowest legal id (a play when there is one: games end sooner), else random
        actions = np.array([0 if not m.any() else np.flatnonzero(m)[0] if rng.random() < 0.8
                            else rng.choice(np.flatnonzero(m)) for m in masks])
        if illegal_every and step % illegal_every == illegal_every - 1 and masks[0].any():
            actions[0] = np.flatnonzero(~masks[0])[0]
        obs, rewards, terms, truncs, info = venv.step(actions)
        ref_obs, ref_rewards, ref_terms, ref_truncs, ref_info = ref.step(actions)
        np.testing.assert_array_equal(rewards, ref_rewards)
        np.testing.assert_array_equal(terms, ref_terms)
        np.testing.assert_array_equal(truncs, ref_truncs)
        returns[~resetting] += ref_rewards[~resetting]
        lengths[~resetting] += 1
        done = terms | truncs
        resetting = done & (mode == AutoresetMode.NEXT_STEP)
        if not done.any():
            assert "final_obs" not in info and "final_obs" not in ref_info
            assert STATS_KEY not in info and "winner" not in info
            continue
        np.testing.assert_array_equal(info[f"_{STATS_KEY}"], done)
        if mode == AutoresetMode.SAME_STEP:
            np.testing.assert_array_equal(info["_final_obs"], ref_info["_final_obs"])
            final, ref_final = info["final_info"], ref_info["final_info"]
        else:
            assert "final_obs" not in info
            final, ref_final = info, ref_info
        for i in np.flatnonzero(done):
            ended += 1
            if mode == AutoresetMode.SAME_STEP:
                np.testing.assert_array_equal(info["final_obs"][i], ref_info["final_obs"][i])
            won = _flag(ref_final, "winner", i)
            assert final["winner"][i] == (ref_final["winner"][i] if won else -1)
            if won:
                assert list(final["scores"][i]) == list(ref_final["scores"][i])
            assert final["learner_seat"][i] == ref_final["learner_seat"][i]
            assert final["illegal_action"][i] == _flag(ref_final, "illegal_action", i)
            stats = info[STATS_KEY]
            assert stats["r"][i] == pytest.approx(returns[i], abs=1e-12)
            assert stats["l"][i] == lengths[i]
            game = ref.envs[i].unwrapped.game
            if mode == AutoresetMode.SAME_STEP:
                assert 1 <= stats["place"][i] <= num_players
            else:  # the ended game is still there: the place is the public one
                assert stats["place"][i] == episode_places(game)[final["learner_seat"][i]]
            if won and final["winner"][i] == final["learner_seat"][i]:
                assert stats["place"][i] == 1
            returns[i] = 0.0
            lengths[i] = 0
        if mode == AutoresetMode.DISABLED:
            with pytest.raises(RuntimeError, match="reset_mask"):
                venv.step(actions)
            obs, info = venv.reset(options={"reset_mask": done.copy()})
            ref_obs, ref_info = ref.reset(options={"reset_mask": done.copy()})
    return ended


MODES = [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED]


@pytest.mark.parametrize("num_players,opponents,reward,extra", [
    (2, None, "win", {"hand_size": 4, "max_steps": 150}),
    (3, None, "points", {"match": "target_score", "target_score": 60}),
    (4, rule_based, "win", {}),
    (2, lambda i: first_legal, "points", {"max_steps": 40}),
    (3, lambda i: [first_legal, build_agent("greedy", seed=i)], "win", {"learner_seat": 1}),
], ids=["2p-random", "3p-random-points", "4p-rule-based", "2p-callable-truncated",
        "3p-mixed-fixed-seat"])
@pytest.mark.parametrize("mode", MODES)
def test_same_trajectories_as_single_envs(num_players: int, opponents: Any, reward: str,
                                          extra: dict[str, Any], mode: AutoresetMode) -> None:
    ended = assert_same_trajectories(5, num_players, opponents, 600, seed=11, reward=reward,
                                     illegal_every=97, mode=mode, **extra)
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
    with pytest.raises(TypeError, match="integer"):
        venv.step(np.array([True, False]))
    with pytest.raises(TypeError, match="integer"):
        venv.step(np.array(["1", "2"]))
    assert venv.games()[0].to_dict() == before
    with pytest.raises(ValueError, match="reset_mask"):
        venv.reset(options={"reset_mask": np.zeros(2, bool)})
    with pytest.raises(ValueError, match="reset_mask"):
        venv.reset(options={"reset_mask": [True, True]})
    assert venv.games()[0].to_dict() == before
    with pytest.raises(ValueError, match="reward"):
        UnoMarioKartVectorEnv(2, reward="score")


def test_is_a_gymnasium_vector_env() -> None:
    venv = UnoMarioKartVectorEnv(4, 3)
    assert isinstance(venv, gymnasium.vector.VectorEnv)
    obs, _ = venv.reset(seed=0)
    assert venv.observation_space.contains(obs)
    assert venv.single_action_space == gymnasium.spaces.Discrete(A.NUM_ACTIONS)


def test_episode_places_are_public_unless_the_scoring_shows_the_hands() -> None:
    """At a finished, scored game the places follow the hand points (the scoring shows them,
    R10.2); otherwise the public hand sizes (fewer is better, ties share)."""
    from uno_mk_env.engine.game import Game

    game = Game(PRESETS_2P, seed=1)
    game.sizes = [3, 5]  # only the sizes are read when the game is not over
    assert episode_places(game) == places(None, [0, 0], [3, 5]) == [1, 2]
    game.sizes = [4, 4]
    assert episode_places(game) == [1, 1]
    rng = np.random.default_rng(0)
    finished = 0
    for seed in range(40):
        g = Game(PRESETS_2P, seed=seed)
        while not g.game_over:
            legal = g.legal_action_ids()
            g.step(legal[0] if rng.random() < 0.8 else legal[int(rng.integers(len(legal)))])
        if g.round_winner is not None:
            finished += 1
            points = [g.hand_points(s) for s in range(2)]
            assert episode_places(g) == places(g.winner, g.scores, points)
    assert finished > 30


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # Box(float64) of float32
def test_works_under_gymnasium_vector_wrappers() -> None:
    """RecordEpisodeStatistics (its ``episode`` beside our ``uno_episode``; in NEXT_STEP and
    DISABLED its returns and lengths are ours), and the observation wrappers that need NEXT_STEP
    (NormalizeObservation) or NEXT_STEP or DISABLED (TransformObservation, DtypeObservation)."""
    from gymnasium.wrappers.vector import (
        DtypeObservation,
        NormalizeObservation,
        RecordEpisodeStatistics,
        TransformObservation,
    )

    for mode in MODES:
        env = RecordEpisodeStatistics(UnoMarioKartVectorEnv(4, 2, autoreset_mode=mode,
                                                            max_steps=30))
        env.reset(seed=0)
        seen = 0
        for _ in range(200):
            masks = env.unwrapped.action_masks()
            actions = np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in masks])
            _, _, terms, truncs, info = env.step(actions)
            done = terms | truncs
            if done.any():
                assert "episode" in info and STATS_KEY in info
                if mode != AutoresetMode.SAME_STEP:  # Gymnasium 1.2 miscounts SAME_STEP
                    np.testing.assert_array_equal(info["episode"]["l"][done],
                                                  info[STATS_KEY]["l"][done])
                    np.testing.assert_allclose(info["episode"]["r"][done],
                                               info[STATS_KEY]["r"][done])
                seen += int(done.sum())
                if mode == AutoresetMode.DISABLED:
                    env.reset(options={"reset_mask": done})
        assert seen >= 4
    wrappers = [lambda e: TransformObservation(e, lambda o: o * 2.0),
                lambda e: DtypeObservation(e, np.float64)]
    for mode in (AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED):
        # Gymnasium 1.2's NormalizeObservation takes NEXT_STEP only
        for wrap in wrappers + [NormalizeObservation] * (mode == AutoresetMode.NEXT_STEP):
            env = wrap(UnoMarioKartVectorEnv(3, 2, autoreset_mode=mode, max_steps=20))
            obs, _ = env.reset(seed=1)
            assert obs.shape == (3, 437)
            for _ in range(30):
                masks = env.unwrapped.action_masks()
                if mode == AutoresetMode.DISABLED and not masks.any(axis=1).all():
                    obs, _ = env.reset(options={"reset_mask": ~masks.any(axis=1)})
                    masks = env.unwrapped.action_masks()
                obs, *_ = env.step(np.array([np.flatnonzero(m)[0] if m.any() else 0
                                             for m in masks]))
                assert obs.shape == (3, 437) and np.isfinite(obs).all()
    with pytest.raises(AssertionError):  # Gymnasium's own refusal of SAME_STEP
        NormalizeObservation(UnoMarioKartVectorEnv(2, 2))
    assert UnoMarioKartVectorEnv(2, autoreset_mode="NextStep").metadata["autoreset_mode"] == (
        AutoresetMode.NEXT_STEP)
    assert UnoMarioKartVectorEnv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    with pytest.raises(ValueError, match="autoreset_mode"):
        UnoMarioKartVectorEnv(2, autoreset_mode="later")


@pytest.mark.parametrize("bad", ["1234", 1.0, 2.5, True, np.True_, -1, 2**64, [5, 6, -1, 7],
                                 [5, 6, "7", 8], [1, 2, 3], b"12"])
def test_bad_seeds_are_refused_before_any_table_is_dealt(bad: Any) -> None:
    for make in (lambda: UnoMarioKartVectorEnv(4, 2), lambda: SelfPlayVectorEnv(4, 2)):
        venv = make()
        venv.reset(seed=1)
        before = [g.to_dict() for g in venv.games()]
        with pytest.raises(ValueError, match="seed"):
            venv.reset(seed=bad)
        assert [g.to_dict() for g in venv.games()] == before
    with pytest.raises(ValueError, match="seed"):
        UnoMarioKartVectorEnv(2).reset(seed=2**64 - 1)  # the second table's seed is 2**64
    UnoMarioKartVectorEnv(2).reset(seed=np.int64(7))  # numpy integers are integers
    UnoMarioKartVectorEnv(2).reset(seed=[None, 2**64 - 1])


@pytest.mark.parametrize("bad", [0, -1, 4097, 10**8, True, 2.0, "4"])
def test_num_envs_is_bounded(bad: Any) -> None:
    for cls in (UnoMarioKartVectorEnv, SelfPlayVectorEnv):
        with pytest.raises(ValueError, match=r"num_envs must be an int from 1 to 4096"):
            cls(bad)


def test_learner_seat_must_be_a_seat_not_a_bool() -> None:
    import gymnasium as gym

    from uno_mk_env import GYM_ID

    for make in (lambda: UnoMarioKartVectorEnv(2, 2, learner_seat=True),
                 lambda: UnoMarioKartGymEnv(2, learner_seat=True),
                 lambda: gym.make(GYM_ID, learner_seat=True)):
        with pytest.raises(ValueError, match="learner_seat must be None or a seat 0-1, got True"):
            make()


def test_self_play_illegal_action_steps_no_table() -> None:
    venv = SelfPlayVectorEnv(4, 3)
    venv.reset(seed=2)
    masks = venv.action_masks()
    actions = np.array([np.flatnonzero(m)[0] for m in masks])
    actions[2] = np.flatnonzero(~masks[2])[0]
    before = [g.to_dict() for g in venv.games()]
    with pytest.raises(IllegalActionError, match="table 2"):
        venv.step(actions)
    assert [g.to_dict() for g in venv.games()] == before
    np.testing.assert_array_equal(venv.action_masks(), masks)
    actions[2] = np.flatnonzero(masks[2])[0]
    venv.step(actions)  # the same call with a legal action goes on


def test_self_play_env_is_the_aec_env() -> None:
    """Table for table, the self-play env plays the AEC env's games (``raw_env`` reset with
    ``seed + i``, then without a seed after each game): the decider, its observation and
    mask, every seat's reward, the episode ends (truncation included)."""
    from uno_mk_env.envs.aec import raw_env

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


@pytest.mark.parametrize("bad", [np.array([0.0, 1.0]), np.array([True, False]),
                                 np.array(["0", "1"]), np.array([0, 73]), np.zeros(3, np.int64)])
def test_the_sb3_adapter_refuses_what_the_vector_env_refuses(bad: np.ndarray) -> None:
    from uno_mk_env.training.sb3_vector import SB3VectorEnv

    venv = SB3VectorEnv(UnoMarioKartVectorEnv(2, 2))
    venv.seed(3)
    venv.reset()
    before = [g.to_dict() for g in venv.venv.games()]
    for step in (venv.step, venv.venv.step):
        with pytest.raises((TypeError, ValueError), match="actions must be"):
            step(bad)
    assert [g.to_dict() for g in venv.venv.games()] == before
    _, _, _, infos = venv.step(np.array([np.flatnonzero(m)[0] for m in venv.venv.action_masks()]))
    assert len(infos) == 2
