"""The README and the documentation pages are part of the product: every ```python block runs
as written and does what the text around it says, and so does every command line of their
```bash blocks (``make`` lines excepted: they are what CI itself runs); the README stays a
front page (at most 250 lines, the two Quick start commands, one table of where the agents
stand, whose figures are the results page's).

The pages are README.md and every page of docs/ (:data:`PAGES`): the usage manual, the
reference tables, the research log and the cluster guide moved from the README to the site, and
their examples moved with them. Each example runs in a fresh interpreter in a temporary working
directory (files it writes, such as ``result.save("results/")``, land there), followed by a few
lines that check the text's claims in the same namespace; an example that appears on two pages
(the README's on Getting started) runs once. Commands run through the installed ``uno-mk``
console script (or ``python -m uno_mk_env.cli``). Commands that take minutes as written
(10,000-game tournaments, ``uno-mk evaluate``) run with fewer games by default and as written,
their figures checked against the pages' tables, under ``-m slow``. ```py blocks are
illustrative fragments (undefined names) and are not run. The generated tables are checked by
tests/test_docs.py.
"""

from __future__ import annotations

import ast
import csv
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tools import env_docs as docs

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: The pages whose code runs here: the README and the documentation site's pages, but
#: "Use with other libraries", whose blocks tests/test_integrations.py runs (small, one
#: library each, the Ray one under -m slow).
PAGES = [README, *sorted(p for p in DOCS.glob("*.md") if p.name != "integrations.md")]
TEXTS = {page.relative_to(ROOT).as_posix(): page.read_text(encoding="utf-8") for page in PAGES}
README_TEXT = TEXTS["README.md"]
#: Every page at once: where a figure printed by a command must be found.
TEXT = "\n".join(TEXTS.values())


def page_text(name: str) -> str:
    """The text of ``docs/<name>``."""
    return TEXTS[f"docs/{name}"]


def section(text: str, heading: str) -> str:
    """The section of ``text`` under ``heading`` (a ``## `` line), up to the next one."""
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def fenced(tag: str) -> list[str]:
    """The bodies of the ```tag blocks of every page, each once (first page first)."""
    return _unique([body for text in TEXTS.values()
                    for body in re.findall(rf"^```{tag}\n(.*?)^```", text, re.S | re.M)])


EXAMPLES = fenced("python")
BASH_BLOCKS = fenced("bash")
#: Every command line of the ```bash blocks, comments dropped, ``make`` lines excepted.
COMMANDS = _unique([
    line for block in BASH_BLOCKS
    for line in (raw.split("#", 1)[0].strip() for raw in block.splitlines())
    if line and not line.startswith("make ")
])
#: What each code fence tag means here: run by these tests, or why not.
FENCES = {
    "python": "run: each block in a fresh interpreter, with the text's claims checked",
    "bash": "run: each command line (fewer games by default, as written under -m slow)",
    "py": "not run: illustrative fragments with undefined names",
    "sh": "not run: installs, illustrative commands (placeholders), training runs of minutes to "
          "hours, commands for a Ray cluster",
    "text": "not run: plain text (formats, outputs)",
    "": "not run: plain text (layouts, outputs)",
}
TIMEOUT = 600  # seconds for one example or command (a guard against a hang, not a speed test)


def _env() -> dict[str, str]:
    # One torch/BLAS thread: on a shared machine more threads than cores thrash (test_gym_env
    # does the same with torch.set_num_threads(1)).
    return {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}


