"""The fast PPO backend (uno_mk_env.training.ppo_fast): a tiny run writes a policy the ``ppo``
agent plays, the same seed gives the same weights, and refused arguments are one line."""

from __future__ import annotations

import dataclasses
import json
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

from uno_mk_env.agents.policy_file import load_policy
from uno_mk_env.agents.ppo import PPOAgent  # noqa: E402
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


def test_same_seed_same_weights_and_a_playable_policy(tmp_path: Path) -> None:
    a = train(tiny(tmp_path, bc_teacher="greedy", bc_steps=200, bc_epochs=1))
    b = train(tiny(tmp_path, bc_teacher="greedy", bc_steps=200, bc_epochs=1))
    c = train(tiny(tmp_path, seed=2))
    assert a["run_dir"] != b["run_dir"]  # two runs never share (and overwrite) a folder
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


def test_init_policy_and_critic_warmup(tmp_path: Path) -> None:
    """--init-policy starts the actor from a policy file (no behaviour cloning); during
    --critic-warmup steps only the critic learns, so the actor leaves the run unchanged, and
    after it the actor moves."""
    start = train(tiny(tmp_path))["policy"]
    frozen = train(tiny(tmp_path, seed=3, init_policy=start, critic_warmup=96,
                        bc_teacher="greedy"))
    moved = train(tiny(tmp_path, seed=3, init_policy=start, critic_warmup=32))
    assert frozen["run_dir"] != moved["run_dir"]
    w0, w1, w2 = arrays(start), arrays(frozen["policy"]), arrays(moved["policy"])
    assert all(np.array_equal(w0[k], w1[k]) for k in w0)
    assert not all(np.array_equal(w0[k], w2[k]) for k in w0)
    config = json.loads((Path(frozen["run_dir"]) / "config.json").read_text())
    assert "behaviour_cloning" not in config and config["args"]["init_policy"] == start


def test_bc_from_init_distils_the_teacher_into_the_initial_policy(tmp_path: Path) -> None:
    """--bc-from-init clones --bc-teacher starting from --init-policy (expert iteration's
    distillation step): the clone is in the config, and with the actor frozen for the whole
    run (--critic-warmup) the result is the initial policy moved by the cloning alone, the same
    for the same seed and not the policy cloned from scratch."""
    start = train(tiny(tmp_path))["policy"]
    kw = {"init_policy": start, "bc_from_init": True, "bc_teacher": "greedy", "bc_steps": 200,
          "bc_epochs": 2, "critic_warmup": 96, "seed": 5}
    a, b = train(tiny(tmp_path, **kw)), train(tiny(tmp_path, **kw))
    scratch = train(tiny(tmp_path, **{**kw, "init_policy": "", "bc_from_init": False}))
    w0, wa, wb, ws = (arrays(r) for r in (start, a["policy"], b["policy"], scratch["policy"]))
    assert all(np.array_equal(wa[k], wb[k]) for k in wa)
    assert not all(np.array_equal(w0[k], wa[k]) for k in w0)
    assert not all(np.array_equal(ws[k], wa[k]) for k in ws)
    config = json.loads((Path(a["run_dir"]) / "config.json").read_text())
    assert config["behaviour_cloning"]["samples"] >= 200 and config["args"]["bc_from_init"]


