"""IS-MCTS on the compiled core against its Python form (the reference): with the same seeds the
search determinizes on the core (``CompiledGame.determinize`` with the void-belief condition)
and simulates on the core's games, and chooses exactly what the Python search chooses, with the
same tree statistics, over whole games at 2-4 players and with each search setting that
changes what is dealt or played out (void beliefs off, common random numbers, the ``strategic``
rollout). The core's conditioned determinization is also compared with ``Game.from_view`` and
the agent's condition directly.

Skips as ``tests/test_compiled_lockstep.py`` does.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import numpy as np
import pytest

from tests.test_compiled_lockstep import load_core
from uno_mk_env import Game, Rules
from uno_mk_env.agents.ismcts import ISMCTSAgent, SearchParams, _compiled_dealer
from uno_mk_env.agents.rule_based import StrategicAgent
from uno_mk_env.compiled import ENGINE_VARIABLE
from uno_mk_env.engine.observation import action_mask

core = load_core()


def tree(node: Any) -> tuple[Any, ...]:
    """A search tree's statistics, recursively (keys in action order)."""
    return (node.visits, node.avail, node.total, node.player,
            tuple((a, tree(c)) for a, c in sorted(node.children.items())))


def play(engine: str, monkeypatch: pytest.MonkeyPatch, n: int, seed: int,
         params: SearchParams, decisions: int) -> list[Any]:
    """The searching seat's choices (and trees) in a game against ``strategic`` opponents."""
    monkeypatch.setenv(ENGINE_VARIABLE, engine)
    game = Game(Rules(num_players=n), seed=seed)
    agents: list[Any] = [ISMCTSAgent(seed, params=params)]
    agents += [StrategicAgent(seed + s) for s in range(1, n)]
    record = []
    while not game.game_over and len(record) < decisions:
        p = game.current_player
        view = game.view(p)
        action = agents[p].act(None, action_mask(view.legal_actions), view)
        if p == 0 and agents[0].last_root is not None:
            record.append((action, agents[0].iterations, tree(agents[0].last_root)))
            agents[0].last_root = None
        game.step(action)
    return record


@pytest.mark.parametrize(("n", "change"), [
    (2, {}), (3, {}), (4, {}), (2, {"use_voids": False}), (4, {"crn": True}),
    (2, {"rollout": "strategic"}), (3, {"max_depth": 0})])
def test_the_search_chooses_the_same_on_both_engines(
        n: int, change: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    params = dataclasses.replace(SearchParams(simulations=40), **change)
    runs = [play(engine, monkeypatch, n, 100 + n, params, 12) for engine in ("python", "compiled")]
    assert len(runs[0]) >= 5
    assert runs[0] == runs[1]


@pytest.mark.parametrize("n", [2, 4, 7])
def test_conditioned_determinizations_match_from_view(n: int) -> None:
    """The search's compiled dealer (``CompiledGame.determinize(seat, rng, voids=...)`` from a
    game carrying the view) draws the game ``Game.from_view`` and the agent's void condition
    draw, from the same generator (beliefs of every strength or none, every phase that a random
    game reaches)."""
    rng = np.random.default_rng(n)
    compared = 0
    for g_seed in range(6):
        game = Game(Rules(num_players=n), seed=g_seed)
        while not game.game_over and game.num_steps < 120:
            seat = int(rng.integers(n))
            voids = (rng.random((n, 4)) * (rng.random((n, 4)) < 0.4)).tolist()
            a, b = np.random.default_rng(compared), np.random.default_rng(compared)
            view = game.view(seat)
            python = ISMCTSAgent._deal(view, a, voids)
            compiled = _compiled_dealer(view)(view, b, voids)
            assert compiled.to_dict() == python.to_dict()
            assert a.bit_generator.state == b.bit_generator.state
            compared += 1
            legal = game.legal_action_ids()
            game.step(legal[int(rng.integers(len(legal)))])
    assert compared > 300


@pytest.mark.parametrize("seed", [0, 1, 2**32 - 1, 2**32, 2**63 - 1, 10**30])
def test_search_random_draws_as_python_random(seed: int) -> None:
    """``SearchRandom(seed)`` is ``random.Random(seed)``: the same ``random``, ``randrange``
    and ``getrandbits`` (the playouts' draws and the common-random-numbers seeds)."""
    python, compiled = random.Random(seed), core.SearchRandom(seed)
    for i in range(3000):
        n = i % 41 + 1
        assert compiled.random() == python.random()
        assert compiled.randrange(n) == python.randrange(n)
        assert compiled.getrandbits(63) == python.getrandbits(63)
        assert compiled.getrandbits(i % 33) == python.getrandbits(i % 33)

