"""What the ``uno-mk`` subcommands share: the one-line error (and the one for a full disk), rule
and agent arguments, the extras check and tables that fit the terminal (drawn by ``rich`` when
it is installed, plain text otherwise)."""

from __future__ import annotations

import argparse
import importlib.util
import io
import re
import shutil
import textwrap
from collections.abc import Sequence
from typing import Any, TextIO

from uno_mk_env import PRESETS, Rules, RulesError
from uno_mk_env.agents.base import AgentSpecError, build_agent
from uno_mk_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS, OPTIONS
from uno_mk_env.errors import UnoMkError, one_line, quote
from uno_mk_env.evaluation.match import admit
from uno_mk_env.files import NO_SPACE, no_space  # noqa: F401  (the CLI's names for them)

PROG = "uno-mk"


class CLIError(UnoMkError):
    """A bad command-line argument or a missing extra: printed as one line, exit code 2."""


class WriteError(CLIError):
    """Files that could not be written during the run because there was no space (a full disk
    or quota, a file-size limit): one line saying what is kept and what to do, exit code 1
    (the arguments were fine)."""

    exit_code = 1


def write_error(error: OSError, where: object, then: str) -> WriteError:
    """The one line for ``error`` (:func:`no_space`): the file it names (else ``where``, a path
    or ``None``), the system's reason, then ``then`` (what is kept, what to do)."""
    target = error.filename if error.filename is not None else where
    name = "a file" if target is None else quote(str(target), 160)
    reason = one_line(error.strerror or str(error), 60)
    return WriteError(f"cannot write {name}: {reason} (no space left, or a file-size limit); "
                      f"{then}")


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

    for spec in dict.fromkeys(agent_specs):
        try:
            admit(build_agent(spec, seed=0), spec, allow_cheating)
        except AgentSpecError as e:
            raise CLIError(str(e)) from None


# ------------------------------------------------------------------------------------ tables
#: A table cell longer than this that contains a space is prose, which may wrap (unless the
#: caller says which columns wrap).
PROSE = 40
#: The narrowest width a table is laid out for.
MIN_WIDTH = 20


def terminal_width() -> int:
    """The width tables and text are laid out for: ``COLUMNS`` when set, else the terminal's,
    else 80 (:func:`shutil.get_terminal_size`, which ``rich`` agrees with)."""
    return max(MIN_WIDTH, shutil.get_terminal_size((80, 24)).columns)


def print_wrapped(out: TextIO, text: str, indent: str = "", width: int | None = None) -> None:
    """``text`` on ``out`` in lines of at most ``width`` (:func:`terminal_width`) characters,
    the lines after the first indented by ``indent`` plus two spaces; words are never split
    (a word longer than a line stays whole)."""
    print(textwrap.fill(text, width or terminal_width(), initial_indent=indent,
                        subsequent_indent=indent + "  ", break_long_words=False,
                        break_on_hyphens=False), file=out)


def print_table(
    out: TextIO,
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    right: Sequence[str] = (),
    width: int | None = None,
    drop: Sequence[str] = (),
    wrap: Sequence[str] | None = None,
) -> list[str]:
    """A table on ``out`` that fits ``width`` columns (default :func:`terminal_width`): drawn by
    ``rich`` when installed, else aligned plain text (a base install has no ``rich``).

    Only the ``wrap`` columns (default: prose, any column with a cell of over :data:`PROSE`
    characters and a space) may wrap; no other cell (an agent label, a figure) is ever cut or
    wrapped. When the table does not fit, narrower layouts are tried in turn: without the box's
    outer edge and column rules, then without the ``drop`` columns (dropped in that order), and
    when even that is too wide, one block of ``column: value`` lines per row, wrapped to the
    width. No line is ever longer than ``width`` unless a single word is.

    Args:
        right: right-aligned columns.

    Returns:
        The columns shown (all of them but the dropped ones).
    """
    width = max(MIN_WIDTH, width or terminal_width())
    wraps = set(wrap) if wrap is not None else {
        col for i, col in enumerate(columns)
        if any(len(row[i]) > PROSE and " " in row[i] for row in rows)}
    for k in range(len(drop) + 1):
        shown = [col for col in columns if col not in drop[:k]]
        cells = [[row[columns.index(col)] for col in shown] for row in rows]
        draw = _rich_table if has_rich() else _plain_table
        if draw(out, title, shown, cells, right, wraps, width):
            return shown
    _print_blocks(out, title, columns, rows, width)
    return list(columns)