@pytest.mark.parametrize("change,message", [
    ({"bc_from_init": True}, "--bc-from-init: needs --init-policy"),
    ({"bc_from_init": True, "init_policy": "models/ppo_2p.npz"}, "and --bc-teacher"),
    ({"init_policy": "models/ppo_2p.npz"}, r"--init-policy models/ppo_2p.npz: a tanh MLP of "
                                           r"sizes \[437, 256, 256, 73\]"),
    ({"init_policy": "missing.npz"}, "--init-policy: .*missing.npz"),
    ({"init_policy": "README.md"}, "--init-policy: .*not a model file"),
])
def test_init_policy_refusals(tmp_path: Path, change: dict, message: str) -> None:
    with pytest.raises(TrainingError, match=message):
        train(tiny(tmp_path, **change))
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("change,message", [
    ({"resume": "x.zip"}, "--resume"),
    ({"reward": "bogus"}, "--reward"),
    ({"n_envs": 0}, "--n-envs"),
    ({"activation": "gelu"}, "--activation"),
])
def test_refused_arguments(tmp_path: Path, change: dict, message: str) -> None:
    with pytest.raises(TrainingError, match=message):
        train(tiny(tmp_path, **change))
    assert not (tmp_path / "runs").exists()


def test_defaults_are_the_ten_minute_recipe() -> None:
    """The defaults of ``uno-mk train`` (docs/training.md, "The fast path"): behaviour cloning of
    strategic, then PPO against strategic alone, no self-play, no entropy bonus, lr 3e-4,
    rollouts of 64 tables x 128 steps."""
    args = Args()
    assert (args.bc_teacher, args.opponents, args.self_play_prob) == ("strategic", "strategic", 0)
    assert (args.ent_coef, args.learning_rate, args.n_envs, args.n_steps) == (0, 3e-4, 64, 128)
    assert (args.eval_every, args.torch_threads) == (1_000_000, 2)
    assert args.env_workers == 2 and args.total_timesteps == 10_000_000
    assert (args.net_arch, args.bc_steps, args.bc_epochs) == ("auto", 0, 0)  # the table size's


def test_the_network_and_the_imitation_follow_the_table_size() -> None:
    """``--net-arch auto``, ``--bc-steps 0``, ``--bc-epochs 0`` (the defaults): 128,128 and
    100,000 decisions over 8 epochs at two players (the ten-minute recipe), 256,256 and
    400,000 over 10 at three or more (the four-player one); a value given is kept."""
    from uno_mk_env.training.ppo_fast import table_size_defaults

    def fields(args: Args) -> tuple[str, int, int]:
        return args.net_arch, args.bc_steps, args.bc_epochs

    assert fields(table_size_defaults(Args())) == ("128,128", 100_000, 8)
    for n in (3, 4, 10):
        assert fields(table_size_defaults(Args(num_players=n))) == ("256,256", 400_000, 10)
    given = Args(num_players=4, net_arch="64", bc_steps=5, bc_epochs=1)
    assert fields(table_size_defaults(given)) == ("64", 5, 1)
    assert fields(table_size_defaults(Args(num_players=4, bc_steps=7))) == ("256,256", 7, 10)


