"""A golden playthrough (as OpenSpiel's ``integration_tests/playthroughs``): one seeded 4-player
game of ``uno_mario_kart_v0`` written to ``tests/golden/playthrough_4p_seed7.txt``.

Every decision is a line (step, agent, action, hash of the agent's observation and mask, hash of
every seat's observation and of ``state()``, the reward ``last()`` returned), followed by every
engine event of that step. Any change of behaviour (rules, observation encoding, rewards, turn
order) shows up as a diff here and asks for a version bump of the env. If the change is intended:

    python tests/test_golden.py --regen
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
from pathlib import Path

import numpy as np
from scenario import eager_policy as _policy

from uno_mk_env import actions
from uno_mk_env import uno_mario_kart_v0 as U
from uno_mk_env.engine.events import event_to_dict

GOLDEN = Path(__file__).resolve().parent / "golden" / "playthrough_4p_seed7.txt"


def _sha(*arrays: np.ndarray) -> str:
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:12]


def _event(e: tuple) -> str:
    return "      " + json.dumps(event_to_dict(e), separators=(",", ":"))


def generate_playthrough(num_players: int = 4, seed: int = 7) -> str:
    """The golden text of ``raw_env(num_players)`` after ``reset(seed=seed)``."""
    env = U.raw_env(num_players=num_players)
    env.reset(seed=seed)
    game = env.game
    rng = np.random.default_rng(seed)
    lines = [
        f"# uno_mario_kart_v0 playthrough: raw_env(num_players={num_players}), reset(seed={seed}),"
        f" policy: {_policy.__doc__.strip()} (numpy default_rng({seed}))",
        "# step agent action obs=sha1(observation+mask) all=sha1(every seat's observation+state)"
        " reward=last()",
        "# regenerate after an intended change: python tests/test_golden.py --regen",
        "deal:",
    ]
    lines += [_event(e) for e in game.events]
    for step, agent in enumerate(env.agent_iter()):
        obs, reward, terminated, truncated, _ = env.last()
        every = [env.observe(a)["observation"] for a in env.possible_agents] + [env.state()]
        action = None if terminated or truncated else _policy(obs["action_mask"], rng)
        name = "None" if action is None else actions.ACTION_NAMES[action]
        flag = " terminated" if terminated else " truncated" if truncated else ""
        lines.append(
            f"{step:4d} {agent} {name} obs={_sha(obs['observation'], obs['action_mask'])} "
            f"all={_sha(*every)} reward={reward:+.6f}{flag}"
        )
        start = len(game.events)
        env.step(action)
        lines += [_event(e) for e in game.events[start:]]
    lines.append(f"winner: {game.winner} scores: {game.scores}")
    return "\n".join(lines) + "\n"


def test_golden_playthrough_is_unchanged():
    expected = GOLDEN.read_text(encoding="utf-8")
    actual = generate_playthrough()
    if actual != expected:
        diff = "".join(list(difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True),
            "golden", "now",
        ))[:120])
        raise AssertionError(
            "behaviour changed (regenerate with `python tests/test_golden.py --regen` if "
            f"intended, and bump the env version):\n{diff}"
        )


def test_golden_playthrough_is_a_finished_eventful_game():
    text = GOLDEN.read_text(encoding="utf-8")
    assert "terminated" in text and "round_end" in text
    for word in ("PLAY(", "DRAW", "COLOUR(", "CALL_UNO", '"flip"'):
        assert word in text


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Write the golden playthrough file.")
    parser.add_argument("--regen", action="store_true", help=f"rewrite {GOLDEN}")
    args = parser.parse_args()
    text = generate_playthrough()
    if args.regen:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
        print(f"wrote {GOLDEN} ({text.count(chr(10))} lines)")
    else:
        print(text, end="")
