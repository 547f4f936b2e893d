"""Policy files for the ``ppo`` agent (``uno_mk_env.agents.ppo``): loading for play never unpickles.

A stable-baselines3 ``.zip`` is read from the plain JSON of its ``data`` entry and the weights of
``policy.pth`` (``torch.load(weights_only=True)``); the project's ``.npz`` with numpy alone
(``allow_pickle=False``). Hostile files (a crafted pickle in ``data`` or ``policy.pth``, an
``.npz`` with object arrays) never run their payload, in this process or in tournament workers;
damaged files give one line, from ``build_agent`` and from the command line."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import pickle
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from uno_mk_env.agents.policy_file import POLICY_FORMAT, ModelFileError, export_policy, load_policy
from uno_mk_env.agents.ppo import PPOAgent
from uno_mk_env.cli.app import main as cli_main
from uno_mk_env.engine.observation import OBS_SIZE, encode
from uno_mk_env.evaluation.tournament import AgentSpecError, build_agent, run_tournament
from uno_mk_env.uno_mario_kart_v0 import raw_env

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "models"


class Payload:
    """Unpickling this runs code: it writes ``marker`` (what a hostile model file would do)."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('payload ran')",))


def _rewrite_zip(src: Path, dst: Path, replace: dict[str, bytes | None]) -> Path:
    """A copy of the zip ``src`` with entries replaced (``None``: dropped)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            if name in replace:
                if replace[name] is not None:
                    zout.writestr(name, replace[name])
            else:
                zout.writestr(name, zin.read(name))
    return dst


def _edit_data(src: Path, dst: Path, edit) -> Path:
    with zipfile.ZipFile(src) as z:
        data = json.loads(z.read("data"))
    edit(data)
    return _rewrite_zip(src, dst, {"data": json.dumps(data).encode()})


def _one_line(message: str) -> bool:
    return "\n" not in message.strip() and "Traceback" not in message


@pytest.fixture(scope="module")
def tiny_zip(tmp_path_factory) -> Path:
    """A small untrained MaskablePPO checkpoint of this env's spaces (scaled input, 16-16 tanh)."""
    pytest.importorskip("sb3_contrib")
    import gymnasium
    from sb3_contrib import MaskablePPO

    from uno_mk_env.training.policies import ScaledObservationExtractor

    class Spaces(gymnasium.Env):
        observation_space = gymnasium.spaces.Box(0, 1, (OBS_SIZE,), np.float32)
        action_space = gymnasium.spaces.Discrete(73)

    path = tmp_path_factory.mktemp("policy") / "tiny.zip"
    MaskablePPO("MlpPolicy", Spaces(), seed=0, device="cpu", policy_kwargs={
        "net_arch": [16, 16], "features_extractor_class": ScaledObservationExtractor,
    }).save(path)
    return path


