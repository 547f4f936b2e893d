"""Command-line arguments from a dataclass, CleanRL style: one field per argument, its
docstring (the string literal under the field) is the ``--help`` text.

:func:`build_parser` makes the :mod:`argparse` parser (booleans as ``--x/--no-x``),
:func:`given_fields` tells which fields a command line set (argparse's unique prefixes too),
:func:`command_line` writes the command that reproduces a set of arguments. Nothing here imports
torch or stable-baselines3, so ``--help`` is quick.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import shlex
import typing
from collections.abc import Sequence
from typing import Any


class TrainingError(ValueError):
    """A training request that is refused before anything is created (a bad argument value, a
    missing or unreadable checkpoint, nothing left to train, a hyperparameter a resumed model
    cannot change); one line."""


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each dataclass field of ``cls``, read from its source."""
    try:
        tree = ast.parse(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs = {}
    for node, nxt in zip(body, body[1:]):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)):
            docs[node.target.id] = nxt.value.value
    return docs


def build_parser(cls: type, prog: str, description: str) -> argparse.ArgumentParser:
    """An argument parser with one ``--field-name`` per field of the dataclass ``cls``."""
    docs = field_docs(cls)
    hints = typing.get_type_hints(cls)
    parser = argparse.ArgumentParser(
        prog=prog, description=description,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        kind = hints[f.name]
        text = docs.get(f.name, "").replace("%", "%%")
        if kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default,
                                help=text)
        else:
            parser.add_argument(flag, type=kind, default=f.default, metavar=f.name.upper(),
                                help=text)
    return parser


def given_fields(cls: type, argv: Sequence[str]) -> set[str]:
    """The fields of ``cls`` set on a command line (``--n-steps 8``, ``--n_steps=8``,
    ``--no-progress``, or a unique prefix such as ``--n-ste 8``, as argparse allows)."""
    names = [f.name for f in dataclasses.fields(cls)]
    given = set()
    for token in argv:
        if not token.startswith("--"):
            continue
        flag = token[2:].split("=", 1)[0].replace("-", "_")
        for name in (flag, flag[3:] if flag.startswith("no_") else None):
            if name is None:
                continue
            matches = [n for n in names if n == name] or [n for n in names if n.startswith(name)]
            if len(matches) == 1:
                given.add(matches[0])
                break
    return given


def command_line(prog: str, args: Any) -> str:
    """The command that parses back to ``args`` (a dataclass instance): ``prog`` followed by
    every field that differs from its default, shell-quoted."""
    parts = [prog]
    for f in dataclasses.fields(args):
        value = getattr(args, f.name)
        if value == f.default:
            continue
        flag = "--" + f.name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(flag if value else "--no-" + flag[2:])
        else:
            parts += [flag, shlex.quote(str(value))]
    return " ".join(parts)


def ints(text: str) -> list[int]:
    """``"256,256"`` -> ``[256, 256]``."""
    return [int(x) for x in text.split(",") if x.strip()]


def specs(text: str) -> list[str]:
    """``"strategic, greedy"`` -> ``["strategic", "greedy"]``."""
    return [s.strip() for s in text.split(",") if s.strip()]


def weighted(text: str, what: str, allowed: Sequence[Any] | None = None,
             kind: type = str) -> tuple[list[Any], list[float]]:
    """``"2:3,4,6:0.5"`` -> ``([2, 4, 6], [3.0, 1.0, 0.5])``: comma-separated values, each with an
    optional ``:weight`` (default 1), normalised to sum 1.

    Raises:
        TrainingError: an empty list, a value not in ``allowed`` or a bad weight (one line,
            naming ``what``).
    """
    values, weights = [], []
    for item in specs(text):
        value, _, weight = item.partition(":")
        try:
            v = kind(value.strip())
            w = float(weight) if weight.strip() else 1.0
        except ValueError:
            raise TrainingError(f"{what} {text!r}: cannot read {item!r} (expected value or "
                                "value:weight)") from None
        if allowed is not None and v not in allowed:
            raise TrainingError(f"{what} {text!r}: {v!r} is not one of "
                                f"{', '.join(map(str, allowed))}")
        if not w >= 0:
            raise TrainingError(f"{what} {text!r}: weight {weight!r} must be >= 0")
        values.append(v)
        weights.append(w)
    if not values or sum(weights) <= 0:
        raise TrainingError(f"{what} {text!r}: give at least one value with a positive weight")
    total = sum(weights)
    return values, [w / total for w in weights]


def check_ranges(args: Any, *, at_least_one: Sequence[str] = (),
                 non_negative: Sequence[str] = (), unit: Sequence[str] = (),
                 positive: Sequence[str] = ()) -> None:
    """Refuses the first field of ``args`` out of its range: a count that must be ``>= 1``
    (``at_least_one``), a count or budget that must be ``>= 0`` (``non_negative``), a
    probability or factor in ``[0, 1]`` (``unit``), a rate that must be ``> 0`` (``positive``).

    Raises:
        TrainingError: naming the option (``--name``), its value and its range (one line).
    """
    checks = [(at_least_one, lambda v: v >= 1, "must be >= 1"),
              (non_negative, lambda v: v >= 0, "must be >= 0"),
              (unit, lambda v: 0.0 <= v <= 1.0, "must be in [0, 1]"),
              (positive, lambda v: v > 0, "must be > 0")]
    for names, ok, allowed in checks:
        for name in names:
            value = getattr(args, name)
            if not ok(value):  # NaN fails every range
                raise TrainingError(f"--{name.replace('_', '-')} {value!r}: {allowed}")


def check_agent_specs(args: Any, names: Sequence[str]) -> None:
    """Refuses an agent spec of the comma-separated fields ``names`` of ``args`` (opponents,
    evaluation opponents, a behaviour-cloning teacher) that cannot be built, before anything
    is created.

    Raises:
        TrainingError: naming the option, the spec and why (one line).
    """
    from uno_mk_env.agents.base import AgentSpecError
    from uno_mk_env.evaluation.tournament import build_agent

    for name in names:
        for spec in specs(getattr(args, name)):
            try:
                build_agent(spec, seed=0)
            except (AgentSpecError, ValueError, OSError) as e:
                message = " ".join(str(e).split())
                raise TrainingError(f"--{name.replace('_', '-')}: agent {spec!r}: "
                                    f"{message}") from None
