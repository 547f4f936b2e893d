"""One agent's two results on the same deals, compared game by game (docs/training.md's paired
intervals): the win rate and the mean place of entrant 0 in ``A`` minus in ``B``, each with its
95 % interval clustered by deal (``uno_mk_env.evaluation.protocol.paired_difference``).

``A`` and ``B`` are results that list their games: a tournament's ``tournament.json``
(``uno-mk tournament --agents CANDIDATE,strategic --seed S``, the same ``--seed`` and
``--games`` for both) or a card's ``games/<line>.json`` (``uno-mk evaluate``, the protocol's
deals):

    python -m benchmarks.paired runs/new/tournament.json runs/old/tournament.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from uno_mk_env.evaluation.protocol import paired_difference
from uno_mk_env.evaluation.results import GameRecord


def read_games(path: Path) -> list[GameRecord]:
    """The game records of a result file, or one line naming the file and what is wrong."""
    try:
        games = json.loads(path.read_text(encoding="utf-8"))["games"]
        return [GameRecord.from_dict(g) for g in games]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"{path}: not a result with its games ({type(e).__name__}: {e})"
                         ) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.paired",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="the result whose entrant 0 is the new agent")
    parser.add_argument("b", type=Path, help="the result to compare it with, same deals")
    args = parser.parse_args(argv)
    try:
        d = paired_difference(read_games(args.a), read_games(args.b))
    except ValueError as e:
        raise SystemExit(f"{args.a} vs {args.b}: {e}") from None
    for name in ("win_rate", "mean_place"):
        s = d[name]
        print(f"{name}: A - B {s['value']:+.4f} [{s['ci_low']:+.4f}, {s['ci_high']:+.4f}] "
              f"over {d['games']:,} paired games, {d['deals']:,} deals")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
