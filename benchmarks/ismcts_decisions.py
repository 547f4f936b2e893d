"""How good are a search agent's decisions, compared with ``strategic``'s, one decision at a time?
(The ablation table of docs/evaluation.md#the-search-agent.)

Win rates over thousands of games are the final word but cost hours per configuration; this
measures the same thing one decision at a time, with far less noise. Positions come from
``strategic`` self-play (each real decision kept with probability 0.3; fixed seeds). At each
position the agent under test decides as it would in a game (an ``ismcts`` agent gets a copy of
the deciding ``strategic`` agent's table memory as its prior) and so does ``strategic``. Where
they disagree, each move is valued by ``Q(s, a)``: the mean reward of the deciding seat when,
after ``a``, every seat plays ``strategic``, from the **true** state with the draw pile
reshuffled ``K`` times (the pile's order is unknown to every player; the same reshuffles for
both moves). The score of a configuration is the mean over all positions of
``Q(s, a_agent) - Q(s, a_strategic)`` (0 where they agree), with its standard error: the
one-step gain over ``strategic`` per decision. The ``Q`` values are cached in ``--cache``.

    python -m benchmarks.ismcts_decisions --players 2 --positions 1500 --k 32 \
        ismcts:200 ismcts:200:bonus=0 ppo:models/ppo_2p.npz greedy

A benchmark, not a test. For calibration: the ``ppo_2p`` policy of package 0.4.0, which won
0.536 of its games against ``strategic`` (docs/evaluation.md), scored about +0.006 per decision.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import time
from pathlib import Path

import numpy as np

from uno_mk_env import Game, Rules
from uno_mk_env import actions as A
from uno_mk_env.agents import make_agent
from uno_mk_env.agents.ismcts import ISMCTSAgent, parse_spec
from uno_mk_env.agents.rule_based import StrategicAgent
from uno_mk_env.engine.observation import action_mask, encode
from uno_mk_env.engine.rewards import win_reward

Position = tuple[Game, list[StrategicAgent], int]


def positions(n: int, count: int, seed: int = 12345) -> list[Position]:
    """``count`` positions of ``strategic`` self-play at ``n`` players: (the true game, every
    seat's agent with its table memory, the deciding seat)."""
    out: list[Position] = []
    rng = np.random.default_rng(seed)
    game_index = 0
    while len(out) < count:
        g = Game(Rules(num_players=n), seed=seed * 1000 + game_index)
        game_index += 1
        agents = [StrategicAgent(s) for s in range(n)]
        while not g.game_over and g.num_steps < 2000:
            p = g.current_player
            legal = g.legal_action_ids()
            if len(legal) > 1 and legal[-1] < A.CALL_UNO and rng.random() < 0.3:
                out.append((g.clone(), [copy.deepcopy(a) for a in agents], p))
            g.step(agents[p].act(None, None, g.view(p)))
    return out[:count]


def strategic_choice(pos: Position) -> tuple[int, StrategicAgent]:
    g, agents, p = pos
    agent = copy.deepcopy(agents[p])
    return agent.act(None, None, g.view(p)), agent


class QCache:
    """``Q(s, a)`` by (position index, action, K), kept in a JSON-lines file."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.values: dict[tuple[int, int, int], float] = {}
        if path is not None and path.exists():
            for line in path.read_text().splitlines():
                i, a, k, v = json.loads(line)
                self.values[(i, a, k)] = v

    def q(self, i: int, pos: Position, action: int, k: int) -> float:
        key = (i, action, k)
        if key not in self.values:
            self.values[key] = _q(i, pos, action, k)
            if self.path is not None:
                with self.path.open("a") as f:
                    f.write(json.dumps([i, action, k, self.values[key]]) + "\n")
        return self.values[key]


def _q(i: int, pos: Position, action: int, k: int) -> float:
    g0, agents0, p = pos
    _, me = strategic_choice(pos)
    total = 0.0
    for j in range(k):
        g = g0.clone()
        np.random.default_rng([i, j]).shuffle(g.draw_pile)
        agents = [copy.deepcopy(a) for a in agents0]
        agents[p] = copy.deepcopy(me)
        agents[p]._pending = None  # its memory of the colour it left: the move taken here
        agents[p]._remember(g.view(p), action)
        g.step(action)
        while not g.game_over and g.num_steps < 5000:
            c = g.current_player
            g.step(agents[c].act(None, None, g.view(c)))
        total += win_reward(g.num_players, g.winner, p)
    return total / k


def choose(spec: str, pos: Position, seed: int) -> int:
    """The move of the agent ``spec`` at ``pos``."""
    g, agents, p = pos
    view = g.view(p)
    if spec.partition(":")[0] == "ismcts":
        agent = ISMCTSAgent(seed, params=parse_spec(spec.partition(":")[2] or None))
        agent.prior = copy.deepcopy(agents[p])  # the table memory of this seat so far
        return agent.act(None, action_mask(view.legal_actions), view)
    agent = make_agent(spec, seed=seed)
    obs = encode(view) if getattr(agent, "needs_observation", False) else None
    return agent.act(obs, action_mask(view.legal_actions), view)


def score(spec: str, pos_list: list[Position], k: int, cache: QCache) -> dict[str, object]:
    start = time.perf_counter()
    diffs = []
    for i, pos in enumerate(pos_list):
        mine = choose(spec, pos, 1000 + i)
        theirs, _ = strategic_choice(pos)
        diffs.append(0.0 if mine == theirs else
                     cache.q(i, pos, mine, k) - cache.q(i, pos, theirs, k))
    d = np.array(diffs)
    return {"agent": spec, "positions": len(d), "disagree": round(float((d != 0).mean()), 3),
            "gain_per_decision": round(float(d.mean()), 5),
            "standard_error": round(float(d.std(ddof=1) / math.sqrt(len(d))), 5),
            "seconds": round(time.perf_counter() - start)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", nargs="+", help="agent specs to score")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--positions", type=int, default=1500)
    parser.add_argument("--k", type=int, default=32, help="reshuffles per Q value")
    parser.add_argument("--cache", type=Path, help="JSON-lines cache of the Q values")
    args = parser.parse_args(argv)
    pos_list = positions(args.players, args.positions)
    cache = QCache(args.cache)
    for spec in args.agents:
        print(json.dumps(score(spec, pos_list, args.k, cache)), flush=True)


if __name__ == "__main__":
    main()
