"""Training is reproducible by construction: it stops at an exact step count with the learning
rate schedule over exactly that length, the same command gives bit-identical weights, every run
and shipped model records its commit, versions, command, seeds and curve, and ``best.zip`` is
only ever a checkpoint evaluated after training started."""

from __future__ import annotations

import hashlib
import io
import json
import shlex
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import uno_mk_env  # noqa: E402
from uno_mk_env.agents.policy_file import sb3_data
from uno_mk_env.agents.ppo import PPOAgent  # noqa: E402
from uno_mk_env.training.curves import read_eval_csv  # noqa: E402
from uno_mk_env.training.train_ppo import Args, parse_args, train  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def tiny(tmp_path: Path, **changes) -> Args:
    """A few hundred steps: 1 env in process, small rollouts, a few evaluation games."""
    base = dict(
        num_players=2, total_timesteps=512, seed=3, n_envs=1, vec_env="dummy",
        opponents="greedy", opponent_weights="", net_arch="16,16", n_steps=128,
        batch_size=64, n_epochs=2, eval_every=256, eval_games=4, final_eval_games=4,
        eval_opponents="greedy", snapshot_every=256, self_play_prob=0.5,
        checkpoint_every=256, runs_dir=str(tmp_path / "runs"), save_path="", progress=False,
    )
    base.update(changes)
    return Args(**base)


def weights(path: Path) -> dict[str, np.ndarray]:
    import torch

    raw = zipfile.ZipFile(path).read("policy.pth")
    state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    return {k: v.numpy() for k, v in state.items()}


def test_the_same_seed_gives_bit_identical_weights(tmp_path):
    """Behaviour cloning, mixed table sizes and presets, self-play snapshots, evaluations: two
    runs of the same arguments end with the same weights, bit for bit, and the same curve;
    another seed does not."""
    args = dict(total_timesteps=384, table_sizes="2,3", rule_presets="default,strict",
                bc_teacher="greedy", bc_steps=200, bc_epochs=1, eval_every=128,
                snapshot_every=128, checkpoint_every=0)
    runs = [train(tiny(tmp_path / name, **args)) for name in ("a", "b")]
    other = train(tiny(tmp_path / "c", seed=4, **args))
    a, b, c = (weights(Path(r["run_dir"]) / "final.zip") for r in (*runs, other))
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert not all(np.array_equal(a[k], c[k]) for k in a)
    curves = [[{k: v for k, v in r.items() if k != "wall_s"}
               for r in read_eval_csv(Path(s["run_dir"]) / "eval.csv")] for s in runs]
    assert curves[0] == curves[1] and len(curves[0]) >= 4


def test_training_stops_at_the_exact_step_count_and_the_schedule_ends_there(tmp_path, capsys):
    summary = train(tiny(tmp_path, total_timesteps=1000, learning_rate=1e-3))
    assert "rounded up to 1024" in capsys.readouterr().out
    run = Path(summary["run_dir"])
    config = json.loads((run / "config.json").read_text())
    assert config["args"]["total_timesteps"] == 1024  # what ran, not what was asked
    assert summary["timesteps"] == 1024 and summary["complete"] is True
    assert summary["explained_variance"] <= 1  # the critic's, from the last logged update
    data = sb3_data(run / "final.zip")
    assert data["num_timesteps"] == 1024
    assert data["_current_progress_remaining"] == 0.0  # the last update saw the schedule's end
    from uno_mk_env.training.train_ppo import learning_rate

    schedule = learning_rate(parse_args(["--learning-rate", "0.001"]))
    assert schedule(1.0) == pytest.approx(1e-3) and schedule(0.0) == pytest.approx(1e-4)


def test_max_minutes_is_a_safety_net_that_marks_the_run_incomplete(tmp_path):
    summary = train(tiny(tmp_path, total_timesteps=4096, max_minutes=1e-9, eval_every=0,
                         snapshot_every=0, checkpoint_every=0))
    assert summary["complete"] is False and summary["stopped_by"] == "max_minutes"
    assert summary["timesteps"] < 4096


