"""No hidden information reaches a browser, checked from the outside: Debian's headless Chromium
(the replay viewer's browser test's setup) opens the table page of ``uno-mk serve``'s app, a
script in the page plays the person's seat by clicking the page's own buttons and cards, and the
browser's DevTools network log captures every WebSocket frame and every HTTP response body the
page receives.

Each seeded game is played twice: world A as dealt, then world B, its twin for the person's seat
(:mod:`uno_mk_env.serve.twins`): the same deal with cards that seat never saw exchanged, the
agents replaying their decisions of A (a seat may now keep a playable card it drew where it
drew an unplayable one, a hidden ``KEEP``). The two worlds' traffic must be the same bytes, but
for the duplicate score sent once the game is over (a function of the whole deal by design,
docs/serve.md). And no payload holds another seat's card, the draw pile, a hidden ``KEEP`` or
the generator's state. Tables of 2-10 players with several rule options; the person sits in
every seat. The default suite plays 10 games, ``-m slow`` 300.
"""

from __future__ import annotations

import json
import random
import re
import time
from typing import Any

import pytest

from tests import test_replay_browser as rb
from tests.test_serve_browser import serving
from tests.test_serve_hidden import CARD
from uno_mk_env import Rules

pytest.importorskip("uvicorn")

from uno_mk_env.serve.app import Server  # noqa: E402
from uno_mk_env.serve.table import TableConfig  # noqa: E402
from uno_mk_env.serve.twins import twin_of  # noqa: E402

TABLES = [  # (players, rule options)
    (2, {"uno_catch": "any_player"}), (3, {"uno_catch": "next_player"}), (4, {}),
    (5, {"w4_strict": True}), (2, {"match": "target_score", "target_score": 200}),
    (6, {"start_action_cards": "reflip", "lightning_draw": 2}), (10, {}),
    (3, {"uno_penalty": 4, "item_box_counts_for_w4": False}), (7, {"hand_size": 5}),
    (4, {"uno_catch": "any_player", "two_player_reverse_skips": False}),
]
AGENTS = ("strategic", "greedy", "random")
#: Played in the page: each time it is this seat's decision, click one of the offered cards or
#: buttons (the page's own send path) picked by a seeded generator (mulberry32).
DRIVER = """
let s = arguments[0] >>> 0, last = null;
const rnd = () => { s = (s + 0x6D2B79F5) >>> 0; let t = s;
  t = Math.imul(t ^ t >>> 15, t | 1); t ^= t + Math.imul(t ^ t >>> 7, t | 61);
  return ((t ^ t >>> 14) >>> 0) / 4294967296; };
window.unoDriver = setInterval(() => {
  const d = document.body.dataset;
  if (d.state !== "deciding" || d.ask === last) return;
  const options = document.querySelectorAll("#hand [data-action], #actions [data-action]");
  if (!options.length) return;
  last = d.ask;
  options[Math.floor(rnd() * options.length)].click();
}, 2);
"""
PAGE: dict[str, str] = {}  # the HTTP responses of the first game, by path
#: Keys no payload has (the table's ``draw_pile`` is the pile's size only).
FORBIDDEN = {"bit_generator", "rng", "state", "pcg64", "deck", "hands_all", "pile"}


def _keys(value: Any) -> list[tuple[str, Any]]:
    """Every (key, value) of a JSON value, at any depth."""
    if isinstance(value, dict):
        return [kv for k, v in value.items() for kv in [(k, v), *_keys(v)]]
    if isinstance(value, list):
        return [kv for v in value for kv in _keys(v)]
    return []


@pytest.fixture(scope="module")
def network_browser(tmp_path_factory):
    """The replay test's Chromium, with its DevTools network log kept (``performance``)."""
    yield from rb.chromium(tmp_path_factory.mktemp("chromium-net"), ("browser", "performance"))


@pytest.fixture(scope="module")
def served():
    """The app under uvicorn on a free loopback port; no frame is ever dropped for a slow
    page (the two worlds' frames are compared one by one)."""
    with serving(Server(max_queued=100_000)) as address:
        yield address


def _network(driver) -> list[dict[str, Any]]:
    return [json.loads(e["message"])["message"] for e in driver.get_log("performance")]


