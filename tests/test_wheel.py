"""The distribution: ``python -m build`` makes an sdist and a wheel that ``twine check`` passes,
without a setuptools deprecation banner; the wheel holds one import name, ``uno_mk_env``, the
shipped policies (``.npz`` and ``.json``, not the ``.zip`` checkpoints) and stays under
:data:`MAX_WHEEL_BYTES`; and it works in clean virtual environments, from an empty folder: a
base install (the wheel + numpy) plays a game, runs ``uno-mk``, ``--version``, ``rules``,
``agents`` and ``models`` as plain text, refuses commands that need extras with one line naming
the extra, and importing the PettingZoo env raises one ``ImportError`` naming the ``env`` extra;
with the ``env`` extra the PettingZoo env passes ``api_test`` and ``gym.make`` gives an env that
passes ``check_env``; with the ``eval`` extra (no torch) ``uno-mk demo`` and ``uno-mk tournament``
play the shipped PPO policies by name. An unpacked sdist is not a git checkout, so the test
session's repository check (tests/conftest.py) stands aside.

Slow (a build, three venvs and PyPI downloads, about a minute and a half): not in the default run;
``.ci/run`` runs it after ``make test``. Never installs torch.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

import uno_mk_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 600  # seconds per subprocess: a guard against a hang, not a speed test
MAX_WHEEL_BYTES = 8 * 2**20
SHIPPED = ("ppo_2p", "ppo_4p", "rllib_2p")


def _env(**extra: str) -> dict[str, str]:
    """The environment of a subprocess: no PYTHONPATH (the repository must not leak in), no
    user site-packages."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, "PYTHONNOUSERSITE": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "MPLBACKEND": "Agg", **extra}


def run(argv: list[str | Path], cwd: Path, check: bool = True,
        stdin: str = "") -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=TIMEOUT, input=stdin)
    if check:
        assert proc.returncode == 0, (
            f"{argv}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel, built from the repository into a temporary folder."""
    out = tmp_path_factory.mktemp("dist")
    proc = run([sys.executable, "-m", "build", "--outdir", out, ROOT], cwd=out)
    log = proc.stdout + proc.stderr
    assert not re.search(r"deprecat", log, re.I), "setuptools printed a deprecation:\n" + log
    wheels = list(out.glob("*.whl"))
    sdists = list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0], "dir": out}


def make_venv(where: Path, requirement: str) -> Path:
    """A clean virtual environment (no system site-packages) with ``requirement`` installed from
    the local wheel and PyPI; returns its ``bin`` folder."""
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    bindir = where / "bin"
    run([bindir / "python", "-m", "pip", "install", "--quiet", requirement], cwd=where)
    freeze = run([bindir / "python", "-m", "pip", "freeze"], cwd=where).stdout.lower()
    assert "torch" not in freeze, freeze
    return bindir


def test_twine_check_passes(dist: dict[str, Path]) -> None:
    proc = run([sys.executable, "-m", "twine", "check", "--strict", dist["wheel"], dist["sdist"]],
               cwd=dist["dir"])
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_wheel_holds_one_import_name(dist: dict[str, Path]) -> None:
    names = zipfile.ZipFile(dist["wheel"]).namelist()
    info = f"uno_mk_env-{uno_mk_env.__version__}.dist-info"
    assert {n.split("/")[0] for n in names} == {"uno_mk_env", info}
    for path in ("uno_mk_env/__init__.py", "uno_mk_env/py.typed", "uno_mk_env/envs/aec.py",
                 "uno_mk_env/agents/__init__.py", "uno_mk_env/agents/ppo.py",
                 "uno_mk_env/training/__init__.py", "uno_mk_env/training/train_ppo.py",
                 "uno_mk_env/training/export_model.py", "uno_mk_env/evaluation/tournament.py",
                 "uno_mk_env/cli/__init__.py", "uno_mk_env/cli/app.py",
                 f"{info}/licenses/LICENSE", f"{info}/METADATA", f"{info}/entry_points.txt"):
        assert path in names, path
    assert not any(n.startswith(("tests/", "uno_mk_env/tests/")) for n in names)
    meta = zipfile.ZipFile(dist["wheel"]).read(f"{info}/METADATA").decode()
    assert "License-Expression: MIT" in meta
    for extra in ("env", "eval", "train", "test"):
        assert f"Provides-Extra: {extra}" in meta, extra
    entry = zipfile.ZipFile(dist["wheel"]).read(f"{info}/entry_points.txt").decode()
    assert "uno-mk = uno_mk_env.cli:main" in entry