def test_best_is_chosen_only_after_training_started(tmp_path):
    """A run whose evaluations all come after its end has no best.zip (the step-0 policy is
    never "best"); otherwise best.zip holds exactly the weights of the step it names."""
    never = train(tiny(tmp_path / "never", eval_every=10_000))
    run = Path(never["run_dir"])
    assert not (run / "best.zip").exists()
    assert never["best"] is None and "no evaluation after training started" in never["best_note"]
    assert [r["timesteps"] for r in read_eval_csv(run / "eval.csv")] == [0, 512]

    summary = train(tiny(tmp_path / "some"))
    run = Path(summary["run_dir"])
    best = summary["best"]
    assert best["timesteps"] in (256, 512) and best["opponent"] == "greedy"
    checkpoint = run / "checkpoints" / f"ppo_{best['timesteps']}_steps.zip"
    got, expected = weights(run / "best.zip"), weights(checkpoint)
    assert all(np.array_equal(got[k], expected[k]) for k in got)


def test_checkpoints_and_evaluations_hold_the_weights_of_their_step(tmp_path):
    """The checkpoint named after the last step is the final model (saved after the last
    update, not during the last rollout)."""
    summary = train(tiny(tmp_path))
    run = Path(summary["run_dir"])
    final, last = weights(run / "final.zip"), weights(run / "checkpoints" / "ppo_512_steps.zip")
    assert all(np.array_equal(final[k], last[k]) for k in final)
    assert sb3_data(run / "checkpoints" / "ppo_256_steps.zip")["num_timesteps"] == 256


def test_config_records_commit_versions_seeds_and_a_reproducing_command(tmp_path):
    summary = train(tiny(tmp_path, table_sizes="2:3,4", rule_presets="strict"),
                    invocation="uno-mk train ...")
    config = json.loads((Path(summary["run_dir"]) / "config.json").read_text())
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    if head.returncode == 0:
        assert config["git"]["commit"] == head.stdout.strip()
        assert config["git"]["dirty"] == bool(config["git"]["dirty_files"])
        tracked = subprocess.run(["git", "-C", str(REPO), "ls-tree", "-r", "--name-only",
                                  "HEAD"], capture_output=True, text=True).stdout.split("\n")
        for name in config["git"]["dirty_files"]:  # whole repository paths
            assert name == name.strip() and ((REPO / name).exists() or name in tracked), name
    assert config["versions"]["uno-mk-env"] == uno_mk_env.__version__
    assert config["versions"]["torch"] and config["seeds"]["root"] == "3"
    assert config["invocation"] == "uno-mk train ..."
    argv = shlex.split(config["command"])
    assert argv[:3] == ["python", "-m", "uno_mk_env.training.train_ppo"]
    assert parse_args(argv[3:]) == Args(**config["args"])
    assert summary["policy"] == str(Path(summary["run_dir"]) / "final.npz")
    assert PPOAgent(summary["policy"]).info["provenance"]["timesteps"] == 512


