"""The torch classes of training live in ``uno_mk_env.training.policies``: checkpoints name them
there, the ``ppo`` agent's safe loader accepts that name and the two earlier ones, and
checkpoints written before the move (``agents.ppo``, ``uno_mk_env.agents.ppo``) still load for
``--resume``."""

from __future__ import annotations

import json
import subprocess
import sys
import types
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from uno_mk_env.agents.ppo import PPOAgent  # noqa: E402
from uno_mk_env.engine.observation import OBS_SIZE  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _spaces_env():
    import gymnasium

    class Spaces(gymnasium.Env):
        observation_space = gymnasium.spaces.Box(0, 1, (OBS_SIZE,), np.float32)
        action_space = gymnasium.spaces.Discrete(73)

    return Spaces()


def _extractor_name(path: Path) -> str:
    data = json.loads(zipfile.ZipFile(path).read("data"))
    return data["policy_kwargs"]["features_extractor_class"]


def test_classes_are_module_level_and_the_agent_module_says_where_they_went():
    """The agents layer never imports training (docs/api.md#layers): code of package 0.4.0
    that imported these classes from the agent module is told their new home."""
    from uno_mk_env.agents import ppo
    from uno_mk_env.training import policies

    for name in ("ScaledObservationExtractor", "AsymmetricActorCriticPolicy"):
        cls = getattr(policies, name)
        assert cls.__module__ == "uno_mk_env.training.policies" and cls.__qualname__ == name
        with pytest.raises(AttributeError, match=f"import {name}$"):
            getattr(ppo, name)
    with pytest.raises(AttributeError):
        ppo.NoSuchThing  # noqa: B018


def test_importing_the_agent_module_still_does_not_import_torch():
    code = "import sys, uno_mk_env.agents.ppo; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_new_checkpoints_name_the_training_module_and_play_safely(tmp_path):
    from sb3_contrib import MaskablePPO

    from uno_mk_env.training.policies import ScaledObservationExtractor

    path = tmp_path / "new.zip"
    MaskablePPO("MlpPolicy", _spaces_env(), seed=0, device="cpu", policy_kwargs={
        "net_arch": [8], "features_extractor_class": ScaledObservationExtractor}).save(path)
    assert _extractor_name(path) == (
        "<class 'uno_mk_env.training.policies.ScaledObservationExtractor'>")
    agent = PPOAgent(path)
    assert agent.actor.scale is not None  # recognised as the scaled extractor, not refused


@pytest.mark.parametrize("old_module", ["agents.ppo", "uno_mk_env.agents.ppo"])
def test_checkpoints_naming_the_old_modules_play_and_resume(tmp_path, monkeypatch, old_module):
    """A checkpoint whose pickles refer to the extractor by an old module name (written with
    the class reachable there, as before the move): the safe loader plays it, and
    load_model (SB3's loader, for --resume) unpickles it through the legacy aliases."""
    from sb3_contrib import MaskablePPO

    from uno_mk_env.training.policies import ScaledObservationExtractor, load_model

    path = tmp_path / "old.zip"
    with monkeypatch.context() as m:
        if old_module == "agents.ppo":
            package, module = types.ModuleType("agents"), types.ModuleType("agents.ppo")
            package.__path__ = []
            module.ScaledObservationExtractor = ScaledObservationExtractor
            m.setitem(sys.modules, "agents", package)
            m.setitem(sys.modules, "agents.ppo", module)
        m.setattr(ScaledObservationExtractor, "__module__", old_module)
        model = MaskablePPO("MlpPolicy", _spaces_env(), seed=0, device="cpu", policy_kwargs={
            "net_arch": [8], "features_extractor_class": ScaledObservationExtractor})
        model.save(path)
    assert "agents" not in sys.modules and "agents.ppo" not in sys.modules
    assert _extractor_name(path) == f"<class '{old_module}.ScaledObservationExtractor'>"
    serialized = json.loads(zipfile.ZipFile(path).read("data"))["policy_kwargs"][":serialized:"]
    assert old_module.encode() in __import__("base64").b64decode(serialized)  # by reference

    assert PPOAgent(path).actor.scale is not None
    loaded = load_model(path)
    assert type(loaded.policy.features_extractor) is ScaledObservationExtractor
    assert "agents" not in sys.modules and "agents.ppo" not in sys.modules  # aliases removed
    obs = np.random.default_rng(0).random(OBS_SIZE).astype(np.float32)
    mask = np.ones(73, bool)
    expected, _ = model.predict(obs, action_masks=mask, deterministic=True)
    assert PPOAgent(path).act(obs, mask, None) == int(expected)


