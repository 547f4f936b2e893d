"""Tests of the rule-based baseline agents (``uno_mk_env.agents.rule_based``) and the agents'
shared behaviour (the search agent has its own file, tests/test_ismcts.py).

Every agent returns a legal action in every phase, player count (2-10) and rules preset, is
deterministic given its seed and sees only the :class:`~uno_mk_env.PlayerView`; the registry
builds agents from specs; the key heuristics are checked on rigged positions (docs/rules.md
clauses cited). Strength is measured with the tournament
(:func:`uno_mk_env.evaluation.tournament.run_tournament`, duplicate deals with seat rotation): a
cheap check by default, the README's figures under ``-m slow``. The README's commands
(``uno-mk tournament``, ``uno-mk evaluate``) reproduce the tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from scenario import action_id, make

from uno_mk_env import PRESETS, Game, PlayerView, Rules, preset
from uno_mk_env import actions as A
from uno_mk_env.agents import (
    Agent,
    AgentError,
    GreedyAgent,
    ISMCTSAgent,
    RandomAgent,
    StrategicAgent,
    agent_action,
    make_agent,
    registered,
)
from uno_mk_env.agents.rule_based import p_holds_colour, shell_target
from uno_mk_env.evaluation.tournament import run_tournament

PLAYER_COUNTS = (2, 3, 4, 7, 10)
ALL_PHASES = {A.PLAY, A.PLAY_DRAWN, A.CHOOSE_COLOUR, A.CHOOSE_TARGET, A.CHALLENGE_PHASE}


# ------------------------------------------------------------------------------ helpers
class _Raw:
    """Passes a seat's agent through :func:`agent_action`, keeping what its ``act`` returned
    (``agent_action`` accepts numpy integers; the agents here must return a plain ``int``)."""

    def __init__(self, agent: Agent) -> None:
        self.agent, self.name = agent, agent.name
        self.needs_observation = agent.needs_observation
        self.returned: object = None

    def act(self, observation: np.ndarray | None, mask: np.ndarray, view: PlayerView) -> int:
        self.returned = self.agent.act(observation, mask, view)
        return self.returned


def play_game(
    game: Game,
    seats: Sequence[Agent],
    seed: int,
    max_steps: int = 3000,
    on_decision: Callable[[int, PlayerView, int], None] | None = None,
) -> Game:
    """Plays ``game`` with one agent per seat through the project's driver
    (:func:`~uno_mk_env.agents.base.agent_action`, which raises on an illegal action); returns it.

    Each agent is reset with a seat-specific seed; ``on_decision(seat, view, action)`` sees
    every decision. Every returned action is checked to be a legal ``int`` id.
    """
    for s, agent in enumerate(seats):
        agent.reset(seed * 1009 + s)
    raw = [_Raw(agent) for agent in seats]
    while not game.game_over and game.num_steps < max_steps:
        p = game.current_player
        view = game.view(p)
        mask = game.legal_actions()
        action = agent_action(raw[p], game)
        returned = raw[p].returned
        assert type(returned) is int, f"{seats[p].name} returned {returned!r} ({type(returned)})"
        assert mask[action], (
            f"{seats[p].name} chose illegal {A.action_name(action)} in phase "
            f"{A.PHASE_NAMES[view.phase]}; legal: {[A.action_name(a) for a in view.legal_actions]}"
        )
        if on_decision is not None:
            on_decision(p, view, action)
        game.step(action)
    return game


def _mixed_table(n: int, shift: int, kinds: Sequence[Callable[[int], Agent]]) -> list[Agent]:
    return [kinds[(s + shift) % len(kinds)](s) for s in range(n)]


_LEGALITY_RULES = [(name, preset(name)) for name in PRESETS] + [
    ("hand_size_1", Rules(hand_size=1)),
    ("hand_size_10", Rules(hand_size=10)),
    ("fixed_rounds_2", Rules(match="fixed_rounds", rounds=2)),
]


# ------------------------------------------------------------------------------ legality
@pytest.mark.parametrize("rules_name, rules", _LEGALITY_RULES, ids=[r[0] for r in _LEGALITY_RULES])
def test_rule_based_agents_only_take_legal_actions(rules_name: str, rules: Rules) -> None:
    """greedy and strategic at mixed tables with random opponents, 2-10 players: every action
    returned is legal, and together they decide in every phase (play, play_drawn, colour,
    Green Shell target, W4 challenge) and use CALL_UNO (and CATCH_UNO where the rules allow)."""
    kinds = (GreedyAgent, StrategicAgent, RandomAgent)
    seen: dict[str, set[int]] = {"greedy": set(), "strategic": set()}
    used: set[int] = set()

    def record(seat: int, view: PlayerView, action: int) -> None:
        agent = tables[-1][seat]
        if not isinstance(agent, RandomAgent):
            seen[agent.name].add(view.phase)
            used.add(action)

    tables: list[list[Agent]] = []
    for n in PLAYER_COUNTS:
        for seed in range(32 if n <= 4 else 16):
            table = _mixed_table(n, seed, kinds)
            tables.append(table)
            play_game(Game(rules.replace(num_players=n), seed=seed), table, seed,
                      max_steps=1500, on_decision=record)
    for name, phases in seen.items():
        missing = ALL_PHASES - phases - ({A.CHALLENGE_PHASE} if rules.w4_strict else set())
        assert not missing, f"{name} never decided in {[A.PHASE_NAMES[p] for p in missing]}"
    if rules.uno == "on":
        assert A.CALL_UNO in used
    if rules.uno == "on" and rules.uno_catch == "next_player":
        assert A.CATCH_UNO in used


def test_rule_based_agents_legal_over_thousands_of_games() -> None:
    """2,000 more seeded default-rules games at every player count 2-10, rule agents with random
    opponents."""
    kinds = (GreedyAgent, StrategicAgent, RandomAgent, GreedyAgent, StrategicAgent)
    for i in range(2000):
        n = 2 + i % 9
        play_game(Game(Rules(num_players=n), seed=10_000 + i), _mixed_table(n, i, kinds), i,
                  max_steps=600)


# ------------------------------------------------------------------------------ determinism
@pytest.mark.parametrize("spec", ["greedy", "strategic", "ismcts:6"])
def test_same_seed_same_actions(spec: str) -> None:
    """Same agent seeds and game seed -> the same action sequence (docs/api.md#randomness)."""

    def run() -> list[int]:
        actions: list[int] = []
        seats = [make_agent(spec, seed=1), make_agent("greedy", 2), make_agent(spec, seed=3)]
        play_game(Game(Rules(num_players=3), seed=5), seats, seed=7, max_steps=400,
                  on_decision=lambda s, v, a: actions.append(a))
        return actions

    first = run()
    assert first == run()
    assert len(first) > 20


def _positions(n: int, games: int) -> list[tuple[Game, int]]:
    """Mid-game positions (a game and its decider) from greedy/random play."""
    out = []
    for seed in range(games):
        g = Game(Rules(num_players=n), seed=seed)
        seats = _mixed_table(n, seed, (GreedyAgent, RandomAgent))
        for step in range(60):
            if g.game_over:
                break
            p = g.current_player
            if step % 7 == 3:
                out.append((g.clone(), p))
            g.step(agent_action(seats[p], g))
    return out


@pytest.mark.parametrize("spec", ["greedy", "strategic", "ismcts:5"])
def test_agents_read_only_the_view(spec: str) -> None:
    """Re-dealing the hidden cards (same view, different opponent hands and draw pile) never
    changes the action of a freshly seeded agent: agents cannot read hidden state."""
    rng = np.random.default_rng(0)
    checked = 0
    for g, p in _positions(4, 12):
        view = g.view(p)
        other = Game.from_view(view, rng)
        assert other.view(p) == view
        if all(other.hand(s) == g.hand(s) for s in range(4)):
            continue
        a = agent_action(make_agent(spec, seed=9), g)
        b = agent_action(make_agent(spec, seed=9), other)
        assert a == b
        checked += 1
    assert checked >= 30


# ------------------------------------------------------------------------------ registry
def test_registry_names_and_specs() -> None:
    assert {"random", "greedy", "strategic", "ismcts"} <= set(registered())
    assert isinstance(make_agent("greedy"), GreedyAgent)
    assert isinstance(make_agent("strategic"), StrategicAgent)
    default = make_agent("ismcts", seed=0)
    assert isinstance(default, ISMCTSAgent) and default.simulations == 100
    assert make_agent("ismcts:37").simulations == 37
    assert make_agent("ismcts:37").name == "ismcts:37"


@pytest.mark.parametrize("spec", ["ismcts:abc", "ismcts:0", "ismcts:-3", "ismcts:2.5"])
def test_bad_ismcts_budget_is_a_clear_error(spec: str) -> None:
    with pytest.raises(ValueError, match=r"bad budget .*'ismcts:200'"):
        make_agent(spec)


def test_unknown_agent_and_unexpected_argument_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"unknown agent 'nope'.*greedy.*ismcts.*strategic"):
        make_agent("nope")
    for name in ("greedy", "strategic"):
        with pytest.raises(ValueError, match=f"agent '{name}' takes no argument"):
            make_agent(f"{name}:3")


