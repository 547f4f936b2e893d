"""Policy files: reading a stable-baselines3 ``.zip`` or this project's policy ``.npz`` into a
:class:`~uno_mk_env.agents.numpy_actor.NumpyActor` without unpickling, and writing the ``.npz``
(:func:`export_policy`, :func:`write_policy`); :func:`resolve_model_path` says which file a
``ppo:`` spec names.

Loading never unpickles (:func:`load_policy`): SB3 stores parts of a model as cloudpickle, which
runs code from the file on load, so a model file is data to check, not code to run. From a
``.zip`` the agent reads only the plain JSON fields of the ``data`` entry (observation shape,
number of actions, ``net_arch``, activation and features-extractor class names, ``actor_size``)
and the weights of ``policy.pth`` with ``torch.load(..., weights_only=True)`` (so it needs
torch); a ``.npz`` is read with ``np.load(..., allow_pickle=False)`` and needs numpy alone.
Anything the numpy actor cannot represent exactly (another policy family, features extractor or
activation, misshapen, sparse, quantized, ``meta`` or non-float weights, non-finite values) is
refused with one :class:`ModelFileError` line of bounded length (values from the file are quoted
shortened). Sizes are checked before anything is allocated: archive entries
(:data:`MAX_ENTRY_BYTES`), the JSON (:data:`MAX_DATA_BYTES`), the weights a ``policy.pth``
declares (:data:`MAX_WEIGHTS`), the shape each ``.npy`` header declares, the layers
(:data:`MAX_LAYERS`).
Training (``train_ppo --resume``, ``export_model``) still uses SB3's own loader, which trusts the
file.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import math
import re
import warnings
import zipfile
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from uno_mk_env import actions as A
from uno_mk_env.engine.observation import OBS_PIECES, OBS_SIZE, STATE_SIZE
from uno_mk_env.errors import UnoMkError, one_line
from uno_mk_env.files import atomic_save, parse_json

from .numpy_actor import MAX_QUOTED_CHARS, NumpyActor, _short
from .shipped import find_shipped, shipped_names

__all__ = [
    "MAX_DATA_BYTES", "MAX_ENTRY_BYTES", "MAX_LAYERS", "MAX_MESSAGE_CHARS", "MAX_WEIGHTS",
    "POLICY_FORMAT", "POLICY_FORMAT_VERSION", "LoadedPolicy", "ModelFileError", "export_policy",
    "load_policy", "resolve_model_path", "sb3_data", "sb3_literal", "write_policy",
]


def resolve_model_path(path: str | Path) -> Path:
    """The model file for ``path``: the shipped policy it names, if any
    (:func:`~uno_mk_env.agents.shipped.find_shipped`: ``"ppo_2p"``, or ``"models/ppo_2p.npz"``
    from outside the repository), else ``path`` itself, else ``path + ".zip"``, else
    ``path + ".npz"``.

    Raises:
        FileNotFoundError: none of them is a file.
    """
    shipped = find_shipped(path)
    if shipped is not None:
        return shipped
    p = Path(path).expanduser()
    for candidate in (p, p.with_name(p.name + ".zip"), p.with_name(p.name + ".npz")):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"PPO model file not found: {str(path)!r} (looked for {p}, {p.name}.zip and "
        f"{p.name}.npz from {Path.cwd()}); train one with 'uno-mk train' or name a shipped "
        f"policy ({', '.join(shipped_names()) or 'none installed'}; 'uno-mk models')"
    )


# --------------------------------------------------------------------------- model files
class ModelFileError(UnoMkError, ValueError):
    """A model file that cannot be played: not a stable-baselines3 ``.zip`` or a policy
    ``.npz`` of this project, damaged, or holding something the numpy actor does not represent.
    The message is one line of at most :data:`MAX_MESSAGE_CHARS` characters and names the
    file; values read from the file are quoted shortened (:func:`_short`)."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message, MAX_MESSAGE_CHARS))


