"""Conformance of every registered agent (``uno_mk_env.agents.example_specs``), driven the one way
every driver drives agents (:func:`uno_mk_env.agents.agent_action`):

* legal in every rules preset at every table size 2-10 (a tournament would raise ``AgentError``);
* deterministic given its seed (the same game twice gives the same decisions);
* it reads only its view: at its decisions, the same agent state asked about a game whose hidden
  cards were re-dealt (``determinize``: the same ``view(seat)``) decides the same.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from uno_mk_env import PRESETS, Game, Rules
from uno_mk_env.agents import RandomAgent, agent_action, example_specs, make_agent
from uno_mk_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS

REPO = Path(__file__).resolve().parents[1]
SPECS = sorted(example_specs().values())


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # example specs name model files relative to the repository


def _play(spec: str, rules: Rules, seed: int, max_steps: int = 400, check_view: bool = False):
    """One game: ``spec`` at seat 0, random agents elsewhere; its decisions, in order."""
    agent = make_agent(spec, seed=seed)
    agent.reset(seed)
    others = [RandomAgent(seed + s) for s in range(1, rules.num_players)]
    g = Game(rules, seed=seed)
    rng = np.random.default_rng(seed)
    decisions = []
    while not g.game_over and g.num_steps < max_steps:
        if g.current_player == 0:
            if check_view and len(decisions) % 3 == 0:
                twin = g.determinize(0, rng)
                assert twin.view(0) == g.view(0)
                action_twin = agent_action(copy.deepcopy(agent), twin)
                action = agent_action(agent, g)
                assert action == action_twin, f"{spec} decided differently on hidden cards"
            else:
                if getattr(agent, "cheats", False):  # a reference that sees the game (oracle)
                    agent.observe_game(g)
                action = agent_action(agent, g)
            decisions.append(action)
        else:
            action = agent_action(others[g.current_player - 1], g)
        g.step(action)
    return decisions


def test_every_registered_agent_has_an_example() -> None:
    assert {"random", "greedy", "strategic", "ismcts", "ppo"} <= set(example_specs())


@pytest.mark.parametrize("spec", SPECS)
def test_legal_in_every_preset_at_every_table_size(spec: str) -> None:
    for i, options in enumerate(PRESETS.values()):
        for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
            steps = 150 if spec.startswith("ismcts") else 400
            _play(spec, Rules(**{**options, "num_players": n}), seed=100 * i + n, max_steps=steps)


@pytest.mark.parametrize("spec", SPECS)
def test_deterministic_given_its_seed(spec: str) -> None:
    rules = Rules(num_players=3, uno_catch="next_player")
    assert _play(spec, rules, seed=5, max_steps=200) == _play(spec, rules, seed=5, max_steps=200)


@pytest.mark.parametrize("spec", SPECS)
def test_decides_on_its_view_alone(spec: str) -> None:
    if getattr(make_agent(spec), "cheats", False):
        pytest.skip("a cheating reference agent sees the game by design (tests/test_evaluate.py)")
    for n in (2, 4):
        _play(spec, Rules(num_players=n), seed=11 + n, max_steps=150, check_view=True)
