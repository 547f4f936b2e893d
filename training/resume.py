"""What a checkpoint was trained with, read without unpickling: its run directory, the
configs of its run and of the runs it resumed from, and the hyperparameters its own ``data``
JSON tells (``--resume`` keeps them; :mod:`uno_mk_env.training.train_ppo` checks them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeGuard

from uno_mk_env import files
from uno_mk_env.agents.policy_file import ModelFileError, resolve_model_path, sb3_data, sb3_literal

from .args import TrainingError


def run_dir_of(checkpoint: Path) -> Path:
    """The run directory of a checkpoint (``<run>/checkpoints/x.zip`` or ``<run>/x.zip``)."""
    return checkpoint.parent.parent if checkpoint.parent.name == "checkpoints" else (
        checkpoint.parent
    )


def config_chain(run_dir: Path) -> list[dict[str, Any]]:
    """The run's ``config.json``, then those of the runs it resumed from, newest first (a run
    resumed from an exported model continues with that model's own chain, ``resumed_from`` of
    its JSON)."""
    chain: list[dict[str, Any]] = []
    seen: set[Path] = set()
    while run_dir not in seen and (run_dir / "config.json").is_file():
        seen.add(run_dir)
        config = files.read_json(run_dir / "config.json", error=TrainingError)
        chain.append(config)
        resume = config.get("args", {}).get("resume")
        if not resume:
            break
        try:
            source = resolve_model_path(resume)
        except FileNotFoundError:
            break
        if not (run_dir_of(source) / "config.json").is_file():
            shipped = read_json(source.with_suffix(".json"))
            if shipped is not None:
                chain.append({k: v for k, v in shipped.items() if k != "resumed_from"})
                chain.extend(c for c in shipped.get("resumed_from", []) if isinstance(c, dict))
            break
        run_dir = run_dir_of(source)
    return chain


def checkpoint_hyperparameters(data: dict[str, Any]) -> dict[str, Any]:
    """The training arguments a checkpoint's ``data`` JSON tells (read as JSON and
    literals only, never unpickled)."""
    def number(v: Any) -> TypeGuard[int | float]:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    out: dict[str, Any] = {}
    for key in ("n_steps", "batch_size", "n_epochs"):
        if isinstance(data.get(key), int) and not isinstance(data.get(key), bool):
            out[key] = data[key]
    for key in ("gamma", "gae_lambda", "ent_coef", "vf_coef", "max_grad_norm"):
        if number(data.get(key)):
            out[key] = float(data[key])
    if "target_kl" in data and (data["target_kl"] is None or number(data["target_kl"])):
        out["target_kl"] = float(data["target_kl"] or 0.0)
    clip = data.get("clip_range")
    if number(clip):
        out["clip_range"] = float(clip)
    elif isinstance(clip, dict):
        m = re.fullmatch(r"ConstantSchedule\(val=([-+0-9.eE]+)\)",
                         str(clip.get("value_schedule", "")))
        if m:
            out["clip_range"] = float(m[1])
    if number(data.get("learning_rate")):  # a constant rate (an annealed one is a function)
        out["learning_rate"], out["anneal_lr"] = float(data["learning_rate"]), False
    kwargs = data.get("policy_kwargs")
    if isinstance(kwargs, dict):
        net_arch = sb3_literal(kwargs.get("net_arch"))
        if isinstance(net_arch, dict) and isinstance(net_arch.get("pi"), list):
            pi = net_arch["pi"]
            vf = net_arch["vf"] if "vf" in net_arch else pi
            out["net_arch"] = ",".join(map(str, pi))
            out["vf_arch"] = "" if vf == pi else ",".join(map(str, vf))
        elif isinstance(net_arch, list):
            out["net_arch"], out["vf_arch"] = ",".join(map(str, net_arch)), ""
        m = re.fullmatch(r"<class 'torch\.nn\.modules\.activation\.(Tanh|ReLU)'>",
                         str(kwargs.get("activation_fn", "<class 'torch.nn.modules.activation."
                                                          "Tanh'>")))
        if m:
            out["activation"] = m[1].lower()
        out["critic_state"] = "actor_size" in kwargs
    return out


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, or ``None`` when there is no such file.

    Raises:
        TrainingError: the file is there but cannot be read, is too large or nested too deep,
            is not JSON or holds no object (one line naming it): a resumed run never trains on
            arguments it could not check.
    """
    if not path.is_file():
        return None
    value = files.read_json(path, error=TrainingError)
    if not isinstance(value, dict):
        raise TrainingError(f"{str(path)!r} must hold a JSON object, got {type(value).__name__}")
    return value


def first_run_args(checkpoint: Path) -> dict[str, Any]:
    """The arguments of the run that created the model of ``checkpoint``: the config of its run
    (``config.json`` of its run directory, else the ``.json`` of an exported model), followed
    back through ``resume`` to the first run of the chain, whose model arguments every resumed
    run kept (an export's JSON lists the chain in ``resumed_from``). Empty when unknown."""
    config = read_json(run_dir_of(checkpoint) / "config.json") or read_json(
        checkpoint.with_suffix(".json"))
    if config is None:
        return {}
    chain = config.get("resumed_from")
    if isinstance(chain, list) and chain and isinstance(chain[-1], dict):
        config = chain[-1]
    seen: set[Path] = set()
    while isinstance(config.get("args"), dict) and config["args"].get("resume"):
        try:
            previous = run_dir_of(resolve_model_path(config["args"]["resume"])) / "config.json"
        except (FileNotFoundError, OSError, TypeError):
            break
        earlier = read_json(previous)
        if earlier is None or previous in seen:
            break
        seen.add(previous)
        config = earlier
    args = config.get("args")
    return args if isinstance(args, dict) else {}


def resume_source(resume: str, fixed: Iterable[str]) -> tuple[Path, int, dict[str, Any]]:
    """The checkpoint of ``--resume``, its step count and what is known of the arguments it
    was trained with (the ``fixed`` arguments), read without unpickling: the arguments of the run
    that created it (:func:`first_run_args`), overridden by what the checkpoint's own ``data``
    JSON tells.

    Raises:
        TrainingError: the file is missing or is not a stable-baselines3 model.
    """
    try:
        path = resolve_model_path(resume)
        data = sb3_data(path)
    except FileNotFoundError:
        raise TrainingError(f"--resume {resume!r}: checkpoint not found (from {Path.cwd()})"
                            ) from None
    except ModelFileError as e:
        raise TrainingError(f"--resume: {e}") from None
    stored = first_run_args(path)
    fixed = set(fixed)
    known = {k: stored[k] for k in fixed if k in stored}
    known.update(checkpoint_hyperparameters(data))
    steps = data.get("num_timesteps")
    return path, steps if isinstance(steps, int) else 0, known


