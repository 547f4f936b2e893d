"""docs/integrations.md, "Use with other libraries": every ```python block of the page runs as
written, small, in a fresh interpreter with one torch thread (as tests/test_readme.py runs the
other pages' blocks), followed by a few lines that check what the text says; the blocks of one
section run in order in one interpreter, as a reader runs them. The page's version table is the
installed versions, every library its blocks import comes with the ``test`` extra, and each
known limit the page lists is checked as stated.

The RLlib training iteration starts a local Ray (about 20 s on two cores) and runs under
``-m slow``; the default run builds the env through RLlib's ``PettingZooEnv``.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import (
    DtypeObservation,
    NormalizeObservation,
    RecordEpisodeStatistics,
    TransformObservation,
)
from shimmy import OpenSpielCompatibilityV0

import uno_mk_env.envs.openspiel  # noqa: F401 - registers python_uno_mario_kart with pyspiel
from uno_mk_env import uno_mario_kart_v0
from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv
from uno_mk_env.envs.vector import STATS_KEY, UnoMarioKartVectorEnv

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
TIMEOUT = 600  # seconds for one block (a guard against a hang, not a speed test)


def section(heading: str) -> str:
    """The page's section under ``## heading``, up to the next one."""
    return PAGE.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def env_for_python(tmp: Path) -> dict[str, str]:
    # One torch/BLAS thread (torch reads OMP_NUM_THREADS); Ray in a private folder, so that
    # ray.init() starts its own local Ray instead of joining one already running on the machine.
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    return {**env, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg",
            "RAY_TMPDIR": str(tmp), "TMPDIR": str(tmp), "RAY_USAGE_STATS_ENABLED": "0"}


