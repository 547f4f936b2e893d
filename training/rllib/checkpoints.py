"""Checkpoints and policy files: an RLlib checkpoint with this backend's metadata
(``uno_mk.json``) and the learner's policy (``policy.npz``), reading one back for ``--resume``,
and the learner's actor written as the project's policy ``.npz``. Imports nothing of Ray (the
algorithm is passed in)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env.agents.policy_file import load_policy, write_policy
from uno_mk_env.files import read_json

from ..args import TrainingError
from ..outputs import write_json
from .args import RESUME_FIXED, Args
from .league import MAIN

__all__ = ["CHECKPOINT_META", "CHECKPOINT_POLICY", "actor_layers", "export_module",
           "read_checkpoint", "restored_weights_match", "resume_args", "save_checkpoint"]

CHECKPOINT_META = "uno_mk.json"
CHECKPOINT_POLICY = "policy.npz"


def actor_layers(state: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor's ``(W, b)`` layers (``W`` of shape ``(inputs, outputs)``) from the state
    dict of a :class:`MaskedActorCritic` (``pi.<i>.weight`` / ``pi.<i>.bias``, torch's
    ``(outputs, inputs)`` layout)."""
    indices = sorted(int(k.split(".")[1]) for k in state
                     if k.startswith("pi.") and k.endswith(".weight"))
    return [(np.asarray(state[f"pi.{i}.weight"], np.float32).T.copy(),
             np.asarray(state[f"pi.{i}.bias"], np.float32).copy()) for i in indices]


def export_module(state: dict[str, Any], activation: str, destination: str | Path,
                  provenance: dict[str, Any] | None = None) -> Path:
    """Writes the actor of a :class:`MaskedActorCritic` state dict as the project's policy
    ``.npz`` (:func:`uno_mk_env.agents.policy_file.write_policy`): its input scale, hidden layers
    and
    logits layer; the agent ``ppo:PATH`` plays it with numpy alone."""
    return write_policy(actor_layers(state), activation, destination,
                        scale=np.asarray(state["scale"], np.float32),
                        provenance={"trainer": "ray-rllib", **(provenance or {})})



def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The metadata this module writes next to an RLlib checkpoint (``uno_mk.json``: the run's
    arguments, steps, league, evaluation rows), read as JSON.

    Raises:
        TrainingError: not a checkpoint directory of this module.
    """
    p = Path(path).expanduser()
    meta_path = p / CHECKPOINT_META
    if not meta_path.is_file():
        raise TrainingError(f"--resume {str(path)!r}: not a checkpoint of this backend (no "
                            f"{CHECKPOINT_META} in {p}; checkpoints are "
                            "runs/<run>/checkpoints/<steps>/)")
    meta = read_json(meta_path, f"--resume {str(path)!r}: {CHECKPOINT_META}",
                     error=TrainingError)
    if not isinstance(meta, dict) or not isinstance(meta.get("args"), dict):
        raise TrainingError(f"--resume {str(path)!r}: {CHECKPOINT_META} has no 'args'")
    return meta


def resume_args(args: Args, given: set[str]) -> Args:
    """``args`` with the model and PPO arguments (:data:`RESUME_FIXED`) of the checkpoint's
    run; the ones given on the command line must agree.

    Raises:
        TrainingError: a given :data:`RESUME_FIXED` argument differs (old -> new), or the
            checkpoint already has ``--total-timesteps`` steps.
    """
    meta = read_checkpoint(args.resume)
    old = meta["args"]
    changed = [f"{k} {old[k]!r} -> {getattr(args, k)!r}" for k in RESUME_FIXED
               if k in given and k in old and old[k] != getattr(args, k)]
    if changed:
        raise TrainingError(f"--resume {args.resume}: {', '.join(changed)}: a resumed run keeps "
                            "its model, league size and PPO arguments (only those in "
                            "uno_mk_env.training.rllib.RESUME_MAY_CHANGE may change)")
    args = dataclasses.replace(args, **{k: old[k] for k in RESUME_FIXED if k in old})
    if int(meta.get("timesteps", 0)) >= args.total_timesteps:
        raise TrainingError(f"--resume {args.resume}: the checkpoint already has "
                            f"{meta.get('timesteps')} env steps and --total-timesteps is "
                            f"{args.total_timesteps}: nothing to train (it counts the "
                            "checkpoint's steps too)")
    return args



def save_checkpoint(algo: Any, run_dir: Path, steps: int, meta: dict[str, Any],
                    activation: str) -> Path:
    """``algo.save_to_path(run_dir/checkpoints/<steps>)`` plus ``uno_mk.json`` and the
    learner's policy as ``policy.npz`` (playable, and checked against the restored weights on
    ``--resume``)."""
    path = run_dir / "checkpoints" / f"{steps:09d}"
    algo.save_to_path(str(path.resolve()))
    export_module(algo.learner_group.get_weights([MAIN])[MAIN], activation,
                  path / CHECKPOINT_POLICY, provenance={"timesteps": steps})
    write_json(path / CHECKPOINT_META, {**meta, "timesteps": steps})
    return path


def restored_weights_match(state: dict[str, Any], policy: Path) -> bool | None:
    """Whether the actor of ``state`` is the one saved in ``policy`` (a checkpoint's
    ``policy.npz``); ``None`` when there is no such file."""
    if not policy.is_file():
        return None

    actor, _ = load_policy(policy)
    mine = actor_layers(state)
    return len(mine) == len(actor.layers) and all(
        np.array_equal(w, w2) and np.array_equal(b, b2)
        for (w, b), (w2, b2) in zip(mine, actor.layers))

