"""Ship a training checkpoint as a model file, with its provenance and a fresh evaluation.

::

    python -m uno_mk_env.training.export_model runs/<run>/checkpoints/ppo_10000000_steps.zip \\
        models/ppo_4p.zip --games 10000 40000 --seed 2026 --opponents strategic,greedy

Writes ``OUT`` (the model with its optimizer state stripped, as ``--save-path`` of
``train_ppo`` does) and, next to it:

* ``OUT.npz``: the policy in the project's own format
  (:func:`uno_mk_env.agents.ppo.export_policy`), which plays with numpy alone and is read without
  unpickling;

* ``OUT.json``: the checkpoint it came from and its step count, the training run's config (for a
  resumed run, the config of every run in the chain: a resumed model keeps the hyperparameters
  of the run that created it), and the evaluation below;
* ``OUT_curve.csv`` / ``OUT_curve.png``: the run's evaluation curve up to the checkpoint;
* the evaluation: ``--games`` duplicate-deal games (one or more counts) with root seed ``--seed``
  against each of ``--opponents`` (one learner and ``N - 1`` copies of the opponent), win rate
  with its 95 % Wilson interval (:func:`uno_mk_env.training.train_ppo.evaluate`).

Pick the checkpoint on another seed than the one you report (the shipped models were chosen on
seed 777 and evaluated on seed 2026).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def config_chain(run_dir: Path) -> list[dict[str, Any]]:
    """The run's ``config.json``, then those of the runs it resumed from, newest first."""
    from uno_mk_env.agents.ppo import resolve_model_path
    from uno_mk_env.training.train_ppo import run_dir_of

    chain = []
    seen = set()
    while run_dir not in seen and (run_dir / "config.json").is_file():
        seen.add(run_dir)
        config = json.loads((run_dir / "config.json").read_text())
        chain.append(config)
        resume = config.get("args", {}).get("resume")
        if not resume:
            break
        try:
            run_dir = run_dir_of(resolve_model_path(resume))
        except FileNotFoundError:
            break
    return chain


def export(checkpoint: str, out: str, games: Sequence[int], seed: int,
           opponents: Sequence[str], workers: int) -> dict[str, Any]:
    """Writes the model file, its JSON and curve (see the module docstring); returns the JSON."""
    from sb3_contrib import MaskablePPO

    from uno_mk_env.agents.ppo import export_policy, resolve_model_path
    from uno_mk_env.evaluation.tournament import check_output_dir
    from uno_mk_env.training.train_ppo import (
        evaluate,
        plot_curve,
        read_eval_csv,
        run_dir_of,
        strip_optimizer_and_save,
        write_eval_csv,
    )

    source = resolve_model_path(checkpoint)
    run_dir = run_dir_of(source)
    chain = config_chain(run_dir)
    if not chain:
        raise FileNotFoundError(f"no config.json in {run_dir}: not a train_ppo run directory")
    num_players = int(chain[0]["args"]["num_players"])
    target = Path(out)
    if target.suffix != ".zip":
        target = target.with_name(target.name + ".zip")
    stem = target.with_suffix("")
    check_output_dir(target.parent, [target.name, f"{stem.name}.npz", f"{stem.name}.json",
                                     f"{stem.name}_curve.csv", f"{stem.name}_curve.png"])
    # SB3's loader unpickles: export only checkpoints you trust (your own training runs).
    model = MaskablePPO.load(source, device="cpu")
    strip_optimizer_and_save(model, target)
    npz = export_policy(target, stem.parent / f"{stem.name}.npz", provenance={
        "checkpoint": str(source), "timesteps": int(model.num_timesteps)})

    rows = []
    if (run_dir / "eval.csv").is_file():
        rows = [r for r in read_eval_csv(run_dir / "eval.csv")
                if r["timesteps"] <= model.num_timesteps and r["kind"] == "eval"]
    write_eval_csv(rows, stem.parent / f"{stem.name}_curve.csv")
    plot_curve(rows, num_players, stem.parent / f"{stem.name}_curve.png",
               f"{target.name}: {num_players} players, checkpoint at {model.num_timesteps:,} steps")

    command = (f"uno-mk tournament --agents ppo:{target}," + ",".join(["<opp>"] * (
        num_players - 1)) + f" --players {num_players} --games <games> --seed {seed} "
        f"--workers {workers}")
    results = []
    for n_games in games:
        for opponent in opponents:
            r = evaluate(str(target), opponent, num_players, n_games, seed, workers)
            row = {"opponent": opponent, "copies": num_players - 1, "games": int(r["games"]),
                   **{k: round(float(r[k]), 4) for k in ("win_rate", "ci_low", "ci_high")}}
            results.append(row)
            print(f"{target}: {row}", flush=True)
    evaluation = {"command": command, "seed": seed, "duplicate_deals": True,
                  "confidence": "95% Wilson interval", "results": results}
    info = {
        "checkpoint": str(source),
        "timesteps": int(model.num_timesteps),
        "numpy_policy": npz.name,
        "export_command": "python -m uno_mk_env.training.export_model " + " ".join(sys.argv[1:]),
        **chain[0],
        "resumed_from": chain[1:],
        "evaluation": evaluation,
    }
    (stem.parent / f"{stem.name}.json").write_text(json.dumps(info, indent=2) + "\n")
    return info


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m uno_mk_env.training.export_model",
        description="Ship a train_ppo checkpoint: strip the optimizer, write its provenance, "
                    "curve and a duplicate-deal evaluation (see the module docstring).",
    )
    parser.add_argument("checkpoint", help="a .zip of a train_ppo run (checkpoints/, final.zip)")
    parser.add_argument("out", help="the model file to write, e.g. models/ppo_4p.zip")
    parser.add_argument("--games", type=int, nargs="*", default=[10_000],
                        help="games per opponent; several counts evaluate once per count "
                             "(none: no evaluation)")
    parser.add_argument("--seed", type=int, default=2026, help="root seed of the evaluation")
    parser.add_argument("--opponents", default="strategic,greedy",
                        help="comma-separated agent specs to evaluate against")
    parser.add_argument("--workers", type=int, default=2, help="tournament processes")
    args = parser.parse_args(argv)
    if any(g < 1 for g in args.games):
        parser.error(f"--games must be positive, got {args.games}")
    opponents = [s.strip() for s in args.opponents.split(",") if s.strip()]
    from uno_mk_env.evaluation.tournament import OutputPathError

    try:
        export(args.checkpoint, args.out, args.games, args.seed, opponents, args.workers)
    except OutputPathError as e:
        parser.error(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
