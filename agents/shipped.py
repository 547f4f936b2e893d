"""The trained policies that ship with the package, and the one place a model name is resolved.

The repository's ``models/`` folder installs as the package ``uno_mk_env.models``. Its policy
files ``NAME.npz`` (played with numpy alone, :func:`uno_mk_env.agents.policy_file.load_policy`) and
their provenance ``NAME.json`` (command, seed, commit, versions, evaluation) are package data;
the stable-baselines3 ``.zip`` checkpoints (for resuming training), the training curves and the
benchmark cards stay in the repository. :func:`shipped_names` lists what is installed:
``ppo_2p`` (trained at 2 players), ``ppo_4p`` (at 4) and ``rllib_2p`` (RLlib, at 2).

A name stands wherever a model path is accepted: ``ppo:ppo_2p`` in an agent spec
(``make_agent("ppo:ppo_4p")``, ``uno-mk tournament``, ``uno-mk evaluate``), the protocol's
opponents, the demo and ``ismcts:N:prior=ppo``. :func:`find_shipped` decides, and every model
path goes through it (:func:`uno_mk_env.agents.policy_file.resolve_model_path` asks it first):

* a bare shipped name (``ppo_2p``) always means the shipped file, whatever the working
  directory holds (write ``./ppo_2p`` for a file of that name there);
* the repository spelling ``models/NAME`` or ``models/NAME.npz`` of earlier docs means the
  shipped file when no such file exists from the working directory;
* anything else is a path.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
from pathlib import Path, PurePath
from typing import Any

__all__ = ["SHIPPED_PACKAGE", "describe", "find_shipped", "shipped_info", "shipped_names",
           "shipped_path", "shipped_sha256"]

#: The package that holds the shipped policies (the repository's ``models/`` folder).
SHIPPED_PACKAGE = "uno_mk_env.models"
_SUFFIX = ".npz"


def _folder() -> Any:
    """The shipped folder as an ``importlib.resources`` traversable, or ``None`` when the
    package is missing (an install from before the models became package data)."""
    try:
        return importlib.resources.files(SHIPPED_PACKAGE)
    except ModuleNotFoundError:
        return None


def shipped_names() -> tuple[str, ...]:
    """The names of the shipped policies (``"ppo_2p"``, ...), sorted."""
    folder = _folder()
    if folder is None:
        return ()
    return tuple(sorted(item.name[: -len(_SUFFIX)] for item in folder.iterdir()
                        if item.name.endswith(_SUFFIX) and item.is_file()))


def _unknown(name: str) -> LookupError:
    names = shipped_names()
    listing = ", ".join(names) if names else (
        f"none: the package {SHIPPED_PACKAGE} is missing; reinstall uno-mk-env")
    return LookupError(f"no shipped policy named {name!r} (shipped: {listing})")


def _resource(name: str, suffix: str) -> Path:
    if name not in shipped_names():
        raise _unknown(name)
    item = _folder().joinpath(name + suffix)
    if not isinstance(item, Path):  # an install inside a zip archive: numpy needs a real file
        raise LookupError(f"the shipped policy {name!r} is inside an archive ({item}); install "
                          "uno-mk-env unpacked (pip install does)")
    return item


def shipped_path(name: str) -> Path:
    """The ``.npz`` file of the shipped policy ``name``.

    Raises:
        LookupError: ``name`` is not shipped (the message lists the shipped names).
    """
    return _resource(name, _SUFFIX)


def shipped_info(name: str) -> dict[str, Any]:
    """The provenance of the shipped policy ``name`` (its ``NAME.json``: command, seed, commit,
    versions, evaluation).

    Raises:
        LookupError: ``name`` is not shipped.
        FileNotFoundError: its ``.json`` is missing.
    """
    return json.loads(_resource(name, ".json").read_text(encoding="utf-8"))


def shipped_sha256(name: str) -> str:
    """SHA-256 of the shipped policy file ``name`` (what a benchmark card records)."""
    return hashlib.sha256(shipped_path(name).read_bytes()).hexdigest()


def find_shipped(arg: str | PurePath) -> Path | None:
    """The shipped file that the model argument ``arg`` names, or ``None`` when it is a path
    (see the module docstring): ``"ppo_2p"`` always; ``"models/ppo_2p"`` or
    ``"models/ppo_2p.npz"`` when nothing exists from the working directory at that path, or at
    it with ``.zip`` or ``.npz`` appended (what
    :func:`~uno_mk_env.agents.policy_file.resolve_model_path`
    would load)."""
    text = str(arg)
    names = shipped_names()
    if text in names:
        return shipped_path(text)
    p = PurePath(text)
    stem = p.name[: -len(_SUFFIX)] if p.name.endswith(_SUFFIX) else p.name
    if (len(p.parts) == 2 and p.parts[0] == "models" and stem in names
            and not any(Path(text + end).exists() for end in ("", ".zip", _SUFFIX))):
        return shipped_path(stem)
    return None


def describe(name: str) -> dict[str, Any]:
    """The headline facts of the shipped policy ``name``, from its file and its ``.json``:
    ``name``, ``spec`` (``ppo:NAME``), ``file``, ``sha256`` (of the ``.npz``), ``players`` (the
    table size it was trained at), ``backend`` (``"sb3"`` or ``"rllib"``), ``timesteps``,
    ``complete`` (the run reached its step budget), ``seed``, ``commit`` (of the training run;
    ``None`` where not recorded), ``evaluation`` (the results recorded at the trained player
    count: ``opponent``, ``games``, ``win_rate``, ``ci_low``, ``ci_high``, ``mean_place``, ...),
    ``evaluation_source`` (where they come from) and ``evaluation_seed`` (the root seed of their
    tournament; ``None`` for a training run's own final evaluation, whose deals derive from the
    training seed).

    Raises:
        LookupError: ``name`` is not shipped.
    """
    info = shipped_info(name)
    args = info.get("args") or {}
    players = args.get("num_players")
    if (info.get("evaluation") or {}).get("results"):
        ev = info["evaluation"]
        results, source = ev["results"], (f"{ev.get('command', 'uno-mk tournament')}"
                                          f" (seed {ev.get('seed')})")
        seed = ev.get("seed")
    else:
        results = (info.get("summary") or {}).get("final_eval") or []
        source = ("the training run's final evaluation (its deals seeded from the training "
                  f"seed {args.get('seed')})")
        seed = None
    return {
        "name": name, "spec": f"ppo:{name}", "file": str(shipped_path(name)),
        "sha256": shipped_sha256(name), "players": players,
        "backend": info.get("backend", "sb3"), "timesteps": info.get("timesteps"),
        "complete": info.get("complete"), "seed": args.get("seed"),
        "commit": (info.get("git") or {}).get("commit"),
        "evaluation": [r for r in results if r.get("players") == players],
        "evaluation_source": source if results else None,
        "evaluation_seed": seed if results else None,
    }