class _Hostile(Agent):
    """An agent whose failure is huge: a 100,000-character, many-line exception, or a
    100,000-element array as its action."""

    name = "hostile"

    def __init__(self, raises: bool) -> None:
        self.raises = raises

    def act(self, observation, action_mask, view):  # type: ignore[no-untyped-def]
        if self.raises:
            raise RuntimeError("boom\n" * 20_000)
        return np.zeros(100_000)


@pytest.mark.parametrize("raises", [True, False], ids=["exception", "huge action"])
def test_an_agent_failure_is_one_bounded_line(raises: bool) -> None:
    """:class:`AgentError` names the agent, the seat and the failure in one line of a few
    hundred characters, whatever the agent raised or returned."""
    with pytest.raises(AgentError) as caught:
        agent_action(_Hostile(raises), Game(Rules(num_players=2), seed=1))
    message = str(caught.value)
    assert "\n" not in message and len(message) < 600, len(message)
    assert "'hostile' (seat " in message
    assert ("raised RuntimeError: boom boom" if raises else "chose an illegal action") in message


# ------------------------------------------------------------------------------ heuristics
RULE_AGENTS = [GreedyAgent, StrategicAgent]


def _act(agent: Agent, g: Game) -> str:
    return A.action_name(agent_action(agent, g))