def test_wheel_ships_the_policies_and_not_the_checkpoints(dist: dict[str, Path]) -> None:
    names = zipfile.ZipFile(dist["wheel"]).namelist()
    models = sorted(n.removeprefix("uno_mk_env/models/") for n in names
                    if n.startswith("uno_mk_env/models/"))
    assert models == sorted(["__init__.py", *(f"{m}{ext}" for m in SHIPPED
                                              for ext in (".npz", ".json"))]), models
    for name in SHIPPED:
        shipped = zipfile.ZipFile(dist["wheel"]).read(f"uno_mk_env/models/{name}.npz")
        assert shipped == (ROOT / "models" / f"{name}.npz").read_bytes(), name
    assert not [n for n in names if n.endswith((".zip", ".png", ".csv"))]
    assert "uno_mk_env/__main__.py" in names
    size = dist["wheel"].stat().st_size
    assert size < MAX_WHEEL_BYTES, f"the wheel is {size / 2**20:.1f} MB"


BASE_GAME = textwrap.dedent("""
    import importlib
    import numpy as np
    import uno_mk_env
    from uno_mk_env import Game, Rules

    g = Game(Rules(num_players=3), seed=7)
    rng = np.random.default_rng(0)
    while not g.game_over:
        legal = g.legal_action_ids()
        g.step(int(legal[rng.integers(len(legal))]))
    print("winner", g.winner, "steps", g.num_steps)
    for name in ("agents", "training", "evaluation", "cli"):
        try:
            importlib.import_module(name)
        except ModuleNotFoundError:
            print("no top-level", name)
    from uno_mk_env.agents import make_agent
    print("agent", type(make_agent("strategic", seed=0)).__name__)
""")


def test_base_install_plays_lists_and_names_missing_extras(
    dist: dict[str, Path], tmp_path: Path
) -> None:
    bindir = make_venv(tmp_path / "venv", str(dist["wheel"]))
    freeze = run([bindir / "python", "-m", "pip", "freeze"], cwd=tmp_path).stdout
    assert sorted(line.split("==")[0].split(" @ ")[0].lower()
                  for line in freeze.splitlines()) == ["numpy", "uno-mk-env"], freeze
    work = tmp_path / "work"  # not the repository: its folders must not be importable
    work.mkdir()
    out = run([bindir / "python", "-c", BASE_GAME], cwd=work).stdout
    assert re.search(r"winner \d steps \d+", out), out
    for name in ("agents", "training", "evaluation", "cli"):
        assert f"no top-level {name}" in out, out
    assert "agent StrategicAgent" in out

    uno_mk = bindir / "uno-mk"
    rules = run([uno_mk, "rules"], cwd=work).stdout
    agents = run([uno_mk, "agents"], cwd=work).stdout
    for text in (rules, agents):
        assert "│" not in text and "━" not in text  # plain text: no rich on a base install
    assert "option" in rules and "uno_catch" in rules and "presets" in rules
    for name in ("random", "greedy", "strategic", "ismcts", "ppo"):
        assert re.search(rf"^{name} ", agents, re.M), agents

    for argv, extra in ((["tournament", "--agents", "greedy,random", "--games", "20"], "eval"),
                        (["demo", "--games", "8"], "eval"),
                        (["train", "--total-timesteps", "10"], "train"),
                        (["export", "a.zip", "b.zip"], "train")):
        proc = run([uno_mk, *argv], cwd=work, check=False)
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert f"pip install 'uno-mk-env[{extra}]'" in proc.stderr, proc.stderr
    assert not list(work.iterdir())  # nothing was written

    proc = run([uno_mk, "play", "--opponents", "strategic", "--seed", "3"], cwd=work,
               stdin="1\n" * 2000)
    assert "Game over:" in proc.stdout, proc.stdout[-2000:]

    commands = run([uno_mk], cwd=work).stdout  # no arguments: the command list, exit 0
    assert "tournament" in commands and "models" in commands
    assert run([uno_mk, "--version"], cwd=work).stdout == f"uno-mk {uno_mk_env.__version__}\n"
    models = run([bindir / "python", "-m", "uno_mk_env", "models"], cwd=work).stdout
    for name in SHIPPED:
        assert re.search(rf"^ppo:{name} ", models, re.M), models
    played = run([bindir / "python", "-c", SHIPPED_BY_NAME], cwd=work).stdout
    assert played.split() == ["ppo_2p.npz", "ok"], played
    proc = run([bindir / "python", "-c", "import uno_mk_env.uno_mario_kart_v0"], cwd=work,
               check=False)
    assert proc.returncode == 1 and "During handling" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines()[-1] == ("ImportError: the UNO Mario Kart envs need "
                                            "gymnasium: pip install 'uno-mk-env[env]'")
    assert not list(work.iterdir())  # nothing was written