def test_a_shipped_model_records_its_resume_chain_and_full_curve(tmp_path):
    first = train(tiny(tmp_path))
    resumed = train(tiny(tmp_path, resume=str(Path(first["run_dir"]) / "final.zip"),
                         total_timesteps=768, save_path=str(tmp_path / "models" / "m.zip"),
                         seed=5))
    assert resumed["policy"] == str(tmp_path / "models" / "m.npz")
    info = json.loads((tmp_path / "models" / "m.json").read_text())
    assert info["complete"] is True and info["timesteps"] == 768
    assert info["args"]["resume"].endswith("final.zip") and info["args"]["seed"] == 5
    assert [c["run_dir"] for c in info["resumed_from"]] == [first["run_dir"]]
    assert info["resumed_from"][0]["args"]["seed"] == 3
    source = Path(first["run_dir"]) / "final.zip"
    assert info["resume_sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
    assert info["resumed_from"][0]["resume_sha256"] is None
    assert {"commit", "dirty"} <= set(info["git"]) & set(info["resumed_from"][0]["git"])
    curve = read_eval_csv(tmp_path / "models" / "m_curve.csv")
    assert [r["timesteps"] for r in curve if r["kind"] == "eval"] == [0, 256, 512, 768]
    assert [(r["timesteps"], r["kind"]) for r in curve if r["kind"] != "eval"] == [
        (768, "final_eval")]  # only the final evaluation of the shipped model's own run
    # Resumed in turn, the shipped model's curve carries on: the whole chain in one curve.
    again = train(tiny(tmp_path, resume=str(tmp_path / "models" / "m.zip"), total_timesteps=1024,
                       save_path=str(tmp_path / "models" / "m2.zip"), seed=6))
    curve = read_eval_csv(tmp_path / "models" / "m2_curve.csv")
    assert [r["timesteps"] for r in curve if r["kind"] == "eval"] == [0, 256, 512, 768, 1024]
    info = json.loads((tmp_path / "models" / "m2.json").read_text())
    assert [c["args"]["seed"] for c in info["resumed_from"]] == [5, 3]
    assert again["complete"] is True


def test_every_axis_score_is_the_weakest_margin() -> None:
    """A learner that wins more than its fair share but places worse scores below one that is a
    little better on every axis, and a learner better on every axis scores above zero."""
    from uno_mk_env.training.curves import every_axis_score, selection_score

    def row(win, place, others, ahead):
        return {"opponent": "strategic", "players": 4, "win_rate": win, "mean_place": place,
                "opponent_mean_places": others, "ahead_of_each": ahead}

    winner = row(0.275, 2.53, [2.49, 2.49, 2.49], [0.49, 0.48, 0.49])
    balanced = row(0.254, 2.40, [2.53, 2.53, 2.54], [0.53, 0.54, 0.53])
    assert selection_score([winner], "strategic") > selection_score([balanced], "strategic")
    assert every_axis_score([balanced], "strategic") > 0 > every_axis_score([winner], "strategic")
    assert every_axis_score([winner], "strategic") == pytest.approx(2 * 0.48 - 1)
    assert every_axis_score([balanced], "strategic") == pytest.approx(4 * 0.254 - 1)
    assert every_axis_score([row(0.6, 1.4, [1.6], [0.6]) | {"players": 2}], "strategic") == (
        pytest.approx(1 - 1.4 / 1.6))


def test_every_axis_z_score_ranks_by_how_surely_the_target_is_met() -> None:
    """The win rate counts by its interval's lower bound, in standard errors, like a place edge
    and the share ahead: a learner a little further above the fair share wins the ranking the
    relative margins give to the better placer, and the score is the smallest z-statistic."""
    from uno_mk_env.evaluation.tournament import wilson_interval
    from uno_mk_env.training.curves import every_axis_score, every_axis_z_score

    def row(wins, place, others, ahead, se=0.015):
        return {"opponent": "strategic", "players": 4, "games": 10000, "win_rate": wins / 1e4,
                "ci_low": wilson_interval(wins, 10000)[0], "mean_place": place,
                "opponent_mean_places": others, "ahead_of_each": ahead, "place_gap_se": se}

    placer = row(2590, 2.42, [2.51, 2.51, 2.52], [0.52, 0.52, 0.52])
    winner = row(2650, 2.45, [2.51, 2.51, 2.51], [0.515, 0.51, 0.515])
    assert every_axis_score([placer], "strategic") > every_axis_score([winner], "strategic")
    assert every_axis_z_score([winner], "strategic") > every_axis_z_score([placer], "strategic")
    se = (0.25 * 0.75 / 10000) ** 0.5
    win_z = (placer["ci_low"] - 0.25) / se
    assert 0 < win_z < 0.5  # 0.259 over 10,000 games barely clears 0.25
    assert every_axis_z_score([placer], "strategic") == pytest.approx(win_z)
    assert every_axis_z_score([winner], "strategic") == pytest.approx((winner["ci_low"] - 0.25)
                                                                      / se)
    worse_placer = row(2700, 2.52, [2.50, 2.50, 2.50], [0.51, 0.51, 0.51], se=0.01)
    assert every_axis_z_score([worse_placer], "strategic") == pytest.approx(-2.0)
    close_ahead = row(2700, 2.42, [2.51, 2.51, 2.51], [0.52, 0.505, 0.52])
    assert every_axis_z_score([close_ahead], "strategic") == pytest.approx(0.005 / 0.005)
    no_spread = row(2590, 2.42, [2.51, 2.51, 2.52], [0.52, 0.52, 0.52], se=0.0)
    assert every_axis_z_score([no_spread], "strategic") == pytest.approx(win_z)  # place: +inf


def test_place_gap_se_is_the_standard_error_of_the_per_game_gap() -> None:
    from types import SimpleNamespace

    from uno_mk_env.training.curves import place_gap_se

    games = [SimpleNamespace(seats=(0, 1, 2), places=(1, 2, 3)),   # gap 2.5 - 1 = 1.5
             SimpleNamespace(seats=(1, 0, 2), places=(1, 3, 2)),   # gap 1.5 - 3 = -1.5
             SimpleNamespace(seats=(2, 1, 0), places=(3, 1, 2))]   # gap 2 - 2 = 0
    assert place_gap_se(games) == pytest.approx((4.5 / 2 / 3) ** 0.5)
    assert place_gap_se(games[:1]) == float("inf")


@pytest.mark.parametrize("by", ["win", "every_axis", "every_axis_z"])
def test_export_selects_among_candidates_on_other_deals_than_it_reports(tmp_path, capsys, by):
    from uno_mk_env.training.export_model import main as export_main

    summary = train(tiny(tmp_path))
    run = Path(summary["run_dir"])
    candidates = [str(run / "checkpoints" / "ppo_256_steps.zip"), str(run / "final.zip")]
    out = tmp_path / "shipped" / "m.zip"
    common = ["--games", "4", "--seed", "5", "--opponents", "greedy", "--select-games", "4",
              "--select-opponent", "greedy", "--workers", "1"]
    with pytest.raises(SystemExit):
        export_main([*candidates, str(out), *common, "--select-seed", "5"])
    assert "--select-seed 5 is the reporting --seed" in capsys.readouterr().err
    assert not out.exists()
    assert export_main([*candidates, str(out), *common, "--select-seed", "6",
                        "--select-by", by]) == 0
    info = json.loads(out.with_suffix(".json").read_text())
    selection = info["selection"]
    assert selection["by"] == by
    assert [c["checkpoint"] for c in selection["candidates"]] == candidates
    assert selection["seed"] == 6 and info["evaluation"]["seed"] == 5
    assert info["checkpoint"] == selection["chosen"] in candidates
    assert info["complete"] is True and "export_git" in info
    best = max(selection["candidates"], key=lambda c: c["score"])  # the earliest on a tie
    assert selection["chosen"] == best["checkpoint"]
    curve = read_eval_csv(out.with_name("m_curve.csv"))
    assert [r["kind"] for r in curve if r["timesteps"] == info["timesteps"]][-1] == (
        "shipped_eval")


def test_the_checkpoint_of_the_last_step_ships_with_the_runs_final_evaluation(tmp_path):
    """The checkpoint saved at the run's last step is its final model: shipped, its curve keeps
    the run's end-of-run evaluation (it used to be kept for ``final.zip`` only); an earlier
    checkpoint's curve stops at its step and has none."""
    from uno_mk_env.training.export_model import main as export_main

    summary = train(tiny(tmp_path))
    run = Path(summary["run_dir"])
    common = ["--games", "4", "--seed", "5", "--opponents", "greedy", "--workers", "1"]
    for step, final in ((512, True), (256, False)):
        out = tmp_path / f"m{step}.zip"
        assert export_main([str(run / "checkpoints" / f"ppo_{step}_steps.zip"), str(out),
                            *common]) == 0
        curve = read_eval_csv(out.with_name(f"m{step}_curve.csv"))
        assert max(r["timesteps"] for r in curve) == step
        kinds = [r["kind"] for r in curve if r["timesteps"] == step]
        assert ("final_eval" in kinds) is final and kinds[-1] == "shipped_eval"