#: ``format`` and ``version`` of the project's policy file (see :func:`export_policy`).
POLICY_FORMAT = "uno-mk-policy"
POLICY_FORMAT_VERSION = 1
#: Largest archive entry read (a zip bomb stops here); the shipped policies are ~1 MB.
MAX_ENTRY_BYTES = 256 * 2**20
#: Largest ``data`` entry of a stable-baselines3 ``.zip`` (JSON) or ``metadata`` of a policy
#: ``.npz`` read; the shipped ones are ~75 kB.
MAX_DATA_BYTES = 16 * 2**20
#: Most weights (numbers, over all tensors) a model file may hold: what ``MAX_ENTRY_BYTES`` holds
#: as float32 (a tensor declaring more, e.g. a broadcast view of one stored number, is refused
#: before anything is allocated).
MAX_WEIGHTS = MAX_ENTRY_BYTES // 4
#: Most layers of an actor.
MAX_LAYERS = 64
#: Longest text of the ``data`` entry read back as a literal (:func:`sb3_literal`).
MAX_LITERAL_CHARS = 10_000
#: Longest :class:`ModelFileError` message.
MAX_MESSAGE_CHARS = 500
#: The modules that hold the project's policy classes in checkpoints: the training module
#: :mod:`uno_mk_env.training.policies` (since the classes moved there), ``uno_mk_env.agents.ppo``
#: (package 0.4.0) and the top-level ``agents.ppo`` (before 0.4.0).
_OWN_MODULES = ("uno_mk_env.training.policies", "uno_mk_env.agents.ppo", "agents.ppo")
_SB3_POLICY_MODULES = ("sb3_contrib.common.maskable.policies", *_OWN_MODULES)
#: policy_kwargs that do not change the actor's forward pass on a flat observation vector.
_INERT_KWARGS = {"ortho_init", "optimizer_class", "optimizer_kwargs", "share_features_extractor",
                 "normalize_images", "log_std_init", "use_expln", "squash_output", "full_std",
                 "use_sde"}


def _one_line(e: BaseException) -> str:
    text = str(e).strip()
    for line in text.splitlines():  # torch's weights_only refusal puts the reason on its own line
        if "WeightsUnpickler error" in line or "Unsupported global" in line:
            return _clip(line.strip())
    return _clip((text.splitlines() or [type(e).__name__])[0].strip() or type(e).__name__)


def _clip(text: str, limit: int = 2 * MAX_QUOTED_CHARS) -> str:
    return one_line(text, limit)


def _read_entry(path: Path, archive: zipfile.ZipFile, name: str) -> bytes:
    info = archive.getinfo(name)
    if info.file_size > MAX_ENTRY_BYTES:
        raise ModelFileError(f"{path}: entry {name!r} is {info.file_size} bytes, more than the "
                             f"{MAX_ENTRY_BYTES} this loader reads")
    try:
        return archive.read(name)
    except Exception as e:  # a truncated or corrupt archive: zlib, CRC, EOF errors
        raise ModelFileError(f"{path}: cannot read entry {_short(name)}: {_one_line(e)}") from None


def _plain(data: dict[str, Any], key: str) -> dict[str, Any]:
    """The human-readable fields SB3 writes next to a pickled object (never the pickle)."""
    value = data.get(key)
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if not k.startswith(":")}


def _class_name(text: Any, what: str, path: Path) -> str:
    """``"<class 'torch.nn.modules.activation.Tanh'>"`` -> ``"torch.nn.modules.activation.Tanh"``
    (the string SB3 writes for a class in ``policy_kwargs``)."""
    m = re.fullmatch(r"<class '([\w.<>]+)'>", text) if isinstance(text, str) else None
    if not m:
        raise ModelFileError(f"{path}: unreadable {what} {_short(text)} in its 'data' entry")
    return m[1]


def _literal(text: Any) -> Any:
    """A JSON value, or the ``str()`` of a list/dict/number SB3 wrote for a non-JSON value."""
    if isinstance(text, str) and len(text) <= MAX_LITERAL_CHARS:
        try:
            return ast.literal_eval(text)  # literals only: never evaluates code
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return text
    return text


