"""Where a search teacher leaves its prior, and whether a distilled student learned those places
(docs/training.md, "Expert iteration"): two runs of the teacher (two seeds) and the student
decide every multi-action decision of the teacher's own games against ``strategic``; printed:
how often the teacher plays the prior's action, how often its two runs agree, how often the
second run repeats the first one's departures from the prior, and, where the student leaves
the prior, how often the teacher made the same choice.

    python -m benchmarks.teacher_agreement --teacher ismcts:400:prior=ppo --prior ppo:ppo_2p \\
        --student ppo:runs/x/final.npz --decisions 8000

A diagnostic, not a test: a student whose departures the teacher rarely shares learned noise.
"""

from __future__ import annotations

import argparse

import numpy as np

from uno_mk_env.agents.base import agent_action, build_agent
from uno_mk_env.errors import UnoMkError
from uno_mk_env.training.envs import Tables, make_training_env


def decisions(teacher: str, prior: str, student: str, count: int, players: int,
              seed: int) -> np.ndarray:
    """``count`` rows of ``(teacher run 1, teacher run 2, prior, student)`` actions, at the
    decisions with more than one legal action of the first run's games."""
    env = make_training_env(Tables(num_players=players, seed=seed, opponents="strategic"),
                            rank=10_000)
    agents = [build_agent(spec, seed=seed + i) for i, spec in
              enumerate((teacher, teacher, prior, student))]
    env.reset(seed=seed)
    rows: list[tuple[int, ...]] = []
    while len(rows) < count:
        several = env.action_masks().sum() > 1
        chosen = tuple(agent_action(a, env.game, "agent") for a in agents)
        if several:
            rows.append(chosen)
        _, _, terminated, truncated, _ = env.step(chosen[0])
        if terminated or truncated:
            env.reset()
            for i, a in enumerate(agents):
                a.reset(seed + 100 * len(rows) + i)
    return np.asarray(rows)


def share(hits: np.ndarray) -> str:
    """The share of true values, or "-" when there are none to count."""
    return f"{np.mean(hits):.3f}" if len(hits) else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.teacher_agreement",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--teacher", default="ismcts:400:prior=ppo")
    parser.add_argument("--prior", default="ppo:ppo_2p", help="the teacher's prior, as an agent")
    parser.add_argument("--student", required=True, help="the distilled policy, as an agent")
    parser.add_argument("--decisions", type=int, default=8000)
    parser.add_argument("--players", type=int, default=2, choices=range(2, 11), metavar="2-10")
    parser.add_argument("--seed", type=int, default=99)
    args = parser.parse_args(argv)
    if args.decisions < 1:
        parser.error(f"--decisions {args.decisions}: at least 1")
    try:
        t1, t2, p, s = decisions(args.teacher, args.prior, args.student, args.decisions,
                                 args.players, args.seed).T
    except (UnoMkError, ValueError) as e:  # a bad agent spec: one line
        raise SystemExit(f"{parser.prog}: error: {e}") from None
    left, moved = t1 != p, s != p
    print(f"{len(t1):,} decisions with a choice; the teacher plays the prior's action "
          f"{np.mean(t1 == p):.3f}, its two runs agree {np.mean(t1 == t2):.3f}")
    print(f"where run 1 leaves the prior ({left.sum():,}), run 2 makes the same choice "
          f"{share(t2[left] == t1[left])}")
    print(f"the student plays the prior's action {np.mean(s == p):.3f}; where it leaves it "
          f"({moved.sum():,}), the teacher chose as the student {share(t1[moved] == s[moved])} "
          f"and as the prior {share(t1[moved] == p[moved])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