def run_section(heading: str, claims: str, count: int | None = None) -> subprocess.CompletedProcess:
    """Runs the first ``count`` (default: all) python blocks of the section, then ``claims``,
    in one fresh interpreter in a temporary folder; fails on an error."""
    code = "".join(python_blocks(section(heading))[:count]) + claims
    tmp = Path(tempfile.mkdtemp(prefix="integ", dir="/tmp" if os.path.isdir("/tmp") else None))
    try:
        proc = subprocess.run([sys.executable, "-c", code], cwd=tmp, env=env_for_python(tmp),
                              capture_output=True, text=True, timeout=TIMEOUT)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert proc.returncode == 0, (
        f"exit {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc


#: The sections with blocks, the number of blocks each has, and the test that runs them.
SECTIONS = {
    "PettingZoo's registry": 1, "TorchRL": 1, "Tianshou": 1, "Stable-Baselines3": 1,
    "RLlib": 2, "Shimmy and OpenSpiel": 1, "Gymnasium's vector wrappers": 1,
}


def test_every_block_of_the_page_is_run_here() -> None:
    """Every code fence of the page is ```python (run), and in a section these tests run."""
    assert set(re.findall(r"^```(\S*)\n", PAGE, re.M)[::2]) == {"python"}
    assert PAGE.count("\n```") % 2 == 0
    assert len(python_blocks(PAGE)) == sum(SECTIONS.values())
    for heading, count in SECTIONS.items():
        assert len(python_blocks(section(heading))) == count, heading


# ---------------------------------------------------------------------------------- blocks
def test_pettingzoo_registry_block() -> None:
    run_section("PettingZoo's registry", """
from uno_mk_env.envs.aec import UnoMarioKartEnv
assert isinstance(env.unwrapped, UnoMarioKartEnv) and env.num_agents == 3
""")


def test_torchrl_block() -> None:
    """100 steps, exactly one agent acting at each, every action within its mask."""
    proc = run_section("TorchRL", """
import torch
assert torch.get_num_threads() == 1
assert rollout.batch_size == torch.Size([100])
acted = {a: rollout[a, "mask"].squeeze(-1) for a in ("player_0", "player_1")}
assert (acted["player_0"] ^ acted["player_1"]).all()
for agent, moved in acted.items():
    chosen = rollout[agent, "action"].squeeze(-1)[moved]
    legal = rollout[agent, "action_mask"].squeeze(1)[moved]
    assert moved.any() and legal.gather(-1, chosen.unsqueeze(-1)).all(), agent
""")
    assert proc.stdout.strip() == "torch.Size([100, 1])", proc.stdout
    # the known limit as the page states it: TorchRL's version warning, and it runs anyway
    assert "PettingZoo in TorchRL is tested using version == 1.24.3" in proc.stderr


def test_tianshou_block() -> None:
    """Both players acted, every stored action within its mask, an update changes the
    learner's network; Tianshou 0.5's module of ``MultiAgentPolicyManager`` is gone."""
    run_section("Tianshou", """
import numpy as np
import torch
assert torch.get_num_threads() == 1
batch, _ = collector.buffer.sample(0)  # everything stored
assert len(batch) == 256 and set(batch.obs.agent_id) == {"player_0", "player_1"}
assert batch.obs.mask[np.arange(len(batch)), batch.act].all()
before = [p.detach().clone() for p in net.parameters()]
with policy_within_training_step(algorithm.policy):  # another step: player_0's net learns
    algorithm.update(collector.buffer, sample_size=64)
assert any(not torch.equal(b, p) for b, p in zip(before, net.parameters()))
import importlib.util
assert importlib.util.find_spec("tianshou.policy") is None  # 0.5's MultiAgentPolicyManager
""")


def test_stable_baselines3_block() -> None:
    run_section("Stable-Baselines3", """
import torch
assert torch.get_num_threads() == 1
assert model.num_timesteps >= 1_024 and model.n_envs == 8
from sb3_contrib.common.maskable.utils import get_action_masks
assert get_action_masks(model.env).shape == (8, 73)
""")


def test_rllib_block_builds_the_env_through_rllibs_wrapper() -> None:
    """A whole random game through RLlib's PettingZooEnv: zero-sum rewards for both seats;
    ``raw_env`` refuses a masked action; RLlib's env checker steps one (5 tries: few of the 73
    actions are legal at a time)."""
    run_section("RLlib", """
assert done and set(rewards) == {"player_0", "player_1"}
assert abs(sum(rewards.values())) < 1e-9

from ray.rllib.utils.pre_checks.env import check_multiagent_environments
from uno_mk_env import IllegalActionError
obs, _ = env.reset(seed=0)
[(agent, agent_obs)] = obs.items()
try:
    env.step({agent: int(np.flatnonzero(agent_obs["action_mask"] == 0)[0])})
    raise AssertionError("a masked action was taken")
except IllegalActionError:
    pass
refused = 0
for _ in range(5):
    try:
        check_multiagent_environments(make_env({"num_players": 2}))
    except ValueError as e:
        assert isinstance(e.__cause__, IllegalActionError), repr(e.__cause__)
        refused += 1
assert refused >= 1
""", count=1)


@pytest.mark.slow
def test_rllib_blocks_train_one_ppo_iteration() -> None:
    run_section("RLlib", """
assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 256
""")


def test_shimmy_block() -> None:
    proc = run_section("Shimmy and OpenSpiel", "")
    assert proc.stdout.split()[-2:] == ["True", "False"], proc.stdout


def test_gymnasium_vector_wrappers_block() -> None:
    run_section("Gymnasium's vector wrappers", """
assert len(envs.return_queue) >= 4 and isinstance(envs.env, NormalizeObservation)
""")


# ------------------------------------------------------------------- the table, the extra
def version_table() -> dict[str, str]:
    """The page's table: library name -> version tested."""
    rows = re.findall(r"^\| ([^|]+) \| (\d[\d.]*) \|", PAGE, re.M)
    return {name.strip(): version for name, version in rows}


DISTRIBUTIONS = {  # the table's names -> the distributions they are
    "PettingZoo": ["pettingzoo"], "TorchRL": ["torchrl"], "Tianshou": ["tianshou"],
    "Stable-Baselines3, sb3-contrib": ["stable-baselines3", "sb3-contrib"],
    "Ray RLlib": ["ray"], "Shimmy": ["shimmy"], "Gymnasium": ["gymnasium"],
}


def test_the_version_table_is_what_is_installed_and_pinned_in_the_test_extra() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = " ".join(req for reqs in project["optional-dependencies"].values() for req in reqs)
    table = version_table()
    assert set(table) == set(DISTRIBUTIONS)
    for name, dists in DISTRIBUTIONS.items():
        for dist in dists:
            assert metadata.version(dist) == table[name], (dist, metadata.version(dist))
            if dist != "gymnasium":  # gymnasium: pinned by ray[rllib]==2.60.0
                pin = rf"(^| ){re.escape(dist)}(\[[^\]]*\])?=={re.escape(table[name])}( |$)"
                assert re.search(pin, pins, re.I), dist


def test_every_library_the_blocks_import_comes_with_the_test_extra() -> None:
    """As tests/test_packaging.py checks the test modules' own imports."""
    from test_packaging import _closure

    provided = _closure("uno-mk-env[test]") | {"torch"}  # torch: installed first (Makefile)
    owners = metadata.packages_distributions()
    tops = set()
    for block in python_blocks(PAGE):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.Import):
                tops |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                tops.add(node.module.split(".")[0])
    tops -= {"uno_mk_env", *sys.stdlib_module_names}
    assert {"torchrl", "tianshou", "ray", "shimmy", "sb3_contrib"} <= tops
    missing = {top for top in tops
               if not {d.lower().replace("_", "-") for d in owners.get(top, [])} & provided}
    assert not missing, missing