@pytest.mark.parametrize("cls", RULE_AGENTS + [lambda s: ISMCTSAgent(s, simulations=8)])
def test_always_call_uno(cls: Callable[[int], Agent]) -> None:
    """R8: with two cards and a play, CALL_UNO comes first (it is free)."""
    g = make({"hands": ["R2 G7", "G5 B1 Y2"], "discard_pile": "R7", "draw_pile": "B9"})
    assert _act(cls(0), g) == "CALL_UNO"


@pytest.mark.parametrize("cls", RULE_AGENTS + [lambda s: ISMCTSAgent(s, simulations=8)])
def test_always_catch_uno(cls: Callable[[int], Agent]) -> None:
    """R8 (``uno_catch="next_player"``): catch an uncalled UNO whenever it is legal."""
    g = make({"rules": {"uno_catch": "next_player"}, "hands": ["R2 G7", "G5 B1 Y2"],
              "discard_pile": "R7", "draw_pile": "B9 B8 B7"})
    g.step(action_id("PLAY(R2)"))  # seat 0 left with one card, no call
    assert "CATCH_UNO" in {A.action_name(a) for a in g.legal_action_ids()}
    assert _act(cls(0), g) == "CATCH_UNO"


@pytest.mark.parametrize("cls", RULE_AGENTS)
def test_green_shell_hits_the_smallest_hand(cls: type[Agent]) -> None:
    """R7.2: a WB flips a green card; TARGET(+k) hits the seat k clockwise. Aim at the opponent
    closest to going out (seat 2, two cards), whatever the direction of play."""
    for direction in (1, -1):
        g = make({"hands": ["WB R3 R4", "G5 B1 Y2 Y3", "B9 B8", "Y1 Y2 Y5"],
                  "discard_pile": "R7", "draw_pile": "G1 B4", "direction": direction})
        g.step(action_id("PLAY(WB)"))
        assert g.phase == A.CHOOSE_TARGET and g.current_player == 0
        assert _act(cls(0), g) == "TARGET(+2)"


