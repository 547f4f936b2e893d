"""The fast PPO backend (uno_mk_env.training.ppo_fast): a tiny run writes a policy the ``ppo``
agent plays, the same seed gives the same weights, and refused arguments are one line."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

from uno_mk_env.agents.ppo import PPOAgent, load_policy  # noqa: E402
from uno_mk_env.training.args import TrainingError  # noqa: E402
from uno_mk_env.training.ppo_fast import Args, train  # noqa: E402


def tiny(tmp_path: Path, **kw: Any) -> Args:
    fields: dict[str, Any] = {
        "n_envs": 4, "n_steps": 8, "total_timesteps": 96, "batch_size": 16, "n_epochs": 2,
        "net_arch": "16", "eval_games": 2, "final_eval_games": 2, "eval_every": 0,
        "snapshot_every": 32, "self_play_prob": 0.7, "progress": False, "env_workers": 0,
        "checkpoint_every": 64, "bc_teacher": "",
        "runs_dir": str(tmp_path / "runs"), **kw}
    return dataclasses.replace(Args(), **fields)


def arrays(path: str) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files if k != "metadata"}


def test_same_seed_same_weights_and_a_playable_policy(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from uno_mk_env.training import curves

    monkeypatch.setattr(curves, "plot_curve", lambda *a, **k: None)  # seconds per drawing
    a = train(tiny(tmp_path, bc_teacher="greedy", bc_steps=200, bc_epochs=1))
    b = train(tiny(tmp_path, bc_teacher="greedy", bc_steps=200, bc_epochs=1))
    c = train(tiny(tmp_path, seed=2))
    wa, wb, wc = arrays(a["policy"]), arrays(b["policy"]), arrays(c["policy"])
    assert wa.keys() == wb.keys() and all(np.array_equal(wa[k], wb[k]) for k in wa)
    assert not all(np.array_equal(wa[k], wc[k]) for k in wa)
    assert a["timesteps"] == 96 and a["complete"]
    run = Path(a["run_dir"])
    assert len(list((run / "snapshots").glob("snapshot_*.npz"))) >= 1
    assert [p.name for p in (run / "checkpoints").iterdir()] == ["policy_64_steps.npz"]
    config = json.loads((run / "config.json").read_text())
    assert config["backend"] == "fast" and config["seeds"]["root"] == "1"
    assert "behaviour_cloning" in config
    _, meta = load_policy(a["policy"])  # numpy only, never unpickled
    assert meta["provenance"]["backend"] == "fast"
    agent = PPOAgent(a["policy"])
    mask = np.zeros(73, np.int8)
    mask[[3, 54]] = 1
    assert agent.act(np.zeros(437, np.float32), mask, None) in (3, 54)  # type: ignore[arg-type]


@pytest.mark.parametrize("change,message", [
    ({"resume": "x.zip"}, "--resume"),
    ({"reward": "place"}, "--reward place"),
    ({"n_envs": 0}, "--n-envs"),
    ({"activation": "gelu"}, "--activation"),
])
def test_refused_arguments(tmp_path: Path, change: dict, message: str) -> None:
    with pytest.raises(TrainingError, match=message):
        train(tiny(tmp_path, **change))
    assert not (tmp_path / "runs").exists()


def test_defaults_are_the_ten_minute_recipe() -> None:
    """The defaults of ``uno-mk train`` (docs/training.md, "The fast path"): behaviour cloning of
    strategic, then PPO against strategic alone, no self-play, no entropy bonus, lr 1e-4,
    rollouts of 64 tables x 128 steps."""
    args = Args()
    assert (args.bc_teacher, args.opponents, args.self_play_prob) == ("strategic", "strategic", 0)
    assert (args.ent_coef, args.learning_rate, args.n_envs, args.n_steps) == (0, 1e-4, 64, 128)
    assert args.env_workers == 2 and args.total_timesteps == 10_000_000


def test_final_evaluation_follows_the_budget() -> None:
    """``--final-eval-games 0``: sb3's rule (one game per 250 steps, 100-4000), and at most
    1000 games per opponent when ``--max-minutes`` bounds the run; a given size is kept."""
    from uno_mk_env.training.ppo_fast import TIMED_FINAL_EVAL_GAMES, final_games

    assert final_games(Args()) == 4000
    assert final_games(Args(total_timesteps=50_000)) == 200
    assert final_games(Args(max_minutes=10)) == TIMED_FINAL_EVAL_GAMES == 1000
    assert final_games(Args(max_minutes=10, total_timesteps=50_000)) == 200
    assert final_games(Args(max_minutes=10, final_eval_games=3000)) == 3000


@pytest.mark.slow  # two spawned worker processes: ~10 s on a quiet machine, minutes on a busy one
def test_tables_over_processes_are_the_same_tables() -> None:
    """ProcessVectorEnv (2 workers) gives, table for table, the trajectories of one in-process
    vector env of all the tables: self-play snapshots included."""
    from uno_mk_env.training.ppo_fast import _env_view
    from uno_mk_env.training.vector_envs import ProcessVectorEnv, make_vector_training_env

    args = _env_view(dataclasses.replace(Args(), seed=5, self_play_prob=0.5))
    local, league = make_vector_training_env(args, 6)
    procs = ProcessVectorEnv(args, 6, workers=2)
    try:
        for add in (league.add, procs.league.add):
            assert add("models/ppo_2p.npz", 3) == 1
        obs, _ = local.reset(seed=5)
        obs2, _ = procs.reset(seed=5)
        ended = 0
        for _ in range(150):
            np.testing.assert_array_equal(obs, obs2)
            masks = local.action_masks()
            np.testing.assert_array_equal(masks, procs.action_masks())
            actions = masks.argmax(1)
            obs, rewards, terms, truncs, info = local.step(actions)
            obs2, rewards2, terms2, truncs2, info2 = procs.step(actions)
            np.testing.assert_array_equal(rewards, rewards2)
            np.testing.assert_array_equal(terms | truncs, terms2 | truncs2)
            for i in np.flatnonzero(terms | truncs):
                ended += 1
                np.testing.assert_array_equal(info["final_obs"][i], info2["final_obs"][i])
                for key in ("r", "l", "place"):
                    assert info["episode"][key][i] == info2["episode"][key][i]
        assert ended >= 3
    finally:
        procs.close()


def test_sb3_adapter_runs_maskable_ppo() -> None:
    """The vector env as stable-baselines3's VecEnv: MaskablePPO finds its masks through
    env_method("action_masks"), steps it and gets Monitor-style episode infos."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    from uno_mk_env.training.ppo_fast import _env_view
    from uno_mk_env.training.vector_envs import SB3VectorEnv, make_vector_training_env

    vector, league = make_vector_training_env(_env_view(dataclasses.replace(Args(), seed=3)), 4)
    venv = SB3VectorEnv(vector, league)
    assert venv.env_method("add_snapshot", "models/ppo_2p.npz", 1) == [1] * 4
    venv.seed(3)
    obs = venv.reset()
    assert obs.shape == (4, 437)
    np.testing.assert_array_equal(get_action_masks(venv), vector.action_masks())
    ends = []
    for _ in range(300):
        _, _, dones, infos = venv.step(get_action_masks(venv).argmax(1))
        ends += [info for done, info in zip(dones, infos) if done]
    assert ends and all(e["terminal_observation"].shape == (437,) and "r" in e["episode"]
                        for e in ends)
    from stable_baselines3.common.logger import Logger

    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0,
                        device="cpu")
    model.set_logger(Logger(folder=None, output_formats=[]))  # no SB3-* folder in the tmp dir
    model.learn(64)
    assert model.num_timesteps == 64
