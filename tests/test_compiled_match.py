"""The match driver on the compiled core (``evaluation/match.py``, docs/compiled.md) against
itself on the Python engine (the reference): the same agents, seeds and rules give the same
games, seat for seat, and a tournament's files are byte-identical.

Skips as ``tests/test_compiled_lockstep.py`` does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.test_compiled_lockstep import OPTION_SETS, load_core, rules_of
from uno_mk_env import Game, PlayerView, Rules
from uno_mk_env.agents.base import Agent, AgentError, RandomAgent, build_agent
from uno_mk_env.agents.rule_based import GreedyAgent, StrategicAgent, StrategicParams
from uno_mk_env.compiled import ENGINE_VARIABLE
from uno_mk_env.evaluation.match import MatchOutcome, play_match
from uno_mk_env.evaluation.tables import FILE_NAMES
from uno_mk_env.evaluation.tournament import run_tournament

core = load_core()
KINDS = {"random": RandomAgent, "greedy": GreedyAgent, "strategic": StrategicAgent}


def summary(outcome: MatchOutcome) -> tuple[Any, ...]:
    g = outcome.game
    return (outcome.end, outcome.winner, tuple(g.scores),
            tuple(g.hand_points(s) for s in range(g.num_players)), g.round, g.num_steps,
            g.num_keeps, g.to_dict())


def both(monkeypatch: pytest.MonkeyPatch, build: Any, rules: Rules, game_seed: int,
         agent_seeds: Sequence[int] | None, max_steps: int | None,
         engine_game: type | None = None) -> tuple[MatchOutcome, MatchOutcome, list[Agent],
                                                    list[Agent]]:
    """Plays the same game with fresh agents from ``build()`` on each engine."""
    out = []
    for engine in ("python", "compiled"):
        monkeypatch.setenv(ENGINE_VARIABLE, engine)
        players = build()
        out.append((play_match(players, rules, game_seed, agent_seeds, max_steps=max_steps),
                    players))
    (py, py_players), (c, c_players) = out
    assert isinstance(py.game, Game)
    assert isinstance(c.game, engine_game or core.CompiledGame)
    assert summary(c) == summary(py)
    return py, c, py_players, c_players


@pytest.mark.parametrize("name", OPTION_SETS)
@pytest.mark.parametrize("n", [2, 3, 4, 6, 10])
def test_rule_based_tables_play_the_same_game(monkeypatch: pytest.MonkeyPatch, name: str,
                                              n: int) -> None:
    rules = rules_of(OPTION_SETS[name], n)
    order = ["strategic", "greedy", "random"]
    for game in range(3):
        seats = [order[(game + s) % 3] for s in range(n)]
        max_steps = (None, 5000, 20)[game]  # the last is capped mid-round in most games
        both(monkeypatch, lambda seats=seats: [KINDS[k]() for k in seats], rules, 100 * n + game,
             [1000 * game + s for s in range(n)], max_steps)


def test_caps_happen_and_match(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = Rules(num_players=4)
    ends = set()
    for seed in range(12):
        py, _, _, _ = both(monkeypatch, lambda: [StrategicAgent(), RandomAgent(), GreedyAgent(),
                                                 StrategicAgent()], rules, seed,
                           [seed, 1, 2, 3], max_steps=(5, 40, 5000)[seed % 3])
        ends.add(py.end)
    assert ends >= {"capped", "win"}


def test_settings_other_than_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    params = StrategicParams(bluff=True, trust=0.2, hold_w4=1.0)
    rules = Rules(num_players=3, match="target_score", target_score=150)
    for seed in range(4):
        both(monkeypatch, lambda: [StrategicAgent(params=params), GreedyAgent(challenge_hand=2),
                                   StrategicAgent()], rules, seed, [7, 8, 9], None)


def test_an_agent_at_several_seats_and_agents_not_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    """One random agent at every seat shares one stream; agents not reset carry their
    generators from game to game, and the core hands the stream back."""
    rules = Rules(num_players=3)
    players: dict[str, list[Agent]] = {}
    for engine in ("python", "compiled"):
        monkeypatch.setenv(ENGINE_VARIABLE, engine)
        shared = RandomAgent(seed=5)
        greedy = GreedyAgent(seed=6)
        players[engine] = [shared, greedy, shared]
    for game in range(4):
        outcomes = []
        for engine in ("python", "compiled"):
            monkeypatch.setenv(ENGINE_VARIABLE, engine)
            seeds = [11, 12, 13] if game == 0 else None  # reset once, then carried on
            outcomes.append(play_match(players[engine], rules, game, seeds))
        assert isinstance(outcomes[1].game, core.CompiledGame)
        assert summary(outcomes[1]) == summary(outcomes[0])
        for a, b in zip(players["python"], players["compiled"]):
            assert a.rng.bit_generator.state == b.rng.bit_generator.state


def test_a_strategic_agent_not_reset_stays_on_the_python_engine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    both(monkeypatch, lambda: [StrategicAgent(), RandomAgent(seed=1)], Rules(num_players=2), 3,
         None, None, engine_game=Game)


class Sequential(Agent):
    """A Python agent without a twin: the first legal action, reading the observation."""

    needs_observation = True

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[np.ndarray] = []

    def act(self, observation: np.ndarray | None, action_mask: np.ndarray,
            view: PlayerView) -> int:
        assert observation is not None
        self.seen.append(observation)
        return int(np.flatnonzero(action_mask)[0])


@pytest.mark.parametrize("n", [2, 4])
def test_mixed_tables_ask_the_python_agents(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    model = Path(__file__).resolve().parents[1] / "models" / f"ppo_{n}p.npz"
    for seed in range(3):
        _, _, py, c = both(monkeypatch, lambda: [build_agent(f"ppo:{model}", seed=0),
                                                 StrategicAgent(),
                                                 *[StrategicAgent(), Sequential()][:n - 2]],
                           Rules(num_players=n), seed, list(range(n)), 5000)
        if n == 4:  # the observations the core encoded are the Python encoder's, dtype too
            seen = [p.seen for p in (py[-1], c[-1])]  # type: ignore[attr-defined]
            assert len(seen[0]) == len(seen[1]) > 0
            for a, b in zip(*seen):
                assert a.dtype == b.dtype and a.shape == (437,) and np.array_equal(a, b)


def test_a_python_agent_failing_on_the_core_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    class Illegal(Agent):
        def act(self, observation: Any, action_mask: np.ndarray, view: PlayerView) -> int:
            return 72 if not action_mask[72] else 0

    errors = []
    for engine in ("python", "compiled"):
        monkeypatch.setenv(ENGINE_VARIABLE, engine)
        with pytest.raises(AgentError) as e:
            play_match([StrategicAgent(), Illegal()], Rules(num_players=2), 4, [0, 1])
        errors.append(str(e.value))
    assert errors[0] == errors[1]


def test_python_engine_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENGINE_VARIABLE, "python")
    outcome = play_match([StrategicAgent(), RandomAgent()], Rules(num_players=2), 1, [0, 1])
    assert isinstance(outcome.game, Game)


def test_a_tournament_writes_the_same_files(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    files = {}
    for engine in ("python", "compiled"):
        monkeypatch.setenv(ENGINE_VARIABLE, engine)
        result = run_tournament(["strategic", "greedy", "random", "random"],
                                3, 24, seed=9, max_steps=60)
        out = tmp_path / engine
        result.save(out, plot=False)
        files[engine] = {kind: (out / name).read_bytes() for kind, name in FILE_NAMES.items()
                         if kind != "plot"}
    data = [json.loads(files[e].pop("json")) for e in ("python", "compiled")]
    for d in data:
        d["run"].pop("elapsed_s")
    assert data[0] == data[1]
    assert files["python"] == files["compiled"]
    assert b"capped" in files["python"]["games"]  # the step cap was reached and agrees


def test_one_strategic_agent_at_several_seats(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its memory is one (it forgets whenever its seat changes, on both engines)."""
    def build() -> list[Agent]:
        shared = StrategicAgent()
        return [shared, GreedyAgent(), shared, RandomAgent()]

    for seed in range(4):
        both(monkeypatch, build, Rules(num_players=4), seed, [1, 2, 3, 4], 5000)