def test_without_the_aliases_an_agents_ppo_checkpoint_does_not_load(tmp_path, monkeypatch):
    """What the aliases are for: SB3's loader alone cannot find ``agents.ppo``."""
    from sb3_contrib import MaskablePPO

    from uno_mk_env.training.policies import ScaledObservationExtractor

    path = tmp_path / "old.zip"
    with monkeypatch.context() as m:
        package, module = types.ModuleType("agents"), types.ModuleType("agents.ppo")
        package.__path__ = []
        module.ScaledObservationExtractor = ScaledObservationExtractor
        m.setitem(sys.modules, "agents", package)
        m.setitem(sys.modules, "agents.ppo", module)
        m.setattr(ScaledObservationExtractor, "__module__", "agents.ppo")
        MaskablePPO("MlpPolicy", _spaces_env(), seed=0, device="cpu", policy_kwargs={
            "net_arch": [8], "features_extractor_class": ScaledObservationExtractor}).save(path)
    monkeypatch.chdir(tmp_path)  # no agents/ folder of the repository on the import path
    monkeypatch.setattr(sys, "path", [p for p in sys.path if Path(p or ".").resolve() != REPO])
    with pytest.raises(Exception) as info:  # noqa: PT011 - whatever SB3 raises
        MaskablePPO.load(path, device="cpu")
    assert "agents" in str(info.value), info.value


@pytest.mark.parametrize("name", ["ppo_2p.zip", "ppo_4p.zip"])
def test_shipped_models_load_with_the_training_loader(name):
    from uno_mk_env.training.policies import load_model

    path = REPO / "models" / name
    if not path.is_file():
        pytest.skip(f"{name} is not shipped")
    model = load_model(path)
    obs = np.zeros(OBS_SIZE, np.float32)
    mask = np.zeros(73, bool)
    mask[[3, 9, 50]] = True
    expected, _ = model.predict(obs, action_masks=mask, deterministic=True)
    assert PPOAgent(path).act(obs, mask, None) == int(expected)


@pytest.mark.parametrize("name", ["ppo_2p.zip"])
def test_a_shipped_model_resumes(tmp_path, name, capsys):
    """``--resume`` of a shipped model (the model keeps its own hyperparameters, read from its
    files) trains one more rollout."""
    from uno_mk_env.agents.policy_file import sb3_data
    from uno_mk_env.training.train_ppo import main

    path = REPO / "models" / name
    if not path.is_file():
        pytest.skip(f"{name} is not shipped")
    steps = sb3_data(path)["num_timesteps"]
    assert main(["--resume", str(path), "--total-timesteps", str(steps + 1), "--n-envs", "1",
                 "--vec-env", "dummy", "--opponents", "greedy", "--opponent-weights", "",
                 "--eval-every", "0", "--eval-games", "2", "--final-eval-games", "2",
                 "--eval-opponents", "greedy", "--checkpoint-every", "0", "--snapshot-every",
                 "0", "--no-progress", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    (run_dir,) = tmp_path.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["complete"] and summary["timesteps"] > steps
    # a short table, then the agent line last (the JSON stays in the run folder)
    assert out[-1] == f"agent: ppo:{summary['policy']}" and "training run" in out
    assert any(line.split()[:4] == ["final", "eval", "vs", "greedy"] for line in out)
