"""IS-MCTS on the compiled core against its Python form (the reference): with the same seeds the
search runs whole on the core (``TreeSearch``: determinizations with the void-belief condition,
the tree, the simulations), or with the ``strategic`` rollout determinizes on the core, and
chooses exactly what the Python search chooses, with the same tree statistics, over whole games
at 2-4 players, several seeds and rule options, and with every search setting the tree reads
(void beliefs, common random numbers, the significance test, both cut-off models and no cut-off,
the UCB constant, rollout randomness and prior bonus, the ``ppo`` prior, the ``strategic``
rollout). The core's conditioned determinization is also compared with ``Game.from_view`` and
the agent's condition directly; the time budget, the tree's size limit and bad settings of
``TreeSearch`` are checked.

Skips as ``tests/test_compiled_lockstep.py`` does.
"""

from __future__ import annotations

import dataclasses
import random
import time
from typing import Any

import numpy as np
import pytest

from tests.test_compiled_lockstep import OPTION_SETS, load_core
from uno_mk_env import Game, Rules
from uno_mk_env.agents.ismcts import (
    ISMCTSAgent,
    SearchParams,
    _carrier,
    _compiled_dealer,
    _CoreNode,
)
from uno_mk_env.agents.rule_based import StrategicAgent
from uno_mk_env.compiled import ENGINE_VARIABLE
from uno_mk_env.engine.observation import action_mask

core = load_core()


def tree(node: Any) -> tuple[Any, ...]:
    """A search tree's statistics, recursively (keys in action order)."""
    return (node.visits, node.avail, node.total, node.squares, node.player,
            tuple((a, tree(c)) for a, c in sorted(node.children.items())))


def play(engine: str, monkeypatch: pytest.MonkeyPatch, n: int, seed: int,
         params: SearchParams, decisions: int, options: dict[str, Any] | None = None,
         ) -> list[Any]:
    """The searching seat's choices (and trees, and whether the tree grew on the core) in a
    game against ``strategic`` opponents."""
    monkeypatch.setenv(ENGINE_VARIABLE, engine)
    game = Game(Rules(num_players=n, **(options or {})), seed=seed)
    agents: list[Any] = [ISMCTSAgent(seed, params=params)]
    agents += [StrategicAgent(seed + s) for s in range(1, n)]
    record = []
    while not game.game_over and len(record) < decisions:
        p = game.current_player
        view = game.view(p)
        action = agents[p].act(None, action_mask(view.legal_actions), view)
        root = agents[0].last_root
        if p == 0 and root is not None:
            record.append((action, agents[0].iterations, tree(root)))
            assert isinstance(root, _CoreNode) == (engine == "compiled"
                                                   and params.rollout == "fast")
            agents[0].last_root = None
        game.step(action)
    return record


#: (players, SearchParams changes, game seed, rule options): every setting the tree reads, at
#: 2-4 players, several seeds, and rule options that change the engine's decisions.
CASES = [
    (2, {}, 102, None), (2, {}, 7, None), (2, {}, 2024, None), (3, {}, 103, None),
    (3, {}, 11, None), (4, {}, 104, None), (4, {}, 5, None),
    (2, {"use_voids": False}, 102, None), (3, {"use_voids": False}, 13, None),
    (2, {"crn": True}, 21, None), (3, {"crn": True}, 22, None), (4, {"crn": True}, 104, None),
    (2, {"significance": 1.0}, 31, None), (4, {"significance": 0.5}, 32, None),
    (3, {"crn": True, "significance": 1.0}, 33, None),
    (2, {"value": "size"}, 41, None), (4, {"value": "size", "value_exponent": 0.8}, 42, None),
    (3, {"max_depth": 0}, 103, None), (2, {"max_depth": 12}, 43, None),
    (2, {"exploration": 0.2, "epsilon": 0.0, "prior_bonus": 0.0}, 51, None),
    (4, {"exploration": 2.0, "epsilon": 0.6, "prior_bonus": 1.0}, 52, None),
    (2, {"prior": "ppo"}, 61, None), (4, {"prior": "ppo", "crn": True}, 62, None),
    (2, {"rollout": "strategic"}, 102, None),
    (2, {}, 71, OPTION_SETS["any_player"]), (4, {}, 72, OPTION_SETS["next_player_full"]),
    (3, {"crn": True}, 73, OPTION_SETS["preset-variants"]),
]


