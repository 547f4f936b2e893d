"""Where a model came from, and shipping it: the code's commit and versions, and the files of a
shipped model (:func:`ship`).

A shipped model ``NAME.zip`` comes with ``NAME.npz`` (the policy for play without torch or
unpickling, :func:`uno_mk_env.agents.policy_file.export_policy`), ``NAME.json`` (its provenance: the
commit, versions, the exact command and true configuration of every run of its resume chain,
seeds, how it was selected, its evaluations) and ``NAME_curve.csv`` / ``NAME_curve.png`` (its
evaluation curve up to and including its final evaluation).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import uno_mk_env
from uno_mk_env.agents.policy_file import export_policy

from .curves import plot_curve, resume_points, write_eval_csv

#: The files :func:`ship` writes for ``NAME.zip`` (``{stem}`` is ``NAME``).
SHIPPED_FILES = ("{stem}.zip", "{stem}.npz", "{stem}.json", "{stem}_curve.csv",
                 "{stem}_curve.png")


def versions() -> dict[str, str]:
    """Python and the versions of the packages training depends on."""
    out = {"python": sys.version.split()[0], "uno-mk-env": uno_mk_env.__version__}
    for pkg in ("numpy", "torch", "stable-baselines3", "sb3-contrib", "gymnasium"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def source_commit() -> dict[str, Any]:
    """The git commit of the code that runs (``git rev-parse HEAD`` in the package's source
    tree) and whether that tree has uncommitted changes (``dirty``; ``dirty_files``: the
    tracked files that differ from that commit, ``git diff --name-only HEAD``);
    ``{"commit": None}`` outside a git checkout (an installed wheel)."""
    root = Path(uno_mk_env.__file__).resolve().parent.parent

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                 text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.rstrip("\n") if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return {"commit": None, "dirty": None}
    changed = git("diff", "--name-only", "HEAD")
    dirty = sorted(line for line in (changed or "").splitlines() if line.strip())
    return {"commit": commit.strip(), "dirty": bool(dirty), "dirty_files": dirty}


def shipped_paths(target: Path) -> list[Path]:
    """The files :func:`ship` writes for the model file ``target`` (a ``.zip``)."""
    stem = target.with_suffix("")
    return [stem.parent / name.format(stem=stem.name) for name in SHIPPED_FILES]


def zip_target(path: str | Path) -> Path:
    """``path`` with the ``.zip`` suffix (appended when missing), as SB3 saves it."""
    target = Path(path)
    return target if target.suffix == ".zip" else target.with_name(target.name + ".zip")


def strip_optimizer_and_save(model: Any, path: Path) -> None:
    """Saves ``model`` with a fresh (empty) optimizer state: the Adam moments are two extra
    copies of every weight and are only needed to resume training exactly."""
    policy = model.policy
    saved = policy.optimizer
    policy.optimizer = policy.optimizer_class(
        policy.parameters(), lr=saved.param_groups[0]["lr"], **policy.optimizer_kwargs
    )
    try:
        model.save(path)
    finally:
        policy.optimizer = saved


def ship(model: Any, target: Path, info: dict[str, Any], curve: Sequence[dict[str, Any]],
         num_players: int, title: str, npz_provenance: dict[str, Any]) -> dict[str, Any]:
    """Writes the shipped files of ``model`` as ``target`` (see the module docstring):
    ``info`` becomes the JSON (with ``numpy_policy``, the ``.npz`` name, and ``timesteps``
    added) and ``curve`` the CSV and PNG; ``npz_provenance`` goes into the ``.npz`` metadata.
    Returns the JSON written."""
    zip_path, npz_path, json_path, csv_path, png_path = shipped_paths(target)
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    strip_optimizer_and_save(model, zip_path)
    export_policy(zip_path, npz_path, provenance={
        **npz_provenance, "commit": info.get("git", {}).get("commit"),
        "timesteps": int(model.num_timesteps),
    })
    info = {"numpy_policy": npz_path.name, "timesteps": int(model.num_timesteps), **info}
    json_path.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    write_eval_csv(curve, csv_path)
    plot_curve(curve, num_players, png_path, title, resumes=resume_points(info))
    return info
