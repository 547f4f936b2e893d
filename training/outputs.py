"""The files of a training run, each written whole: through :mod:`uno_mk_env.files`' atomic
writer (a temporary file beside the target, flushed, then renamed over it), so a run killed
at any moment or a full disk leaves the old file or the new one, never a cut one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from uno_mk_env.files import atomic_save, atomic_write_text

__all__ = ["copy_file", "save_model", "write_json"]


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