def play_in_page(driver, server: Server, base: str, config: TableConfig,
                 seed: int) -> tuple[list[str], list[tuple[str, str]], Any]:
    """One game of ``config`` played in the page by :data:`DRIVER`: the WebSocket frames the
    browser received, the HTTP responses (path, body) and the table."""
    seat = config.humans[0]
    table = server.add_table(config, start=False)
    driver.get("about:blank")
    _network(driver)  # drop what came before
    driver.get(f"{base}/play/{table.tokens[seat]}")
    deadline = time.monotonic() + 30
    while table.listeners() == 0:  # start once the page listens: it receives every frame
        assert time.monotonic() < deadline, "the page did not connect"
        time.sleep(0.01)
    driver.execute_script(DRIVER, seed)
    table.start()
    frames: list[str] = []
    responses: list[tuple[str, str]] = []
    deadline = time.monotonic() + 300
    while not frames or json.loads(frames[-1])["type"] != "session":
        assert time.monotonic() < deadline, "the game did not end"
        assert table.status != "failed", table.error
        time.sleep(0.05)
        for m in _network(driver):
            if m["method"] == "Network.webSocketFrameReceived":
                frames.append(m["params"]["response"]["payloadData"])
            elif m["method"] == "Network.responseReceived" and \
                    m["params"]["response"]["status"] != 101:
                body = driver.execute_cdp_cmd("Network.getResponseBody",
                                              {"requestId": m["params"]["requestId"]})
                path = m["params"]["response"]["url"].replace(base, "")
                responses.append((path.replace(table.tokens[seat], "{token}"), body["body"]))
    driver.execute_script("clearInterval(window.unoDriver)")
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    server.remove(table)
    return frames, responses, table


def check_payloads(frames: list[str], responses: list[tuple[str, str]], seat: int,
                   names: list[str]) -> int:
    """(b): no payload holds another seat's card, the draw pile, a hidden KEEP or the
    generator; returns the frames checked."""
    for path, body in responses:  # the page and its files: the same bytes for every game
        assert path in ("/play/{token}", "/static/table.js", "/static/draw.js",
                        "/static/table.css"), path
        assert PAGE.setdefault(path, body) == body, path
    for text in frames:
        f = json.loads(text)
        for key, value in _keys(f):
            assert key.lower() not in FORBIDDEN, key
            assert key != "draw_pile" or type(value) is int, value
            if isinstance(value, dict) and value.get("player", seat) != seat:  # an event
                assert value.get("type") != "keep", value
                assert value.get("type") != "draw" or set(value["cards"]) == {None}, value
            if isinstance(value, dict) and value.get("type") == "reveal":
                assert value["hand"] is None or value["to"] == seat, value
        assert "pcg64" not in text.lower() and "bit_generator" not in text
        assert f["type"] in ("state", "session"), f
        if f["type"] == "session":
            continue
        t = f["table"]
        assert all(h is None for s, h in enumerate(t["hands"]) if s != seat)
        assert len(t["hands"][seat]) == t["hand_sizes"][seat]
        # nothing is sent while another seat decides about a card it drew (R4.2)
        assert t["phase"] != "play_drawn" or t["current_player"] == seat
        assert t["drawn_card"] is None or t["current_player"] == seat
        for s in range(len(names)):
            if s != seat:
                who = re.escape(names[s])
                assert not re.search(who + r" (drew a card|draws \d+) \(" + CARD, text)
                assert not re.search(who + r" keeps", text), text[:300]
    return len(frames)


def two_worlds(driver, server: Server, base: str, games: int) -> dict[str, int]:
    counts = {"games": 0, "frames": 0, "exchanges": 0, "keeps_differ": 0}
    for i in range(games):
        n, options = TABLES[i % len(TABLES)]
        seat = (i // len(TABLES) + i) % n
        agents = tuple(AGENTS[(s + i) % 3] for s in range(n - 1))
        config = TableConfig(Rules(num_players=n, **options), (seat,), agents, seed=5000 + i,
                             pause=0, max_steps=300)
        frames_a, responses_a, table_a = play_in_page(driver, server, base, config, i)
        twin = twin_of(table_a.recording, seat, random.Random(i))
        config_b = TableConfig(config.rules, (seat,), agents, seed=5000 + i, pause=0,
                               max_steps=300, twin=twin)
        frames_b, responses_b, table_b = play_in_page(driver, server, base, config_b, i)
        game_frames = [f for f in frames_a if '"type":"session"' not in f]
        assert game_frames == [f for f in frames_b if '"type":"session"' not in f], \
            f"game {i}: the two worlds sent different frames"
        # the page's files arrive in either order
        assert sorted(responses_a) == sorted(responses_b) and len(responses_a) >= 4
        counts["frames"] += check_payloads(frames_a, responses_a, seat, table_a.names)
        check_payloads(frames_b, responses_b, seat, table_b.names)
        hidden = [sum(1 for st in t.recording["steps"] if st.get("hidden"))
                  for t in (table_a, table_b)]
        counts["keeps_differ"] += hidden[0] != hidden[1]
        counts["exchanges"] += len(twin.exchanges)
        counts["games"] += 1
        if counts["games"] % 25 == 0:
            print(counts, flush=True)
    return counts


def test_ten_games_two_worlds_in_a_real_browser(served, network_browser) -> None:
    counts = two_worlds(network_browser, *served, games=10)
    assert counts["games"] == 10 and counts["frames"] > 300 and counts["exchanges"] > 40, counts
    print(counts)


@pytest.mark.slow
def test_three_hundred_games_two_worlds_in_a_real_browser(served, network_browser) -> None:
    start = time.monotonic()
    counts = two_worlds(network_browser, *served, games=300)
    assert counts["games"] == 300 and counts["keeps_differ"] > 10, counts
    print(counts, f"{time.monotonic() - start:.0f} s")