def _plain_table(out: TextIO, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]],
                 right: Sequence[str], wraps: set[str], width: int) -> bool:
    """Prints the table as aligned plain text within ``width`` (the ``wraps`` columns wrapped
    to share what the others leave); ``False`` (nothing printed) when it cannot fit."""
    widths = [max([len(col), *(len(row[i]) for row in rows)]) for i, col in enumerate(columns)]
    free = width - 2 * (len(columns) - 1) - sum(
        w for col, w in zip(columns, widths) if col not in wraps)
    wrapped = [i for i, col in enumerate(columns) if col in wraps]
    if wrapped:
        need = {i: max(len(word) for row in rows for word in [columns[i], *row[i].split()])
                for i in wrapped}
        if free < sum(need.values()):
            return False
        want = sum(widths[i] for i in wrapped)
        if want > free:  # share the room in proportion to each column's widest cell
            for i in wrapped:
                widths[i] = max(need[i], free * widths[i] // want)
    elif free < 0:
        return False

    def lines(cells: Sequence[str]) -> list[str]:
        parts = [textwrap.wrap(cell, widths[i], break_long_words=False) or [""]
                 if columns[i] in wraps else [cell] for i, cell in enumerate(cells)]
        out = []
        for j in range(max(map(len, parts))):
            texts = [part[j] if j < len(part) else "" for part in parts]
            out.append("  ".join(t.rjust(w) if col in right else t.ljust(w)
                                 for col, t, w in zip(columns, texts, widths)).rstrip())
        return out

    text = [*textwrap.wrap(title, width), *lines(columns), "  ".join("-" * w for w in widths)]
    for row in rows:
        text += lines(row)
    print("\n".join(text), end="\n\n", file=out)
    return True


def _rich_table(out: TextIO, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]],
                right: Sequence[str], wraps: set[str], width: int) -> bool:
    """Prints the table drawn by ``rich`` within ``width``: with its box when that fits, else
    without the outer edge and the column rules; ``False`` (nothing printed) when neither
    fits. A column that does not wrap is ``no_wrap`` with the width of its longest cell."""
    from rich import box
    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    for style in ({}, {"box": box.SIMPLE_HEAD, "show_edge": False, "pad_edge": False}):
        table = Table(title=title, **style)  # type: ignore[arg-type]
        for i, col in enumerate(columns):
            keep = col not in wraps
            texts = [col, *(row[i] for row in rows)]
            if not keep:  # a wrapped cell still never cuts a word
                texts = [word for text in texts for word in text.split()]
            table.add_column(Text(col), justify="right" if col in right else "left",
                             no_wrap=keep, min_width=max(map(cell_len, texts), default=0))
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))
        # Laid out for ``width`` on a console wide enough that nothing is cropped: a table that
        # cannot fit then shows as a line longer than ``width`` (rich crops or breaks it else).
        table.width = width
        buffer = io.StringIO()
        Console(file=buffer, width=10**4, highlight=False, color_system=None).print(table)
        if all(cell_len(line) <= width for line in buffer.getvalue().splitlines()):
            table.width = None
            Console(file=out, width=width, highlight=False).print(table)
            return True
    return False


def _print_blocks(out: TextIO, title: str, columns: Sequence[str],
                  rows: Sequence[Sequence[str]], width: int) -> None:
    """The narrowest layout: the title, then per row its first cell and one wrapped
    ``column: value`` line for each other column."""
    print_wrapped(out, title, width=width)
    for row in rows:
        print(file=out)
        print_wrapped(out, row[0], width=width)
        for col, cell in zip(columns[1:], row[1:]):
            print_wrapped(out, f"{col}: {cell}", indent="  ", width=width)
    print(file=out)


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