def _sb3_data(path: Path, archive: zipfile.ZipFile) -> dict[str, Any]:
    names = set(archive.namelist())
    for entry in ("data", "policy.pth"):
        if entry not in names:
            raise ModelFileError(f"{path}: not a stable-baselines3 model (no {entry!r} entry in "
                                 "the zip)")
    size = archive.getinfo("data").file_size
    if size > MAX_DATA_BYTES:
        raise ModelFileError(f"{path}: its 'data' entry is {size} bytes, more than the "
                             f"{MAX_DATA_BYTES} this loader reads")
    data = parse_json(_read_entry(path, archive, "data"), f"{path}: its 'data' entry",
                      max_bytes=MAX_DATA_BYTES, error=ModelFileError)
    if not isinstance(data, dict):
        raise ModelFileError(f"{path}: its 'data' entry is not a JSON object")
    return data


def sb3_data(path: str | Path) -> dict[str, Any]:
    """The ``data`` entry of a stable-baselines3 ``.zip``, parsed as JSON and nothing more: the
    values SB3 could not write as JSON stay as it wrote them, ``{":type:": ..., ":serialized:":
    <base64 cloudpickle, never decoded here>, <readable fields>}``.

    Raises:
        FileNotFoundError: no such file. ModelFileError: not a stable-baselines3 ``.zip``.
    """
    p = resolve_model_path(path)
    try:
        with zipfile.ZipFile(p) as archive:
            return _sb3_data(p, archive)
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise ModelFileError(f"{p}: not a stable-baselines3 model ({_one_line(e)})") from None


def sb3_literal(value: Any) -> Any:
    """A readable field of :func:`sb3_data`: JSON values as they are, and the ``str()`` SB3
    wrote for a list, dict or number inside a pickled object read back as a literal
    (``ast.literal_eval``, which evaluates no code); other text is returned unchanged."""
    return _literal(value)


