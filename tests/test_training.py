"""PPO training and the ``ppo`` agent: a smoke run that trains, saves, resumes, reloads through
the agent registry and plays a tournament; the numpy forward pass against ``model.predict``; the
opponent pool; argument parsing. The long training run is marked ``slow``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from uno_mk_env.agents import make_agent  # noqa: E402
from uno_mk_env.agents.numpy_actor import OBS_SCALE  # noqa: E402
from uno_mk_env.agents.policy_file import resolve_model_path
from uno_mk_env.agents.ppo import PPOAgent
from uno_mk_env.engine.observation import OBS_SIZE  # noqa: E402
from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv  # noqa: E402
from uno_mk_env.evaluation.tournament import AgentSpecError, build_agent, run_tournament  # noqa: E402
from uno_mk_env.training.curves import read_eval_csv  # noqa: E402
from uno_mk_env.training.opponents import OpponentPool  # noqa: E402
from uno_mk_env.training.train_ppo import Args, TrainingError, parse_args, train  # noqa: E402
from uno_mk_env.training.train_ppo import main as train_main  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def tiny_args(tmp_path: Path, **changes) -> Args:
    """A run of a few seconds: 1 env, small rollouts, a tiny evaluation. No ``random`` opponent
    or evaluation: an untrained learner against random play makes very long games."""
    base = dict(
        num_players=2, total_timesteps=2048, seed=3, n_envs=1, vec_env="dummy",
        opponents="greedy", opponent_weights="", net_arch="32,32", n_steps=256,
        batch_size=128, n_epochs=2, eval_every=1024, eval_games=8, final_eval_games=8,
        eval_opponents="greedy", snapshot_every=1024, self_play_prob=0.5,
        checkpoint_every=1024, runs_dir=str(tmp_path / "runs"),
        save_path=str(tmp_path / "models" / "tiny.zip"), progress=False,
    )
    base.update(changes)
    return Args(**base)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, dict]:
    tmp_path = tmp_path_factory.mktemp("ppo")
    summary = train(tiny_args(tmp_path))
    return tmp_path, summary


def test_smoke_run_writes_model_config_curve_and_checkpoints(trained):
    tmp_path, summary = trained
    run_dir = Path(summary["run_dir"])
    assert summary["timesteps"] >= 2048
    models = tmp_path / "models"
    for name in ("tiny.zip", "tiny.npz", "tiny.json", "tiny_curve.csv", "tiny_curve.png"):
        assert (models / name).is_file(), name
    config = json.loads((models / "tiny.json").read_text())
    assert config["args"]["num_players"] == 2 and config["args"]["seed"] == 3
    assert config["summary"]["final_eval"][-1]["opponent"] == "greedy"
    for name in ("config.json", "final.zip", "best.zip", "eval.csv", "curve.png", "summary.json"):
        assert (run_dir / name).is_file(), name
    assert list(run_dir.glob("events.out.tfevents.*")), "TensorBoard log"
    ckpts = sorted((run_dir / "checkpoints").glob("ppo_*_steps.zip"))
    assert ckpts and (run_dir / "checkpoints" / "config.json").is_file()
    assert list((run_dir / "snapshots").glob("snapshot_*.zip")), "a self-play snapshot"
    rows = read_eval_csv(models / "tiny_curve.csv")
    # start, every 1024 steps, and the final evaluation; one row per eval opponent each time
    assert {r["timesteps"] for r in rows} >= {0, 1024, 2048}
    assert {r["opponent"] for r in rows} == {"greedy"}
    for r in rows:
        assert 0 <= r["ci_low"] <= r["win_rate"] <= r["ci_high"] <= 1


def test_saved_model_loads_through_the_registry_and_plays_a_tournament(trained):
    tmp_path, _ = trained
    path = tmp_path / "models" / "tiny.zip"
    agent = make_agent(f"ppo:{path}", seed=1)
    assert isinstance(agent, PPOAgent) and agent.needs_observation
    assert make_agent(f"ppo:{path.with_suffix('')}").path == path  # ".zip" may be omitted
    result = run_tournament([f"ppo:{path}", "random", "greedy"], 3, games=6, seed=2)
    assert sum(r["games"] for r in result.leaderboard()) == 18
    assert result.outcomes()["win"] + result.outcomes()["no_winner"] > 0


def test_resume_continues_from_a_checkpoint(trained, tmp_path):
    _, summary = trained
    ckpt = sorted(Path(summary["run_dir"], "checkpoints").glob("ppo_*_steps.zip"))[-1]
    args = tiny_args(tmp_path, resume=str(ckpt), total_timesteps=3072, save_path="",
                     eval_every=0)
    out = train(args)
    assert out["timesteps"] >= 3072
    rows = read_eval_csv(Path(out["run_dir"]) / "eval.csv")
    assert min(r["timesteps"] for r in rows) == 0  # the earlier run's curve is carried over


def _last_checkpoint(summary: dict) -> tuple[Path, int]:
    from uno_mk_env.agents.policy_file import sb3_data

    ckpts = Path(summary["run_dir"], "checkpoints").glob("ppo_*_steps.zip")
    ckpt = max(ckpts, key=lambda p: int(p.stem.split("_")[1]))
    return ckpt, sb3_data(ckpt)["num_timesteps"]


def _cli_args(tmp_path: Path, *more: str) -> list[str]:
    """A tiny run on the command line (no hyperparameters: a resume keeps the model's)."""
    return ["--runs-dir", str(tmp_path / "runs"), "--n-envs", "1", "--vec-env", "dummy",
            "--opponents", "greedy", "--opponent-weights", "", "--eval-every", "0",
            "--eval-games", "4", "--final-eval-games", "4", "--eval-opponents", "greedy",
            "--checkpoint-every", "0", "--snapshot-every", "0", "--no-progress", *more]


def test_resume_of_a_missing_checkpoint_is_one_line_and_creates_nothing(tmp_path, capsys):
    missing = str(tmp_path / "nope.zip")
    with pytest.raises(TrainingError, match="checkpoint not found"):
        train(tiny_args(tmp_path, resume=missing))
    assert train_main(_cli_args(tmp_path, "--resume", missing)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.zip" in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "models").exists()


def test_resume_with_the_steps_already_reached_is_one_line(trained, tmp_path, capsys):
    _, summary = trained
    ckpt, steps = _last_checkpoint(summary)
    with pytest.raises(TrainingError, match=f"already has {steps} steps"):
        train(tiny_args(tmp_path, resume=str(ckpt), total_timesteps=steps, save_path=""))
    assert train_main(_cli_args(tmp_path, "--resume", str(ckpt), "--total-timesteps",
                                str(steps - 1))) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing to train" in err
    assert not (tmp_path / "runs").exists()


def test_resume_refuses_changed_hyperparameters_and_config_records_the_truth(
    trained, tmp_path, capsys
):
    """A resumed model keeps its architecture and PPO hyperparameters: changing one is refused
    (each listed, old → new); on the command line the ones not given are the model's, and
    config.json records what ran (it used to record the defaults)."""
    from uno_mk_env.agents.policy_file import sb3_data

    _, summary = trained
    ckpt, steps = _last_checkpoint(summary)
    with pytest.raises(TrainingError) as info:
        train(tiny_args(tmp_path, resume=str(ckpt), total_timesteps=steps + 512, n_steps=128,
                        net_arch="64,64", save_path=""))
    message = str(info.value)
    assert "n_steps 256 → 128" in message and "net_arch '32,32' → '64,64'" in message
    assert "\n" not in message and not (tmp_path / "runs").exists()

    assert train_main(_cli_args(tmp_path, "--resume", str(ckpt), "--total-timesteps",
                                str(steps + 512), "--n-epochs", "3")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "n_epochs 2 → 3" in err and not (tmp_path / "runs").exists()

    assert train_main(_cli_args(tmp_path, "--resume", str(ckpt), "--total-timesteps",
                                str(steps + 512))) == 0
    (run,) = (tmp_path / "runs").iterdir()
    recorded = json.loads((run / "config.json").read_text())["args"]
    assert (recorded["net_arch"], recorded["n_steps"], recorded["batch_size"],
            recorded["n_epochs"]) == ("32,32", 256, 128, 2)
    data = sb3_data(run / "final.zip")
    assert (data["n_steps"], data["batch_size"], data["n_epochs"]) == (256, 128, 2)
    assert data["num_timesteps"] >= steps + 512


def test_export_model_ships_a_checkpoint_of_a_resumed_run(trained, tmp_path):
    """``uno_mk_env.training.export_model``: the shipped file plays like its checkpoint, its JSON
    names the checkpoint, every config of the resume chain and a real evaluation; the curve stops at
    the checkpoint's step count."""
    from uno_mk_env.training.export_model import main as export_main

    _, summary = trained
    ckpt = sorted(Path(summary["run_dir"], "checkpoints").glob("ppo_*_steps.zip"))[-1]
    resumed = train(tiny_args(tmp_path, resume=str(ckpt), total_timesteps=3072, save_path="",
                              eval_every=0))
    final = Path(resumed["run_dir"]) / "final.zip"
    out = tmp_path / "shipped" / "m.zip"
    assert export_main([str(final), str(out.with_suffix("")), "--games", "6", "12",
                        "--seed", "5", "--opponents", "greedy,random", "--workers", "1"]) == 0
    info = json.loads(out.with_suffix(".json").read_text())
    assert info["checkpoint"] == str(final) and info["timesteps"] >= 3072
    assert info["args"]["resume"] == str(ckpt)
    assert [c["run_dir"] for c in info["resumed_from"]] == [summary["run_dir"]]
    results = info["evaluation"]["results"]
    assert [(r["opponent"], r["games"]) for r in results] == [
        ("greedy", 6), ("random", 6), ("greedy", 12), ("random", 12)]
    assert all(r["ci_low"] <= r["win_rate"] <= r["ci_high"] for r in results)
    curve = read_eval_csv(out.with_name("m_curve.csv"))
    assert curve and max(r["timesteps"] for r in curve) <= info["timesteps"]
    assert out.with_name("m_curve.png").is_file()
    obs, _ = UnoMarioKartGymEnv(num_players=2).reset(seed=1)
    mask = np.zeros(73, np.int8)
    mask[[3, 9, 50]] = 1
    assert PPOAgent(out).action_probabilities(obs, mask).tolist() == pytest.approx(
        PPOAgent(final).action_probabilities(obs, mask).tolist())
    assert info["numpy_policy"] == "m.npz"  # the policy for play without torch or pickle
    shipped = PPOAgent(out.with_name("m.npz"))
    assert shipped.info["provenance"]["checkpoint"] == str(final)
    assert np.array_equal(shipped.action_probabilities(obs, mask),
                          PPOAgent(out).action_probabilities(obs, mask))


def test_numpy_policy_matches_model_predict(trained):
    """The agent (a numpy forward pass, loaded without unpickling) plays exactly what
    model.predict(..., action_masks=...) of stable-baselines3's own loader plays."""
    import torch
    from sb3_contrib import MaskablePPO

    tmp_path, _ = trained
    path = tmp_path / "models" / "tiny.zip"
    agent, model = PPOAgent(path), MaskablePPO.load(path, device="cpu")
    env = UnoMarioKartGymEnv(num_players=3, opponents=make_agent("greedy", seed=0))
    obs, _ = env.reset(seed=11)
    for _ in range(300):
        mask = env.action_masks()
        action = agent.act(obs, mask, None)
        expected, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert action == int(expected)
        obs_t, _ = model.policy.obs_to_tensor(obs)
        with torch.no_grad():
            probs = model.policy.get_distribution(obs_t, action_masks=mask).distribution.probs
        assert np.allclose(agent.action_probabilities(obs, mask), probs[0].double().numpy(),
                           atol=1e-5)
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            obs, _ = env.reset()


def test_sampling_is_reproducible_from_the_agent_seed(trained):
    tmp_path, _ = trained
    path = tmp_path / "models" / "tiny.zip"
    env = UnoMarioKartGymEnv(num_players=2)
    obs, _ = env.reset(seed=0)
    mask = env.action_masks()
    a, b = PPOAgent(path, seed=5, deterministic=False), PPOAgent(path, seed=5, deterministic=False)
    draws = [a.act(obs, mask, None) for _ in range(50)]
    assert draws == [b.act(obs, mask, None) for _ in range(50)]
    assert all(mask[d] for d in draws)


def test_missing_model_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="PPO model file not found"):
        make_agent(f"ppo:{tmp_path / 'nope.zip'}")
    with pytest.raises(ValueError, match="needs a model path"):
        make_agent("ppo")
    with pytest.raises(AgentSpecError, match="not found"):
        build_agent(f"ppo:{tmp_path / 'nope.zip'}")
    with pytest.raises(FileNotFoundError):
        resolve_model_path(tmp_path)


def test_model_of_another_observation_layout_is_a_clear_error(tmp_path):
    import gymnasium
    from sb3_contrib import MaskablePPO

    class OldLayout(gymnasium.Env):  # what a checkpoint of an older layout was trained on
        observation_space = gymnasium.spaces.Box(0, 1, (OBS_SIZE - 40,), np.float32)
        action_space = gymnasium.spaces.Discrete(73)

    path = tmp_path / "old.zip"
    MaskablePPO("MlpPolicy", OldLayout(), policy_kwargs={"net_arch": [8]}).save(path)
    with pytest.raises(ValueError, match=rf"shape \({OBS_SIZE - 40},\).*\({OBS_SIZE},\)"):
        PPOAgent(str(path))


def test_importing_the_ppo_module_does_not_import_torch():
    code = ("import sys, uno_mk_env.agents.ppo as ppo; from uno_mk_env.agents import registered; "
            "assert 'ppo' in registered(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_observation_scale_covers_the_observation():
    assert OBS_SCALE.shape == (OBS_SIZE,) and (OBS_SCALE > 0).all()


def test_opponent_pool_draws_per_episode_and_is_seeded():
    def draws(seed: int) -> list[str]:
        snapshots: list = []
        pool = OpponentPool(["greedy", "random"], [0.5, 0.5], 0.0, snapshots, seed=seed)
        out = []
        for _ in range(40):
            pool.reset()
            out.append(pool.current.name)
        return out

    assert draws(1) == draws(1)
    assert set(draws(1)) == {"greedy", "random"}
    snapshots = [make_agent("random", seed=9)]
    pool = OpponentPool(["greedy"], None, 1.0, snapshots, seed=0)
    pool.reset()
    assert pool.current is snapshots[0]
    with pytest.raises(ValueError, match="weights"):
        OpponentPool(["greedy", "random"], [1.0], 0.0, [], seed=0)


def test_pool_plays_inside_the_gym_env():
    pools = [OpponentPool(["greedy", "random"], None, 0.0, [], seed=s) for s in range(3)]
    env = UnoMarioKartGymEnv(num_players=4, opponents=pools)
    obs, _ = env.reset(seed=4)
    for _ in range(200):
        legal = np.flatnonzero(env.action_masks())
        obs, _, terminated, truncated, _ = env.step(int(legal[0]))
        if terminated or truncated:
            obs, _ = env.reset()


def test_parse_args_reads_the_dataclass_and_its_docstrings(capsys):
    args = parse_args(["--num-players", "4", "--no-progress", "--net-arch", "64,64"])
    assert (args.num_players, args.progress, args.net_arch) == (4, False, "64,64")
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    text = capsys.readouterr().out
    assert "--total-timesteps" in text and "probability that an opponent seat" in text


@pytest.mark.slow
def test_longer_training_learns_against_greedy(tmp_path):
    """~1.5 minutes: 16 envs for 80k steps go from a few % to a clear share of wins against
    ``greedy`` (the untrained policy draws far too often)."""
    args = tiny_args(
        tmp_path, total_timesteps=80_000, n_envs=16, vec_env="dummy", net_arch="128,128",
        n_steps=128, batch_size=512, n_epochs=10, learning_rate=3e-4, eval_every=40_000,
        eval_games=400, final_eval_games=1000, eval_opponents="greedy", opponents="greedy",
        snapshot_every=40_000, self_play_prob=0.2, checkpoint_every=0,
    )
    summary = train(args)
    rows = read_eval_csv(Path(summary["run_dir"]) / "eval.csv")
    first, final = rows[0], summary["final_eval"][-1]
    assert first["timesteps"] == 0 and final["opponent"] == "greedy"
    assert final["ci_low"] > first["ci_high"] and final["win_rate"] > 0.2


def test_asymmetric_critic_run_trains_and_its_actor_ignores_the_state(tmp_path):
    """``--critic-state``: the model's input is observation + state, the value network reads
    the state, the actor does not; the agent plays the checkpoint from the observation alone."""
    import torch

    from uno_mk_env.engine.observation import STATE_SIZE, encode, encode_state
    from uno_mk_env.uno_mario_kart_v0 import raw_env

    summary = train(tiny_args(tmp_path, num_players=3, critic_state=True, bc_teacher="greedy",
                              bc_steps=300, bc_epochs=1, snapshot_every=0))
    path = tmp_path / "models" / "tiny.zip"
    assert summary["timesteps"] >= 2048
    bc = json.loads((tmp_path / "models" / "tiny.json").read_text())["behaviour_cloning"]
    assert bc["samples"] >= 300 and 1 <= bc["holdout_episodes"] < bc["episodes"]
    assert 0 <= bc["value_epoch"] <= 1 and bc["holdout_value_explained_variance"] <= 1
    from sb3_contrib import MaskablePPO

    numpy_agent = PPOAgent(path, seed=0)
    npz_agent = PPOAgent(path.with_suffix(".npz"), seed=0)
    assert numpy_agent.info["asymmetric_critic"]
    policy = MaskablePPO.load(path, device="cpu").policy
    assert type(policy).__name__ == "AsymmetricActorCriticPolicy"
    assert policy.observation_space.shape == (OBS_SIZE + STATE_SIZE,)

    env = raw_env(num_players=3)
    env.reset(seed=5)
    for _ in range(40):
        agent = env.agent_selection
        seat = env.agents.index(agent)
        obs, mask = encode(env.game.view(seat)), env.observe(agent)["action_mask"]
        state = encode_state(env.game)
        full = torch.as_tensor(np.concatenate([obs, state]))[None]
        other = torch.as_tensor(np.concatenate([obs, np.zeros_like(state)]))[None]
        with torch.no_grad():
            logits = [policy.get_distribution(x).distribution.logits for x in (full, other)]
            values = [policy.predict_values(x) for x in (full, other)]
        torch.testing.assert_close(logits[0], logits[1])  # the actor does not read the state
        assert not torch.equal(values[0], values[1])  # the critic does
        masked = torch.where(torch.as_tensor(mask.astype(bool)), logits[0][0], -1e8)
        assert numpy_agent.act(obs, mask, None) == int(masked.argmax())
        assert npz_agent.act(obs, mask, None) == numpy_agent.act(obs, mask, None)
        env.step(numpy_agent.act(obs, mask, None))
        if not env.agents:
            break


def test_given_fields_reads_the_flags_as_the_parser_does(capsys):
    """A resume keeps the model's own value of each hyperparameter not given on the command
    line, so the flags given must be recognised in every form the parser accepts (tyro: the
    full name, with - or _, ``--x=v``, ``--no-x``; no prefixes)."""
    from uno_mk_env.training.train_ppo import given_fields

    argv = ["--n-steps", "8", "--no-progress", "--net_arch=1,2", "--resume", "x.zip",
            "--total-timesteps=5"]
    assert given_fields(argv) == {"n_steps", "progress", "net_arch", "resume", "total_timesteps"}
    args = parse_args(argv)
    assert (args.n_steps, args.progress, args.net_arch, args.total_timesteps) == (
        8, False, "1,2", 5)
    for bad, needle in ((["--n-ste", "8"], "unrecognized arguments: --n-ste 8"),
                        (["--num-players", "four"], "argument --num-players: invalid literal"),
                        (["--activation"], "argument --activation: expected a value")):
        with pytest.raises(SystemExit) as exit_info:
            parse_args(bad)
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and err.count("\n") == 1, err
        assert err.startswith("python -m uno_mk_env.training.train_ppo: error: ") and needle in err


def test_the_run_ends_with_a_short_summary_table(capsys):
    """The end of ``uno-mk train``: a few rows (plain text without rich), then the agent line
    is printed by the caller; the JSON stays in the run folder."""
    from uno_mk_env.training.summary import print_summary, summary_rows

    summary = {"run_dir": "runs/x", "timesteps": 4096, "complete": False, "train_seconds": 12.5,
               "steps_per_second": 327.7, "policy": "runs/x/final.npz", "best": None,
               "final_eval": [{"opponent": "greedy", "players": 2, "win_rate": 0.5,
                               "ci_low": 0.4, "ci_high": 0.6, "games": 100}]}
    rows = dict(summary_rows(summary))
    assert rows["steps"] == "4,096 (stopped by --max-minutes)"
    assert rows["final eval vs greedy (2p)"] == "0.500 [0.400, 0.600], 100 games"
    assert rows["summary"] == str(Path("runs/x/summary.json"))
    print_summary(summary)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "training run" and len(out) == 1 + len(rows)
    assert "{" not in "".join(out)  # a table, not the JSON


@pytest.mark.parametrize("backend", ["fast", "sb3", "rllib"])
def test_train_help_is_one_usage_line_and_the_real_description(backend, capsys):
    import argparse
    import io

    if backend == "rllib":
        pytest.importorskip("ray")
    from uno_mk_env.cli import train as cli_train
    from uno_mk_env.training import ppo_fast, rllib, train_ppo

    out = io.StringIO()
    code = cli_train.run(argparse.Namespace(backend=backend, extra_args=["--help"]), out)
    shown = out.getvalue() + capsys.readouterr().out
    assert code == 0
    usage = [line for line in shown.splitlines() if "usage:" in line]
    prog = "uno-mk train" + ("" if backend == "fast" else f" --backend {backend}")
    assert usage == [f"usage: {prog} [-h] [OPTIONS]"], usage
    description = {"fast": ppo_fast.DESCRIPTION, "sb3": train_ppo.DESCRIPTION,
                   "rllib": rllib.DESCRIPTION}[backend]
    assert " ".join(description.split()[:8]) in " ".join(shown.split())
    assert "--total-timesteps" in shown and "--final-eval-games" in shown
