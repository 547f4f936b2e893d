"""``uno-mk models``: the trained policies shipped with the package, with their headline figures
and provenance (works on a base install; :mod:`uno_mk_env.agents.shipped`).

::

    uno-mk models            # one row per policy: its spec, table size, training, evaluation
    uno-mk models ppo_4p     # one policy in full: file, SHA-256, command, versions, results

Every figure comes from the policy's own ``NAME.json`` (written when it was trained and
exported); the SHA-256 is computed from the installed ``.npz``, the file a benchmark card names.
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from uno_mk_env.agents.ismcts import PPO_PRIORS
from uno_mk_env.agents.shipped import SHIPPED_PACKAGE, describe, shipped_info, shipped_names
from uno_mk_env.evaluation.protocol import SEEDS as PROTOCOL_SEEDS

from .common import CLIError, print_table, print_wrapped

#: The opponent of the headline figures.
HEADLINE_OPPONENT = "strategic"
#: Hex digits of the SHA-256 in the listing (``uno-mk models NAME`` shows all 64).
SHA_SHOWN = 12
_BACKENDS = {"sb3": "MaskablePPO (sb3)", "rllib": "PPO (RLlib)"}


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "models", help="list the trained policies shipped with the package",
        description="The trained policies shipped with the package (play one as ppo:NAME), "
                    "with their headline figures and provenance.")
    p.add_argument("name", nargs="?", help="show this policy in full")


def run(args: argparse.Namespace, out: TextIO) -> int:
    names = shipped_names()
    if not names:
        raise CLIError(f"no shipped policies found (the package {SHIPPED_PACKAGE} is missing): "
                       "reinstall uno-mk-env")
    if args.name is not None:
        if args.name not in names:
            raise CLIError(f"no shipped policy named {args.name[:80]!r}; shipped: "
                           f"{', '.join(names)}")
        print_details(args.name, out)
        return 0
    rows = []
    for name in names:
        d = describe(name)
        rate, place, games = headline(d)
        seed = d["evaluation_seed"]
        rows.append((d["spec"], str(d["players"]), _trained(d), rate, place, games,
                     "run" if seed is None and games != "-" else str(seed or "-"),
                     str(d["seed"]), (d["commit"] or "-")[:7], d["sha256"][:SHA_SHOWN]))
    columns = ("agent", "players", "trained", f"vs {HEADLINE_OPPONENT}", "place", "games",
               "on seed", "train seed", "commit", "SHA-256")
    print_table(out, f"shipped policies: win rate [95% CI] and mean place against "
                f"{HEADLINE_OPPONENT} at the table size each was trained for",
                columns, rows, right=("players", "place", "games", "on seed", "train seed"),
                drop=("SHA-256", "commit", "train seed", "trained"))
    for text in (
        f"Each row's figures come from its policy's NAME.json: 'games' duplicate-deal games "
        f"played on the root seed 'on seed' ('run': the training run's final evaluation, "
        f"seeded from its training seed). The README and docs/results.md quote the evaluation "
        f"protocol instead ('uno-mk evaluate': other deals, root seeds "
        f"{PROTOCOL_SEEDS[2]} and {PROTOCOL_SEEDS[4]}), so their figures differ within the "
        "intervals.",
        f"ismcts:N:prior=ppo searches with ppo:{PPO_PRIORS[2]} as its prior at 2 players and "
        f"ppo:{PPO_PRIORS[4]} at 3 to 10. 'uno-mk models NAME' shows one in full.",
    ):
        print_wrapped(out, text)
    return 0


def _trained(d: dict[str, Any]) -> str:
    steps = d["timesteps"]
    size = f"{steps / 1e6:.1f} M steps" if isinstance(steps, int) else "steps not recorded"
    return f"{d['backend']}, {size}"


def _result(r: dict[str, Any]) -> str:
    place = (f", mean place {r['mean_place']:.2f}" if isinstance(r.get("mean_place"), float)
             else "")
    return f"win rate {r['win_rate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]{place}"


def headline(d: dict[str, Any]) -> tuple[str, str, str]:
    """The first recorded result against :data:`HEADLINE_OPPONENT` at the trained table size:
    the win rate with its 95 % interval, the mean place and the games, e.g. ``("0.266 [0.257,
    0.275]", "2.47", "10,000")``; dashes when there is none."""
    for r in d["evaluation"]:
        if r.get("opponent") == HEADLINE_OPPONENT:
            place = r.get("mean_place")
            return (f"{r['win_rate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]",
                    f"{place:.2f}" if isinstance(place, float) else "-", f"{r['games']:,}")
    return ("-", "-", "-")


def print_details(name: str, out: TextIO) -> None:
    """Everything :func:`~uno_mk_env.agents.shipped.describe` knows about ``name``, plus the
    training command and versions from its ``.json``."""
    d = describe(name)
    info = shipped_info(name)
    versions = info.get("versions") or {}
    steps = d["timesteps"]
    lines = [
        f"{name}: play it as {d['spec']}",
        f"  file:       {d['file']}",
        f"  SHA-256:    {d['sha256']}",
        f"  trained:    {_BACKENDS.get(d['backend'], d['backend'])} at {d['players']} players, "
        + (f"{steps:,} steps" if isinstance(steps, int) else "steps not recorded")
        + (" (the run reached its budget)" if d["complete"] else "")
        + f", seed {d['seed']}, commit {d['commit'] or 'not recorded'}",
        f"  command:    {info.get('command', 'not recorded')}",
        "  versions:   " + (", ".join(f"{k} {v}" for k, v in versions.items()) or "not recorded"),
    ]
    if d["evaluation"]:
        lines.append(f"  evaluation: {d['evaluation_source']}")
        for r in d["evaluation"]:
            copies = f"{d['players'] - 1} x " if d["players"] > 2 else ""
            lines.append(f"    vs {copies}{r['opponent']}: {_result(r)} ({r['games']:,} games)")
    else:
        lines.append("  evaluation: not recorded")
    lines.append(f"  provenance: {name}.json next to the file (seeds, configuration, resumed runs,"
                 " selection)")
    print("\n".join(lines), file=out)