def _sb3_policy_kwargs(path: Path, data: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The readable ``policy_kwargs`` of an SB3 ``data`` entry (values read back by
    :func:`_literal`, ``actor_size`` taken out), after checking that the policy class, the
    observation shape and the action space fit this env; and the size of the state after the
    observation in the policy's input (``STATE_SIZE`` for an asymmetric critic, else 0)."""
    policy_class = _plain(data, "policy_class").get("__module__")
    if policy_class not in _SB3_POLICY_MODULES:
        raise ModelFileError(f"{path}: policy class from module {_short(policy_class)} is not "
                             f"supported (only {' and '.join(_SB3_POLICY_MODULES)})")
    obs_space = data.get("observation_space")
    shape = _literal(obs_space.get("_shape")) if isinstance(obs_space, dict) else None
    n = _literal(_plain(data, "action_space").get("n"))
    kwargs = data.get("policy_kwargs") or {}
    kwargs = {k: _literal(v) for k, v in kwargs.items() if not k.startswith(":")} if isinstance(
        kwargs, dict) else {}
    actor_size = kwargs.pop("actor_size", None)
    pad = STATE_SIZE if actor_size == OBS_SIZE else 0
    expected = (OBS_SIZE + pad,)
    if not isinstance(shape, list) or tuple(shape) != expected or n != A.NUM_ACTIONS:
        raise ModelFileError(
            f"{path} does not fit this env: its observations have shape "
            f"{_short(tuple(shape) if isinstance(shape, list) else shape)} and its action space "
            f"is Discrete({_short(n)}); this env has ({OBS_SIZE},) and "
            f"Discrete({A.NUM_ACTIONS}) (a checkpoint only fits the observation layout it was "
            "trained on: retrain it, or use the package version it was trained with)"
        )
    if actor_size is not None and actor_size != OBS_SIZE:
        raise ModelFileError(f"{path}: actor_size {_short(actor_size)}; expected {OBS_SIZE}")
    return kwargs, pad


def _sb3_activation(path: Path, kwargs: dict[str, Any]) -> str:
    """The activation named by ``policy_kwargs`` (taken out of ``kwargs``): ``"tanh"`` (SB3's
    default) or ``"relu"``."""
    if "activation_fn" not in kwargs:
        return "tanh"
    cls = _class_name(kwargs.pop("activation_fn"), "activation_fn", path)
    m = re.fullmatch(r"torch\.nn\.modules\.activation\.(Tanh|ReLU)", cls)
    if not m:
        raise ModelFileError(f"{path}: activation {_clip(cls, MAX_QUOTED_CHARS)} is not "
                             "supported (supported: torch.nn.Tanh, torch.nn.ReLU)")
    return m[1].lower()


def _sb3_scaled(path: Path, kwargs: dict[str, Any]) -> bool:
    """Whether the features extractor of ``policy_kwargs`` (taken out of ``kwargs``) is this
    project's ``ScaledObservationExtractor`` rather than SB3's ``FlattenExtractor``."""
    scaled = False
    if "features_extractor_class" in kwargs:
        cls = _class_name(kwargs.pop("features_extractor_class"), "features_extractor_class",
                          path)
        scaled = cls.rsplit(".", 1)[-1] == "ScaledObservationExtractor" and cls.startswith(
            tuple(m + "." for m in _OWN_MODULES))
        if not scaled and cls != "stable_baselines3.common.torch_layers.FlattenExtractor":
            raise ModelFileError(f"{path}: features extractor {_clip(cls, MAX_QUOTED_CHARS)} "
                                 f"is not supported (supported: {_OWN_MODULES[0]}."
                                 "ScaledObservationExtractor, FlattenExtractor)")
    if kwargs.pop("features_extractor_kwargs", None):
        raise ModelFileError(f"{path}: features_extractor_kwargs are not supported")
    return scaled


def _sb3_hidden_sizes(path: Path, kwargs: dict[str, Any]) -> list[int] | None:
    """The actor's hidden layer sizes from the ``net_arch`` of ``policy_kwargs`` (taken out of
    ``kwargs``; its ``pi`` part when it is a dict); ``None`` when it names none."""
    net_arch = kwargs.pop("net_arch", None)
    if isinstance(net_arch, dict):
        return net_arch.get("pi", [])
    if isinstance(net_arch, list):
        return net_arch
    if net_arch is not None:
        raise ModelFileError(f"{path}: unreadable net_arch {_short(net_arch)}")
    return None


def _sb3_weights(path: Path, archive: zipfile.ZipFile) -> dict[str, np.ndarray]:
    """The tensors of ``policy.pth``, read with ``torch.load(weights_only=True)``, as float32
    arrays (every one must be floating-point)."""
    try:
        import torch
    except ImportError:
        raise ModelFileError(
            f"{path}: reading a stable-baselines3 .zip needs torch (pip install torch); its "
            ".npz export (uno_mk_env.agents.ppo.export_policy) plays with numpy alone") from None
    raw = _read_entry(path, archive, "policy.pth")
    _check_torch_archive(path, raw)
    try:
        with warnings.catch_warnings():  # a refused file is reported below, in one line
            warnings.simplefilter("ignore")
            state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as e:
        raise ModelFileError(f"{path}: its policy.pth is not a plain weights file "
                             f"(torch.load(weights_only=True) refused it: {_one_line(e)})"
                             ) from None
    if not isinstance(state, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
    ):
        raise ModelFileError(f"{path}: its policy.pth is not a state_dict of tensors")
    total = 0
    for key, tensor in state.items():
        if (tensor.layout != torch.strided or tensor.device.type != "cpu" or tensor.is_quantized
                or not tensor.is_floating_point()):
            raise ModelFileError(
                f"{path}: policy.pth entry {_short(key)} is a {tensor.dtype} tensor "
                f"({str(tensor.layout).removeprefix('torch.')}, on {tensor.device.type}); "
                "expected dense floating-point weights on the CPU")
        total += tensor.numel()  # declared sizes: a broadcast view may store one number
        if total > MAX_WEIGHTS:
            raise ModelFileError(f"{path}: its policy.pth declares more than {MAX_WEIGHTS} "
                                 f"weights (entry {_short(key)} has shape "
                                 f"{_short(tuple(tensor.shape))})")
    return {key: tensor.detach().to(torch.float32).numpy() for key, tensor in state.items()}


def _check_torch_archive(path: Path, raw: bytes) -> None:
    """Refuses a ``policy.pth`` that is not in torch's zip format (``torch.save`` since torch
    1.6, what stable-baselines3 writes) or whose records hold more than ``MAX_ENTRY_BYTES`` in
    all: torch allocates what they declare before reading them."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as inner:
            declared = sum(info.file_size for info in inner.infolist())
    except (zipfile.BadZipFile, ValueError, EOFError, OSError):
        raise ModelFileError(f"{path}: its policy.pth is not a plain weights file (not torch's "
                             "zip format, which torch.save writes since torch 1.6)") from None
    if declared > MAX_ENTRY_BYTES:
        raise ModelFileError(f"{path}: its policy.pth declares {declared} bytes of records, more "
                             f"than the {MAX_ENTRY_BYTES} this loader reads")


def _sb3_actor(path: Path, archive: zipfile.ZipFile) -> tuple[NumpyActor, dict[str, Any]]:
    """The actor of a stable-baselines3 ``.zip``: its architecture from the readable JSON of the
    ``data`` entry, its weights from ``policy.pth`` with ``torch.load(weights_only=True)``."""
    data = _sb3_data(path, archive)
    kwargs, pad = _sb3_policy_kwargs(path, data)
    activation = _sb3_activation(path, kwargs)
    scaled = _sb3_scaled(path, kwargs)
    hidden = _sb3_hidden_sizes(path, kwargs)
    unknown = sorted(set(kwargs) - _INERT_KWARGS)
    if unknown:
        raise ModelFileError(f"{path}: policy_kwargs {_short(unknown)} are not supported")
    arrays = _sb3_weights(path, archive)
    try:
        actor = NumpyActor.from_state_dict(arrays, activation, hidden, scaled)
    except ValueError as e:
        raise ModelFileError(f"{path}: {e}") from None
    timesteps = data.get("num_timesteps")
    info = {"format": "stable-baselines3", "num_timesteps": timesteps if isinstance(
        timesteps, int) else None, "asymmetric_critic": bool(pad)}
    return actor, info


def _npz_actor(path: Path, archive: zipfile.ZipFile) -> tuple[NumpyActor, dict[str, Any]]:
    """The actor of a policy ``.npz`` (see :func:`export_policy`), read with
    ``np.load(allow_pickle=False)``."""
    for info in archive.infolist():
        if info.file_size > MAX_ENTRY_BYTES:
            raise ModelFileError(f"{path}: entry {_short(info.filename)} is {info.file_size} "
                                 f"bytes, more than the {MAX_ENTRY_BYTES} this loader reads")
        _check_npy_header(path, archive, info)
    try:
        with np.load(path, allow_pickle=False) as npz:
            meta_array = npz["metadata"]
            if meta_array.dtype.kind != "U" or meta_array.shape != ():
                raise ModelFileError(f"{path}: its 'metadata' is not a JSON string")
            meta = parse_json(str(meta_array[()]), f"{path}: its 'metadata'",
                              error=ModelFileError)
            if not isinstance(meta, dict) or meta.get("format") != POLICY_FORMAT:
                what = meta.get("format") if isinstance(meta, dict) else meta
                raise ModelFileError(f"{path}: not a {POLICY_FORMAT} file (metadata format "
                                     f"{_short(what)})")
            if meta.get("version") != POLICY_FORMAT_VERSION:
                raise ModelFileError(f"{path}: {POLICY_FORMAT} version "
                                     f"{_short(meta.get('version'))}; this package reads "
                                     f"version {POLICY_FORMAT_VERSION}")
            size, n = meta.get("observation_size"), meta.get("num_actions")
            layout = meta.get("observation_layout")
            current = [[p.name, p.size] for p in OBS_PIECES]
            if size != OBS_SIZE or n != A.NUM_ACTIONS or (layout is not None
                                                         and layout != current):
                raise ModelFileError(
                    f"{path} does not fit this env: its observations have shape "
                    f"({_short(size)},) {'' if layout in (None, current) else '(another layout) '}"
                    f"and it has {_short(n)} actions; this env has ({OBS_SIZE},) and "
                    f"Discrete({A.NUM_ACTIONS}) (a policy only fits the observation layout it "
                    "was trained on)"
                )
            names = meta.get("layers")
            if not isinstance(names, list) or not names or not all(
                isinstance(x, str) for x in names
            ):
                raise ModelFileError(f"{path}: metadata 'layers' must list the layer names")
            if len(names) > MAX_LAYERS:
                raise ModelFileError(f"{path}: {len(names)} layers; this loader plays at most "
                                     f"{MAX_LAYERS}")
            layers = [(npz[f"{x}.weight"], npz[f"{x}.bias"]) for x in names]
            scale_name = meta.get("input_scale")
            scale = npz[scale_name] if isinstance(scale_name, str) else None
            if scale_name is not None and not isinstance(scale_name, str):
                raise ModelFileError(f"{path}: metadata 'input_scale' must be an array name or "
                                     "null")
            try:
                actor = NumpyActor.checked(layers, str(meta.get("activation")), scale)
            except ValueError as e:
                raise ModelFileError(f"{path}: {e}") from None
    except ModelFileError:
        raise
    except KeyError as e:
        raise ModelFileError(f"{path}: missing array {_one_line(e)}") from None
    except Exception as e:  # object arrays (allow_pickle=False), bad JSON, truncated members
        raise ModelFileError(f"{path}: unreadable policy file ({_one_line(e)})") from None
    return actor, meta


def _check_npy_header(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Reads the header of the ``.npy`` member ``info`` (numpy's own parser, which evaluates
    literals only) and refuses, before numpy allocates the array, object arrays and arrays that
    declare more bytes than the member holds (or than :data:`MAX_DATA_BYTES`, for the
    metadata)."""
    name = _short(info.filename)
    if not info.filename.endswith(".npy"):
        raise ModelFileError(f"{path}: entry {name} is not an .npy array")
    try:
        with archive.open(info) as f:
            version = np.lib.format.read_magic(f)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f".npy format version {version}")
            read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                    else np.lib.format.read_array_header_2_0)
            shape, _, dtype = read(f)
    except Exception as e:  # bad magic, a malformed header, a damaged member
        raise ModelFileError(f"{path}: entry {name} is not a readable .npy array "
                             f"({_one_line(e)})") from None
    if dtype.hasobject:
        raise ModelFileError(f"{path}: entry {name} holds Python objects, which only "
                             "allow_pickle=True would read (it runs code from the file)")
    declared = math.prod(shape) * dtype.itemsize
    limit = min(info.file_size, MAX_DATA_BYTES if info.filename == "metadata.npy" else
                MAX_ENTRY_BYTES)
    if declared > limit:
        raise ModelFileError(f"{path}: entry {name} declares {declared} bytes (shape "
                             f"{_short(shape)}, {dtype}); it holds at most {limit}")


