"""The PettingZoo AEC env uno_mario_kart_v0: conformance, turn order, masks, rewards, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from uno_mk_env import OPTIONS, PRESETS, Game, IllegalActionError, RulesError, actions
from uno_mk_env import uno_mario_kart_v0 as U
from uno_mk_env.engine.cards import CODES
from uno_mk_env.engine.observation import OBS_SIZE, STATE_SIZE
from uno_mk_env.engine.rewards import round_rewards
from uno_mk_env.envs.aec import IllegalActionWarning
from uno_mk_env.render.text import events_text

PLAYER_COUNTS = (2, 3, 4, 10)
pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably"),
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
]


def uniform(mask: np.ndarray, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def eager(mask: np.ndarray, rng: np.random.Generator) -> int:
    """Random, but calls UNO and plays a card whenever it can: rounds end in ~100 decisions
    (uniform play draws so often that they take thousands)."""
    legal = np.flatnonzero(mask)
    if mask[actions.CALL_UNO]:
        return actions.CALL_UNO
    plays = [a for a in legal if a not in (actions.DRAW, actions.KEEP)]
    pool = plays or legal
    return int(pool[rng.integers(len(pool))])


def play(env, rng: np.random.Generator, check=None, policy=uniform) -> None:
    """One episode of ``policy``; ``check(env)`` before every step."""
    for _agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if check is not None:
            check(env)
        if terminated or truncated:
            env.step(None)
            continue
        env.step(policy(obs["action_mask"], rng))


# ----------------------------------------------------------------------------- conformance
@pytest.mark.parametrize("n", PLAYER_COUNTS)
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_api_test(n, preset):
    api_test(U.env(num_players=n, **PRESETS[preset]), num_cycles=60)


@pytest.mark.parametrize("kwargs", [
    {"num_players": 2, "hand_size": 1},  # games end within the test: termination paths
    {"num_players": 4, "hand_size": 2, "reward": "points"},
    {"num_players": 3, "max_steps": 25},  # truncation path
    {"num_players": 3, "hand_size": 2, "match": "target_score", "target_score": 30,
     "reward": "points"},
    {"num_players": 10, "hand_size": 1, "match": "fixed_rounds", "rounds": 3},
])
@pytest.mark.parametrize("make", [U.env, U.raw_env])
def test_api_test_through_episode_ends(make, kwargs):
    api_test(make(**kwargs), num_cycles=300)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
@pytest.mark.parametrize("preset", ["default", "standard_uno", "strict", "variants"])
def test_seed_test(n, preset):
    seed_test(lambda: U.env(num_players=n, **PRESETS[preset]), num_cycles=60)


def test_same_seed_same_trajectory_and_different_seeds_differ():
    def trajectory(seed):
        env = U.raw_env(num_players=3, hand_size=3)
        env.reset(seed=seed)
        out = []
        rng = np.random.default_rng(0)
        for _ in range(3):  # the following episodes continue the seeded sequence
            play(env, rng, lambda e: out.append(e.observe(e.agent_selection)["observation"]),
                 policy=eager)
            env.reset()
        return np.array(out[:300])

    assert np.array_equal(trajectory(5), trajectory(5))
    assert not np.array_equal(trajectory(5), trajectory(6))


def test_spaces_and_metadata():
    env = U.env(num_players=7)
    assert env.possible_agents == [f"player_{i}" for i in range(7)]
    assert env.metadata["name"] == "uno_mario_kart_v0"
    assert set(env.metadata["render_modes"]) == {"human", "ansi", "rgb_array"}
    assert env.metadata["is_parallelizable"] is False
    for agent in env.possible_agents:
        assert env.action_space(agent).n == actions.NUM_ACTIONS
        space = env.observation_space(agent)
        assert space is env.observation_space(agent)
        assert space["observation"].shape == (OBS_SIZE,)
        assert space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (73,) and space["action_mask"].dtype == np.int8
    assert env.state_space.shape == (STATE_SIZE,)
    sizes = {U.env(num_players=n).observation_space("player_0")["observation"].shape
             for n in range(2, 11)}
    assert sizes == {(OBS_SIZE,)}


def test_lazy_import_from_the_package():
    import uno_mk_env

    assert uno_mk_env.uno_mario_kart_v0 is U
    with pytest.raises(AttributeError):
        _ = uno_mk_env.no_such_module


# ------------------------------------------------------------------ turn order and masks
@pytest.mark.parametrize("n", PLAYER_COUNTS)
@pytest.mark.parametrize("preset", ["default", "standard_uno", "variants"])
def test_agent_selection_is_the_engines_decider_and_masks_are_its_legal_actions(n, preset):
    env = U.raw_env(num_players=n, max_steps=400, **PRESETS[preset])
    env.reset(seed=n)
    rng = np.random.default_rng(n)
    repeats = [0]
    previous = [None]

    def check(e):
        g = e.game
        if e.terminations[e.agent_selection] or e.truncations[e.agent_selection]:
            for agent in e.agents:
                assert not e.observe(agent)["action_mask"].any()
            return
        decider = f"player_{g.current_player}"
        assert e.agent_selection == decider
        repeats[0] += previous[0] == decider
        previous[0] = decider
        for agent in e.agents:
            mask = e.observe(agent)["action_mask"]
            expected = g.legal_actions() if agent == decider else np.zeros(73, bool)
            np.testing.assert_array_equal(mask.astype(bool), expected)
            np.testing.assert_array_equal(e.infos[agent]["action_mask"], mask)
            assert mask.dtype == np.int8

    for _ in range(2):
        play(env, rng, check)
        env.reset()
    assert repeats[0] > 0  # the same agent decided several times in a row (colours, extras)


def test_decisions_go_to_the_right_player_in_the_right_order():
    """R6.3: the W4 player names the colour, then the next player decides on the challenge."""
    env = U.raw_env(num_players=3)
    env.reset(seed=0)
    g = Game.from_dict({
        "rules": {"num_players": 3},
        "hands": [["W4", "G5", "R1"], ["Y1", "Y2"], ["B7", "G9", "R3"]],
        "draw_pile": ["B1", "B2", "B3", "B4", "B5", "B6"], "discard_pile": ["Y9"],
        "active_colour": "Y", "current_player": 0, "direction": -1,
    })
    env._game = g  # a rigged position
    env._select_decider()
    order = []
    for action in (actions.play(52), actions.choose_colour(3), actions.ACCEPT):
        order.append(env.agent_selection)
        env.step(action)
    # direction -1: the W4 victim is seat 2
    assert order == ["player_0", "player_0", "player_2"]
    assert env.agent_selection == "player_1"


# ------------------------------------------------------------------------------- rewards
def finished_episode(env, rng):
    """Plays to the end (eagerly); returns the final cumulative rewards of every agent."""
    final = {}

    def record(e):
        a = e.agent_selection
        if e.terminations[a] or e.truncations[a]:
            final[a] = e._cumulative_rewards[a]

    play(env, rng, record, policy=eager)
    return final


@pytest.mark.parametrize("n", range(2, 11))
def test_win_rewards_for_every_player_count(n):
    env = U.raw_env(num_players=n, hand_size=2, max_steps=None)
    rng = np.random.default_rng(n)
    winners = set()
    for episode in range(12):
        env.reset(seed=episode)
        game = env.game
        final = finished_episode(env, rng)
        assert game.game_over and sum(final.values()) == pytest.approx(0.0)
        if game.winner is None:
            assert set(final.values()) == {0.0}
            continue
        winners.add(game.winner)
        for s in range(n):
            expected = 1.0 if s == game.winner else -1.0 / (n - 1)
            assert final[f"player_{s}"] == pytest.approx(expected)
    assert len(winners) > 1  # the winner is not always the same seat


@pytest.mark.parametrize("n", (2, 4, 7))
def test_points_rewards_single_round(n):
    env = U.raw_env(num_players=n, hand_size=3, reward="points", max_steps=None)
    rng = np.random.default_rng(1)
    for episode in range(8):
        env.reset(seed=episode)
        game = env.game
        final = finished_episode(env, rng)
        assert sum(final.values()) == pytest.approx(0.0)
        w = game.winner
        if w is None:
            assert set(final.values()) == {0.0}
            continue
        assert final[f"player_{w}"] == pytest.approx(game.scores[w] / 100)
        for s in range(n):
            if s != w:
                assert final[f"player_{s}"] == pytest.approx(-game.hand_points(s) / 100)


@pytest.mark.parametrize("match", [{"match": "target_score", "target_score": 300},
                                   {"match": "fixed_rounds", "rounds": 4}])
def test_multi_round_rewards(match):
    """``points``: paid as each round ends (zero-sum; the winner's share is the round's points);
    ``win``: only when the whole game ends."""
    for reward in ("points", "win"):
        env = U.raw_env(num_players=3, hand_size=3, reward=reward, max_steps=None, **match)
        env.reset(seed=3)
        rng = np.random.default_rng(3)
        paid_rounds = 0
        while env.agents:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step(eager(obs["action_mask"], rng))
            g = env.game
            if any(env.rewards.values()):
                assert g.round_over
                assert sum(env.rewards.values()) == pytest.approx(0.0)
                paid_rounds += 1
                if reward == "points":
                    end = next(e for e in reversed(g.events) if e[0] == "round_end")
                    assert env.rewards[f"player_{end[1]}"] == pytest.approx(end[2] / 100)
                else:
                    assert g.game_over
        g = env.game
        assert g.game_over and g.round > 1
        if reward == "points":
            assert paid_rounds > 1
        else:
            assert paid_rounds == (0 if g.winner is None else 1)


def test_points_rewards_are_the_hands_left_when_the_round_ended():
    """In multi-round matches the next round is already dealt when the reward is computed."""
    g = Game(U.raw_env(num_players=4, match="target_score", target_score=400).rules, seed=2)
    rng = np.random.default_rng(2)
    checked = 0
    while not g.game_over:
        g.step(eager(g.legal_actions(), rng))
        if g.round_over and g.round_winner is not None:
            end = next(e for e in reversed(g.events) if e[0] == "round_end")
            rewards = round_rewards(g, "points")
            assert rewards[g.round_winner] == pytest.approx(end[2] / 100)
            assert sum(rewards) == pytest.approx(0.0)
            for s in range(4):
                if s != g.round_winner:
                    assert rewards[s] == pytest.approx(-g.round_hand_points[s] / 100)
            checked += 1
    assert checked > 1


def test_stalemate_pays_nothing_and_lowest_hand_pays_the_winner():
    """R9: nobody can play or draw for N turns."""
    def stalemate(**rules):
        g = Game.from_dict({"rules": {"num_players": 2, **rules},
                            "hands": [["R1", "Y2"], ["B3", "Y4"]], "draw_pile": [],
                            "discard_pile": ["G5"], "active_colour": "G",
                            "current_player": 0, "direction": 1})
        g.step(actions.DRAW)
        g.step(actions.DRAW)
        assert g.game_over
        return g

    assert round_rewards(stalemate(), "win") == [0.0, 0.0]
    assert round_rewards(stalemate(), "points") == [0.0, 0.0]
    g = stalemate(stalemate="lowest_hand")
    assert round_rewards(g, "win") == [1.0, -1.0]
    assert round_rewards(g, "points") == pytest.approx([0.07, -0.07])


def test_max_steps_truncates_every_agent_without_reward():
    env = U.env(num_players=3, max_steps=10)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    steps = 0
    for _agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            assert trunc and not term and reward == 0
            assert not obs["action_mask"].any()
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        last_phase = env.game.phase_name
        env.step(action)
        steps += action != actions.KEEP  # public decisions: a KEEP joins its draw (R4.2)
    # the cap never cuts a draw's play_drawn decision off: playing the drawn card may be one
    # public decision more
    assert env.agents == []
    assert steps == 10 or (steps == 11 and last_phase == "play_drawn"), (steps, last_phase)


# ----------------------------------------------------------------------- illegal actions
def test_raw_env_raises_the_engines_error_and_changes_nothing():
    env = U.raw_env(num_players=2)
    env.reset(seed=4)
    agent = env.agent_selection
    before = env.game.to_dict()
    illegal = int(np.flatnonzero(env.observe(agent)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="illegal action"):
        env.step(illegal)
    with pytest.raises(ValueError, match="73 is out of the action space"):
        env.step(73)
    assert env.game.to_dict() == before and env.agent_selection == agent
    env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))  # still usable


@pytest.mark.parametrize("n", (2, 5))
def test_env_terminates_on_an_illegal_action(n):
    env = U.env(num_players=n)
    env.reset(seed=2)
    mover = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(mover)["action_mask"] == 0)[0])
    with pytest.warns(IllegalActionWarning, match=actions.ACTION_NAMES[illegal].replace("(", r"\(")
                      .replace(")", r"\)")):
        env.step(illegal)
    assert all(env.terminations.values())
    assert env.rewards[mover] == -1.0
    assert all(r == 0 for a, r in env.rewards.items() if a != mover)
    assert env.infos[mover]["illegal_action"] is True
    finals = {}
    for agent in env.agent_iter():
        obs, reward, term, _, _ = env.last()
        assert term and not obs["action_mask"].any()
        finals[agent] = reward
        env.step(None)
    assert finals[mover] == -1.0 and len(finals) == n
    assert sum(finals.values()) == -1.0


def test_env_errors_are_clear():
    env = U.env(num_players=3)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        env.observe("player_0")
    with pytest.raises(RuntimeError, match="reset"):
        env.agent_iter()
    with pytest.raises(RuntimeError, match="reset"):
        env.state()
    for call in (env.last, U.raw_env(num_players=2).last):  # issue #24.9: was AttributeError
        with pytest.raises(RuntimeError, match=r"reset\(\) needs to be called before last\(\)"):
            call()
    with pytest.raises(AttributeError):
        _ = env.rewards
    raw = U.raw_env(num_players=3)
    with pytest.raises(RuntimeError, match="reset"):
        raw.step(0)
    env.reset(seed=0)
    for bad in (73, -1, 1000):
        with pytest.raises(ValueError, match="out of the action space"):
            env.step(bad)
    for bad in (None, 1.5, "DRAW"):
        with pytest.raises(TypeError, match="action must be an int"):
            env.step(bad)
    assert not any(env.terminations.values())  # none of these ended the episode
    env.step(np.int32(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    with pytest.raises(RuntimeError, match="call step"):
        for _agent in env.agent_iter():
            env.last()


# A bool is not an action id (True is not PLAY(R1)): the same TypeError as for np.True_, in
# raw_env, env() and the Gymnasium wrapper alike (tests/test_gym_env.py), and nothing changes.
NOT_ACTIONS = (True, False, np.True_, np.bool_(False), np.array(True), 1.0, np.float64(2.0),
               "DRAW", "1", None, [1], np.array([1]), np.timedelta64(1))


@pytest.mark.parametrize("make", [U.env, U.raw_env], ids=["env", "raw_env"])
@pytest.mark.parametrize("bad", NOT_ACTIONS, ids=repr)
def test_a_non_integer_action_is_a_type_error_that_changes_nothing(make, bad):
    env = make(num_players=2)
    env.reset(seed=0)
    agent, before = env.agent_selection, env.game.to_dict()
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalActionWarning)  # not scored as an illegal action
        with pytest.raises(TypeError, match="action must be an int action id 0-72") as info:
            env.step(bad)
    assert repr(bad) in str(info.value)
    assert not isinstance(info.value, IllegalActionError)
    assert env.game.to_dict() == before and env.agent_selection == agent
    assert not any(env.terminations.values()) and env.rewards[agent] == 0
    env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))  # still usable


@pytest.mark.parametrize("make", [U.env, U.raw_env], ids=["env", "raw_env"])
def test_integer_types_are_action_ids_and_out_of_range_is_a_value_error(make):
    env = make(num_players=2)
    env.reset(seed=0)
    for bad in (73, -1, np.int64(73), np.uint8(200)):
        with pytest.raises(ValueError, match=f"action {int(bad)} is out of the action space "
                                             r"Discrete\(73\)"):
            env.step(bad)
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    env.step(np.int64(legal[0]))  # numpy integers (and 0-d integer arrays) are ids
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    env.step(np.array(legal[0], dtype=np.int16))
    assert env.game.num_steps == 2


def test_an_unknown_agent_is_named_with_the_valid_ones():
    env = U.env(num_players=3)
    env.reset(seed=0)
    for lookup in (env.observe, env.seat, env.observation_space, env.action_space):
        with pytest.raises(KeyError) as info:
            lookup("player_9")
        message = str(info.value)
        assert "'player_9'" in message and "player_0, player_1, player_2" in message, message
    assert env.seat("player_2") == 2  # known agents still work


def test_stepping_after_the_end():
    env = U.env(num_players=2, max_steps=1)
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    with pytest.raises(ValueError, match="only valid action is None"):
        env.step(0)
    env.step(None)
    env.step(None)
    assert env.agents == []
    with pytest.warns(UserWarning, match="call reset"):
        env.step(None)


def test_every_rule_option_is_a_validated_keyword():
    for name, spec in OPTIONS.items():
        env = U.env(**{name: spec.default})
        assert getattr(env.rules, name) == spec.default
    env = U.env(num_players=5, lightning_draw=2, uno_catch="next_player")
    assert env.rules.lightning_draw == 2 and len(env.possible_agents) == 5
    with pytest.raises(RulesError, match="colours"):
        U.env(colours=5)
    with pytest.raises(RulesError, match="uno_catch"):
        U.env(uno_catch="sometimes")
    with pytest.raises(RulesError, match="num_players"):
        U.raw_env(num_players=11)
    with pytest.raises(ValueError, match="reward"):
        U.env(reward="score")
    with pytest.raises(ValueError, match="max_steps"):
        U.env(max_steps=0)
    with pytest.raises(ValueError, match="render_mode"):
        U.env(render_mode="rgb")


# ------------------------------------------------------------------------ state / render
def test_state_is_in_its_space():
    env = U.env(num_players=4, hand_size=3)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    play(env, rng, lambda e: e.state_space.contains(e.state()) or pytest.fail("state"),
         policy=eager)


def test_render_ansi_shows_the_table():
    env = U.env(num_players=3, render_mode="ansi")
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _agent in env.agent_iter(60):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else uniform(obs["action_mask"], rng))
    text = env.render()
    me = env.agent_selection
    view = env.game.view(env.seat(me))
    lines = text.splitlines()
    assert "Top card:" in lines[1] and "active colour:" in lines[1] and "direction:" in lines[1]
    for s in range(3):
        row = next(line for line in lines if f" player_{s} " in line or f" player_{s}\t" in line)
        assert str(view.hand_sizes[s]) in row.split()
    codes = [CODES[k] for k, c in enumerate(view.hand) for _ in range(c)]
    assert f"Your hand ({me}, {len(codes)} cards): {' '.join(codes)}" in lines
    assert f"{me} (you)" in text and "Last events:" in text


def test_render_hides_other_players_draws():
    env = U.env(num_players=2, render_mode="ansi")
    env.reset(seed=0)
    g = env.game
    viewer = g.current_player
    env.step(actions.DRAW)  # the viewer drew a card
    if env.agent_selection != f"player_{viewer}":
        text = env.render()  # now from the other seat
        assert f"player_{viewer} drew a card" in text
        assert f"player_{viewer} drew a card (" not in text


def test_events_text_of_an_item_box():
    names = [f"player_{i}" for i in range(4)]
    events = [("play", 2, 53), ("flip", 2, 33), ("item", 2, 2), ("target", 2, 0),
              ("draw", 0, (None,), "green_shell")]
    assert events_text(events, names) == (
        "player_2 played Wild Item Box → flipped G7 → Green Shell: player_0 draws 1"
    )


def test_render_without_a_mode_warns_and_returns_none():
    # render_mode="human" (a window) is tested in test_render_image.py
    quiet = U.env(num_players=2)
    quiet.reset(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert quiet.render() is None


def test_a_copied_env_observes_like_the_original():
    import copy

    env = U.raw_env(num_players=3)
    env.reset(seed=8)
    twin = copy.deepcopy(env)
    for agent in env.possible_agents:
        np.testing.assert_array_equal(twin.observe(agent)["observation"],
                                      env.observe(agent)["observation"])
    action = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
    twin.step(action)
    env.step(action)
    np.testing.assert_array_equal(twin.observe(twin.agent_selection)["observation"],
                                  env.observe(env.agent_selection)["observation"])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), np.float32("nan"),
                                 "-1", None, True])
def test_illegal_reward_must_be_a_finite_number(bad):
    """Issue #24.9: ``env(illegal_reward=nan)`` or ``inf`` was accepted (a NaN poisons every
    return it is summed into); now one ``ValueError`` line naming the argument."""
    with pytest.raises(ValueError, match="^illegal_reward must be a finite number") as info:
        U.env(num_players=2, illegal_reward=bad)
    assert "\n" not in str(info.value) and len(str(info.value)) < 100


@pytest.mark.parametrize("good", [-1, 0, 2.5, np.float64(-3.0), np.int64(-2)])
def test_illegal_reward_accepts_finite_numbers(good):
    env = U.env(num_players=2, illegal_reward=good)
    assert env._illegal_reward == float(good) and type(env._illegal_reward) is float
