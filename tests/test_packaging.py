"""What a user of the installed package meets first (issue 25): the shipped policies by name
(``ppo:ppo_2p`` wherever a spec or model path is accepted, ``uno-mk models``), the demo that
plays the shipped agent or says why not, ``uno-mk`` without arguments, ``--version``,
``python -m uno_mk_env``, the Gymnasium id, and one ``ImportError`` naming the ``env`` extra.

The wheel itself (the policies inside it, its size, the commands from an empty folder) is
tested in tests/test_wheel.py.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import uno_mk_env
from uno_mk_env import Game, Rules
from uno_mk_env.agents import AgentSpecError, make_agent
from uno_mk_env.agents.base import build_agent
from uno_mk_env.agents.ismcts import PPO_PRIORS
from uno_mk_env.agents.policy_file import resolve_model_path
from uno_mk_env.agents.shipped import (
    describe,
    find_shipped,
    shipped_info,
    shipped_names,
    shipped_path,
)
from uno_mk_env.cli.app import COMMANDS, build_parser, main
from uno_mk_env.engine.observation import OBS_SIZE
from uno_mk_env.evaluation import protocol

REPO = Path(__file__).resolve().parents[1]
SHIPPED = ("ppo_2p", "ppo_4p", "rllib_2p")


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def python(code: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args, "-c", code] if code else [sys.executable,
                          *args], cwd=cwd, capture_output=True, text=True, timeout=120)


# ------------------------------------------------------------------------------- the wheel
def test_every_package_folder_is_listed_for_the_wheel() -> None:
    """pyproject.toml lists the packages (the repository's folders map onto subpackages of
    uno_mk_env): a new subpackage left out of the list works in the checkout but is missing
    from the wheel."""
    tomllib = pytest.importorskip("tomllib")
    setup = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = setup["package-dir"]
    found = set()
    for package, folder in folders.items():
        for init in (REPO / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / folder).parts
            found.add(".".join((package, *rel)))
    assert set(setup["packages"]) == found
    assert setup["package-data"]["uno_mk_env.models"] == ["*.npz", "*.json"]


# ------------------------------------------------------------------------- shipped policies
def test_the_shipped_policies_are_package_data_with_their_provenance() -> None:
    assert shipped_names() == SHIPPED
    for name in SHIPPED:
        path = shipped_path(name)
        assert path.suffix == ".npz" and path.is_file()
        assert path.read_bytes() == (REPO / "models" / f"{name}.npz").read_bytes()
        assert shipped_info(name)["numpy_policy"] == f"{name}.npz"
    with pytest.raises(LookupError, match="ppo_2p, ppo_4p, rllib_2p"):
        shipped_path("ppo_3p")


def test_a_name_resolves_from_any_folder_and_paths_keep_working(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # not the repository: models/ is not here
    for name in SHIPPED:
        assert make_agent(f"ppo:{name}").path == shipped_path(name)
    # the repository spelling of earlier docs names the shipped file from elsewhere
    for text in ("models/ppo_4p.npz", "models/ppo_4p"):
        assert make_agent(f"ppo:{text}").path == shipped_path("ppo_4p")
    # a path is a path: absolute, relative, with or without its suffix
    copy = tmp_path / "mine" / "ppo_2p.npz"
    copy.parent.mkdir()
    shutil.copy(shipped_path("ppo_2p"), copy)
    assert make_agent(f"ppo:{copy}").path == copy
    assert make_agent("ppo:mine/ppo_2p").path == Path("mine/ppo_2p.npz")
    # a bare shipped name always means the shipped file, even next to a file of that name
    shutil.copy(copy, tmp_path / "ppo_2p.npz")
    assert make_agent("ppo:ppo_2p").path == shipped_path("ppo_2p")
    assert make_agent("ppo:./ppo_2p.npz").path == Path("ppo_2p.npz")
    assert find_shipped("ppo_2p.npz") is None and find_shipped("other/ppo_2p") is None
    with pytest.raises(AgentSpecError, match=r"model file not found.*ppo_2p, ppo_4p, rllib_2p"):
        build_agent("ppo:ppo_3p")


def test_in_the_repository_the_models_paths_still_load_the_repository_files(monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    assert resolve_model_path("models/ppo_2p") == Path("models/ppo_2p.zip")  # as before
    assert resolve_model_path("models/ppo_2p.npz") == Path("models/ppo_2p.npz")


def test_the_protocol_names_the_file_a_shipped_name_loads(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    digest = hashlib.sha256(shipped_path("ppo_4p").read_bytes()).hexdigest()
    assert protocol.file_sha256("ppo:ppo_4p") == digest
    assert protocol.file_sha256(f"ppo:{protocol.PPO_MODELS[4]}") == digest  # the suite's spec
    assert protocol.file_sha256("ppo:no/such/file.npz") is None
    assert protocol.file_sha256("strategic") is None


@pytest.mark.parametrize("players, name", [(2, "ppo_2p"), (3, "ppo_4p"), (4, "ppo_4p"),
                                           (6, "ppo_4p")])
def test_the_ppo_prior_of_the_search_is_the_shipped_policy_of_the_table_size(
    players, name, tmp_path, monkeypatch
) -> None:
    """ismcts:N:prior=ppo: ppo_2p at two players, ppo_4p (trained at four) at three to ten."""
    monkeypatch.chdir(tmp_path)
    assert PPO_PRIORS[2 if players == 2 else 4] == name
    agent = make_agent("ismcts:2:prior=ppo", seed=0)
    g = Game(Rules(num_players=players), seed=3)
    assert g.legal_action_ids()
    agent._ppo_choice(g.view(g.current_player))
    assert agent._policy.path == shipped_path(name)


# ------------------------------------------------------------------------------ uno-mk models
def test_models_lists_each_shipped_policy_with_its_headline_and_provenance() -> None:
    code, out, err = run(["models"])
    assert code == 0, err
    for name in SHIPPED:
        d = describe(name)
        row = next(line for line in out.splitlines() if f"ppo:{name} " in line)
        strategic = next(r for r in d["evaluation"] if r["opponent"] == "strategic")
        for text in (f"{strategic['win_rate']:.3f}", f"{strategic['ci_low']:.3f}",
                     f"{strategic['games']:,}"):
            assert text in row, (text, row)
        assert all(len(line) <= 80 for line in out.splitlines()), out  # fits 80 columns
        code, one, err = run(["models", name])  # provenance: in the one-policy view
        assert code == 0, err
        for text in (d["sha256"][:12], d["commit"][:7], f"{d['timesteps']:,} steps"):
            assert text in one, (name, text)
    assert "prior=ppo" in out and "ppo:ppo_2p" in out and "ppo:ppo_4p at 3 to 10" in out
    assert "seeds 14002 and 14004" in out  # why the README's figures differ, said here


def test_models_name_shows_one_in_full_and_refuses_an_unknown_name() -> None:
    code, out, err = run(["models", "ppo_4p"])
    assert code == 0, err
    digest = hashlib.sha256((REPO / "models" / "ppo_4p.npz").read_bytes()).hexdigest()
    info = shipped_info("ppo_4p")
    for text in (digest, info["command"], info["git"]["commit"], f"{info['timesteps']:,} steps",
                 "vs 3 x strategic: win rate 0.266 [0.257, 0.275], mean place 2.47 (10,000"):
        assert text in out, text
    code, out, err = run(["models", "ppo_9p"])
    assert code == 2 and err.count("\n") == 1 and "ppo_2p, ppo_4p, rllib_2p" in err


# --------------------------------------------------------------------------------- the demo
def test_the_demo_plays_the_shipped_policy_from_any_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["demo", "--games", "4", "--workers", "1", "--no-progress"])
    assert code == 0, err
    assert "ppo:ppo_4p" in out.split("\n", 1)[0]  # the announced entrants
    board = out.split("head-to-head")[0]
    assert "ppo:ppo_4p" in board and "strategic" in board
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("model, reason", [("no/such/model.zip", "model file not found"),
                                          ("ppo_9p", "model file not found")])
def test_the_demo_never_drops_the_agent_silently(model, reason, monkeypatch) -> None:
    import uno_mk_env.evaluation.tournament as tournament

    def no_play(*args, **kwargs):
        raise AssertionError("the tournament was played")

    monkeypatch.setattr(tournament, "run_tournament", no_play)
    code, out, err = run(["demo", "--games", "4", "--model", model])
    assert code == 2 and err.count("\n") == 1 and reason in err and model in err, err
    assert "Traceback" not in err


# ---------------------------------------------------------------- uno-mk, --version, -m
def test_uno_mk_without_arguments_lists_the_commands() -> None:
    code, out, err = run([])
    assert code == 0 and err == ""
    _, handlers = build_parser()
    assert len(handlers) >= len(COMMANDS)
    for name in handlers:
        assert f"\n    {name} " in out, name


def test_version_prints_the_package_version(tmp_path) -> None:
    assert run(["--version"]) == (0, f"uno-mk {uno_mk_env.__version__}\n", "")
    proc = python("", tmp_path, "-m", "uno_mk_env", "--version")
    assert proc.returncode == 0 and proc.stdout == f"uno-mk {uno_mk_env.__version__}\n", proc


def test_python_m_uno_mk_env_runs_the_cli(tmp_path) -> None:
    proc = python("", tmp_path, "-m", "uno_mk_env")
    assert proc.returncode == 0, proc.stderr
    assert "tournament" in proc.stdout and "models" in proc.stdout
    proc = python("", tmp_path, "-m", "uno_mk_env", "models")
    assert proc.returncode == 0 and "ppo:rllib_2p" in proc.stdout, proc.stderr
    proc = python("", tmp_path, "-m", "uno_mk_env", "frobnicate")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr


# ------------------------------------------------------------------------------ gymnasium
GYM_MAKE = """
import sys
{first}
import gymnasium as gym
env = gym.make({id!r}, num_players=3, reward="points")
obs, info = env.reset(seed=0)
inner = env.unwrapped
print(type(inner).__name__, inner.rules.num_players, obs.shape, env.spec.id)
"""


@pytest.mark.parametrize("first, env_id", [
    ("", "uno_mk_env:UnoMarioKart-v0"),  # gym.make imports the package itself
    ("import uno_mk_env", "UnoMarioKart-v0"),  # uno_mk_env before gymnasium
    ("import gymnasium, uno_mk_env", "UnoMarioKart-v0"),  # gymnasium before uno_mk_env
])
def test_gym_make_finds_the_env(first, env_id, tmp_path) -> None:
    proc = python(GYM_MAKE.format(first=first, id=env_id), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["UnoMarioKartGymEnv", "3", f"({OBS_SIZE},)",
                                   uno_mk_env.GYM_ID]


def test_gym_make_passes_check_env() -> None:
    gym = pytest.importorskip("gymnasium")
    from gymnasium.utils.env_checker import check_env

    env = gym.make(uno_mk_env.GYM_ID, num_players=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    with warnings.catch_warnings(record=True) as caught:  # the made env: wrapped, as gym says
        warnings.simplefilter("always")
        check_env(env)
    assert all("different from the unwrapped version" in str(w.message) for w in caught), [
        str(w.message) for w in caught]


def test_importing_the_package_registers_through_gymnasiums_registry_alone(tmp_path) -> None:
    """No import hook wraps gymnasium (the one finder the package adds serves the 0.9.0 module
    paths); without gymnasium the package imports and registers nothing."""
    probe = ("import sys; hooks = list(sys.meta_path); import uno_mk_env\n"
             "print([type(f).__name__ for f in sys.meta_path if f not in hooks],"
             " 'UnoMarioKart-v0' in sys.modules['gymnasium'].envs.registry"
             " if sys.modules.get('gymnasium') else None)")
    proc = python(probe, tmp_path)  # the one finder added serves the 0.9.0 module paths
    assert proc.returncode == 0 and proc.stdout.strip() == "['_Alias'] True", proc
    proc = python("import sys; sys.modules['gymnasium'] = None\n" + probe, tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "['_Alias'] None", proc


# ------------------------------------------------------------------ without the env extra
@pytest.mark.parametrize("missing", ["gymnasium", "pettingzoo"])
@pytest.mark.parametrize("module", ["uno_mk_env.uno_mario_kart_v0", "uno_mk_env.envs.gym_env"])
def test_an_env_module_without_the_env_extra_raises_one_import_error(module, missing,
                                                                     tmp_path) -> None:
    code = (f"import sys; sys.modules[{missing!r}] = None\n"
            "import importlib, uno_mk_env\n"
            f"importlib.import_module({module!r})\n")
    proc = python(code, tmp_path)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if not line.startswith(" ")
              and "Error" in line]
    assert errors == [f"ImportError: the UNO Mario Kart envs need {missing}: pip install "
                      "'uno-mk-env[env]'"], proc.stderr
    assert "During handling" not in proc.stderr and "direct cause" not in proc.stderr


# ------------------------------------------------------------------- the test extra is enough
def _own_requires() -> list[str]:
    """This project's requirements as pyproject.toml declares them now (the installed metadata
    may predate an edit), in the metadata's form (``name ; extra == "x"``)."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *(
        f'{req.split(";")[0]} ; extra == "{extra}"'
        for extra, reqs in project["optional-dependencies"].items() for req in reqs
        if ";" not in req)]


