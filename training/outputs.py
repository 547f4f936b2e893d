"""The files of a training run, each written whole: through :mod:`uno_mk_env.files`' atomic
writer (a temporary file beside the target, flushed, then renamed over it), so a run killed
at any moment or a full disk leaves the old file or the new one, never a cut one."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from uno_mk_env.files import atomic_save, atomic_write_text

__all__ = ["copy_file", "new_run_dir", "save_model", "write_json"]


def write_json(path: str | Path, data: Any) -> Path:
    """``data`` as indented JSON (``config.json``, ``summary.json``, a shipped model's JSON)."""
    return atomic_write_text(path, json.dumps(data, indent=2) + "\n")


def copy_file(source: str | Path, target: str | Path) -> Path:
    """A copy of the file ``source`` (``best.npz`` from the evaluated policy, say)."""
    with open(source, "rb") as f:
        return atomic_save(target, lambda out: shutil.copyfileobj(f, out))


def save_model(model: Any, path: str | Path) -> Path:
    """A stable-baselines3 model's ``.zip`` (``model.save`` writes to the open file)."""
    return atomic_save(path, model.save)


def new_run_dir(args: Any) -> tuple[str, Path]:
    """A new, empty run folder ``runs_dir/<exp_name>_<N>p__s<seed>__<unix time>`` (``-2``,
    ``-3`` ... appended when a run of the same name started in the same second, so that two
    runs never share, and overwrite, a folder); returns its name and path."""
    base = f"{args.exp_name}_{args.num_players}p__s{args.seed}__{int(time.time())}"
    Path(args.runs_dir).mkdir(parents=True, exist_ok=True)
    name, n = base, 1
    while True:
        try:
            (Path(args.runs_dir) / name).mkdir()
            return name, Path(args.runs_dir) / name
        except FileExistsError:
            n += 1
            name = f"{base}-{n}"