SHIPPED_BY_NAME = textwrap.dedent("""
    from uno_mk_env import Game, Rules
    from uno_mk_env.agents import make_agent
    from uno_mk_env.engine.observation import action_mask, encode

    agent = make_agent("ppo:ppo_2p", seed=0)
    g = Game(Rules(num_players=2), seed=5)
    view = g.view(g.current_player)
    action = agent.act(encode(view), action_mask(view.legal_actions), view)
    print(agent.path.name, "ok" if action in g.legal_action_ids() else "illegal")
""")


ENV_EPISODE = textwrap.dedent("""
    import numpy as np
    from pettingzoo.test import api_test
    from uno_mk_env import uno_mario_kart_v0
    from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv

    env = uno_mario_kart_v0.env(num_players=3)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        action = None if term or trunc else int(rng.choice(obs["action_mask"].nonzero()[0]))
        env.step(action)
        steps += 1
    print("episode steps", steps)
    api_test(uno_mario_kart_v0.env(num_players=2), num_cycles=200)
    print("api_test passed")
    gym = UnoMarioKartGymEnv(num_players=2)
    obs, info = gym.reset(seed=0)
    done = False
    while not done:
        action = int(rng.choice(gym.action_masks().nonzero()[0]))
        obs, reward, term, trunc, info = gym.step(action)
        done = term or trunc
    print("gym episode reward", reward)
    import warnings
    import gymnasium
    from gymnasium.utils.env_checker import check_env
    made = gymnasium.make("uno_mk_env:UnoMarioKart-v0", num_players=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # the image render modes need the render extra (tests/test_packaging.py checks them)
        check_env(made.unwrapped, skip_render_check=True)
    print("gym.make", made.spec.id, made.unwrapped.rules.num_players, "check_env passed")
""")


def test_env_extra_runs_the_pettingzoo_and_gymnasium_envs(
    dist: dict[str, Path], tmp_path: Path
) -> None:
    bindir = make_venv(tmp_path / "venv", f"{dist['wheel']}[env]")
    work = tmp_path / "work"
    work.mkdir()
    out = run([bindir / "python", "-c", ENV_EPISODE], cwd=work).stdout
    assert re.search(r"episode steps \d+", out) and "api_test passed" in out, out
    assert "gym episode reward" in out
    assert "gym.make UnoMarioKart-v0 3 check_env passed" in out, out