@pytest.mark.parametrize(("n", "change", "seed", "options"), CASES)
def test_the_search_chooses_the_same_on_both_engines(
        n: int, change: dict[str, Any], seed: int, options: dict[str, Any] | None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same choices, iterations and trees (every node's visits, availability, value, sum
    of squares and seat) with the whole search on the core as with the Python search."""
    params = dataclasses.replace(SearchParams(simulations=40), **change)
    runs = [play(engine, monkeypatch, n, seed, params, 12, options)
            for engine in ("python", "compiled")]
    assert len(runs[0]) >= 5
    assert runs[0] == runs[1]


def _searched_view(n: int = 2, seed: int = 3) -> tuple[Any, int]:
    """A view of seat 0 with a choice, and the ``strategic`` prior's action."""
    game = Game(Rules(num_players=n), seed=seed)
    agents = [StrategicAgent(s) for s in range(n)]
    while True:
        p = game.current_player
        view = game.view(p)
        action = agents[p].act(None, action_mask(view.legal_actions), view)
        if p == 0 and len(view.legal_actions) > 2:
            return view, action
        game.step(action)


def _tree_search(view: Any, **kw: Any) -> Any:
    """A ``TreeSearch`` from ``view`` (the default settings unless changed by ``kw``)."""
    args = {"carrier": _carrier(view), "seat": view.seat, "rng": np.random.default_rng(0),
            "master": core.SearchRandom(1), "root_legal": view.legal_actions, "prior": -1,
            "exploration": 0.7, "bonus": 0.1, "depth_cap": 4, "epsilon": 0.1, "crn": False,
            "tested": False, "voids": None, "weights": None, "exponent": 0.5, **kw}
    return core.TreeSearch(**args)


def test_a_time_budget_on_the_core_searches_until_its_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``ismcts:Tms`` on the core: the iterations run in C until ``T`` ms of wall-clock time
    passed (the core's own clock), every one backed up at the root."""
    monkeypatch.setenv(ENGINE_VARIABLE, "compiled")
    view, prior = _searched_view()
    agent = ISMCTSAgent(0, params=SearchParams(milliseconds=30))
    start = time.perf_counter()
    root = agent.search(view, prior)
    elapsed = time.perf_counter() - start
    assert 0.030 <= elapsed < 1.0
    assert agent.iterations > 1
    assert sum(c.visits for c in root.children.values()) == agent.iterations


@pytest.mark.parametrize("crn", [False, True])
def test_the_tree_stops_growing_at_its_size_limit(crn: bool) -> None:
    """A search whose tree (and stored deals) would outgrow ``max_bytes`` stops, with every
    iteration it counts backed up, and says so (``full``)."""
    view, prior = _searched_view()
    search = _tree_search(view, prior=prior, crn=crn, max_bytes=1 << 16)
    done = search.run(100_000)
    assert search.full and 0 < done < 100_000
    root = [search.node(i) for _, i in search.children(0)]
    assert sum(visits for visits, *_ in root) == done == search.iterations
    assert search.num_nodes * 48 <= 1 << 16  # a node: 48 bytes


@pytest.mark.parametrize(("change", "error", "match"), [
    ({"root_legal": ()}, ValueError, "root_legal must hold 1-73"),
    ({"root_legal": (3, 99)}, ValueError, "root_legal must hold 1-73"),
    ({"prior": 80}, ValueError, "prior 80 is not an action id"),
    ({"prior": -1, "tested": True}, ValueError, "not a root action"),
    ({"seat": 5}, ValueError, "seat"),
    ({"rng": 0}, TypeError, "numpy.random.Generator"),
    ({"voids": np.zeros((3, 4))}, ValueError, "voids must hold 2 rows"),
    ({"weights": (1.0, 2.0)}, ValueError, "weights must hold 7"),
    ({"depth_cap": -1}, ValueError, "depth_cap"),
])
def test_the_tree_search_refuses_bad_settings(change: dict[str, Any], error: type,
                                              match: str) -> None:
    view, prior = _searched_view()
    with pytest.raises(error, match=match):
        _tree_search(view, **{"prior": prior, **change})


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



def test_the_view_carrier_takes_a_view_only() -> None:
    with pytest.raises(TypeError, match="view must be a PlayerView, got dict"):
        core.view_carrier({})
