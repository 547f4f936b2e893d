"""The table as an image (``render_mode="rgb_array"``/``"human"``, uno_mk_env/render/image.py):
size, dtype and determinism for 2-10 players, a seat's image never drawing another seat's
hidden cards, PettingZoo's API and render tests, the Gymnasium wrapper, and the optional
dependencies."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from uno_mk_env import Game, Rules
from uno_mk_env import uno_mario_kart_v0 as U
from uno_mk_env.agents import make_agent
from uno_mk_env.agents.base import agent_action
from uno_mk_env.engine.cards import ITEM_NAMES
from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv
from uno_mk_env.render import table as T
from uno_mk_env.render.image import draw_table, hand_slots, render_image, seat_centres
from uno_mk_env.render.table import GEOMETRY, HEIGHT, WIDTH, table_data

pytest.importorskip("PIL")
SHAPE = (HEIGHT, WIDTH, 3)


def played(num_players: int, steps: int, seed: int = 0, rules: dict | None = None) -> Game:
    """A game after ``steps`` decisions of ``strategic`` agents."""
    g = Game(Rules(num_players=num_players, **(rules or {})), seed=seed)
    agents = [make_agent("strategic", seed=s) for s in range(num_players)]
    for _ in range(steps):
        if g.game_over:
            break
        g.step(agent_action(agents[g.current_player], g))
    return g


def env_images(num_players: int, seed: int, steps: int, **kwargs) -> list[np.ndarray]:
    env = U.env(num_players=num_players, render_mode="rgb_array", **kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    images = [env.render()]
    for _agent in env.agent_iter(steps):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
        images.append(env.render())
    env.close()
    return images


# ------------------------------------------------------------------------ size, determinism
@pytest.mark.parametrize("num_players", [2, 4, 10])
def test_env_image_has_a_fixed_size_and_is_deterministic(num_players):
    first = env_images(num_players, seed=num_players, steps=25)
    again = env_images(num_players, seed=num_players, steps=25)
    assert len(first) == len(again) > 5
    for a, b in zip(first, again):
        assert a.shape == SHAPE and a.dtype == np.uint8
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(first[0], im) for im in first[1:])  # the table changes
    other = env_images(num_players, seed=num_players + 100, steps=0)[0]
    assert not np.array_equal(first[0], other)  # another deal, another picture


@pytest.mark.parametrize("num_players", range(2, 11))
def test_every_table_size_draws_in_the_same_frame(num_players):
    g = played(num_players, 3 * num_players, seed=num_players)
    for seat in (None, num_players - 1):
        image = render_image(g, seat)
        assert image.shape == SHAPE and image.dtype == np.uint8
    # the seat panels never overlap each other or the centre box, and stay in the frame
    pw, ph = GEOMETRY["panel"]
    boxes = [(x - pw // 2, y - ph // 2, x - pw // 2 + pw, y - ph // 2 + ph)
             for x, y in seat_centres(num_players)]
    for i, a in enumerate(boxes):
        assert 0 <= a[0] and a[2] <= WIDTH and 0 <= a[1] and a[3] <= HEIGHT
        x0, y0, x1, y1 = GEOMETRY["centre_box"]
        assert a[2] <= x0 or a[0] >= x1 or a[3] <= y0 or a[1] >= y1, (num_players, i)
        for b in boxes[i + 1:]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (num_players, i)


def test_seats_sit_clockwise_with_the_viewer_at_the_bottom():
    centres = seat_centres(4, bottom=2)
    cx, cy = GEOMETRY["centre"]
    assert centres[2][1] > cy and centres[2][0] == cx  # the viewer at the bottom
    assert centres[3][0] < cx  # seat + 1 is on the viewer's left (docs/rules.md R1)
    assert centres[0][1] < cy  # opposite


def test_big_hands_overlap_and_count_the_rest():
    slots, more = hand_slots(7)
    assert len(slots) == 7 and more == 0 and len({y for _, y in slots}) == 1
    slots, more = hand_slots(20)
    assert len(slots) == 20 and more == 0 and len({y for _, y in slots}) == 2
    slots, more = hand_slots(50)
    assert len(slots) == GEOMETRY["max_shown"] and more == 50 - GEOMETRY["max_shown"]
    x0, _, width = GEOMETRY["hand_area"]
    assert max(x for x, _ in slots) + GEOMETRY["card"][0] <= x0 + width + 1


# ----------------------------------------------------------------------------- what it shows
def test_table_data_holds_what_the_table_shows():
    g = played(4, 18, seed=3)
    t = table_data(g, None)
    d = g.to_dict()
    assert t["hands"] == [sorted(h, key=d_order) for h in d["hands"]]
    assert t["hand_sizes"] == [len(h) for h in d["hands"]]
    assert t["top_card"] == d["discard_pile"][-1] and t["active_colour"] == d["active_colour"]
    assert t["current_player"] == g.current_player and t["phase"] == g.phase_name
    assert t["draw_pile"] == len(d["draw_pile"]) and t["direction"] == g.direction
    mine = table_data(g, 1)
    assert mine["hands"][1] == t["hands"][1]
    assert [h is None for h in mine["hands"]] == [True, False, True, True]


def d_order(code: str) -> int:
    from uno_mk_env.engine.cards import kind

    return kind(code)


def test_the_last_item_and_its_effect_are_shown():
    for seed in range(200):
        g = played(3, 40, seed=seed)
        items = [e for e in g.events if e[0] == "item"]
        round_start = max(i for i, e in enumerate(g.events) if e[0] == "deal")
        if items and g.events.index(items[-1]) > round_start and not g.game_over:
            break
    else:
        pytest.fail("no game with an item in 200 seeds")
    t = table_data(g, None)
    assert t["item"]["item"] == ITEM_NAMES[items[-1][2]] and t["item"]["seat"] == items[-1][1]
    assert t["item"]["effect"]



def _last_item_reference(g: Game, seat: int | None) -> dict | None:
    """The plain reading: the whole log as ``seat`` sees it, the round's last ``item`` event and
    the effect events right after it (what ``table_data`` reads backwards from the end)."""
    if g.view(0).last_item < 0:
        return None
    events = g.events_for(seat)
    start = max((i for i, e in enumerate(events) if e[0] == "deal"), default=0)
    at = max((i for i in range(start, len(events)) if events[i][0] == "item"), default=-1)
    if at < 0:
        return {"seat": None, "effect_events": []}
    effect = []
    for e in events[at + 1:]:
        if e[0] not in T._EFFECT_EVENTS or (e[0] == "draw" and e[3] not in T._ITEM_DRAWS):
            break
        effect.append(e)
    return {"seat": events[at][1], "item": ITEM_NAMES[events[at][2]],
            "events": T.events_text(effect, [f"p{i}" for i in range(g.num_players)], seat)}


@pytest.mark.parametrize("num_players", [2, 4, 7])
def test_the_last_item_read_backwards_equals_the_plain_reading(num_players):
    seen = 0
    for seed in range(3):
        g = Game(Rules(num_players=num_players), seed=seed)
        agents = [make_agent("strategic", seed=s) for s in range(num_players)]
        while not g.game_over and len(g.events) < 1500:
            names = [f"p{i}" for i in range(num_players)]
            for seat in (None, T.PUBLIC, *range(num_players)):
                fast = T._last_item(g, g.view(0).last_item, names, seat)
                ref = _last_item_reference(g, seat)
                if ref is None or ref["seat"] is None:
                    assert fast is None or fast["seat"] is None
                else:
                    seen += bool(ref["events"])
                    assert (fast["seat"], fast["item"], fast["events"]) == (
                        ref["seat"], ref["item"], ref["events"])
            g.step(agent_action(agents[g.current_player], g))
    assert seen > 0  # items with visible effects were compared

# ------------------------------------------------------------------------ hidden information
def rehidden(g: Game, viewer: int, rng: np.random.Generator) -> Game:
    """The same position (a ``play`` decision) with every card ``viewer`` cannot see (the other
    hands, the draw pile) shuffled among the same places and sizes: only hidden cards differ."""
    d = g.to_dict(include_events=True)
    others = [s for s in range(g.num_players) if s != viewer]
    hidden = [c for s in others for c in d["hands"][s]] + d["draw_pile"]
    while True:
        cards = [hidden[i] for i in rng.permutation(len(hidden))]
        hands, at = list(d["hands"]), 0
        for s in others:
            hands[s] = cards[at:at + len(d["hands"][s])]
            at += len(hands[s])
        if any(sorted(hands[s]) != sorted(d["hands"][s]) for s in others):
            return Game.from_dict({**d, "hands": hands, "draw_pile": cards[at:]})


@pytest.mark.parametrize("num_players,steps,seed", [(2, 9, 1), (4, 23, 2), (10, 41, 3)])
def test_a_seat_view_never_draws_other_seats_hidden_cards(num_players, steps, seed):
    rng = np.random.default_rng(seed)
    g = played(num_players, steps, seed=seed)
    agents = [make_agent("greedy", seed=s) for s in range(num_players)]
    while g.phase_name != "play":  # no drawn card or pending choice tied to a hidden hand
        g.step(agent_action(agents[g.current_player], g))
    base = Game.from_dict(g.to_dict(include_events=True))
    names = [f"P{s}" for s in range(num_players)]
    for viewer in (0, num_players - 1):
        other = rehidden(base, viewer, rng)
        assert base.view(viewer) == other.view(viewer)
        assert table_data(base, viewer, names) == table_data(other, viewer, names)
        np.testing.assert_array_equal(render_image(base, viewer, names),
                                      render_image(other, viewer, names))
        # the spectator sees every hand, so there the two deals differ
        assert not np.array_equal(render_image(base, None, names),
                                  render_image(other, None, names))


def test_env_render_seat_draws_that_seats_view():
    env = U.env(num_players=3, render_mode="rgb_array", render_seat=1)
    env.reset(seed=4)
    image = env.render()
    np.testing.assert_array_equal(image, render_image(env.game, 1, env.possible_agents,
                                                      env._history))
    spectator = U.env(num_players=3, render_mode="rgb_array")
    spectator.reset(seed=4)
    assert not np.array_equal(image, spectator.render())
    text = U.env(num_players=3, render_mode="ansi", render_seat=2)
    text.reset(seed=4)
    assert "Your hand (player_2" in text.render()
    for bad in (3, -1, "1", True, 1.0):
        with pytest.raises(ValueError, match=r"render_seat=.*allowed: None, a seat 0-2"):
            U.env(num_players=3, render_seat=bad)


# ------------------------------------------------------------------------------- PettingZoo
def test_pettingzoo_api_test_with_rgb_array():
    from pettingzoo.test import api_test

    api_test(U.env(num_players=3, render_mode="rgb_array"), num_cycles=40)
    api_test(U.raw_env(num_players=4, render_mode="rgb_array", render_seat=2), num_cycles=40)


def test_pettingzoo_render_test_every_mode(monkeypatch):
    pytest.importorskip("pygame")
    from pettingzoo.test import render_test

    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")

    def make(render_mode=None):
        env = U.env(num_players=2, render_mode=render_mode)
        env.metadata = {**env.metadata, "render_fps": 0}  # no waiting between frames
        if env._screen.window is not None:
            env._screen.window.fps = 0
        return env

    render_test(make)


def test_human_mode_shows_the_image_in_a_window(monkeypatch):
    pygame = pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    env = U.env(num_players=4, render_mode="human")
    env._screen.window.fps = 0
    env.reset(seed=2)  # shows the table
    assert env._screen.window.is_open and env.render() is None
    shown = pygame.surfarray.array3d(pygame.display.get_surface()).swapaxes(0, 1)
    np.testing.assert_array_equal(shown, render_image(env.game, None, env.possible_agents,
                                                      env._history))
    env.close()
    assert not env._screen.window.is_open


# ------------------------------------------------------------------------------- Gymnasium
def test_gym_wrapper_renders_images():
    env = UnoMarioKartGymEnv(num_players=3, render_mode="rgb_array", learner_seat=2,
                             render_seat="learner")
    env.reset(seed=0)
    image = env.render()
    assert image.shape == SHAPE and image.dtype == np.uint8
    np.testing.assert_array_equal(image, render_image(env.game, 2, env._names, env._history))
    spectator = UnoMarioKartGymEnv(num_players=3, render_mode="rgb_array", learner_seat=2)
    spectator.reset(seed=0)
    np.testing.assert_array_equal(spectator.render(), render_image(spectator.game, None,
                                                                   spectator._names,
                                                                   spectator._history))
    with pytest.raises(ValueError, match="render_seat='me' is not allowed"):
        UnoMarioKartGymEnv(num_players=3, render_seat="me")


# ------------------------------------------------------------------- optional dependencies
def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "SDL_VIDEODRIVER": "dummy"})


def test_no_render_mode_imports_nothing_of_the_image_renderer():
    code = (
        "import sys\n"
        "sys.modules['PIL'] = None; sys.modules['pygame'] = None  # as if not installed\n"
        "from uno_mk_env import uno_mario_kart_v0 as U\n"
        "env = U.env(num_players=3); env.reset(seed=1)\n"
        "for agent in env.agent_iter(300):\n"
        "    obs, r, term, trunc, info = env.last()\n"
        "    env.step(None if term or trunc else int(obs['action_mask'].nonzero()[0][0]))\n"
        "assert 'uno_mk_env.render.image' not in sys.modules\n"
        "try:\n"
        "    U.env(render_mode='rgb_array')\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "render_mode='rgb_array' needs Pillow: pip install 'uno-mk-env[render]'"
    )


def test_human_mode_without_pygame_names_the_extra():
    result = run_python(
        "import sys\nsys.modules['pygame'] = None\n"
        "from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv\n"
        "try:\n    UnoMarioKartGymEnv(render_mode='human')\n"
        "except ImportError as e:\n    print(e)\n"
    )
    assert result.returncode == 0, result.stderr
    assert "pip install 'uno-mk-env[render]'" in result.stdout and "pygame" in result.stdout


def test_draw_table_is_a_pure_function_of_the_table():
    g = played(5, 30, seed=9)
    t = table_data(g, 2)
    np.testing.assert_array_equal(draw_table(t), draw_table(dict(t)))


# -------------------------------------------------------------- legibility (issue #25.11)
def test_card_numerals_use_a_real_bold_face_and_stay_distinct():
    """Card corner numerals are drawn in DejaVu Sans Bold (matplotlib's bundled copy, in the
    test extra), not a regular face smeared by a stroke; at 1x the corners of 3, 5, 6, 8 and S
    differ pairwise, and the label is not blurred into a blob (it keeps background pixels
    between its strokes)."""
    from uno_mk_env.render.image import _card, _font, _Painter, bold_font_path
    from uno_mk_env.render.table import PALETTE

    assert bold_font_path() is not None and bold_font_path().endswith("DejaVuSans-Bold.ttf")
    assert _font(14, True).getname() == ("DejaVu Sans", "Bold")
    painter = _Painter()
    codes = ["G3", "G5", "G6", "G8", "GS"]
    for i, code in enumerate(codes):
        _card(painter, code, 10 + 40 * i, 10)
    image = np.asarray(painter.image)
    green = np.array([int(PALETTE["G"][i:i + 2], 16) for i in (1, 3, 5)])
    corners = [image[12:28, 12 + 40 * i:28 + 40 * i].astype(int) for i in range(len(codes))]
    for i in range(len(codes)):
        ink = (np.abs(corners[i] - green).sum(axis=2) > 200).sum()
        assert 20 < ink < 0.6 * corners[i][..., 0].size, (codes[i], ink)
        for j in range(i):
            assert np.abs(corners[i] - corners[j]).sum() > 2000, (codes[i], codes[j])


def test_no_active_colour_is_shown_while_the_start_colour_is_chosen():
    """R3.3: with a Wild Item Box start card there is no active colour until its colour is
    named: the table dict says ``colour_pending`` and the image rings the top card in the wild
    colour with "being chosen", not the engine's placeholder; after the choice, the colour."""
    from uno_mk_env.render.table import PALETTE

    g = next(g for g in (Game(Rules(num_players=3), seed=s) for s in range(3000))
             if g.phase_name == "choose_colour")
    t = table_data(g, None)
    assert t["colour_pending"] is True
    ring = draw_table(t)[GEOMETRY["centre_box"][1] + 52 - 4, WIDTH // 2]
    assert tuple(ring) == tuple(int(PALETTE["W"][i:i + 2], 16) for i in (1, 3, 5))
    assert not np.array_equal(draw_table(t), draw_table({**t, "colour_pending": False}))
    g.step(g.legal_action_ids()[2])  # COLOUR(G)
    t = table_data(g, None)
    assert t["colour_pending"] is False and t["active_colour"] == "G"
    ring = draw_table(t)[GEOMETRY["centre_box"][1] + 52 - 4, WIDTH // 2]
    assert tuple(ring) == tuple(int(PALETTE["G"][i:i + 2], 16) for i in (1, 3, 5))


_WINDOW_CHILD = (
    "import sys, time\n"
    "from uno_mk_env import uno_mario_kart_v0 as U\n"
    "env = U.env(num_players=3, render_mode='human'); env._screen.window.fps = 0\n"
    "env.reset(seed=1)\n"
    "print('ready', flush=True)\n"
    "{body}"
)


def test_human_window_ends_on_sigterm():
    """SDL would turn SIGTERM into a quit event the loop never reads: the process must end."""
    import signal

    pytest.importorskip("pygame")
    code = _WINDOW_CHILD.format(body="while True:\n    env.render(); time.sleep(0.05)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "SDL_VIDEODRIVER": "dummy"})
    try:
        assert child.stdout.readline().strip() == "ready"
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=20) == -signal.SIGTERM
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_human_window_close_button_ends_the_process():
    pytest.importorskip("pygame")
    code = _WINDOW_CHILD.format(
        body="import pygame\npygame.event.post(pygame.event.Event(pygame.QUIT))\n"
             "env.render()\nprint('not reached')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "SDL_VIDEODRIVER": "dummy"})
    assert result.returncode == 0 and "not reached" not in result.stdout, result.stderr
    assert result.stderr == ""
