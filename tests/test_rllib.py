"""The Ray RLlib backend (``uno_mk_env.training.rllib``, ``uno-mk train --backend rllib``).

* The multi-agent env wrapper and the action-masked RLModule, in this process (Ray imported,
  not started).
* The smoke test: a few training iterations at 2 and at 4 players on a local Ray, no masked
  action ever taken, the exported policy played in a tournament by a process that cannot
  import Ray.
* The cluster test: a real single-node Ray cluster (``ray start --head --block``, a process
  this test owns and ends), ``uno-mk train --backend rllib --address`` against it for one
  iteration, its env runners shown to be workers of that cluster's raylet.

Ray runs in subprocesses whose temporary directory is a short private folder (Unix socket
paths are limited to 107 bytes) removed at the end, with token authentication on and the
token in that folder (nothing is written to ``~/.ray``). Without Ray every test that needs it
is skipped with the reason, except under CI (``CI`` set), where a missing Ray is a failure:
``.ci/run`` installs the ``rllib`` extra.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from uno_mk_env import actions as A
from uno_mk_env.agents.policy_file import ModelFileError, load_policy, write_policy
from uno_mk_env.agents.ppo import PPOAgent
from uno_mk_env.engine.observation import OBS_SIZE
from uno_mk_env.engine.rewards import win_reward

HAVE_RAY = importlib.util.find_spec("ray") is not None
if not HAVE_RAY and os.environ.get("CI"):
    pytest.fail("Ray is not installed, and CI must run the RLlib tests: .ci/run installs the "
                "'rllib' extra (pip install -e '.[rllib]')", pytrace=False)
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="Ray RLlib is not installed (pip install "
                               "-e '.[rllib]'); CI installs it and runs these tests")
ROOT = Path(__file__).resolve().parent.parent


# ----------------------------------------------------------------------- policy file writer
def test_write_policy_round_trips_an_mlp_and_refuses_a_bad_one(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(OBS_SIZE, 16)).astype(np.float32), rng.normal(size=16)
               .astype(np.float32)),
              (rng.normal(size=(16, A.NUM_ACTIONS)).astype(np.float32),
               np.zeros(A.NUM_ACTIONS, np.float32))]
    scale = np.full(OBS_SIZE, 0.5, np.float32)
    path = write_policy(layers, "relu", tmp_path / "p", scale=scale, provenance={"x": 1})
    assert path == tmp_path / "p.npz"
    actor, meta = load_policy(path)
    assert meta["provenance"] == {"x": 1} and meta["activation"] == "relu"
    obs = rng.random(OBS_SIZE).astype(np.float32)
    expected = np.maximum(obs * scale @ layers[0][0] + layers[0][1], 0) @ layers[1][0]
    np.testing.assert_allclose(actor.logits(obs), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ModelFileError, match="logits"):
        write_policy(layers[:1], "relu", tmp_path / "bad.npz")
    assert not (tmp_path / "bad.npz").exists()


def test_without_ray_the_backend_says_how_to_install_it(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['ray'] = None\n"
            "from uno_mk_env.training import rllib\n"
            "sys.exit(rllib.main(['--total-timesteps', '10']))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert "needs Ray RLlib" in line and "uno-mk-env[rllib]" in line, line


# ------------------------------------------------------------------ the env and the module
@pytest.fixture(scope="module")
def rllib():  # noqa: ANN201 - the module, imported only when Ray is there
    if not HAVE_RAY:
        pytest.skip("Ray RLlib is not installed (pip install -e '.[rllib]')")
    from uno_mk_env.training import rllib

    return rllib


def play_episode(env, rng: np.random.Generator, seed: int | None = None):  # noqa: ANN001, ANN201
    """Steps ``env`` with uniformly random legal actions; returns the step records."""
    obs, _ = env.reset(seed=seed)
    records = []
    while True:
        assert len(obs) == 1, "one decider at a time"
        (agent, o), = obs.items()
        legal = np.flatnonzero(o["action_mask"])
        assert len(legal) > 0
        action = int(legal[rng.integers(len(legal))])
        obs, rewards, terminateds, truncateds, infos = env.step({agent: action})
        records.append((agent, action, obs, rewards, terminateds, truncateds))
        if terminateds["__all__"] or truncateds["__all__"]:
            return records


@needs_ray
@pytest.mark.parametrize("num_players", [2, 4, 10])
def test_env_is_turn_based_zero_sum_and_gives_every_agent_its_last_step(
        rllib, num_players: int) -> None:
    env = rllib.UnoMultiAgentEnv({"num_players": num_players, "seed": 3, "max_steps": 5000})
    rng = np.random.default_rng(1)
    repeated = False
    for episode in range(6):
        records = play_episode(env, rng, seed=episode)
        agents = list(env.agents)
        assert sorted(agents) == sorted(f"player_{s}" for s in range(num_players))
        totals = dict.fromkeys(agents, 0.0)
        for i, (agent, _, obs, rewards, terminateds, truncateds) in enumerate(records):
            assert set(rewards) == set(obs), "a reward with each observation (PettingZooEnv)"
            for a, r in rewards.items():
                totals[a] += r
            if i and records[i - 1][0] == agent:
                repeated = True  # the same seat decided twice in a row
            if not (terminateds["__all__"] or truncateds["__all__"]):
                assert len(obs) == 1
        agent, _, obs, _, terminateds, truncateds = records[-1]
        assert set(obs) == set(agents), "a last observation for every agent"
        assert all(not o["action_mask"].any() for o in obs.values())
        game = env.game
        if terminateds["__all__"] and game.winner is not None:
            for a in agents:
                seat = int(a.split("_")[1])
                assert totals[a] == pytest.approx(win_reward(num_players, game.winner, seat))
        assert sum(totals.values()) == pytest.approx(0.0, abs=1e-9)
    assert repeated


def aec_returns(num_players: int, reward: str, seed: int, max_steps: int
                ) -> tuple[dict[str, float], list[int]]:
    """Plays a seeded game of the AEC env with random legal actions; returns every agent's
    return as the env pays it (the sum of ``env.rewards`` after each step) and the actions."""
    from uno_mk_env.envs.aec import raw_env

    env = raw_env(num_players=num_players, reward=reward, max_steps=max_steps)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    actions = []
    for _agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        actions.append(int(legal[rng.integers(len(legal))]))
        env.step(actions[-1])
        for a, r in env.rewards.items():
            totals[a] += r
    return totals, actions


@needs_ray
@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("reward", ["win", "points"])
def test_rllib_pettingzoo_env_gives_every_agent_the_env_return(
        rllib, num_players: int, reward: str) -> None:
    """RLlib's own ``PettingZooEnv`` (which the backend's env is) passes each agent its
    ``last()`` reward, the sum since it last acted: recorded in RLlib's ``MultiAgentEpisode``,
    as an env runner does, every agent's return is what the AEC env paid it, on whole games and
    on games truncated by ``max_steps``."""
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from uno_mk_env.envs.aec import raw_env

    assert issubclass(rllib.UnoMultiAgentEnv, PettingZooEnv)
    paid = truncated = 0
    for seed, max_steps in [(s, 5000) for s in range(6)] + [(s, 40) for s in range(2)]:
        expected, actions = aec_returns(num_players, reward, seed, max_steps)
        env = PettingZooEnv(raw_env(num_players=num_players, reward=reward,
                                    max_steps=max_steps))
        obs, infos = env.reset(seed=seed)
        episode = MultiAgentEpisode(observation_space=env.observation_spaces,
                                    action_space=env.action_spaces)
        episode.add_env_reset(observations=obs, infos=infos)
        for action in actions:
            (agent,) = obs
            obs, rewards, terminateds, truncateds, infos = env.step({agent: action})
            episode.add_env_step(observations=obs, actions={agent: action}, rewards=rewards,
                                 infos=infos, terminateds=terminateds, truncateds=truncateds)
        assert episode.is_done
        truncated += truncateds["__all__"]
        returns = {a: e.get_return() for a, e in episode.agent_episodes.items()}
        assert returns.keys() == expected.keys()
        for a, value in expected.items():
            assert returns[a] == pytest.approx(value, abs=1e-9), (seed, a)
        paid += any(expected.values())
    assert paid >= 3 and truncated >= 2  # whole games paid out; the short ones truncated


@needs_ray
def test_env_refuses_a_masked_action_and_draws_league_and_fixed_seats(rllib) -> None:
    from uno_mk_env.errors import IllegalActionError

    env = rllib.UnoMultiAgentEnv({"num_players": 4, "seed": 5, "league_prob": 0.4,
                                  "opponents": ["greedy"], "opponent_prob": 0.4})
    obs, _ = env.reset(seed=0)
    (agent, o), = obs.items()
    masked = int(np.flatnonzero(o["action_mask"] == 0)[0])
    before = env.game.to_dict()
    with pytest.raises(IllegalActionError, match=f"illegal action {masked} "):
        env.step({agent: masked})
    assert env.game.to_dict() == before
    seen_roles: set[str] = set()
    rng = np.random.default_rng(2)
    for episode in range(30):
        play_episode(env, rng, seed=100 + episode)
        players = [a for a in env.agents if a.startswith("player_")]
        assert players, "at least one learner seat per episode"
        seen_roles |= {a.split("_")[0] for a in env.agents}
        if len(env.agents) < 4:
            seen_roles.add("fixed")
    assert seen_roles == {"player", "league", "fixed"}


@needs_ray
def test_league_mapping(rllib) -> None:
    class Episode:
        id_ = "ab" * 16

    mapping = rllib.LeagueMapping([])
    assert mapping("league_3", Episode()) == "main" and mapping("player_1", Episode()) == "main"
    mapping = rllib.LeagueMapping(["league_0", "league_1"])
    assert mapping("player_1", Episode()) == "main"
    drawn = {mapping(f"league_{s}", Episode()) for s in range(10)}
    assert drawn <= {"league_0", "league_1"} and len(drawn) == 2
    assert mapping("league_4", Episode()) == mapping("league_4", Episode())  # per episode


@needs_ray
def test_module_never_gives_probability_to_a_masked_action_and_exports_exactly(
        rllib, tmp_path: Path) -> None:
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.models.torch.torch_distributions import TorchCategorical

    env = rllib.UnoMultiAgentEnv({"num_players": 3})
    module = RLModuleSpec(
        module_class=rllib.MaskedActorCritic,
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config={"hidden": [32, 16], "activation": "tanh"},
    ).build()
    rng = np.random.default_rng(0)
    obs, masks = [], []
    for episode in range(4):
        for _, _, o, _, _, _ in play_episode(env, rng, seed=episode)[:50]:
            for x in o.values():
                if x["action_mask"].any():
                    obs.append(x["observation"])
                    masks.append(x["action_mask"])
    batch = {Columns.OBS: {"observation": torch.as_tensor(np.array(obs)),
                           "action_mask": torch.as_tensor(np.array(masks))}}
    with torch.no_grad():
        for out in (module.forward_exploration(batch), module.forward_inference(batch),
                    module.forward_train(batch)):
            logits = out[Columns.ACTION_DIST_INPUTS]
            probs = torch.softmax(logits, -1).numpy()
            assert (probs[np.array(masks) == 0] == 0).all()
            dist = TorchCategorical.from_logits(logits)
            for _ in range(20):
                sampled = dist.sample().numpy()
                assert (np.array(masks)[np.arange(len(sampled)), sampled] == 1).all()
        values = module.compute_values(batch)
        assert values.shape == (len(obs),)
    state = {k: v.detach().numpy() for k, v in module.state_dict().items()}
    path = rllib.export_module(state, "tanh", tmp_path / "policy.npz")
    agent = PPOAgent(path)
    ours = np.array([agent.action_probabilities(o, m) for o, m in zip(obs, masks)])
    np.testing.assert_allclose(ours, probs, atol=1e-5)


def test_behaviour_cloning_fits_the_rllib_module(rllib) -> None:
    """The one behaviour-cloning routine fits an RLlib ``MaskedActorCritic`` through its
    adapter: the clone picks the teacher's action on most held-out decisions, its value
    network was trained (and kept at its best epoch), and every weight is finite."""
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from uno_mk_env.training.behaviour_cloning import Cloning, behaviour_cloning
    from uno_mk_env.training.envs import Tables
    from uno_mk_env.training.rllib.config import RLlibClonable

    env = rllib.UnoMultiAgentEnv({"num_players": 2})
    module = RLModuleSpec(
        module_class=rllib.MaskedActorCritic,
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config={"hidden": [32], "activation": "tanh"},
    ).build()
    before = {k: v.clone() for k, v in module.state_dict().items()}
    report = behaviour_cloning(RLlibClonable(module), Tables(num_players=2, seed=1,
                                                             opponents="greedy"),
                               Cloning(teacher="greedy", steps=3000, epochs=6, lr=3e-3,
                                       progress=False))
    after = module.state_dict()
    assert report["samples"] >= 3000 and report["epochs"] == 6
    assert report["holdout_accuracy"] > 0.6
    assert not torch.equal(before["pi.0.weight"], after["pi.0.weight"])
    assert all(torch.isfinite(v).all() for v in after.values())


@needs_ray
def test_bad_arguments_are_refused_in_one_line(rllib, capsys: pytest.CaptureFixture) -> None:
    for argv, needle in ((["--num-players", "11"], "--num-players 11"),
                         (["--opponent-prob", "0.5"], "--opponents"),
                         (["--league-prob", "0.8", "--opponent-prob", "0.5", "--opponents",
                           "greedy"], "exceed 1"),
                         (["--eval-opponents", "nosuchagent"], "nosuchagent"),
                         (["--resume", "no/such/checkpoint"], "no/such/checkpoint")):
        assert rllib.main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert needle in err and len(err.splitlines()) == 1, err


# ----------------------------------------------------------------------- Ray in subprocesses
@pytest.fixture
def ray_env() -> Iterator[dict[str, str]]:
    """Environment for a Ray process: a short private temporary folder (removed afterwards)
    and token authentication with a token kept in it."""
    folder = Path(tempfile.mkdtemp(prefix="r", dir="/tmp" if os.path.isdir("/tmp") else None))
    token = folder / "token"
    token.write_text(secrets.token_hex(32))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(RAY_TMPDIR=str(folder), TMPDIR=str(folder), RAY_AUTH_MODE="token",
               RAY_AUTH_TOKEN_PATH=str(token), RAY_USAGE_STATS_ENABLED="0",
               PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    try:
        yield env
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(cmd: list[str], env: dict[str, str], timeout: float, cwd: Path
        ) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, f"{cmd[:6]} failed:\n{out.stdout[-3000:]}\n{out.stderr[-5000:]}"
    return out


def agent_line(stdout: str) -> str:
    last = stdout.strip().splitlines()[-1]
    assert last.startswith("agent: ppo:"), last
    return last.removeprefix("agent: ")


TINY = ["--train-batch-size", "500", "--minibatch-size", "250", "--num-epochs", "1",
        "--envs-per-runner", "2", "--num-env-runners", "1", "--eval-every", "0",
        "--eval-games", "4", "--final-eval-games", "4", "--net-arch", "64,64",
        "--checkpoint-every", "0"]

PLAY_WITHOUT_RAY = """
import sys
sys.modules["ray"] = None  # importing ray now raises ImportError
from uno_mk_env.evaluation.tournament import run_tournament
spec, n = sys.argv[1], int(sys.argv[2])
result = run_tournament([spec] + ["greedy"] * (n - 1), n, games=2 * n, seed=3)
rows = {r["agent"]: r for r in result.leaderboard()}
assert sum(r["wins"] for r in rows.values()) <= result.config["games"]
assert not any(m == "ray" or m.startswith("ray.") for m, v in sys.modules.items() if v)
assert "torch" not in sys.modules
print("played", result.config["games"], "games")
"""


@needs_ray
@pytest.mark.parametrize("num_players", [2, 4])
def test_smoke_trains_on_a_local_ray_and_the_policy_plays_without_ray(
        tmp_path: Path, ray_env: dict[str, str], num_players: int) -> None:
    runs = tmp_path / "runs"
    out = run([sys.executable, "-m", "uno_mk_env.training.rllib", "--num-players",
               str(num_players), "--total-timesteps", "1500", "--league-size", "2",
               "--snapshot-every", "500", "--league-prob", "0.4", "--opponents", "greedy",
               "--max-steps", "300",  # short episodes: new ones start with the league in play
               "--opponent-prob", "0.2", "--runs-dir", str(runs), "--num-cpus", "2", *TINY],
              ray_env, timeout=300, cwd=tmp_path)
    spec = agent_line(out.stdout)
    (run_dir,) = runs.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["ray"]["local"] is True
    assert summary["timesteps"] >= 1500 and summary["complete"] is True
    # Every sampled action was checked against its recorded mask (those whose next
    # observation had not come yet, at most one per seat and env, wait for the next sample).
    assert summary["masked_actions"] == 0
    assert summary["checked_actions"] >= summary["timesteps"] - 2 * num_players
    assert len(summary["league"]["slots"]) >= 1
    assert summary["module_steps"].get("main", 0) > 0
    assert sum(v for k, v in summary["module_steps"].items() if k.startswith("league_")) > 0
    with (run_dir / "progress.csv").open() as f:
        progress = list(csv.DictReader(f))
    assert len(progress) >= 3
    last = progress[-1]
    assert int(last["agent_steps"]) >= int(last["timesteps"])  # a decider per env step
    assert 0 < int(last["main_steps"]) < int(last["agent_steps"])  # league seats played too
    assert int(last["masked_actions"]) == 0
    assert (run_dir / "eval.csv").is_file() and (run_dir / "curve.png").is_file()
    assert list(run_dir.glob("events.out.tfevents.*"))
    assert (Path(summary["checkpoint"]) / "policy.npz").is_file()
    assert Path(spec.removeprefix("ppo:")) == run_dir / "final.npz"
    played = run([sys.executable, "-c", PLAY_WITHOUT_RAY, spec, str(num_players)], ray_env,
                 timeout=120, cwd=tmp_path)
    assert f"played {2 * num_players} games" in played.stdout


@needs_ray
def test_a_diverging_run_stops_with_one_line_and_keeps_the_last_finite_policy(
        tmp_path: Path, ray_env: dict[str, str]) -> None:
    """As the other backends: the first non-finite loss or weights end the run, exit code 1,
    one line; summary.json says ``diverged`` and final.npz holds the last finite weights."""
    runs = tmp_path / "runs"
    out = subprocess.run([sys.executable, "-m", "uno_mk_env.training.rllib", "--num-players",
                          "2", "--total-timesteps", "1500", "--league-size", "0",
                          "--opponents", "greedy", "--opponent-prob", "0.5", "--runs-dir",
                          str(runs), "--num-cpus", "2", "--learning-rate", "1e30",
                          "--grad-clip", "1e30", "--no-progress", *TINY],
                         env=ray_env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 1, out.stderr[-3000:]
    errors = [line for line in out.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "training diverged" in errors[0], out.stderr[-3000:]
    (run_dir,) = runs.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["stopped_by"] == "diverged" and summary["complete"] is False
    assert summary["timesteps"] == summary["diverged"]["kept_timesteps"]
    actor, _ = load_policy(run_dir / "final.npz")
    assert all(np.isfinite(w).all() and np.isfinite(b).all() for w, b in actor.layers)


@needs_ray
def test_resume_continues_from_a_checkpoint(tmp_path: Path, ray_env: dict[str, str]) -> None:
    runs = tmp_path / "runs"
    # --max-minutes ends the first run after its first iteration (one 500-step batch)
    first = run([sys.executable, "-m", "uno_mk_env.training.rllib", "--total-timesteps",
                 "5000", "--max-minutes", "0.0001", "--runs-dir", str(runs), "--num-cpus", "2",
                 *TINY], ray_env, timeout=300, cwd=tmp_path)
    (run_dir,) = runs.iterdir()
    stopped = json.loads((run_dir / "summary.json").read_text())
    assert stopped["complete"] is False and 500 <= stopped["timesteps"] < 1000
    checkpoint = stopped["checkpoint"]
    refused = subprocess.run(
        [sys.executable, "-m", "uno_mk_env.training.rllib", "--resume", checkpoint,
         "--net-arch", "32", "--total-timesteps", "1000"], env=ray_env, cwd=tmp_path,
        capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "net_arch '64,64' -> '32'" in refused.stderr
    second = run([sys.executable, "-m", "uno_mk_env.training.rllib", "--resume", checkpoint,
                  "--total-timesteps", "1000", "--runs-dir", str(runs), "--num-cpus", "2",
                  *[a for a in TINY if a not in ("--net-arch", "64,64")]],
                 ray_env, timeout=300, cwd=tmp_path)
    assert agent_line(first.stdout) != agent_line(second.stdout)
    (new_dir,) = [d for d in runs.iterdir() if d != run_dir]
    summary = json.loads((new_dir / "summary.json").read_text())
    assert summary["resumed_weights_match"] is True
    assert summary["timesteps"] >= 1000 and summary["complete"] is True
    rows = (new_dir / "progress.csv").read_text().splitlines()[1:]
    assert int(rows[0].split(",")[1]) >= 1000  # counting on from the checkpoint's 500


# --------------------------------------------------------------------------------- cluster
@needs_ray
def test_an_address_without_a_cluster_is_refused_in_one_line(
        tmp_path: Path, ray_env: dict[str, str]) -> None:
    env = {k: v for k, v in ray_env.items() if k != "RAY_AUTH_MODE"}
    address = f"127.0.0.1:{free_port()}"
    out = subprocess.run([sys.executable, "-m", "uno_mk_env.training.rllib", "--address", address,
                          "--runs-dir", str(tmp_path / "runs")], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith(f"uno-mk train --backend rllib: error: --address {address!r}: "
                           "nothing accepts connections there"), last
    assert "ray start --head" in last and len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    # the same address from RAY_ADDRESS, with no --address: joined (so refused) and named
    out = subprocess.run([sys.executable, "-m", "uno_mk_env.training.rllib", "--runs-dir",
                          str(tmp_path / "runs")], env={**env, "RAY_ADDRESS": address},
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith(f"uno-mk train --backend rllib: error: RAY_ADDRESS {address!r}: "
                           "nothing accepts connections there"), last


def test_the_learner_and_runner_counts_reach_the_config(rllib) -> None:
    """--num-learners, --num-env-runners and --envs-per-runner are what RLlib is asked for."""
    args = rllib.parse_args(["--num-learners", "1", "--envs-per-runner", "3"])
    config = rllib.build_config(args, num_env_runners=2)
    assert config.num_learners == 1 and config.num_cpus_per_learner == 1
    assert config.num_env_runners == 2 and config.num_envs_per_env_runner == 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ancestors(pid: int) -> list[int]:
    """The parent chain of ``pid`` (Linux ``/proc``)."""
    chain = []
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        chain.append(pid)
    return chain


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@needs_ray
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_training_joins_a_real_ray_cluster_and_its_env_runners_run_there(
        tmp_path: Path, ray_env: dict[str, str]) -> None:
    ray_cli = Path(sys.executable).with_name("ray")
    port = free_port()
    log = (tmp_path / "head.log").open("w")
    head = subprocess.Popen(
        [str(ray_cli), "start", "--head", "--port", str(port), "--node-ip-address",
         "127.0.0.1", "--num-cpus", "2", "--temp-dir", ray_env["RAY_TMPDIR"], "--block",
         "--include-dashboard=false", "--disable-usage-stats"],
        env=ray_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.time() + 90
        while "Ray runtime started" not in (tmp_path / "head.log").read_text():
            assert head.poll() is None, (tmp_path / "head.log").read_text()[-3000:]
            assert time.time() < deadline, "the head did not start in 90 s"
            time.sleep(0.5)
        runs = tmp_path / "runs"
        out = run([sys.executable, "-m", "uno_mk_env.cli", "train", "--backend", "rllib",
                   "--address", f"127.0.0.1:{port}", "--total-timesteps", "500",
                   "--runs-dir", str(runs), *TINY],
                  ray_env, timeout=300, cwd=tmp_path)
        agent_line(out.stdout)
        (run_dir,) = runs.iterdir()
        summary = json.loads((run_dir / "summary.json").read_text())
        cluster = summary["ray"]
        assert cluster["local"] is False and cluster["nodes"] == 1 and cluster["cpus"] == 2
        assert cluster["address"].endswith(f":{port}")
        assert summary["timesteps"] >= 500 and summary["masked_actions"] == 0
        (runner,) = summary["env_runners"]
        # The env runner was a worker process of the raylet of the head this test started.
        assert head.pid in ancestors(runner["ppid"]) or runner["ppid"] == head.pid
        assert runner["node"] == cluster["driver_node"]
    finally:
        started = descendants(head.pid)
        head.send_signal(signal.SIGTERM)  # this head only: `ray stop` would end every Ray here
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait(timeout=30)
        log.close()
    deadline = time.time() + 30
    while any(alive(p) for p in started) and time.time() < deadline:
        time.sleep(0.5)
    assert not [p for p in started if alive(p)], "processes of the head outlived it"
