"""Ship a training checkpoint as a model file, with its provenance, its selection and a fresh
evaluation.

::

    python -m uno_mk_env.training.export_model runs/<run>/checkpoints/ppo_10000000_steps.zip \\
        models/ppo_4p.zip --games 10000 --seed 2026 --opponents strategic,greedy
    python -m uno_mk_env.training.export_model runs/<run>/checkpoints/ppo_{8,9}000000_steps.zip \\
        runs/<run>/final.zip models/ppo_4p.zip --select-games 4000 --select-seed 777

Given several checkpoints, each is first evaluated on ``--select-seed`` (``--select-games``
against ``--select-opponent`` at each of ``--select-players``) and the best one is shipped, by
``--select-by``: ``win`` (the mean over table sizes of win rate x players,
:func:`~uno_mk_env.training.curves.selection_score`), ``every_axis`` (the weakest of its
margins in win rate, mean place and the share ahead of each copy,
:func:`~uno_mk_env.training.curves.every_axis_score`) or ``every_axis_z`` (in standard errors,
the win rate's 95 % lower bound over the fair share and the other two margins,
:func:`~uno_mk_env.training.curves.every_axis_z_score`); the reporting
``--seed`` must differ, so the reported figures are not those it was chosen on. Writes ``OUT``
(the model with its optimizer state stripped, as ``train_ppo --save-path`` does,
:func:`uno_mk_env.training.provenance.ship`) and, next to it:

* ``OUT.npz``: the policy in the project's own format
  (:func:`uno_mk_env.agents.policy_file.export_policy`), which plays with numpy alone and is read
  without
  unpickling;
* ``OUT.json``: the checkpoint and its step count, the training run's config with its git
  commit, versions, seeds and exact command (for a resumed run, the config of every run in the
  chain, ``resumed_from``), the selection (every candidate's evaluation), this export's command
  and commit, and the evaluation below;
* ``OUT_curve.csv`` / ``OUT_curve.png``: the run's evaluation curve up to the checkpoint, its
  end-of-run evaluation when the checkpoint is the run's final model, and this evaluation
  (``kind`` ``shipped_eval``);
* the evaluation: ``--games`` duplicate-deal games (one or more counts) with root seed ``--seed``
  against each of ``--opponents`` (one learner and ``N - 1`` copies of the opponent) at each of
  ``--players``: win rate with its 95 % Wilson interval, mean places, and the share of games the
  model finishes ahead of each copy (:func:`uno_mk_env.training.curves.evaluate`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uno_mk_env.agents.policy_file import resolve_model_path, sb3_data
from uno_mk_env.evaluation.tournament import OutputPathError, check_output_dir

from .args import TrainingError, ints, specs
from .curves import SELECTION_SCORES, evaluate, read_eval_csv
from .provenance import ship, shipped_paths, source_commit, versions, zip_target
from .resume import config_chain, read_json, run_dir_of

PROG = "python -m uno_mk_env.training.export_model"


def _rounded(r: dict[str, Any]) -> dict[str, Any]:
    out = {"opponent": r["opponent"], "players": r["players"], "games": int(r["games"]),
           "wins": int(r["wins"])}
    for key in ("win_rate", "ci_low", "ci_high", "mean_place", "place_gap_se"):
        if key in r:
            out[key] = round(float(r[key]), 4)
    for key in ("opponent_mean_places", "ahead_of_each"):
        if key in r:
            out[key] = [round(float(x), 4) for x in r[key]]
    return out


def select(candidates: Sequence[Path], opponent: str, players: Sequence[int], games: int,
           seed: int, workers: int, by: str = "win") -> dict[str, Any]:
    """Evaluates every candidate checkpoint on ``seed`` and names the best (the highest score
    of :data:`~uno_mk_env.training.curves.SELECTION_SCORES` ``[by]``; the earliest on a tie)."""
    rows = []
    for path in candidates:
        results = [evaluate(str(path), opponent, n, games, seed, workers) for n in players]
        score = SELECTION_SCORES[by](results, opponent)
        rows.append({"checkpoint": str(path), "timesteps": sb3_data(path).get("num_timesteps"),
                     "score": round(score, 4), "results": [_rounded(r) for r in results]})
        print(f"selection: {path}: {rows[-1]['results']}", flush=True)
    best = max(range(len(rows)), key=lambda i: (rows[i]["score"], -i))
    method = {"win": "best mean over tables of win rate x players",
              "every_axis": "best weakest margin over win rate, mean place and the share ahead "
                            "of each copy",
              "every_axis_z": "best weakest margin in standard errors over the win rate's "
                              "95 % lower bound, mean place and the share ahead of each "
                              "copy"}[by]
    return {"method": f"{method} against {opponent}", "by": by,
            "opponent": opponent, "players": list(players), "games": games, "seed": seed,
            "duplicate_deals": True, "candidates": rows, "chosen": rows[best]["checkpoint"]}


def export(checkpoints: Sequence[str], out: str, games: Sequence[int], seed: int,
           opponents: Sequence[str], workers: int, players: Sequence[int] = (),
           select_games: int = 4000, select_seed: int = 777, select_opponent: str = "strategic",
           select_players: Sequence[int] = (), argv: Sequence[str] | None = None,
           select_by: str = "win") -> dict[str, Any]:
    """Writes the model file, its JSON and curve (see the module docstring); returns the JSON.

    Raises:
        TrainingError: no run directory, or a selection on the reporting seed.
        OutputPathError: ``out``'s folder cannot be written.
    """
    from .policies import load_model  # stable-baselines3 (the train extra)

    sources = [resolve_model_path(c) for c in checkpoints]
    chain = config_chain(run_dir_of(sources[0]))
    if not chain:
        raise TrainingError(f"no config.json in {run_dir_of(sources[0])}: not a train_ppo run "
                            "directory")
    run_players = int(chain[0]["args"]["num_players"])
    players = list(players) or [run_players]
    target = zip_target(out)
    check_output_dir(target.parent, [p.name for p in shipped_paths(target)])
    selection: dict[str, Any] = {"method": "the one checkpoint given"}
    if len(sources) > 1:
        if select_seed == seed:
            raise TrainingError(f"--select-seed {select_seed} is the reporting --seed: choose "
                                "the checkpoint on other deals than the ones you report")
        selection = select(sources, select_opponent, list(select_players) or players,
                           select_games, select_seed, workers, select_by)
    source = Path(selection.get("chosen", sources[0]))
    run_dir = run_dir_of(source)
    chain = config_chain(run_dir)
    # SB3's loader unpickles: export only checkpoints you trust (your own training runs).
    model = load_model(source)
    steps = int(model.num_timesteps)

    results = []
    for n_games in games:
        for n in players:
            for opponent in opponents:
                r = evaluate(str(source), opponent, n, n_games, seed, workers)
                results.append(_rounded(r))
                print(f"{target}: {results[-1]}", flush=True)
    command = (f"uno-mk tournament --agents ppo:{target.with_suffix('.npz')},<opp x N-1> "
               f"--players <N> --games <games> --seed {seed} --workers {workers}")
    evaluation = {"command": command, "seed": seed, "duplicate_deals": True,
                  "confidence": "95% Wilson interval", "results": results}

    summary = read_json(run_dir / "summary.json") or {}
    # the run's final model: final.zip, or the checkpoint of the run's last step (the same
    # weights, saved after the last update)
    is_final = source.name == "final.zip" or steps == summary.get("timesteps")
    curve = []
    if (run_dir / "eval.csv").is_file():
        rows = read_eval_csv(run_dir / "eval.csv", run_players)
        curve = [r for r in rows if r["timesteps"] <= steps and r["kind"] == "eval"]
        if is_final:
            curve += [r for r in rows if r["timesteps"] == steps and r["kind"] == "final_eval"]
    curve += [{**r, "timesteps": steps, "kind": "shipped_eval", "wall_s": 0.0} for r in results
              if r["games"] == max(games)]
    info = {
        "checkpoint": str(source),
        "complete": summary.get("complete", False),
        "export_command": " ".join([PROG, *(argv if argv is not None else sys.argv[1:])]),
        "export_git": source_commit(),
        "export_versions": versions(),
        **chain[0],
        "resumed_from": chain[1:],
        "selection": selection,
        "evaluation": evaluation,
    }
    return ship(model, target, info, curve, run_players,
                f"{target.name}: {run_players} players, checkpoint at {steps:,} steps",
                npz_provenance={"checkpoint": str(source)})


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    """``python -m uno_mk_env.training.export_model``; ``prog`` names the command in the usage
    line and errors (``uno-mk export``)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Ship a train_ppo checkpoint (the best of several, chosen on another seed): "
                    "strip the optimizer, write its provenance, curve and a duplicate-deal "
                    "evaluation (see the module docstring).",
    )
    parser.add_argument("checkpoints", nargs="+", metavar="CHECKPOINT",
                        help="one or more .zip of train_ppo runs (checkpoints/, final.zip)")
    parser.add_argument("out", help="the model file to write, e.g. models/ppo_4p.zip")
    parser.add_argument("--games", type=int, nargs="*", default=[10_000],
                        help="games per opponent and table size; several counts evaluate once "
                             "per count (none: no evaluation)")
    parser.add_argument("--seed", type=int, default=2026, help="root seed of the evaluation")
    parser.add_argument("--opponents", default="strategic,greedy",
                        help="comma-separated agent specs to evaluate against")
    parser.add_argument("--players", default="",
                        help="comma-separated table sizes to evaluate at (default: the run's)")
    parser.add_argument("--select-games", type=int, default=4000,
                        help="games per candidate and table size of the selection")
    parser.add_argument("--select-seed", type=int, default=777,
                        help="root seed of the selection (not the reporting --seed)")
    parser.add_argument("--select-opponent", default="strategic",
                        help="the agent the selection is against")
    parser.add_argument("--select-players", default="",
                        help="table sizes of the selection (default: --players)")
    parser.add_argument("--select-by", choices=sorted(SELECTION_SCORES), default="win",
                        help="win: the best win rate; every_axis: the best weakest margin over "
                             "win rate, mean place and the share ahead of each copy; "
                             "every_axis_z: in standard errors, the win rate's lower bound over "
                             "the fair share, the place gap and the share ahead of each copy")
    parser.add_argument("--workers", type=int, default=2, help="tournament processes")
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if any(g < 1 for g in args.games) or args.select_games < 1:
        parser.error(f"--games and --select-games must be positive, got {args.games} and "
                     f"{args.select_games}")

    try:
        export(args.checkpoints, args.out, args.games, args.seed, specs(args.opponents),
               args.workers, ints(args.players), args.select_games, args.select_seed,
               args.select_opponent, ints(args.select_players), argv, args.select_by)
    except (OutputPathError, TrainingError, FileNotFoundError) as e:
        parser.error(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
