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
import zipfile
from pathlib import Path

import numpy as np
import pytest

from uno_mk_env.agents.ppo import (
    POLICY_FORMAT,
    ModelFileError,
    PPOAgent,
    export_policy,
    load_policy,
)
from uno_mk_env.cli.app import main as cli_main
from uno_mk_env.evaluation.tournament import AgentSpecError, build_agent, run_tournament
from uno_mk_env.observation import OBS_SIZE, encode
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

    from uno_mk_env.agents.ppo import ScaledObservationExtractor

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
        "from uno_mk_env.agents.ppo import PPOAgent, ModelFileError\n"
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
    import uno_mk_env.agents.ppo as ppo

    monkeypatch.setattr(ppo, "MAX_ENTRY_BYTES", 100)
    with pytest.raises(ModelFileError, match="more than the 100"):
        PPOAgent(tiny_zip)