# ------------------------------------------------------------------------ the known limits
@pytest.fixture
def supersuit():
    """SuperSuit, unloaded again after the test: its module ``__getattr__`` raises ImportError
    for an unknown name, which breaks ``pickle`` (``whichmodule`` asks every loaded module) for
    the tests that run after it in the same process."""
    import supersuit as module

    yield module
    for name in [m for m in sys.modules if m == "supersuit" or m.startswith("supersuit.")]:
        del sys.modules[name]


@pytest.mark.parametrize("wrap", [
    lambda ss, env: ss.dtype_v0(env, np.float16),
    lambda ss, env: ss.flatten_v0(env),
    lambda ss, env: ss.normalize_obs_v0(env),
    lambda ss, env: ss.frame_stack_v1(env, 2),
], ids=["dtype_v0", "flatten_v0", "normalize_obs_v0", "frame_stack_v1"])
def test_supersuit_observation_wrappers_need_box_observations(wrap, supersuit) -> None:
    with pytest.raises((AttributeError, AssertionError)):
        wrap(supersuit, uno_mario_kart_v0.env(num_players=2)).reset(seed=0)
    obs, _ = wrap(supersuit, UnoMarioKartGymEnv(num_players=2)).reset(seed=0)  # a Box: fine
    assert obs.size >= 437


WRAPPERS = {
    "NormalizeObservation": NormalizeObservation,
    "TransformObservation": lambda e: TransformObservation(e, lambda o: o, e.observation_space),
    "DtypeObservation": lambda e: DtypeObservation(e, np.float32),
}
TAKES = {"NormalizeObservation": {AutoresetMode.NEXT_STEP},
         "TransformObservation": {AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED},
         "DtypeObservation": {AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED}}


@pytest.mark.parametrize("name", list(WRAPPERS))
@pytest.mark.parametrize("mode", list(AutoresetMode), ids=lambda m: m.value)
def test_gymnasium_observation_wrappers_take_the_modes_the_page_lists(name, mode) -> None:
    envs = UnoMarioKartVectorEnv(num_envs=2, num_players=2, autoreset_mode=mode)
    if mode in TAKES[name]:
        obs, _ = WRAPPERS[name](envs).reset(seed=0)
        assert obs.shape == (2, 437)
    else:
        with pytest.raises(AssertionError):
            WRAPPERS[name](envs)


@pytest.mark.parametrize("mode", list(AutoresetMode), ids=lambda m: m.value)
def test_record_episode_statistics_returns_are_the_envs_own_in_every_mode(mode) -> None:
    envs = RecordEpisodeStatistics(UnoMarioKartVectorEnv(num_envs=3, num_players=2,
                                                         max_steps=60, autoreset_mode=mode))
    _, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(150):
        if mode is AutoresetMode.DISABLED and not infos["action_mask"].any(axis=1).all():
            _, infos = envs.reset(options={"reset_mask": ~infos["action_mask"].any(axis=1)})
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0
                            for m in infos["action_mask"]])
        _, _, _, _, infos = envs.step(actions)
        if "episode" in infos:
            done = infos["_episode"]
            assert (done == infos[f"_{STATS_KEY}"]).all()
            assert np.allclose(infos["episode"]["r"][done], infos[STATS_KEY]["r"][done])
            ended += done.sum()
    assert ended >= 5


def test_shimmy_declares_an_unbounded_box_and_keeps_the_mask_in_infos() -> None:
    env = OpenSpielCompatibilityV0(game_name="python_uno_mario_kart",
                                          config={"players": 2})
    assert env.observation_space("player_0") == gymnasium.spaces.Box(
        -np.inf, np.inf, (437,), np.float64)
    env.reset(seed=0)
    obs, _, _, _, info = env.last()
    assert isinstance(obs, np.ndarray) and info["action_mask"].shape == (73,)