def test_eval_extra_runs_a_tournament_with_a_ppo_policy_without_torch(
    dist: dict[str, Path], tmp_path: Path
) -> None:
    bindir = make_venv(tmp_path / "venv", f"{dist['wheel']}[eval]")
    work = tmp_path / "work"
    work.mkdir()
    spec = run([bindir / "python", "-c", "import importlib.util as u; print(u.find_spec('torch'))"],
               cwd=work).stdout
    assert spec.strip() == "None", spec
    # a short relative label, so that the leaderboard fits 80 columns as a drawn table
    shutil.copyfile(ROOT / "models" / "ppo_2p.npz", tmp_path / "p2.npz")
    agents = ["strategic", "ppo:../p2.npz", "greedy"]
    out_dir = tmp_path / "results"
    proc = run([bindir / "uno-mk", "tournament", "--agents", ",".join(agents), "--players", "3",
                "--games", "6", "--out", out_dir], cwd=work)
    assert "win rate" in proc.stdout and "head-to-head" in proc.stdout, proc.stdout
    assert "│" in proc.stdout  # rich draws the tables
    data = json.loads((out_dir / "tournament.json").read_text())
    assert data["config"]["entrants"] == agents
    assert sum(row["games"] for row in data["leaderboard"]) == 3 * 6
    assert (out_dir / "tournament.png").is_file()
    assert not list(work.iterdir())

    # the shipped policies by name, from an empty folder: the two commands of the README
    uno_mk = bindir / "uno-mk"
    proc = run([uno_mk, "demo", "--games", "40"], cwd=work)
    assert "could not be imported" not in proc.stdout, proc.stdout  # no optional-import note
    # a drawn row (at 80 columns the rank column '#' may be left out)
    assert re.search(r"^│ +(\d+ +│ )?ppo:ppo_4p ", proc.stdout, re.M), proc.stdout
    assert not list(work.iterdir())
    proc = run([uno_mk, "tournament", "--agents", "ppo:ppo_2p,strategic", "--players", "2",
                "--games", "20"], cwd=work)
    assert re.search(r"^│ +(\d+ +│ )?ppo:ppo_2p ", proc.stdout, re.M), proc.stdout
    proc = run([uno_mk, "tournament", "--agents", "ismcts:2:prior=ppo,ppo:rllib_2p,greedy",
                "--players", "3", "--games", "3"], cwd=work)
    assert "ismcts:2:prior=ppo" in proc.stdout and "ppo:rllib_2p" in proc.stdout
    assert [p.name for p in work.iterdir()] == ["results"]  # the tournament's default --out


def test_the_repository_check_sees_new_files_and_stands_aside_in_an_sdist(
    dist: dict[str, Path], tmp_path: Path
) -> None:
    from conftest import repo_status

    with tarfile.open(dist["sdist"]) as tar:
        tar.extractall(tmp_path / "sdist", filter="data")
    [unpacked] = (tmp_path / "sdist").iterdir()
    assert (unpacked / "pyproject.toml").is_file()
    assert repo_status(unpacked) is None
    assert repo_status(ROOT / "tests") is None  # only the checkout's top folder is checked

    repo = tmp_path / "repo"
    git = ["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    run(["git", "init", "-q", repo], cwd=tmp_path)
    (repo / "kept.txt").write_text("1")
    (repo / ".gitignore").write_text("results/\n")
    run([*git, "add", "."], cwd=repo)
    run([*git, "commit", "-q", "-m", "start"], cwd=repo)
    assert repo_status(repo) == frozenset()
    for scratch in (".venv/bin/python", "pkg/__pycache__/a.pyc", "x.egg-info/PKG-INFO",
                    "build/lib/a.py", ".pytest_cache/v", ".ruff_cache/a"):
        (repo / scratch).parent.mkdir(parents=True, exist_ok=True)
        (repo / scratch).write_text("")
    assert repo_status(repo) == frozenset()
    (repo / "kept.txt").write_text("2")
    (repo / "results").mkdir()
    (repo / "results" / "out.json").write_text("{}")
    (repo / "new file.txt").write_text("")
    assert repo_status(repo) == {" M kept.txt", "!! results/out.json", "?? new file.txt"}