def run_python(code: str, cwd: Path) -> str:
    """Runs ``code`` in a fresh interpreter in ``cwd``; returns its stdout (fails on an error)."""
    env = {**_env(), "SB3_LOGDIR": str(cwd / "sb3_logs")}  # SB3 would make /tmp/SB3-<time>
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, (
        f"exit {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    )
    return proc.stdout


def argv_of(line: str) -> list[str]:
    """The argv of a README command: ``uno-mk`` is the console script next to this interpreter
    (``python -m uno_mk_env.cli`` without it), ``python`` this interpreter."""
    words = shlex.split(line)
    if words[0] == "uno-mk":
        script = Path(sys.executable).with_name("uno-mk")
        return [str(script), *words[1:]] if script.exists() else [
            sys.executable, "-m", "uno_mk_env.cli", *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    raise AssertionError(f"README command {line!r}: no way to run {words[0]!r}")


def run_command(line: str, cwd: Path, stdin: str = "") -> str:
    """Runs a README command line in ``cwd`` (the repository root for ``python tests/...``
    lines, a temporary directory otherwise, where ``models/`` links to the repository's, as in
    a checkout); returns its stdout (fails on a non-zero exit)."""
    if cwd != ROOT and "models/" in line and not (cwd / "models").exists():
        (cwd / "models").symlink_to(ROOT / "models", target_is_directory=True)
    proc = subprocess.run(argv_of(line), cwd=cwd, env=_env(), input=stdin, capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, (
        f"{line!r}: exit {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    )
    return proc.stdout


def quick_version(line: str) -> str | None:
    """The default run's version of a command that takes minutes as written (fewer games,
    smaller search budgets); ``None`` when it runs as written in seconds."""
    if line.startswith("uno-mk evaluate"):  # a search agent or the full suite: always minutes
        return re.sub(r"--games \d+", "--games 4", line) if "--games" in line else (
            line + " --games 4")
    games = re.search(r"--games (\d+)", line)
    if games and int(games.group(1)) > 2000:
        return line.replace(games.group(0), "--games 40")
    return None


# ---------------------------------------------------------------------------- the README
README_MAX_LINES = 250


def test_the_readme_is_a_front_page() -> None:
    """At most 250 lines; exactly the two Quick start commands; one picture; no generated
    reference table (each lives on one documentation page: tests/test_docs.py)."""
    assert len(README_TEXT.splitlines()) <= README_MAX_LINES
    quick = section(README_TEXT, "## Quick start")
    commands = [line.split("#", 1)[0].strip() for block in re.findall(
        r"^```bash\n(.*?)^```", quick, re.S | re.M) for line in block.splitlines()]
    assert [c for c in commands if c] == ["make demo", "make test"]
    assert len(re.findall(r"!\[[^\]]*\]\(", README_TEXT)) == 1
    assert docs.block_names(README_TEXT) == []


def agent_table(text: str) -> list[list[str]]:
    """The rows of the first table of ``text`` whose header starts with ``| agent |``."""
    table = text[text.index("| agent |"):].split("\n\n", 1)[0].splitlines()[2:]
    return [[c.strip() for c in row.strip().strip("|").split("|")] for row in table]


def test_the_readme_agents_table_quotes_the_results_page() -> None:
    """Every row of the README's one table of where the agents stand is a row of the skill
    ladder on docs/results.md: the same win rates and mean place, cell for cell."""
    ladder = [row[1:4] for row in agent_table(section(page_text("results.md"),
                                                      "## How much is skill"))]
    rows = agent_table(section(README_TEXT, "## Where the agents stand"))
    assert len(rows) >= 8
    for row in rows:
        assert row[1:4] in ladder, row


def test_every_action_and_observation_piece_is_documented() -> None:
    from uno_mk_env.engine.observation import OBS_PIECES

    page = page_text("environment.md")
    for piece in OBS_PIECES:
        assert f"`{piece.name}`" in page
    for code in ("`CALL_UNO`", "`CATCH_UNO`", "`CHALLENGE`", "`ACCEPT`", "`KEEP`", "`DRAW`"):
        assert code in page


def test_the_layout_section_names_every_module_and_folder() -> None:
    """The Project layout block lists every top-level folder and every module of the package's
    folders and of benchmarks/ (so it cannot fall behind the tree)."""
    layout = section(page_text("reference.md"), "## Project layout")
    block = layout[layout.index("```\nuno_mk_env/"):]
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", block))
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    files = [Path(f) for f in tracked.stdout.split()]
    folders = {f.parts[0] for f in files if len(f.parts) > 1 and not f.parts[0].startswith(".")}
    missing = sorted(d for d in folders if f"{d}/" not in block)
    packages = ("uno_mk_env", "agents", "training", "evaluation", "cli", "benchmarks")
    missing += sorted(str(f) for f in files if f.suffix == ".py" and f.parts[0] in packages
                      and f.stem != "__init__" and f.stem not in names)
    assert not missing, f"Project layout (docs/reference.md) does not name: {missing}"


@pytest.mark.parametrize("page", list(TEXTS))
def test_every_code_fence_is_run_or_says_why_not(page: str) -> None:
    text = TEXTS[page]
    tags = re.findall(r"^```(\S*)\n", text, re.M)[::2]  # opening fences (they alternate)
    unknown = set(tags) - set(FENCES)
    assert not unknown, f"{page}: fence tags without a rule in FENCES: {unknown}"
    assert text.count("\n```") % 2 == 0


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 7 and len(COMMANDS) >= 40
    for text in TEXTS.values():  # every block of every page is among them
        for body in re.findall(r"^```python\n(.*?)^```", text, re.S | re.M):
            assert body in EXAMPLES


# ---------------------------------------------------------------------------- python blocks
#: Lines run after an example, in its namespace: the claims of the text around it.
CLAIMS: dict[str, str] = {
    # PettingZoo AEC loop: the episode ends for every agent; the table is printed.
    "uno_mario_kart_v0.env(": """
assert env.agents == [], "the agent_iter loop ended before every agent was done"
""",
    # MaskablePPO on the Gymnasium wrapper: it learns; action_masks() is the mask it uses.
    "MaskablePPO(": """
import numpy as np
assert model.num_timesteps >= 1_024
obs, info = env.reset(seed=0)
assert (env.action_masks() == info["action_mask"].astype(bool)).all() and env.action_masks().any()
""",
    # A tournament: one leaderboard row per agent; save() writes the five files listed.
    "run_tournament(": """
from pathlib import Path
rows = list(result.leaderboard())
assert len(rows) == 3
assert {r["agent"] for r in rows} == {"strategic", "greedy", "random"}
names = {p.name for p in Path("results").iterdir()}
assert {"tournament.json", "leaderboard.csv", "head_to_head.csv", "games.csv"} <= names, names
assert any(n.endswith(".png") for n in names), names
""",
    # The engine alone: the round ends with a winner (no step cap needed).
    "Game(Rules(num_players=3": """
assert g.game_over and g.winner is not None
""",
    # The layout: the repository's folders import as subpackages of the one name uno_mk_env.
    # (That the wheel installs no other top-level name is checked on the built wheel.)
    "# agents/": """
assert Args.__module__ == "uno_mk_env.training.train_ppo" and callable(train)
assert make_agent.__module__ == "uno_mk_env.agents.base" and callable(run_tournament)
""",
    # OpenSpiel (docs/openspiel.md): a whole random game; the returns are the env's win reward.
    '{"players": 3, "preset": "strict"})': """
assert state.is_terminal() and len(obs) == 437
assert abs(sum(state.returns())) < 1e-9 and max(state.returns()) in (0.0, 1.0)
""",
    # OpenSpiel's IS-MCTS plays a whole game through evaluate_bots (zero-sum returns).
    "evaluate_bots.evaluate_bots(": """
assert len(returns) == 2 and abs(sum(returns)) < 1e-9
""",
    # OpenSpiel's random-simulation test ran at every player count listed (none raised).
    "pyspiel.random_sim_test(": """
assert game.num_players() == 10
""",
    # A hand-written position: read as written; draw_pile[0] is drawn first, discard_pile[-1]
    # is the top card.
    "Game.from_dict(": """
from uno_mk_env import actions
from uno_mk_env.engine.cards import kind
assert g.top_card == kind("R5") and g.active_colour == 0 and g.current_player == 0
assert g.hand(0)[kind("R7")] == 1 and g.hand(0)[kind("W4")] == 1 and sum(g.hand(1)) == 2
g.step(actions.DRAW)  # B3 does not match R5: player 0 keeps it and the turn passes
assert g.hand(0)[kind("B3")] == 1 and g.current_player == 1
""",
}


def claims_of(code: str) -> str:
    found = [claim for marker, claim in CLAIMS.items() if marker in code]
    assert len(found) == 1, f"no (or more than one) claim check for this example:\n{code}"
    return found[0]


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_python_examples_run_and_do_what_the_text_says(index: int, tmp_path: Path) -> None:
    code = EXAMPLES[index]
    out = run_python(code + claims_of(code), tmp_path)
    if "print(env.render())" in code:  # prints the final table
        assert "UNO Mario Kart" in out and ("Game over." in out or "Episode over." in out), out
    if "result.leaderboard()" in code:  # one printed row per agent
        assert len([line for line in out.splitlines() if line.startswith("{'agent'")]) == 3, out
    if "Game(Rules(num_players=3" in code:
        check_engine_alone_output(out)


def check_engine_alone_output(out: str) -> None:
    """"the winner's hand is empty and its score is the points left in the other hands (R10.2)",
    "about a hundred decisions"."""
    from uno_mk_env.engine.cards import POINTS, kind

    first, second = out.strip().splitlines()[-2:]
    winner, scores, steps = re.fullmatch(r"(\d+) (\[.*\]) (\d+)", first).groups()
    winner, scores, steps = int(winner), ast.literal_eval(scores), int(steps)
    hands = ast.literal_eval(second)
    assert hands[winner] == [], hands
    assert scores[winner] == sum(POINTS[kind(c)] for s, h in enumerate(hands) if s != winner
                                 for c in h)
    assert 20 <= steps <= 400, f"{steps} decisions is not 'about a hundred'"


# ------------------------------------------------------------------------------- bash blocks
def check_tournament(line: str, out: str, cwd: Path) -> Path:
    """A tournament prints its leaderboard and writes the result files; returns their dir."""
    where = re.search(r"Results\s+written\s+to\s+(\S+)/:", out)  # the line may wrap at 80
    assert where, out
    folder = cwd / where.group(1)
    for name in ("tournament.json", "leaderboard.csv", "head_to_head.csv", "games.csv"):
        assert (folder / name).is_file(), name
    agents = re.search(r"--agents (\S+)", line).group(1).split(",")
    for agent in agents:
        assert agent in out
    return folder


def check_play(line: str, cwd: Path) -> None:
    """"you against two agents": quitting at the first prompt, and playing choice 1 every time
    until the game ends."""
    out = run_command(line, cwd, stdin="q\n")
    assert out.startswith("UNO Mario Kart (one round): you are P0;")
    assert "P1:strategic" in out and "P2:greedy" in out and "You left the game." in out
    out = run_command(line, cwd, stdin="1\n" * 3000)
    assert "Game over: " in out, out[-2000:]


def check_listing(line: str, out: str) -> None:
    from uno_mk_env import OPTIONS, PRESETS

    if line == "uno-mk agents":
        for name in ("random", "greedy", "strategic", "ismcts", "ppo"):
            assert f"│ {name} " in out, name
    else:
        for name in (*OPTIONS, *PRESETS):
            assert name in out, name


@pytest.mark.parametrize("line", COMMANDS, ids=str)
def test_commands_run_and_do_what_the_text_says(line: str, tmp_path: Path) -> None:
    """As written, or, for the minutes-long ones, with fewer games (as written: ``-m slow``)."""
    if line.startswith("uno-mk play"):
        check_play(line, tmp_path)
        return
    run = quick_version(line) or line
    out = run_command(run, ROOT if line.startswith("python tests/") else tmp_path)
    if line.startswith("uno-mk tournament"):
        check_tournament(line, out, tmp_path)
    elif line in ("uno-mk agents", "uno-mk rules"):
        check_listing(line, out)
    elif line.startswith("uno-mk evaluate"):
        assert "# Benchmark card: `" in out and "Card written to " in out, out[-2000:]


# ---------------------------------------------------------------------------- the figures
def baseline_rows() -> list[list[tuple[str, str]]]:
    """The Baselines table (docs/agents.md): per table (group of rows), (agent, "rate [low,
    high]") pairs."""
    baselines = section(page_text("agents.md"), "## Baselines")
    groups: list[list[tuple[str, str]]] = []
    for row in baselines.splitlines():
        cells = [c.strip().strip("*") for c in row.strip().strip("|").split("|")]
        if len(cells) != 5 or not re.match(r"\d\.\d{3} \[", cells[3]):
            continue
        if cells[0]:
            groups.append([])
        groups[-1].append((cells[2], cells[3]))
    return groups


def leaderboard_figures(folder: Path) -> dict[str, str]:
    with open(folder / "leaderboard.csv", newline="") as f:
        return {
            r["agent"]: f"{float(r['win_rate']):.3f} [{float(r['win_ci_low']):.3f}, "
                        f"{float(r['win_ci_high']):.3f}]"
            for r in csv.DictReader(f)
        }


SLOW_COMMANDS = [line for line in COMMANDS if quick_version(line)]


@pytest.mark.slow
@pytest.mark.parametrize("line", SLOW_COMMANDS, ids=str)
def test_slow_commands_as_written_reproduce_the_readme(line: str, tmp_path: Path) -> None:
    """The commands as written give the pages' figures (seeded: exactly): the Baselines
    commands their table's rows, any other tournament its first entrant's figure, an evaluation
    every line it prints."""
    out = run_command(line, ROOT if line.startswith("python tests/") else tmp_path)
    if line.startswith("uno-mk evaluate"):
        # every line's win rate and interval, as printed, is a figure of the pages (seeded)
        figures = re.findall(r"win rate (\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\])", out)
        assert figures, out[-2000:]
        for figure in figures:
            assert figure in TEXT, (line, figure)
        return
    folder = check_tournament(line, out, tmp_path)
    figures = leaderboard_figures(folder)
    baselines = section(page_text("agents.md"), "## Baselines")
    if line not in baselines:  # elsewhere: the text quotes the first entrant's figure
        first = shlex.split(line)[shlex.split(line).index("--agents") + 1].split(",")[0]
        assert figures[first] in TEXT, (line, first, figures[first])
        return
    tournaments = [c for c in COMMANDS if c.startswith("uno-mk tournament") and quick_version(c)
                   and c in baselines]
    table = baseline_rows()[tournaments.index(line)]
    for agent, claim in table:
        if agent.endswith("(each)"):  # every copy: the rate (intervals differ in the last digit)
            name = agent.split()[0]
            copies = [v for k, v in figures.items() if k.split("#")[0] == name]
            assert copies and all(v.split()[0] == claim.split()[0] for v in copies), figures
        else:
            assert figures[agent] == claim, (agent, figures[agent], claim)