def test_green_shell_tie_goes_to_whoever_plays_first() -> None:
    """Equal smallest hands: the one who plays sooner in the current direction is hit."""
    base = {"hands": ["R2 R3 R4", "G5 B1", "B9 B8 B7", "Y1 Y2"], "discard_pile": "R7"}
    for direction, want in ((1, 1), (-1, 3)):
        g = make({**base, "direction": direction})
        view = g.view(0)._replace(phase=A.CHOOSE_TARGET, legal_actions=(60, 61, 62))
        assert shell_target(view) == A.target(want)


@pytest.mark.parametrize("cls", RULE_AGENTS)
def test_names_the_most_held_colour(cls: type[Agent]) -> None:
    """After a W4 (R5): name the colour held most, here blue."""
    g = make({"hands": ["W4 B1 B2 B3 G4 Y5", "G5 B1 Y2"], "discard_pile": "R7",
              "draw_pile": "G1 G2 G3 G4"})
    g.step(action_id("PLAY(W4)"))
    assert g.phase == A.CHOOSE_COLOUR
    assert _act(cls(0), g) == "COLOUR(B)"


def test_greedy_sheds_highest_points_and_keeps_wilds() -> None:
    """greedy: the Skip (20 points) before the 9 and the 2; wilds stay in hand."""
    g = make({"hands": ["R2 R9 RS W4 WB", "G5 B1 Y2"], "discard_pile": "R7", "draw_pile": "G1"})
    assert _act(GreedyAgent(0), g) == "PLAY(RS)"
    g = make({"hands": ["G2 W4 WB", "G5 B1 Y2"], "discard_pile": "R7", "draw_pile": "G1"})
    assert _act(GreedyAgent(0), g) == "PLAY(WB)"


@pytest.mark.parametrize("cls", RULE_AGENTS)
def test_never_bluffs_when_a_legal_play_exists_and_draws_rather_than_bluff(cls) -> None:
    """R6.1: holding red, a W4 on red is a bluff. With a red card to play, both play it."""
    g = make({"hands": ["R2 W4 G3 G4 G5 G6", "G5 B1 Y2 B3 B4 B5 B6 B7"], "discard_pile": "R7",
              "draw_pile": "G1"})
    assert _act(cls(0), g) == "PLAY(R2)"


def test_strategic_keeps_the_w4_unless_the_next_player_is_about_to_win() -> None:
    """The W4 is the finisher: kept while a coloured card can be played, but spent when the
    next player holds one card (R5: they draw 4 and lose the turn)."""
    hand = "W4 G7 B2 B3 Y4"  # no red: the W4 is legal (R6.1)
    far = make({"hands": [hand, "G5 B1 Y2 Y3 Y5 Y6"], "discard_pile": "R7", "draw_pile": "G1"})
    assert _act(StrategicAgent(0), far) == "PLAY(G7)"
    near = make({"hands": [hand, "G5"], "uno_called": [False, True], "discard_pile": "R7",
                 "draw_pile": "G1"})
    assert _act(StrategicAgent(0), near) == "PLAY(W4)"


def test_strategic_plays_a_wild_rather_than_draw() -> None:
    """Only a WB matches: play it (a random colour beats an extra card)."""
    g = make({"hands": ["WB G2 B3 Y4", "G5 B1 Y2 Y3"], "discard_pile": "R7", "draw_pile": "G1"})
    assert _act(StrategicAgent(0), g) == "PLAY(WB)"


def test_strategic_stops_a_player_on_one_card() -> None:
    """With the next player on UNO, the Draw Two (R5) beats a plain number of the same colour."""
    g = make({"hands": ["R2 RD G4 G6", "Y5", "B1 B2 B3 B4"], "uno_called": [False, True, False],
              "discard_pile": "R7", "draw_pile": "G1 G2"})
    assert _act(StrategicAgent(0), g) == "PLAY(RD)"


def test_strategic_two_player_skip_then_last_card_wins() -> None:
    """Two players (R5): Skip + a matching last card goes out before the opponent moves again."""
    g = make({"hands": ["RS R3", "G5 B1 Y2"], "uno_called": [True, False],
              "discard_pile": "R7", "draw_pile": "G1"})
    assert _act(StrategicAgent(0), g) == "PLAY(RS)"


