"""Every shipped model (``models/*.json``) says truthfully how it was made: the configuration
its JSON records matches the hyperparameters of the model files (read without unpickling: the
``.zip``'s ``data`` JSON and the ``.npz`` metadata), every run of its resume chain kept them,
and it records the commit, versions, a command that reproduces each run, its selection, its
evaluation and its full curve."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from pathlib import Path

import pytest

from uno_mk_env.agents.ppo import PPOAgent

REPO = Path(__file__).resolve().parents[1]
ALL_MODELS = sorted((REPO / "models").glob("*.json"))
#: The stable-baselines3 checkpoints (``.zip`` + ``.npz``); the RLlib ones ship a ``.npz`` only.
MODELS = [p for p in ALL_MODELS if json.loads(p.read_text()).get("backend", "sb3") == "sb3"]
RLLIB_MODELS = [p for p in ALL_MODELS if json.loads(p.read_text()).get("backend") == "rllib"]
#: Models shipped before this provenance existed (no commit, a wall-clock stop, top-level
#: ``args`` that did not run) would be listed here as strict xfails; since package 0.6.0 every
#: shipped model has it (the 0.3.0 ``ppo_4p`` was the last one without).
LEGACY_PROVENANCE: set[str] = set()
LEGACY_CONFIG: set[str] = set()


def _params(legacy: set[str]):
    return pytest.mark.parametrize("path", [
        pytest.param(p, id=p.stem, marks=pytest.mark.xfail(
            strict=True, reason="shipped before recorded provenance")) if p.stem in legacy
        else pytest.param(p, id=p.stem) for p in MODELS
    ])


@_params(LEGACY_CONFIG)
def test_recorded_configuration_matches_the_model_files(path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    from uno_mk_env.agents.policy_file import sb3_data
    from uno_mk_env.training.args import ints
    from uno_mk_env.training.resume import checkpoint_hyperparameters
    from uno_mk_env.training.train_ppo import RESUME_FIXED, _comparable

    info = json.loads(path.read_text())
    args = info["args"]
    stored = checkpoint_hyperparameters(sb3_data(path.with_suffix(".zip")))
    assert stored, "the .zip tells its hyperparameters"
    for name in stored:
        if name in args:
            assert _comparable(name, stored) == _comparable(name, args), name
    for config in info.get("resumed_from", []):  # every run of the chain kept them
        for name in RESUME_FIXED:
            if name != "bc_teacher" and name in config["args"]:
                assert _comparable(name, config["args"]) == _comparable(name, args), name
    npz = PPOAgent(path.with_suffix(".npz")).info
    assert npz["activation"] == args["activation"]
    agent = PPOAgent(path.with_suffix(".npz"))
    assert [w.shape[1] for w, _ in agent.actor.layers[:-1]] == ints(args["net_arch"])
    assert agent.actor.scale is not None  # the scaled-observation extractor
    digest = hashlib.sha256(path.with_suffix(".zip").read_bytes()).hexdigest()
    assert npz["provenance"]["source_sha256"] == digest  # the .npz is this .zip's policy


@_params(LEGACY_PROVENANCE)
def test_provenance_is_complete(path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    from uno_mk_env.training.curves import read_eval_csv
    from uno_mk_env.training.train_ppo import Args, parse_args

    info = json.loads(path.read_text())
    assert info["complete"] is True, "its run stopped at its --total-timesteps"
    for config in [info, *info.get("resumed_from", [])]:
        assert re.fullmatch(r"[0-9a-f]{40}", config["git"]["commit"] or "")
        assert config["versions"]["uno-mk-env"]
        argv = shlex.split(config["command"])
        assert parse_args(argv[3:]) == Args(**config["args"]), "the command reproduces the run"
    assert info["timesteps"] <= info["args"]["total_timesteps"]
    if info["timesteps"] < info["args"]["total_timesteps"]:  # a checkpoint of its run
        assert info["checkpoint"].endswith(f"ppo_{info['timesteps']}_steps.zip")
    evaluation = info["evaluation"]
    assert evaluation["results"] and evaluation["duplicate_deals"]
    selection = info["selection"]
    if "seed" in selection:
        assert selection["seed"] != evaluation["seed"], "chosen on other deals than reported"
    curve = read_eval_csv(path.with_name(path.stem + "_curve.csv"))
    assert max(r["timesteps"] for r in curve) == info["timesteps"]
    kinds = {r["kind"] for r in curve if r["timesteps"] == info["timesteps"]}
    assert "shipped_eval" in kinds, "the curve includes the shipped model's evaluation"
    if info["timesteps"] == info["args"]["total_timesteps"]:  # the run's final model
        assert "final_eval" in kinds, "the curve includes the run's end-of-run evaluation"
    assert path.with_name(path.stem + "_curve.png").is_file()


@pytest.mark.parametrize("path", RLLIB_MODELS, ids=[p.stem for p in RLLIB_MODELS])
def test_rllib_provenance_is_complete(path: Path) -> None:
    """An RLlib-trained policy records its commit, versions, a command that parses back to its
    arguments, that it stopped at its step budget (not a wall-clock limit), the policy file it
    shipped, its selection-free final evaluation and its curve."""
    from uno_mk_env.training.curves import read_eval_csv
    from uno_mk_env.training.rllib import Args, parse_args

    info = json.loads(path.read_text())
    assert re.fullmatch(r"[0-9a-f]{40}", info["git"]["commit"] or "")
    assert info["versions"]["uno-mk-env"] and info["versions"]["ray"]
    argv = shlex.split(info["command"])
    assert argv[:4] == ["uno-mk", "train", "--backend", "rllib"]
    assert parse_args(argv[4:]) == Args(**info["args"]), "the command reproduces the run"
    assert info["complete"] is True, "its run reached --total-timesteps (not --max-minutes)"
    # RLlib trains on whole sampled batches: the run ends with the iteration that reaches it
    total, batch = info["args"]["total_timesteps"], info["args"]["train_batch_size"]
    assert total <= info["timesteps"] < total + 2 * batch
    agent = PPOAgent(path.with_name(info["numpy_policy"]))
    assert agent.info["activation"] == info["args"]["activation"]
    assert [w.shape[1] for w, _ in agent.actor.layers[:-1]] == [
        int(n) for n in info["args"]["net_arch"].split(",")]
    final = info["summary"]["final_eval"]
    assert {row["opponent"] for row in final} == set(info["args"]["eval_opponents"].split(","))
    for row in final:
        assert row["games"] == info["args"]["final_eval_games"]
        assert row["ci_low"] <= row["win_rate"] == row["wins"] / row["games"] <= row["ci_high"]
        assert row["timesteps"] == info["timesteps"]
    curve = read_eval_csv(path.with_name(path.stem + "_curve.csv"))
    assert max(r["timesteps"] for r in curve) == info["timesteps"]
    assert path.with_name(path.stem + "_curve.png").is_file()


@pytest.mark.parametrize("name", ["ppo_2p", "ppo_4p", "rllib_2p"])
def test_a_shipped_curve_covers_its_resume_chain_and_is_drawn_to_be_read(name: str) -> None:
    """The curve of a shipped model starts at step 0 of the first run of its resume chain and
    has evaluations between every two resumes; drawn, its y axis is zoomed to the data (not
    0-1), its steps are in millions, every legend entry is something drawn and a dotted line
    marks each resume."""
    pytest.importorskip("matplotlib")
    from uno_mk_env.training.curves import curve_figure, read_eval_csv, resume_points

    path = REPO / "models" / f"{name}.json"
    info = json.loads(path.read_text())
    n = info["args"]["num_players"]
    curve = read_eval_csv(path.with_name(f"{name}_curve.csv"), n)
    evals = sorted(r["timesteps"] for r in curve if r["kind"] == "eval")
    resumes = resume_points(info)
    assert evals[0] == 0 and resumes == sorted(resumes)
    for start, end in zip([0, *resumes], [*resumes, info["timesteps"] + 1]):
        assert any(start <= t < end for t in evals), f"no evaluation in [{start}, {end})"
    ax = curve_figure(curve, n, name, resumes).axes[0]
    low, high = ax.get_ylim()
    assert 0 < low <= min(r["ci_low"] for r in curve) and high < 1
    assert high >= max(r["ci_high"] for r in curve)
    assert ax.xaxis.get_major_formatter()(20e6, 0) == "20" and "millions" in ax.get_xlabel()
    handles, labels = ax.get_legend_handles_labels()
    assert len(labels) == len(set(labels))
    lines = {lab.removeprefix("vs "): h for h, lab in zip(handles, labels) if lab.startswith("vs ")}
    assert set(lines) == {r["opponent"] for r in curve if r["kind"] == "eval"}
    assert all(len(line.get_xdata()) > 1 for line in lines.values())  # drawn, not just named
    assert sum(lab == "a resumed run starts" for lab in labels) == bool(resumes)