def load_policy(path: str | Path) -> tuple[NumpyActor, dict[str, Any]]:
    """Reads a policy for play without unpickling anything: a stable-baselines3 ``.zip``
    (architecture from the JSON of its ``data`` entry, weights from ``policy.pth`` with
    ``torch.load(weights_only=True)``; needs torch) or this project's ``.npz`` (numpy only).
    The kind is told by the content, not the suffix.

    Returns:
        The numpy actor and a dict describing the file (the ``.npz`` metadata, or the SB3
        model's format and step count).

    Raises:
        FileNotFoundError: no such file (see :func:`resolve_model_path`).
        ModelFileError: anything else, in one line.
    """
    p = resolve_model_path(path)
    try:
        archive = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise ModelFileError(f"{p}: not a model file (expected a stable-baselines3 .zip or a "
                             f"{POLICY_FORMAT} .npz, both zip archives: {_one_line(e)})") from None
    with archive:
        names = set(archive.namelist())
        try:
            if "metadata.npy" in names:
                return _npz_actor(p, archive)
            if "data" in names or "policy.pth" in names:
                return _sb3_actor(p, archive)
        except ModelFileError:
            raise
        except Exception as e:  # a case the checks above missed is still one line
            raise ModelFileError(f"{p}: unreadable model file ({type(e).__name__}: "
                                 f"{_one_line(e)})") from None
    raise ModelFileError(f"{p}: not a model file (a zip archive, but neither a "
                         "stable-baselines3 model, with 'data' and 'policy.pth', nor a "
                         f"{POLICY_FORMAT} .npz, with 'metadata')")