def test_a_run_records_the_table_size_values_it_used(tmp_path: Path) -> None:
    """The run's config holds what the table size chose, and its command says it, so that the
    command parses back to the run whatever the defaults become."""
    from uno_mk_env.training.args import parse
    from uno_mk_env.training.ppo_fast import DESCRIPTION, PROG

    summary = train(tiny(tmp_path, net_arch="auto", num_players=3, bc_teacher="greedy",
                         bc_steps=200))
    config = json.loads((Path(summary["run_dir"]) / "config.json").read_text())
    assert (config["args"]["net_arch"], config["args"]["bc_epochs"]) == ("256,256", 10)
    assert config["policy_kwargs"]["net_arch"]["pi"] == [256, 256]
    argv = shlex.split(config["command"])[3:]  # after "python -m uno_mk_env.training.ppo_fast"
    assert "--net-arch" in argv and "--bc-epochs" in argv
    again = parse(Args, argv, PROG, DESCRIPTION)
    assert (again.net_arch, again.bc_steps, again.bc_epochs) == ("256,256", 200, 10)


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
def test_rollouts_over_processes_are_the_in_process_rollouts() -> None:
    """ProcessRollouts (2 workers, 3 tables each) plays, table for table, the rollouts of one
    in-process TableRollouts of all 6 tables (the plain reference): self-play snapshots,
    ended episodes and the state carried into the next rollout included."""
    from uno_mk_env.agents.numpy_actor import OBS_SCALE
    from uno_mk_env.training.envs import Tables
    from uno_mk_env.training.network import ActorCritic, actor_layers
    from uno_mk_env.training.rollouts import ProcessRollouts, TableRollouts

    args = dataclasses.replace(Args(), seed=5, self_play_prob=0.5, net_arch="16")
    tables = Tables.of(args)
    local = TableRollouts(tables, 6)
    procs = ProcessRollouts(tables, 6, workers=2)
    layers = actor_layers(ActorCritic([16], "tanh"))
    try:
        for add in (local.league.add, procs.league.add):
            assert add("models/ppo_2p.npz", 3) == 1
        local.reset(5)
        procs.reset(5)
        for _ in range(3):
            a = local.rollout(layers, "tanh", OBS_SCALE, 60)
            b = procs.rollout(layers, "tanh", OBS_SCALE, 60)
            for key in ("obs", "masks", "actions", "rewards", "dones", "last_obs", "last_masks"):
                np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=key)
            assert a.episodes == b.episodes and len(a.episodes) >= 3
            assert a.actions.shape == (60, 6)
            assert all(a.masks[t, j, a.actions[t, j]] for t in range(60) for j in range(6))
    finally:
        procs.close()


def test_sampled_actions_follow_the_masked_policy() -> None:
    """The inverse-CDF draw never picks an illegal action and follows the masked softmax."""
    from uno_mk_env.training.rollouts import sample_actions

    rng = np.random.default_rng(0)
    logits = np.log(np.array([[0.5, 0.2, 0.3, 0.0]], np.float32) + 1e-30).repeat(20_000, 0)
    masks = np.array([[True, False, True, True]]).repeat(20_000, 0)
    actions = sample_actions(logits, masks, 1.0 - rng.random(20_000))
    counts = np.bincount(actions, minlength=4) / 20_000
    assert counts[1] == 0 and counts[3] == 0  # illegal; and legal with probability 0
    np.testing.assert_allclose(counts[[0, 2]], [0.5 / 0.8, 0.3 / 0.8], atol=0.015)
    edge = sample_actions(np.zeros((2, 4), np.float32), np.array([[False, True, True, False]] * 2),
                          np.array([1e-300, 1.0]))
    assert edge.tolist() == [1, 2]


def test_sb3_adapter_runs_maskable_ppo() -> None:
    """The vector env as stable-baselines3's VecEnv: MaskablePPO finds its masks through
    env_method("action_masks"), steps it and gets Monitor-style episode infos."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    from uno_mk_env.training.envs import Tables
    from uno_mk_env.training.sb3_vector import SB3VectorEnv
    from uno_mk_env.training.vector_envs import make_vector_training_env

    vector, league = make_vector_training_env(Tables.of(dataclasses.replace(Args(), seed=3)), 4)
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


@pytest.mark.slow  # a spawned worker process
def test_a_dead_env_worker_ends_the_run_with_one_error() -> None:
    """A worker that dies (killed here) makes the next rollout raise TrainingError naming it,
    never a hang or a traceback from the pipe."""
    from uno_mk_env.agents.numpy_actor import OBS_SCALE
    from uno_mk_env.training.envs import Tables
    from uno_mk_env.training.network import ActorCritic, actor_layers
    from uno_mk_env.training.rollouts import ProcessRollouts

    procs = ProcessRollouts(Tables.of(dataclasses.replace(Args(), net_arch="16")), 4, workers=2)
    try:
        procs.reset(1)
        procs._procs[1].kill()
        procs._procs[1].join(timeout=10)
        with pytest.raises(TrainingError, match="an env worker process died"):
            procs.rollout(actor_layers(ActorCritic([16], "tanh")), "tanh", OBS_SCALE, 4)
    finally:
        procs.close()
