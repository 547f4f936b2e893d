"""The ``ismcts`` agent (``uno_mk_env.agents.ismcts``): single-observer information-set MCTS.

It never looks at hidden state (two worlds with the same view, hidden cards swapped, give the
same decisions for the same seed), it is legal in every preset at every table size, it is
deterministic given its seed, its tree is one tree over information sets (a node's statistics
come from many determinizations; opponents' decisions are nodes too), and its spec (budget in
iterations or milliseconds, options) is checked with one-line errors. Strength is measured by the
``slow`` tests and the README's curve (docs/evaluation.md).
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
from scenario import action_id, make

import uno_mk_env.agents.ismcts as ismcts_module
from uno_mk_env import PRESETS, Game, Rules
from uno_mk_env import actions as A
from uno_mk_env.agents import AgentSpecError, RandomAgent, agent_action, make_agent
from uno_mk_env.agents.ismcts import (
    SPEC_LIMITS,
    SPEC_OPTIONS,
    ISMCTSAgent,
    SearchParams,
    parse_spec,
)
from uno_mk_env.agents.ismcts_playout import logit_rewards
from uno_mk_env.agents.ppo import PPOAgent
from uno_mk_env.compiled import ENGINE_VARIABLE
from uno_mk_env.engine.observation import action_mask as mask_of
from uno_mk_env.engine.observation import encode
from uno_mk_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS


def _agent(seed: int = 0, **kw) -> ISMCTSAgent:
    return ISMCTSAgent(seed, params=SearchParams(**{"simulations": 24, **kw}))


def _decide(agent: ISMCTSAgent, g: Game) -> int:
    return agent_action(agent, g)


# ------------------------------------------------------------------------------ information
def _two_worlds() -> tuple[Game, Game]:
    """Two 3-player positions with the same view for seat 0: the hidden cards of seats 1 and 2
    and of the draw pile are swapped around (every hand keeps its size)."""
    common = {"discard_pile": "Y5 R5", "active_colour": "R", "current_player": 0, "direction": 1}
    a = make({**common, "hands": ["R7 R2 G5 W4 B5", "G2 GS B1 Y9", "B9 Y3 R1"],
              "draw_pile": "G7 B3 Y7 R8 G1 WB"})
    b = make({**common, "hands": ["R7 R2 G5 W4 B5", "R8 WB G7 B3", "G2 GS Y9"],
              "draw_pile": "B9 Y3 R1 G1 Y7 B1"})
    return a, b


def test_two_worlds_really_share_the_view_and_differ_in_hidden_cards() -> None:
    a, b = _two_worlds()
    assert a.view(0) == b.view(0)
    assert a.hand(1) != b.hand(1) and a.draw_pile != b.draw_pile


@pytest.mark.parametrize("crn", [False, True])
def test_never_looks_at_hidden_state(crn: bool) -> None:
    """The same seed in two worlds that look the same to the searcher: the same decision, and
    the same search tree (every node's visits and value)."""
    a, b = _two_worlds()

    def tree(node) -> dict:
        return {a: (c.visits, c.avail, round(c.total, 9), tree(c))
                for a, c in node.children.items()}

    agent_a, agent_b = _agent(7, crn=crn), _agent(7, crn=crn)
    assert _decide(agent_a, a) == _decide(agent_b, b)
    assert tree(agent_a.last_root) == tree(agent_b.last_root)


def test_never_looks_at_hidden_state_along_whole_games() -> None:
    """At every decision of seat 0 in a few games, a re-dealt twin (``determinize``: the same
    view, other hidden cards) gets the same decision from an identical copy of the agent."""
    checked = 0
    for seed in range(3):
        g = Game(Rules(num_players=3), seed=seed)
        agent = _agent(seed, simulations=12)
        others = [RandomAgent(seed + 1), make_agent("greedy", seed + 2)]
        rng = np.random.default_rng(seed)
        while not g.game_over and g.num_steps < 120:
            if g.current_player == 0:
                twin = g.determinize(0, rng)
                assert twin.view(0) == g.view(0)
                twin_action = _decide(copy.deepcopy(agent), twin)
                action = _decide(agent, g)
                assert action == twin_action
                checked += 1
            else:
                action = agent_action(others[g.current_player - 1], g)
            g.step(action)
    assert checked >= 20


# ---------------------------------------------------------------------------------- legality
@pytest.mark.parametrize("preset", list(PRESETS))
def test_legal_in_every_preset_at_every_table_size(preset: str) -> None:
    """Tiny budgets, every table size 2-10, ismcts at seat 0 (both root modes) and the others
    random: every decision is legal (agent_action checks it) and the search ran."""
    searched = 0
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        g = Game(Rules(**{**PRESETS[preset], "num_players": n}), seed=n)
        agent = _agent(n, simulations=4, crn=n % 2 == 0)
        others = [RandomAgent(n + s) for s in range(1, n)]
        while not g.game_over and g.num_steps < 150:
            p = g.current_player
            if p == 0:
                agent.iterations = 0
                action = agent_action(agent, g)
                searched += agent.iterations > 0
            else:
                action = agent_action(others[p - 1], g)
            g.step(action)
    assert searched > 20


def test_deterministic_given_its_seed() -> None:
    def run(seed: int) -> list[int]:
        g = Game(Rules(num_players=3, uno_catch="next_player"), seed=5)
        seats = [_agent(seed, simulations=8), make_agent("greedy", 1), _agent(seed + 1, crn=True,
                                                                               simulations=8)]
        for s, a in enumerate(seats):
            a.reset(seed * 10 + s)
        actions = []
        while not g.game_over and g.num_steps < 200:
            action = agent_action(seats[g.current_player], g)
            actions.append(action)
            g.step(action)
        return actions

    assert run(3) == run(3)
    assert len(run(3)) > 20


# ------------------------------------------------------------------------------ the tree
def _skip_then_win() -> Game:
    """Two players. Seat 0 holds Skip and a red 3 (UNO called): Skip (R5: with two players the
    opponent loses the turn) then R3 wins at once; R3 first lets the opponent, on one card, move
    before seat 0's last card."""
    return make({"hands": ["RS R3", "G5"], "uno_called": [True, True], "discard_pile": "R7",
                 "draw_pile": "B9 B8 B7 B6 Y1 Y2 Y3 G4 G6 G7"})


def test_tree_reuses_statistics_across_determinizations(monkeypatch) -> None:
    """The right move is Skip then R3 (a two-move plan). Every iteration samples a fresh
    determinization, yet the node two decisions deep (Skip, then R3: the searcher's second
    decision) collects visits from many of them, and its value is exactly +1: every sampled
    world is won on that line."""
    deals = []
    real = ISMCTSAgent._deal

    def counting(view, rng, voids):
        deals.append(1)
        return real(view, rng, voids)

    monkeypatch.setattr(ISMCTSAgent, "_deal", staticmethod(counting))
    agent = _agent(0, simulations=60, prior_bonus=0.0)
    g = _skip_then_win()
    assert _decide(agent, g) == action_id("PLAY(RS)")
    assert len(deals) == agent.iterations == 60
    skip = agent.last_root.children[action_id("PLAY(RS)")]
    second = skip.children[action_id("PLAY(R3)")]
    assert second.visits >= 20 and second.player == 0
    assert second.total / second.visits == 1.0
    assert skip.visits > agent.last_root.children[action_id("PLAY(R3)")].visits


def test_opponent_decisions_are_nodes_valued_for_the_opponent() -> None:
    """After seat 0 plays R3 the opponent (one hidden card) decides: its nodes belong to seat 1
    and hold seat 1's reward. In determinizations where its card can follow R3 it plays it and
    goes out, so every such node is worth exactly +1 to it (and -1 to seat 0); a wide
    exploration constant makes the search look at R3 often enough."""
    agent = _agent(0, simulations=200, prior_bonus=0.0, exploration=5.0)
    _decide(agent, _skip_then_win())
    r3 = agent.last_root.children[action_id("PLAY(R3)")]
    assert r3.player == 0 and r3.total / r3.visits < 1.0
    replies = r3.children
    assert replies and all(node.player == 1 for node in replies.values())
    assert sum(node.visits for node in replies.values()) == r3.visits - 1  # first: expansion
    plays = {a: node for a, node in replies.items() if a < A.DRAW}
    assert plays and all(node.total == node.visits for node in plays.values())
    assert A.DRAW in replies


def test_availability_counts_only_iterations_where_the_action_was_legal() -> None:
    """The opponent's hidden hand differs between determinizations, so its possible replies
    differ too: each reply's availability count is at most its parent's visits, and some reply
    is available in fewer iterations than the parent saw."""
    agent = _agent(1, simulations=150, prior_bonus=0.0)
    g = make({"hands": ["R3 B4 G6", "Y5 G5 B2 R9"], "discard_pile": "R7",
              "draw_pile": "B9 B8 Y1 Y2 G4 G7 R1 R2"})
    _decide(agent, g)
    partial = 0
    for child in agent.last_root.children.values():
        for reply in child.children.values():
            assert reply.visits <= reply.avail <= child.visits
            partial += reply.avail < child.visits
    assert partial > 0


def test_the_prior_bonus_keeps_the_heuristic_move_on_even_evidence() -> None:
    """With a large prior bonus and a tiny budget the strategic agent's choice is played."""
    g = make({"hands": ["R3 R8 G7 B2 Y4", "Y5 G5 B2 R9 B1"], "discard_pile": "R7",
              "draw_pile": "B9 B8 Y1 Y2 G4 G7 R1 R2"})
    agent = _agent(2, simulations=8, prior_bonus=5.0)
    prior = copy.deepcopy(agent.prior).act(None, g.legal_actions(), g.view(0))
    assert _decide(agent, g) == prior


def test_significance_test_overrules_the_prior_only_when_the_search_is_sure(monkeypatch) -> None:
    """A prior that picks the losing R3 (forced here) is overruled by Skip (every line wins) at
    z = 2; at an absurd z the prior's move stands."""
    from uno_mk_env.agents.rule_based import StrategicAgent

    real = StrategicAgent.act

    def wrong_prior(self, observation, action_mask, view):
        real(self, observation, action_mask, view)
        return action_id("PLAY(R3)")

    monkeypatch.setattr(StrategicAgent, "act", wrong_prior)
    sure = _agent(0, simulations=120, prior_bonus=0.0, significance=2.0)
    assert _decide(sure, _skip_then_win()) == action_id("PLAY(RS)")
    timid = _agent(0, simulations=120, prior_bonus=0.0, significance=1000.0)
    assert _decide(timid, _skip_then_win()) == action_id("PLAY(R3)")


def test_one_legal_action_and_uno_reflexes_skip_the_search(monkeypatch) -> None:
    def boom(*args, **kwargs):
        raise AssertionError("searched")

    monkeypatch.setattr(Game, "from_view", boom)
    only_draw = make({"hands": ["G2 B3 Y4", "G5 B1 Y2"], "discard_pile": "R7", "draw_pile": "G1"})
    assert _decide(_agent(), only_draw) == A.DRAW
    two_cards = make({"hands": ["R2 G7", "G5 B1 Y2"], "discard_pile": "R7", "draw_pile": "B9"})
    assert _decide(_agent(), two_cards) == A.CALL_UNO


def test_crn_compares_root_actions_on_the_same_deals(monkeypatch) -> None:
    """With common random numbers the m-th visit of each root action uses the m-th deal, so the
    number of determinizations is the largest visit count of a root action, not the number of
    iterations."""
    deals = []
    real = ISMCTSAgent._deal
    monkeypatch.setattr(ISMCTSAgent, "_deal", staticmethod(
        lambda view, rng, voids: deals.append(1) or real(view, rng, voids)))
    agent = _agent(3, simulations=90, crn=True)
    g = make({"hands": ["R3 R8 G7 B2 Y4", "Y5 G5 B2 R9 B1"], "discard_pile": "R7",
              "draw_pile": "B9 B8 Y1 Y2 G4 G7 R1 R2"})
    _decide(agent, g)
    visits = [c.visits for c in agent.last_root.children.values()]
    assert sum(visits) == 90 and len(visits) >= 3
    assert len(deals) == max(visits) < 90


@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_leaf_models_give_zero_sum_rewards_that_favour_the_smaller_hand(n: int) -> None:
    """Both cut-off models return the expected win reward of every seat: zero-sum (one winner
    +1, the others -1/(N-1)), and a seat about to go out is worth more than one with a big hand
    (the logit model also counts the wilds it holds, docs/rules.md R6.4)."""
    g = Game(Rules(num_players=n), seed=n)
    agent = _agent()
    for rewards in (agent._leaf_rewards(g.sizes), logit_rewards(g)):
        assert sum(rewards) == pytest.approx(0.0, abs=1e-12)
        assert all(-1.0 / (n - 1) < r < 1.0 for r in rewards)
    big = ["G2 G3 G4 G5 G6", "B2 B3 B4 B5 B6", "Y2 Y3 Y4 Y5 Y6"] * 3
    g = make({"rules": {"num_players": n}, "hands": ["R1", *big[:n - 1]], "discard_pile": "R7",
              "draw_pile": "Y1 B1 G1"})
    for rewards in (agent._leaf_rewards(g.sizes), logit_rewards(g)):
        assert rewards[0] == max(rewards) and rewards[0] > 0
    others = ["Y5 Y6", "B5 B6", "G5 G6", "Y7 Y8", "B7 B8", "G7 G8", "Y9 Y1", "B9 B1", "G9 G1"]
    wild = make({"rules": {"num_players": n}, "hands": ["W4 G2 G3", *others[:n - 1]],
                 "discard_pile": "R7", "draw_pile": "B2 B3", "current_player": 1})
    plain = make({"rules": {"num_players": n}, "hands": ["B4 G2 G3", *others[:n - 1]],
                  "discard_pile": "R7", "draw_pile": "B2 B3", "current_player": 1})
    assert logit_rewards(wild)[0] > logit_rewards(plain)[0]


# ---------------------------------------------------------------------------------- budgets
def test_millisecond_budget_stops_at_its_deadline(monkeypatch) -> None:
    """``ismcts:10ms`` runs until 10 ms of (here: simulated) wall-clock time have passed (the
    Python search, which reads this clock: the core's keeps its own time,
    ``tests/test_compiled_ismcts.py``)."""
    monkeypatch.setenv(ENGINE_VARIABLE, "python")
    clock = [0.0]

    def fake_clock() -> float:
        clock[0] += 0.001  # every reading is one millisecond later
        return clock[0]

    monkeypatch.setattr(ismcts_module.time, "perf_counter", fake_clock)
    agent = make_agent("ismcts:10ms", seed=0)
    assert agent.params.milliseconds == 10.0
    g = make({"hands": ["R3 R8 G7 B2 Y4", "Y5 G5 B2 R9 B1"], "discard_pile": "R7",
              "draw_pile": "B9 B8 Y1 Y2 G4 G7 R1 R2"})
    _decide(agent, g)
    assert 5 <= agent.iterations <= 11


@pytest.mark.parametrize(("spec", "field", "value"), [
    ("ismcts", "simulations", ismcts_module.DEFAULT_SIMULATIONS),
    ("ismcts:37", "simulations", 37),
    ("ismcts:250ms", "milliseconds", 250.0),
    ("ismcts:50:c=0.3", "exploration", 0.3),
    ("ismcts:50:depth=0", "max_depth", 0),
    ("ismcts:50:bonus=0", "prior_bonus", 0.0),
    ("ismcts:50:prior=ppo", "prior", "ppo"),
    ("ismcts:50:voids=0", "use_voids", False),
    ("ismcts:50:rollout=strategic", "rollout", "strategic"),
    ("ismcts:50:crn=1", "crn", True),
    ("ismcts:50:z=1.5", "significance", 1.5),
    ("ismcts:50:value=logit", "value", "logit"),
])
def test_spec_sets_the_budget_and_options(spec: str, field: str, value: object) -> None:
    agent = make_agent(spec, seed=0)
    assert getattr(agent.params, field) == value
    assert agent.name == spec


@pytest.mark.parametrize(("arg", "match"), [
    ("0", "bad budget '0'"), ("abc", "bad budget 'abc'"), ("2.5", "bad budget '2.5'"),
    ("-3", "bad budget '-3'"), ("10s", "bad budget '10s'"),
    ("50:zz=1", "bad option 'zz=1'"), ("50:c", "bad option 'c'"),
    ("50:c=-1", "c takes a number from 0 to 100"), ("50:depth=x", "depth takes an int from 0 to"),
    ("50:rollout=best", "rollout takes fast or strategic"),
    # issue 24: every number is bounded, and the bound is named (a budget that never ends a move)
    ("99999999999999999999", r"bad budget '99999999999999999999'.*1-100000"),
    ("100001", r"bad budget '100001'.*N iterations per move, 1-100000"),
    ("9" * 5000, "bad budget '9999"), ("60001ms", r"T milliseconds per move, 1-60000"),
    ("50:c=1e400", "c takes a number from 0 to 100"), ("50:k=nan", "k takes a number from 0"),
    ("50:eps=1.5", "eps takes a number from 0 to 1"), ("50:z=inf", "z takes a number from 0"),
    ("50:depth=10001", "depth takes an int from 0 to 10000"),
    ("50:bonus=" + "9" * 5000, "bonus takes a number from 0 to 100"),
])
def test_bad_spec_is_a_one_line_error_naming_the_value(arg: str, match: str) -> None:
    with pytest.raises(AgentSpecError, match=match) as info:
        parse_spec(arg)
    assert "\n" not in str(info.value) and len(str(info.value)) < 400


@pytest.mark.parametrize("field", sorted(SPEC_LIMITS))
def test_every_spec_number_accepts_its_documented_limits(field: str) -> None:
    """The ends of each range of SPEC_LIMITS are accepted, one step beyond is refused."""
    key = {v: k for k, v in SPEC_OPTIONS.items()}.get(field)
    low, high = SPEC_LIMITS[field]
    is_int = isinstance(high, int) and field != "milliseconds"
    step = 1 if is_int or field == "milliseconds" else 0.5
    for value, ok in ((low, True), (high, True), (high + step, False), (low - step, False)):
        text = str(int(value)) if is_int or field == "milliseconds" else repr(float(value))
        if field == "simulations":
            arg = text
        elif field == "milliseconds":
            arg = f"{text}ms"
        else:
            arg = f"10:{key}={text}"
        if ok:
            assert getattr(parse_spec(arg), field) == value
        else:
            with pytest.raises(AgentSpecError):
                parse_spec(arg)


def test_policy_option_names_the_ppo_prior(tmp_path) -> None:
    """``policy=`` sets the PPO prior's policy (a shipped name or a file): the agent's prior
    choice is that policy's at every decision; a policy without ``prior=ppo``, an empty or
    unreadable one is refused in one line naming it."""
    assert parse_spec("50:prior=ppo:policy=ppo_4p").policy == "ppo_4p"
    agent = ISMCTSAgent(0, params=parse_spec("24:prior=ppo:policy=ppo_4p"))
    reference, other = PPOAgent("ppo_4p"), PPOAgent("ppo_2p")
    g = Game(Rules(num_players=2), seed=5)
    differ = 0
    while not g.game_over and g.num_steps < 300:
        view = g.view(g.current_player)
        mine = agent._ppo_choice(view)
        assert mine == reference.act(encode(view), mask_of(view.legal_actions), view)
        differ += mine != other.act(encode(view), mask_of(view.legal_actions), view)
        g.step(mine)
    assert differ  # at two players the shipped prior would be ppo_2p's: told apart
    for arg, match in (("50:policy=ppo_2p", "needs prior=ppo"),
                       ("50:prior=ppo:policy=", "policy takes a shipped policy's name")):
        with pytest.raises(AgentSpecError, match=match):
            parse_spec(arg)
    for bad, why in ((tmp_path / "missing.npz", "not found"), ("README.md", "not a model file")):
        with pytest.raises(AgentSpecError, match=f"agent 'ismcts': policy='.*{why}") as info:
            ISMCTSAgent(0, params=parse_spec(f"10:prior=ppo:policy={bad}"))
        assert "\n" not in str(info.value) and Path(bad).name in str(info.value)


def test_agent_refuses_a_budget_beyond_the_limit() -> None:
    with pytest.raises(ValueError, match="simulations must be from 1 to 100000"):
        ISMCTSAgent(simulations=10**20)


def test_unbounded_budget_on_the_command_line_is_one_line(tmp_path, capsys) -> None:
    from uno_mk_env.cli.app import main

    code = main(["tournament", "--agents", "ismcts:99999999999999999999,random", "--games", "2",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "1-100000" in err


# ------------------------------------------------------------------------------------ slow
@pytest.mark.slow
def test_ismcts_plays_on_par_with_strategic_at_a_small_budget() -> None:
    """400 duplicate-deal games at 2 players, ``ismcts:100``: within the range the README's
    budget curve reports (the target lines are measured by the README's commands)."""
    from uno_mk_env.evaluation.tournament import run_tournament

    row = next(r for r in run_tournament(["ismcts:100", "strategic"], 2, 400, seed=5)
               .leaderboard() if r["agent"] == "ismcts:100")
    assert row["win_ci_high"] > 0.5 and row["win_ci_low"] > 0.40


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 4])
def test_leaf_weights_are_the_documented_fit(n: int) -> None:
    """LOGIT_WEIGHTS are exactly what fit_leaf_weights(n) gives (1,500 games of strategic
    self-play: a few minutes)."""
    assert ismcts_module.fit_leaf_weights(n) == ismcts_module.LOGIT_WEIGHTS[n]