def test_strategic_challenge_uses_the_w4_players_hand_size() -> None:
    """R6.3: a W4 from a player with many cards is probably a bluff (they likely hold the
    previous colour); from a player with one card it probably is not."""
    for size, want in ((12, "CHALLENGE"), (1, "ACCEPT")):
        opp = "G1 G2 G3 G4 G5 G6 G7 G8 G9 B1 B2 B3"[: 3 * size - 1]
        g = make({"hands": [opp + " W4", "Y2 Y3 B4"], "discard_pile": "R7",
                  "draw_pile": "G0 B0 Y0 Y1 Y4 Y5 Y6 Y7"}, seed=1)
        g.step(action_id("PLAY(W4)"))
        g.step(action_id("COLOUR(G)"))
        assert g.phase == A.CHALLENGE_PHASE and g.current_player == 1
        view = g.view(1)
        assert (p_holds_colour(view, view.w4_prev_colour, 0, True) > 0.9) == (size == 12)
        assert _act(StrategicAgent(0), g) == want


def test_strategic_infers_a_void_colour_from_a_voluntary_draw() -> None:
    """R4.2: the opponent drew facing red with nothing played since, so it probably holds no
    red; the strategic agent remembers it and later names red."""
    agent = StrategicAgent(0)
    g = make({"hands": ["R5 R8 W4 G1 G2", "B1 B2 Y3 Y4"], "discard_pile": "R3",
              "draw_pile": "B9 B8 B7 B6 G9 G8 G7"})
    g.step(agent_action(agent, g))  # a red card
    assert g.current_player == 1
    g.step(A.DRAW)  # draws B9: not playable on red, the turn ends
    assert g.current_player == 0
    g.step(agent_action(agent, g))
    assert agent.void_beliefs()[1][0] == 1.0


def test_ismcts_finds_the_winning_play() -> None:
    """The last card wins (R10.1): every rollout of it is worth +1."""
    g = make({"hands": ["R2", "G5 B1 Y2"], "uno_called": [True, False], "discard_pile": "R7",
              "draw_pile": "G1 G2"})
    assert _act(ISMCTSAgent(0, simulations=12), g) == "PLAY(R2)"


def _win_rate(specs: Sequence[str], num_players: int, games: int, seed: int = 0) -> dict:
    """The first spec's leaderboard row in a duplicate-deal tournament."""
    result = run_tournament(list(specs), num_players, games, seed=seed)
    return next(r for r in result.leaderboard() if r["agent"] == specs[0])


@pytest.mark.parametrize("spec", ["greedy", "strategic"])
def test_rule_agents_beat_random_cheaply(spec: str) -> None:
    """A cheap strength check (the README's tournaments are ``slow``): 2 players, 60 games."""
    row = _win_rate([spec, "random"], 2, 60)
    assert row["win_rate"] > 0.85, row


# ------------------------------------------------------------------------------ slow
@pytest.mark.slow
def test_strength_tournament() -> None:
    """The rule agents against random far beyond chance; strategic ahead of greedy."""
    for spec in ("greedy", "strategic"):
        assert _win_rate([spec, "random"], 2, 2000)["win_ci_low"] > 0.9
        # one agent against three random players: chance is 0.25
        assert _win_rate([spec, "random", "random", "random"], 4, 2000)["win_ci_low"] > 0.5
    assert _win_rate(["strategic", "greedy"], 2, 8000)["win_rate"] > 0.5


def test_the_agent_interface_lives_in_the_core_and_is_re_exported() -> None:
    """``Agent``, ``agent_action`` and ``AgentError`` are defined in the core module
    ``uno_mk_env.envs.agent`` (the Gymnasium wrapper's opponents use them without importing the
    agents layer, docs/api.md#layers); ``uno_mk_env.agents`` and ``.agents.base`` re-export the
    same objects."""
    import uno_mk_env.agents as agents
    import uno_mk_env.agents.base as base
    import uno_mk_env.envs.agent as core

    for name in ("Agent", "AgentError", "agent_action"):
        assert getattr(agents, name) is getattr(core, name) is getattr(base, name)
    assert core.Agent.__module__ == "uno_mk_env.envs.agent"