class LoadedPolicy(Protocol):
    """A policy already loaded (:class:`~uno_mk_env.agents.ppo.PPOAgent`): its actor, what
    :func:`load_policy` said about its file, and the file."""

    actor: NumpyActor
    info: dict[str, Any]
    path: Path


def export_policy(
    source: str | Path | LoadedPolicy, destination: str | Path,
    provenance: dict[str, Any] | None = None,
) -> Path:
    """Writes the actor of ``source`` (a model file, or a loaded policy such as a
    :class:`~uno_mk_env.agents.ppo.PPOAgent`) as a policy
    ``.npz`` that plays with numpy alone and is read without unpickling.

    The file holds the arrays ``<layer>.weight`` (shape ``(inputs, outputs)``) and
    ``<layer>.bias`` of each layer, ``input_scale`` when the policy scales its input, and
    ``metadata``, a JSON string: ``format`` (``"uno-mk-policy"``), ``version`` (1),
    ``observation_size``, ``observation_layout`` (``[[piece, size], ...]``), ``num_actions``,
    ``activation`` (``"tanh"`` or ``"relu"``), ``layers`` (the layer names in order, the last
    one giving the logits), ``input_scale`` (the scale's array name or ``null``) and
    ``provenance`` (where it came from; ``provenance`` entries are added to it).
    The logits are ``x = obs * input_scale``, ``x = activation(x @ W + b)`` per layer but the
    last, ``x @ W + b``. A suffix other than ``.npz`` gets ``.npz`` appended.

    Returns:
        The path written.
    """
    if not isinstance(source, (str, Path)):
        actor, info, src_path = source.actor, source.info, source.path
    else:
        src_path = resolve_model_path(source)
        actor, info = load_policy(src_path)
    target = Path(destination)
    if target.suffix != ".npz":
        target = target.with_name(target.name + ".npz")
    digest = hashlib.sha256(Path(src_path).read_bytes()).hexdigest()
    origin = dict(info.get("provenance") or {}) if info.get("format") == POLICY_FORMAT else {
        "source_format": info.get("format"), "num_timesteps": info.get("num_timesteps"),
        "asymmetric_critic": info.get("asymmetric_critic"),
    }
    origin.setdefault("source", Path(src_path).name)
    origin.setdefault("source_sha256", digest)
    origin.update(provenance or {})
    return _save_npz(actor, target, origin)


