"""What the ``uno-mk`` subcommands share: the one-line error, rule and agent arguments, the
extras check and plain-text tables (``rich`` only when it is installed)."""

from __future__ import annotations

import argparse
import importlib.util
import re
from collections.abc import Sequence
from typing import Any, TextIO

from uno_mk_env import PRESETS, Rules, RulesError
from uno_mk_env.agents.base import AgentSpecError, build_agent
from uno_mk_env.errors import UnoMkError
from uno_mk_env.rules import MAX_PLAYERS, MIN_PLAYERS, OPTIONS

PROG = "uno-mk"


class CLIError(UnoMkError):
    """A bad command-line argument or a missing extra: printed as one line, exit code 2."""


def require(modules: Sequence[str], extra: str, what: str) -> None:
    """Raises :class:`CLIError` naming the extra to install when one of ``modules`` is missing
    (``what`` is the thing that needs it, e.g. ``"uno-mk tournament"``)."""
    missing = [m for m in modules if not importable(m)]
    if missing:
        raise CLIError(f"{what} needs {', '.join(missing)}: pip install 'uno-mk-env[{extra}]'")


def importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a None entry in sys.modules
        return False


def has_rich() -> bool:
    """Whether ``rich`` can be imported (tables are plain text without it)."""
    return importable("rich")


# ---------------------------------------------------------------------------- rule arguments
def _parse_value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if re.fullmatch(r"[+-]?\d+", text.strip()):
        return int(text)
    return text.strip()


def rules_from_args(
    preset: str | None, rule_items: Sequence[str], rounds_to_500: bool
) -> dict[str, Any]:
    """Rule options from ``--preset``, repeated ``--rule key=value`` and ``--rounds-to-500``
    (validated by building a :class:`~uno_mk_env.Rules`).

    Raises:
        CLIError: a malformed item, an unknown preset or option, or a bad value.
    """
    options: dict[str, Any] = {}
    if preset is not None:
        if preset not in PRESETS:
            raise CLIError(f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}")
        options.update(PRESETS[preset])
    for item in rule_items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CLIError(f"--rule expects key=value (e.g. uno_penalty=4), got {item!r}")
        key = key.strip()
        if key not in OPTIONS:
            raise CLIError(f"unknown rule option {key[:40]!r}; the options are: "
                           f"{', '.join(OPTIONS)}")
        if re.fullmatch(r"\s*[+-]?\d{19,}\s*", value):  # beyond any option (and int()'s limit)
            raise CLIError(f"--rule {key}: a {len(value.strip())}-character number is out of "
                           f"range (at most 18 digits); allowed: {OPTIONS[key].allowed}")
        options[key] = _parse_value(value)
    if rounds_to_500:
        options["match"] = "target_score"
    try:
        Rules(**options)
    except RulesError as e:
        raise CLIError(str(e)) from None
    return options


def add_rule_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("rules (see 'uno-mk rules')")
    g.add_argument("--preset", help=f"a rules preset: {', '.join(PRESETS)}")
    g.add_argument(
        "--rule", action="append", default=[], metavar="KEY=VALUE",
        help="a rule option, repeatable (e.g. --rule uno_catch=next_player --rule hand_size=5)",
    )
    g.add_argument(
        "--rounds-to-500", action="store_true",
        help="play full games to 500 points (match=target_score) instead of single rounds",
    )


def players(given: int | None, rules: dict[str, Any], default: int) -> int:
    """The player count from ``--players``, ``--rule num_players`` or ``default``."""
    n = given if given is not None else rules.get("num_players", default)
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise CLIError(f"bad player count {n}: a table seats {MIN_PLAYERS} to {MAX_PLAYERS} "
                       "players")
    if "num_players" in rules and rules["num_players"] != n:
        raise CLIError(f"--players {n} contradicts --rule num_players={rules['num_players']}")
    return n


def specs(text: str, flag: str) -> list[str]:
    """Comma-separated agent specs of ``flag``."""
    out = [s.strip() for s in text.split(",") if s.strip()]
    if not out:
        raise CLIError(f"{flag} needs at least one agent (e.g. {flag} greedy,random)")
    return out