def _observations(num_players: int, count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observation, mask) pairs of every seat from games played by ``greedy``."""
    from uno_mk_env.agents import make_agent

    env = raw_env(num_players=num_players)
    player = make_agent("greedy", seed=seed)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    game = 0
    while len(out) < count:
        env.reset(seed=seed + game)
        game += 1
        while env.agents and len(out) < count:
            agent = env.agent_selection
            _, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            view = env.game.view(env.agents.index(agent))
            mask = env.observe(agent)["action_mask"]
            out.append((encode(view), mask))
            env.step(player.act(None, mask, view))
    return out


# ------------------------------------------------------------------------- shipped policies
@pytest.mark.parametrize("name, players", [("ppo_2p", 2), ("ppo_4p", 4)])
def test_shipped_npz_plays_exactly_like_its_zip(name: str, players: int) -> None:
    pytest.importorskip("torch")
    from_zip, from_npz = PPOAgent(MODELS / f"{name}.zip"), PPOAgent(MODELS / f"{name}.npz")
    assert from_npz.info["format"] == POLICY_FORMAT
    assert from_npz.info["provenance"]["source"] == f"{name}.zip"
    for obs, mask in _observations(players, 1500, seed=players):
        assert np.array_equal(from_zip.actor.logits(obs), from_npz.actor.logits(obs))
        assert from_zip.act(obs, mask, None) == from_npz.act(obs, mask, None)
    obs, mask = _observations(players, 1, seed=99)[0]
    assert np.array_equal(from_zip.action_probabilities(obs, mask),
                          from_npz.action_probabilities(obs, mask))


def test_npz_plays_with_numpy_alone_and_zip_without_torch_is_one_line() -> None:
    """``import torch`` fails in this interpreter: the .npz still plays; the .zip is refused in
    one line that points at the .npz."""
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import numpy as np\n"
        "from uno_mk_env.agents.ppo import PPOAgent\n"
        "from uno_mk_env.agents.policy_file import ModelFileError\n"
        "a = PPOAgent('models/ppo_2p.npz')\n"
        "mask = np.zeros(73, np.int8); mask[[3, 54]] = 1\n"
        "assert a.act(np.zeros(a.actor.layers[0][0].shape[0], np.float32), mask, None) in (3, 54)\n"
        "try:\n"
        "    PPOAgent('models/ppo_2p.zip')\n"
        "except ModelFileError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("\n") == 1 and "needs torch" in out.stdout and ".npz" in out.stdout


# ------------------------------------------------------------------------------ the format
def test_export_policy_round_trip(tiny_zip: Path, tmp_path: Path) -> None:
    npz = export_policy(tiny_zip, tmp_path / "tiny", provenance={"note": "test"})
    assert npz == tmp_path / "tiny.npz"
    with np.load(npz, allow_pickle=False) as f:
        meta = json.loads(str(f["metadata"][()]))
        assert meta["format"] == POLICY_FORMAT and meta["version"] == 1
        assert meta["observation_size"] == OBS_SIZE and meta["num_actions"] == 73
        assert meta["activation"] == "tanh" and meta["layers"] == ["hidden0", "hidden1", "action"]
        assert f["hidden0.weight"].shape == (OBS_SIZE, 16) and f["action.bias"].shape == (73,)
        assert f[meta["input_scale"]].shape == (OBS_SIZE,)
    assert meta["provenance"]["note"] == "test" and meta["provenance"]["source"] == "tiny.zip"
    a, b = PPOAgent(tiny_zip), PPOAgent(npz)
    for obs, _mask in _observations(3, 200, seed=1):
        assert np.array_equal(a.actor.logits(obs), b.actor.logits(obs))
    again = export_policy(b, tmp_path / "again.npz")  # from an agent: provenance carried over
    assert load_policy(again)[1]["provenance"]["note"] == "test"


def test_zip_agent_plays_what_model_predict_plays(tiny_zip: Path) -> None:
    from sb3_contrib import MaskablePPO

    model, agent = MaskablePPO.load(tiny_zip, device="cpu"), PPOAgent(tiny_zip)
    for obs, mask in _observations(2, 200, seed=4):
        action, _ = model.predict(obs, action_masks=mask.astype(bool), deterministic=True)
        assert agent.act(obs, mask, None) == int(action)


# --------------------------------------------------------------------------- hostile files
def test_crafted_pickle_in_data_never_runs(tiny_zip: Path, tmp_path: Path) -> None:
    """The payload sits where SB3 keeps pickled objects (``:serialized:``); the readable fields
    are intact, so the file plays normally, in this process and in two tournament workers,
    without the payload ever running."""
    from stable_baselines3.common.save_util import load_from_zip_file

    marker = tmp_path / "marker"
    payload = base64.b64encode(pickle.dumps(Payload(marker))).decode()

    def poison(data: dict) -> None:
        for key in ("observation_space", "action_space", "policy_kwargs", "lr_schedule",
                    "policy_class"):
            data[key][":serialized:"] = payload

    hostile = _edit_data(tiny_zip, tmp_path / "hostile.zip", poison)
    with contextlib.suppress(Exception):
        load_from_zip_file(hostile, device="cpu", print_system_info=False)
    assert marker.exists(), "the payload is live: stable-baselines3's loader runs it"
    marker.unlink()

    agent = build_agent(f"ppo:{hostile}")
    assert PPOAgent(hostile).act(*_observations(2, 1, seed=0)[0], None) >= 0
    assert not marker.exists()
    result = run_tournament([f"ppo:{hostile}", "greedy"], 2, games=8, seed=1, workers=2)
    assert sum(r["games"] for r in result.leaderboard()) == 16
    assert not marker.exists()
    assert agent.actor.layers[0][0].shape == (OBS_SIZE, 16)


def _hostile_files(tiny_zip: Path, tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, a phrase of its one-line error)."""
    import torch

    marker = tmp_path / "marker"
    buf = io.BytesIO()
    torch.save(Payload(marker), buf)
    good = zipfile.ZipFile(tiny_zip).read("data")
    with np.load(MODELS / "ppo_2p.npz", allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    object_npz = tmp_path / "object.npz"
    np.savez(object_npz, **{**arrays, "action.bias": np.array([Payload(marker)] * 73)})
    bad_meta = tmp_path / "bad_meta.npz"
    meta = json.loads(str(arrays["metadata"][()]))
    np.savez(bad_meta, **{**arrays, "metadata": np.array(json.dumps({**meta, "layers": [
        "hidden1", "action"]}))})
    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(tiny_zip.read_bytes()[: tiny_zip.stat().st_size // 2])
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"this is not a model file\n" * 10)
    return {
        "no_data": (_rewrite_zip(tiny_zip, tmp_path / "no_data.zip", {"data": None}),
                    "no 'data' entry"),
        "pth_torch_pickle": (_rewrite_zip(tiny_zip, tmp_path / "pth1.zip",
                                          {"policy.pth": buf.getvalue()}), "weights"),
        "pth_raw_pickle": (_rewrite_zip(tiny_zip, tmp_path / "pth2.zip",
                                        {"policy.pth": pickle.dumps(Payload(marker))}),
                           "weights"),
        "data_not_json": (_rewrite_zip(tiny_zip, tmp_path / "nojson.zip",
                                       {"data": pickle.dumps(Payload(marker))}), "not JSON"),
        "foreign_extractor": (_edit_data(tiny_zip, tmp_path / "extractor.zip", lambda d: d[
            "policy_kwargs"].update(features_extractor_class="<class 'evil.Extractor'>")),
            "evil.Extractor"),
        "other_activation": (_edit_data(tiny_zip, tmp_path / "gelu.zip", lambda d: d[
            "policy_kwargs"].update(activation_fn="<class 'torch.nn.modules.activation.GELU'>")),
            "GELU"),
        "other_layout": (_edit_data(tiny_zip, tmp_path / "layout.zip", lambda d: d[
            "observation_space"].update(_shape=[OBS_SIZE - 40])), f"({OBS_SIZE - 40},)"),
        "data_only_pickle": (_rewrite_zip(tiny_zip, tmp_path / "opaque.zip", {"data": json.dumps(
            {k: ({":type:": "x", ":serialized:": "AAAA"} if isinstance(v, dict) else v)
             for k, v in json.loads(good).items()}).encode()}), "policy class"),
        "truncated": (truncated, "not a model file"),
        "garbage": (garbage, "not a model file"),
        "npz_object_array": (object_npz, "allow_pickle"),
        "npz_bad_metadata": (bad_meta, "layer 0 has weight shape (256, 256)"),
    }


HOSTILE = ["no_data", "pth_torch_pickle", "pth_raw_pickle", "data_not_json", "foreign_extractor",
           "other_activation", "other_layout", "data_only_pickle", "truncated", "garbage",
           "npz_object_array", "npz_bad_metadata"]


@pytest.mark.parametrize("kind", HOSTILE)
def test_bad_model_file_is_one_line_and_runs_nothing(kind: str, tiny_zip: Path, tmp_path: Path,
                                                     capsys) -> None:
    path, phrase = _hostile_files(tiny_zip, tmp_path)[kind]
    with pytest.raises(ModelFileError) as info:
        PPOAgent(path)
    assert _one_line(str(info.value)) and phrase in str(info.value) and path.name in str(
        info.value)
    with pytest.raises(AgentSpecError) as spec_info:
        build_agent(f"ppo:{path}")
    assert _one_line(str(spec_info.value)) and phrase in str(spec_info.value)
    code = cli_main(["tournament", "--agents", f"ppo:{path},random", "--players", "2",
                     "--games", "2", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err and phrase in err
    assert not (tmp_path / "out" / "tournament.json").exists()
    assert not (tmp_path / "marker").exists()


def test_bad_model_file_in_the_console_script_has_no_traceback(tiny_zip: Path,
                                                               tmp_path: Path) -> None:
    path, _ = _hostile_files(tiny_zip, tmp_path)["pth_torch_pickle"]
    out = subprocess.run(
        [sys.executable, "-m", "uno_mk_env.cli", "tournament", "--agents", f"ppo:{path},greedy",
         "--games", "2", "--workers", "2", "--out", str(tmp_path / "out")],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert "policy.pth is not a plain weights file" in out.stderr
    assert not (tmp_path / "marker").exists()


def test_oversized_entry_is_refused_before_reading(tiny_zip: Path, tmp_path: Path,
                                                   monkeypatch) -> None:
    import uno_mk_env.agents.policy_file as policy_file

    monkeypatch.setattr(policy_file, "MAX_ENTRY_BYTES", 100)
    with pytest.raises(ModelFileError, match="more than the 100"):
        PPOAgent(tiny_zip)


# ------------------------------------------------------- crafted files: one bounded line each
MAX_LINE = 500  # uno_mk_env.agents.policy_file.MAX_MESSAGE_CHARS


def _poisoned_data(tiny_zip: Path, marker: Path) -> dict:
    """The ``data`` of ``tiny_zip`` with a payload in every pickled field: a loader that
    unpickled anything would write ``marker``."""
    data = json.loads(zipfile.ZipFile(tiny_zip).read("data"))
    payload = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    for value in data.values():
        if isinstance(value, dict) and ":serialized:" in value:
            value[":serialized:"] = payload
    return data


def _sb3_file(tiny_zip: Path, dst: Path, marker: Path, *, state=None, pth: bytes | None = None,
              edit=None, data: bytes | None = None) -> Path:
    """A copy of ``tiny_zip`` (its ``data`` poisoned) with ``policy.pth`` holding ``state``
    (or the bytes ``pth``) and its ``data`` changed by ``edit`` (or replaced by ``data``)."""
    import torch

    replace: dict[str, bytes | None] = {}
    if state is not None:
        buf = io.BytesIO()
        torch.save(state, buf)
        pth = buf.getvalue()
    if pth is not None:
        replace["policy.pth"] = pth
    if data is None:
        plain = _poisoned_data(tiny_zip, marker)
        if edit is not None:
            edit(plain)
        data = json.dumps(plain).encode()
    replace["data"] = data
    return _rewrite_zip(tiny_zip, dst, replace)


def _tiny_state(tiny_zip: Path) -> dict:
    import torch

    return torch.load(io.BytesIO(zipfile.ZipFile(tiny_zip).read("policy.pth")),
                      weights_only=True)


def _with(state: dict, key: str, value) -> dict:
    return {**state, key: value}


def _crafted_zip(kind: str, tiny_zip: Path, dst: Path, marker: Path) -> tuple[Path, str]:
    """A crafted stable-baselines3 ``.zip`` of kind ``kind`` and a phrase of its error."""
    import torch

    st = _tiny_state(tiny_zip)
    bias, weight = "action_net.bias", "action_net.weight"
    legacy = io.BytesIO()
    torch.save(st, legacy, _use_new_zipfile_serialization=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch deprecates creating quantized tensors
        quantized = torch.quantize_per_tensor(st[bias], 0.1, 0, torch.qint8)
    long = "x" * 100_000

    def kwargs(**values):
        return lambda d: d["policy_kwargs"].update(values)

    cases = {
        # the three cases of issue 24
        "sparse_tensor": (dict(state=_with(st, bias, st[bias].to_sparse())), "sparse_coo"),
        "meta_tensor": (dict(state=_with(st, bias, torch.empty(73, device="meta"))), "on meta"),
        "long_shape": (dict(edit=lambda d: d["observation_space"].update(_shape=long)),
                       "does not fit this env"),
        # tensors
        "quantized_tensor": (dict(state=_with(st, bias, quantized)), "qint8"),
        "complex_tensor": (dict(state=_with(st, bias, st[bias].to(torch.complex64))),
                           "complex64"),
        "int_tensor": (dict(state=_with(st, bias, st[bias].to(torch.int32))), "int32"),
        "broadcast_view": (dict(state=_with(st, bias, torch.zeros(1).expand(10**6, 10**6))),
                           "more than"),
        "nan_weights": (dict(state=_with(st, weight, torch.full_like(st[weight], float("nan")))),
                        "not all finite"),
        "weight_3d": (dict(state=_with(st, weight, st[weight].reshape(73, 16, 1))),
                      "weight shape"),
        "bias_2d": (dict(state=_with(st, bias, st[bias].reshape(1, 73))), "bias shape"),
        "missing_tensor": (dict(state={k: v for k, v in st.items() if k != bias}),
                           "no action_net"),
        "long_key": (dict(state=_with(st, "k" * 100_000, st[bias])), "does not play"),
        "not_a_dict": (dict(state=list(st.values())), "not a state_dict"),
        "non_tensor_value": (dict(state=_with(st, bias, 1.5)), "not a state_dict"),
        "legacy_torch_format": (dict(pth=legacy.getvalue()), "not torch's zip format"),
        "pth_garbage": (dict(pth=b"\x00" * 1000), "not a plain weights file"),
        # the JSON of "data"
        "deep_json": (dict(data=b"[" * 100_000 + b"]" * 100_000), "100000 deep"),
        "json_list": (dict(data=b"[1, 2, 3]"), "not a JSON object"),
        "json_empty_object": (dict(data=b"{}"), "policy class"),
        "no_observation_space": (dict(edit=lambda d: d.pop("observation_space")),
                                 "does not fit this env"),
        "deep_shape": (dict(edit=lambda d: d["observation_space"].update(
            _shape="[" * 50_000 + "]" * 50_000)), "does not fit this env"),
        "huge_int_shape": (dict(edit=lambda d: d["observation_space"].update(
            _shape="[" + "9" * 5000 + "]")), "does not fit this env"),
        "nested_shape": (dict(edit=lambda d: d["observation_space"].update(
            _shape=json.dumps([[[[[[[[list(range(5000))]]]]]]]]))), "does not fit this env"),
        "long_n": (dict(edit=lambda d: d["action_space"].update(n=long)), "Discrete("),
        "long_policy_module": (dict(edit=lambda d: d["policy_class"].update(__module__=long)),
                               "policy class from module"),
        "long_activation": (dict(edit=kwargs(activation_fn=f"<class 'torch.{long}'>")),
                            "activation"),
        "long_extractor": (dict(edit=kwargs(features_extractor_class=f"<class 'e.{long}'>")),
                           "features extractor"),
        "unreadable_class": (dict(edit=kwargs(activation_fn=long)), "unreadable activation_fn"),
        "long_net_arch": (dict(edit=kwargs(net_arch=json.dumps(list(range(20_000))))),
                          "net_arch"),
        "net_arch_text": (dict(edit=kwargs(net_arch=long)), "unreadable net_arch"),
        "many_kwargs": (dict(edit=kwargs(**{f"option_{i}": 1 for i in range(10_000)})),
                        "are not supported"),
        "long_actor_size": (dict(edit=kwargs(actor_size=long)), "actor_size"),
    }
    spec, phrase = cases[kind]
    return _sb3_file(tiny_zip, dst, marker, **spec), phrase


CRAFTED_ZIPS = [
    "sparse_tensor", "meta_tensor", "long_shape", "quantized_tensor", "complex_tensor",
    "int_tensor", "broadcast_view", "nan_weights", "weight_3d", "bias_2d", "missing_tensor",
    "long_key", "not_a_dict", "non_tensor_value", "legacy_torch_format", "pth_garbage",
    "deep_json", "json_list", "json_empty_object", "no_observation_space", "deep_shape",
    "huge_int_shape", "nested_shape", "long_n", "long_policy_module", "long_activation",
    "long_extractor", "unreadable_class", "long_net_arch", "net_arch_text", "many_kwargs",
    "long_actor_size",
]


def _assert_one_bounded_line(error: BaseException, phrase: str, limit: int = MAX_LINE) -> None:
    text = str(error)
    assert "\n" not in text and "Traceback" not in text, text[:300]
    assert len(text) <= limit, f"{len(text)} characters: {text[:300]}"
    assert phrase in text, text


@pytest.mark.parametrize("kind", CRAFTED_ZIPS)
def test_crafted_zip_is_one_bounded_line_and_runs_nothing(kind: str, tiny_zip: Path,
                                                          tmp_path: Path) -> None:
    """Issue 24 item 7: every refusal of a crafted stable-baselines3 file is one
    ``ModelFileError`` line of bounded length (values from the file quoted shortened), from
    the loader and from ``build_agent``, and nothing pickled in the file runs."""
    pytest.importorskip("torch")
    marker = tmp_path / "marker"
    path, phrase = _crafted_zip(kind, tiny_zip, tmp_path / f"{kind}.zip", marker)
    with pytest.raises(ModelFileError) as info:
        load_policy(path)
    _assert_one_bounded_line(info.value, phrase)
    assert str(info.value).startswith(str(path))
    with pytest.raises(AgentSpecError) as spec_info:
        build_agent(f"ppo:{path}")
    _assert_one_bounded_line(spec_info.value, phrase, MAX_LINE + 2 * len(str(path)) + 40)
    assert not marker.exists()


def test_the_poisoned_base_file_plays_and_runs_nothing(tiny_zip: Path, tmp_path: Path) -> None:
    """The crafted files above differ from a playable file only in what they name: the base
    (every pickled field a payload) loads and plays, and the payload never runs."""
    marker = tmp_path / "marker"
    path = _sb3_file(tiny_zip, tmp_path / "base.zip", marker)
    agent = PPOAgent(path)
    assert agent.act(*_observations(2, 1, seed=0)[0], None) >= 0
    assert not marker.exists()


@pytest.mark.parametrize("kind", ["sparse_tensor", "meta_tensor", "long_shape"])
def test_crafted_zip_on_the_command_line_is_one_line(kind: str, tiny_zip: Path, tmp_path: Path,
                                                     capsys) -> None:
    pytest.importorskip("torch")
    path, phrase = _crafted_zip(kind, tiny_zip, tmp_path / f"{kind}.zip", tmp_path / "marker")
    code = cli_main(["tournament", "--agents", f"ppo:{path},random", "--players", "2",
                     "--games", "2", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err and phrase in err
    assert len(err) < MAX_LINE + 2 * len(str(path)) + 80
    assert not (tmp_path / "out" / "tournament.json").exists()


def _npz_arrays() -> dict[str, np.ndarray]:
    with np.load(MODELS / "ppo_2p.npz", allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def _with_meta(arrays: dict[str, np.ndarray], **changes) -> dict[str, np.ndarray]:
    meta = json.loads(str(arrays["metadata"][()]))
    return {**arrays, "metadata": np.array(json.dumps({**meta, **changes}))}


def _npy_claiming(shape: tuple[int, ...], data: bytes) -> bytes:
    """An ``.npy`` whose header declares ``shape`` (float32) followed by ``data``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False,
                                               "shape": shape})
    return buf.getvalue() + data


def _crafted_npz(kind: str, dst: Path) -> tuple[Path, str]:
    arrays = _npz_arrays()
    long = "x" * 100_000
    cases = {
        "nan_weights": (lambda a: {**a, "action.weight": np.full_like(a["action.weight"],
                                                                     np.nan)}, "not all finite"),
        "int_weights": (lambda a: {**a, "action.bias": a["action.bias"].astype(np.int32)},
                        "not all finite floats"),
        "weight_3d": (lambda a: {**a, "action.weight": a["action.weight"][..., None]},
                      "weight shape"),
        "complex_weights": (lambda a: {**a, "action.bias": a["action.bias"].astype(
            np.complex64)}, "not all finite floats"),
        "deep_metadata": (lambda a: {**a, "metadata": np.array("[" * 100_000 + "]" * 100_000)},
                          "100000 deep"),
        "metadata_list": (lambda a: {**a, "metadata": np.array("[1, 2]")}, "metadata format"),
        "metadata_not_text": (lambda a: {**a, "metadata": np.zeros(3)}, "not a JSON string"),
        "long_format": (lambda a: _with_meta(a, format=long), "metadata format"),
        "long_version": (lambda a: _with_meta(a, version=long), "version"),
        "long_size": (lambda a: _with_meta(a, observation_size=long), "does not fit this env"),
        "long_activation": (lambda a: _with_meta(a, activation=long), "activation"),
        "long_layer_name": (lambda a: _with_meta(a, layers=[long]), "missing array"),
        "many_layers": (lambda a: _with_meta(a, layers=["hidden0"] * 100_000), "at most"),
        "layers_not_names": (lambda a: _with_meta(a, layers=[[1], {"a": 2}]), "layer names"),
        "missing_keys": (lambda a: {**a, "metadata": np.array("{}")}, "metadata format"),
        "scale_name_number": (lambda a: _with_meta(a, input_scale=3), "input_scale"),
    }
    if kind in cases:
        build, phrase = cases[kind]
        np.savez(dst, **build(arrays))
        return dst, phrase
    np.savez(dst, **arrays)
    if kind == "huge_declared_shape":  # 1e12 floats declared, 292 bytes stored
        replace = {"action.bias.npy": _npy_claiming((10**12,), b"\x00" * 292)}
        phrase = "declares"
    elif kind == "huge_declared_metadata":
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(buf, {"descr": "<U100000000",
                                                   "fortran_order": False, "shape": ()})
        replace, phrase = {"metadata.npy": buf.getvalue() + b"{}"}, "declares"
    elif kind == "bad_npy_header":
        replace, phrase = {"action.bias.npy": b"\x93NUMPY\x01\x00\x10\x00{'descr': " + b"x" * 80}, (
            "not a readable .npy array")
    elif kind == "not_npy_member":
        replace, phrase = {"notes.txt": b"hello"}, "not an .npy array"
    else:
        raise AssertionError(kind)
    with zipfile.ZipFile(dst) as z:
        entries = {name: z.read(name) for name in z.namelist()}
    entries.update(replace)
    with zipfile.ZipFile(dst, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return dst, phrase


CRAFTED_NPZ = [
    "nan_weights", "int_weights", "weight_3d", "complex_weights", "deep_metadata",
    "metadata_list", "metadata_not_text", "long_format", "long_version", "long_size",
    "long_activation", "long_layer_name", "many_layers", "layers_not_names", "missing_keys",
    "scale_name_number", "huge_declared_shape", "huge_declared_metadata", "bad_npy_header",
    "not_npy_member",
]


@pytest.mark.parametrize("kind", CRAFTED_NPZ)
def test_crafted_npz_is_one_bounded_line(kind: str, tmp_path: Path) -> None:
    path, phrase = _crafted_npz(kind, tmp_path / f"{kind}.npz")
    with pytest.raises(ModelFileError) as info:
        load_policy(path)
    _assert_one_bounded_line(info.value, phrase)
    with pytest.raises(AgentSpecError) as spec_info:
        build_agent(f"ppo:{path}")
    _assert_one_bounded_line(spec_info.value, phrase, MAX_LINE + 2 * len(str(path)) + 40)


def test_model_file_error_is_one_bounded_line_whatever_it_is_given() -> None:
    error = ModelFileError("a\nb" + "c" * 10_000)
    assert "\n" not in str(error) and len(str(error)) <= MAX_LINE and str(error).endswith("…")