def write_policy(
    layers: list[tuple[np.ndarray, np.ndarray]], activation: str, destination: str | Path,
    scale: np.ndarray | None = None, provenance: dict[str, Any] | None = None,
) -> Path:
    """Writes an MLP actor given by its weights as a policy ``.npz`` (the format of
    :func:`export_policy`): ``layers`` are ``(W, b)`` pairs, ``W`` of shape ``(inputs,
    outputs)``, chaining from ``OBS_SIZE`` inputs to ``NUM_ACTIONS`` logits; ``activation``
    follows every layer but the last; ``scale`` multiplies the observation first. Used for
    policies trained outside stable-baselines3 (the RLlib backend's RLModule).

    Raises:
        ModelFileError: the layers do not make such an actor (one line).
    """
    try:
        actor = NumpyActor.checked(
            [(np.asarray(w), np.asarray(b)) for w, b in layers], activation,
            None if scale is None else np.asarray(scale))
    except ValueError as e:
        raise ModelFileError(f"{destination}: {e}") from None
    target = Path(destination)
    if target.suffix != ".npz":
        target = target.with_name(target.name + ".npz")
    return _save_npz(actor, target, dict(provenance or {}))


def _save_npz(actor: NumpyActor, target: Path, origin: dict[str, Any]) -> Path:
    arrays: dict[str, Any] = {}  # name: array (Any: savez_compressed(**arrays) takes no bool)
    names = []
    for i, (w, b) in enumerate(actor.layers):
        name = "action" if i == len(actor.layers) - 1 else f"hidden{i}"
        names.append(name)
        arrays[f"{name}.weight"], arrays[f"{name}.bias"] = w, b
    if actor.scale is not None:
        arrays["input_scale"] = actor.scale
    meta = {
        "format": POLICY_FORMAT, "version": POLICY_FORMAT_VERSION,
        "observation_size": OBS_SIZE,
        "observation_layout": [[p.name, p.size] for p in OBS_PIECES],
        "num_actions": A.NUM_ACTIONS, "activation": actor.activation_name, "layers": names,
        "input_scale": "input_scale" if actor.scale is not None else None,
        "provenance": origin,
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    # Atomic: a reader (a tournament playing the file, a league loading a snapshot) or a full
    # disk sees the old file or the whole new one, never a cut one.
    return atomic_save(target, lambda f: np.savez_compressed(
        f, metadata=np.array(json.dumps(meta)), **arrays))