def check_agents(agent_specs: Sequence[str], allow_cheating: bool = False) -> None:
    """Builds each agent once, so that a bad spec, or a cheating agent the command does not
    admit (the one cheating policy, :func:`uno_mk_env.evaluation.match.admit`: only with
    ``allow_cheating``, the ``--allow-cheating`` flag), is refused before anything is played or
    created."""
    from uno_mk_env.evaluation.match import admit

    for spec in dict.fromkeys(agent_specs):
        try:
            admit(build_agent(spec, seed=0), spec, allow_cheating)
        except AgentSpecError as e:
            raise CLIError(str(e)) from None


# ------------------------------------------------------------------------------------ tables
#: A table cell longer than this that contains a space is prose, which may wrap.
PROSE = 40


def print_table(
    out: TextIO,
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    right: Sequence[str] = (),
    width: int = 120,
) -> None:
    """A table on ``out``: drawn by ``rich`` when installed, else aligned plain text (a base
    install has no ``rich``). ``right``: right-aligned columns. ``width``: the console width when
    ``out`` is not a terminal. Only prose (a column with a cell of over :data:`PROSE` characters
    and a space) may wrap; no other cell (an agent label, a figure) is ever cut or wrapped: the
    console is widened when the table needs it."""
    if has_rich():
        _print_rich_table(out, title, columns, rows, right, width)
        return
    print(title, file=out)
    widths = [max([len(col), *(len(row[i]) for row in rows)]) for i, col in enumerate(columns)]

    def line(cells: Sequence[str]) -> str:
        parts = [cell.rjust(w) if col in right else cell.ljust(w)
                 for col, cell, w in zip(columns, cells, widths)]
        return "  ".join(parts).rstrip()

    print(line(columns), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for row in rows:
        print(line(row), file=out)
    print(file=out)


def _print_rich_table(out: TextIO, title: str, columns: Sequence[str],
                      rows: Sequence[Sequence[str]], right: Sequence[str], width: int) -> None:
    """:func:`print_table` drawn by ``rich``: a column that is not prose is ``no_wrap`` with
    the width of its longest cell, on a console at least as wide as the table's minimum."""
    from rich.cells import cell_len
    from rich.console import Console
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title)
    for i, col in enumerate(columns):
        cells = [row[i] for row in rows]
        keep = not any(len(cell) > PROSE and " " in cell for cell in cells)
        table.add_column(Text(col), justify="right" if col in right else "left", no_wrap=keep,
                         min_width=max(map(cell_len, cells), default=0) if keep else None)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    console = Console(file=out, width=None if out.isatty() else width, highlight=False)
    wide = console.options.update_width(10**4)
    needed = Measurement.get(console, wide, table).minimum
    if needed > console.width:
        console = Console(file=out, width=needed, highlight=False)
    console.print(table)


def short_labels(labels: Sequence[str], limit: int = 32) -> list[str]:
    """Display names for agent labels: a label longer than ``limit`` (``ppo:/a/long/path/
    run1/final.npz``) keeps its name and as many trailing path parts as it takes to tell it from
    the others (``ppo:…/run1/final.npz``), so two checkpoints never show the same prefix."""
    out = list(labels)
    long = [i for i, label in enumerate(labels) if len(label) > limit]
    for i in long:
        label = labels[i]
        name, sep, rest = label.partition(":")
        if not sep:
            name, rest = "", label
        parts = rest.replace("\\", "/").split("/")
        for k in range(1, len(parts) + 1):
            tail = "/".join(parts[-k:])
            if k < len(parts):
                tail = "…/" + tail
            candidate = f"{name}{sep}{tail}"
            others = [labels[j] for j in range(len(labels)) if j != i]
            if not any(o.endswith("/".join(parts[-k:])) for o in others):
                out[i] = candidate
                break
    if len(set(out)) < len(out):  # still ambiguous: the full labels
        return list(labels)
    return out