def _closure(requirement: str) -> set[str]:
    """The distributions ``requirement`` installs (its dependencies, recursively, extras and
    markers evaluated), read from the installed metadata; normalised names."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: set[str] = set()
    todo = [(Requirement(requirement), "")]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        key = f"{name}[{','.join(sorted(req.extras))}]"
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = (_own_requires() if name == "uno-mk-env"
                        else metadata.distribution(name).requires or [])
        except metadata.PackageNotFoundError:
            continue  # reported by the caller: the import will not resolve to it
        for sub in map(Requirement, requires):
            for wanted in req.extras or {""}:
                todo.append((sub, wanted))
    return {key.split("[")[0] for key in seen}


def test_the_test_extra_brings_every_package_the_tests_import() -> None:
    """``make test`` installs the ``test`` extra alone (after torch): every third-party module a
    test module imports must come from a distribution that extra pulls in."""
    import ast
    from importlib import metadata

    from packaging.utils import canonicalize_name

    provided = _closure("uno-mk-env[test]") | {"torch"}  # torch: installed first by the Makefile
    dists = metadata.packages_distributions()
    local = {p.stem for p in (REPO / "tests").glob("*.py")} | {
        "uno_mk_env", "benchmarks", "tools", "conftest", "tests"}
    missing = []
    for path in sorted((REPO / "tests").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for top in {n.split(".")[0] for n in names} - local - set(sys.stdlib_module_names):
                owners = {canonicalize_name(d) for d in dists.get(top, [])}
                if not owners & provided:
                    missing.append(f"{path.name}: {top} ({', '.join(sorted(owners)) or '?'})")
    assert not missing, "not brought by the test extra: " + "; ".join(sorted(set(missing)))
