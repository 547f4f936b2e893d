"""The browser table in a real browser: ``uno-mk serve``'s app under uvicorn on 127.0.0.1 and
Debian's headless Chromium driven by Selenium play whole games by clicks (cards in the hand,
the decision buttons, "Play again"), with every frame the page receives captured and checked:
it shows this seat's hand and no other seat's card. Screenshots at 1280x800 and 800 px wide are
saved (``UNO_MK_SCREENSHOTS=DIR`` keeps them; docs/serve.md shows them).

Needs what the replay viewer's browser test needs (tests/test_replay_browser.py): chromium,
chromium-driver and selenium; it fails without them under CI or UNO_MK_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import test_replay_browser
from uno_mk_env import Rules
from uno_mk_env import actions as A

pytest.importorskip("uvicorn")

from uno_mk_env.serve.app import Server, create_app  # noqa: E402
from uno_mk_env.serve.table import TableConfig  # noqa: E402

REACHED: set[str] = set()  # the decision kinds clicked, over the games of this module
#: The one Chromium fixture (module-scoped: one browser for this file).
browser = test_replay_browser.browser

COMMON = {"play", "draw", "keep", "colour", "target", "challenge"}


def _kind(action: int) -> str:
    if action < A.DRAW:
        return "play"
    if action == A.DRAW:
        return "draw"
    if action == A.KEEP:
        return "keep"
    if A.COLOUR_BASE <= action < A.TARGET_BASE:
        return "colour"
    if A.TARGET_BASE <= action < A.CHALLENGE:
        return "target"
    return {A.CHALLENGE: "challenge", A.ACCEPT: "accept", A.CALL_UNO: "uno",
            A.CATCH_UNO: "catch"}[action]


@contextlib.contextmanager
def serving(server: Server) -> Iterator[tuple[Server, str]]:
    """``server``'s app under uvicorn on a free loopback port: ``(server, base address)``."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(create_app(server), host="127.0.0.1", port=port, log_level="warning",
                            ws_max_size=4096, ws="websockets-sansio")
    web = uvicorn.Server(config)
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not web.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield server, f"http://127.0.0.1:{port}"
    finally:
        web.should_exit = True
        thread.join(20)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The app under uvicorn on a free loopback port; yields (server, base address)."""
    with serving(Server()) as address:
        yield address


def _shots() -> Path | None:
    folder = os.environ.get("UNO_MK_SCREENSHOTS")
    return Path(folder) if folder else None


def _viewport(driver, width: int, height: int) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def _wait(driver, states: tuple[str, ...], timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        state = driver.execute_script("return document.body.dataset.state")
        if state in states:
            return state
        assert time.monotonic() < deadline, f"the page stayed {state!r}"
        time.sleep(0.03)


def play_by_clicks(driver, rng: random.Random, reached: set[str], shot=None) -> int:
    """Plays the page's game to its end by clicking; returns the clicks."""
    from selenium.webdriver.common.by import By

    clicks = 0
    while True:
        state = _wait(driver, ("deciding", "over"))
        if state == "over":
            return clicks
        ask = driver.execute_script("return document.body.dataset.ask")
        options = driver.find_elements(By.CSS_SELECTOR, "#hand [data-action], #actions "
                                                        "[data-action]")
        assert options, "a decision with nothing to click"
        actions = [int(o.get_attribute("data-action")) for o in options]
        codes = [o.get_attribute("data-code") for o in options]
        # prefer a kind not clicked yet, then a wild card (a colour to name follows)
        new = [i for i, a in enumerate(actions) if _kind(a) not in reached | REACHED]
        wild = [i for i, c in enumerate(codes) if c in ("W4", "WB")]
        pick = rng.choice(new or wild) if (new or wild) and rng.random() < 0.9 else \
            rng.randrange(len(options))
        if shot is not None:
            shot()
        reached.add(_kind(actions[pick]))
        options[pick].click()
        clicks += 1
        deadline = time.monotonic() + 30
        while driver.execute_script("return document.body.dataset.ask") == ask and \
                driver.execute_script("return document.body.dataset.state") == "deciding":
            assert time.monotonic() < deadline, "the click was not taken"
            time.sleep(0.02)


def check_frames(driver, seat: int) -> int:
    frames = [json.loads(f) for f in driver.execute_script("return window.unoFrames")]
    assert frames and not any(f["type"] == "error" for f in frames)
    for f in frames:
        if f["type"] != "state":
            continue
        hands = f["table"]["hands"]
        assert all(h is None for s, h in enumerate(hands) if s != seat)
        assert len(hands[seat]) == f["table"]["hand_sizes"][seat]
    return len(frames)


@pytest.mark.parametrize("players, options", [
    (2, {"uno_catch": "any_player"}), (4, {"uno_catch": "next_player", "uno_penalty": 2}),
])
def test_whole_games_by_clicks(served, browser, players, options) -> None:
    server, base = served
    agents = tuple(("strategic", "greedy", "random")[s % 3] for s in range(players - 1))
    table = server.add_table(TableConfig(Rules(num_players=players, **options), (0,), agents,
                                         seed=11 + players, pause=0.02))
    _viewport(browser, 1280, 800)
    browser.get(f"{base}/play/{table.tokens[0]}#capture")
    rng = random.Random(players)
    reached: set[str] = set()
    shots = _shots()
    taken = []

    def shot() -> None:
        if shots is not None and not taken and int(browser.execute_script(
                "return document.body.dataset.decision")) >= 6:
            shots.mkdir(parents=True, exist_ok=True)
            browser.save_screenshot(str(shots / f"serve-{players}p-1280.png"))
            _viewport(browser, 800, 1000)
            browser.save_screenshot(str(shots / f"serve-{players}p-800.png"))
            _viewport(browser, 1280, 800)
            taken.append(1)

    clicks = play_by_clicks(browser, rng, reached, shot)
    result = browser.find_element("id", "result").text
    assert result.startswith("Game over") and "point" in result
    deadline = time.monotonic() + 60
    while not browser.find_element("id", "session").text:
        assert time.monotonic() < deadline, "no duplicate score was shown"
        time.sleep(0.05)
    assert "strategic" in browser.find_element("id", "session").text
    if shots is not None:
        browser.save_screenshot(str(shots / f"serve-{players}p-over.png"))
    # play again, by the button, until every common kind was clicked (at most 5 more games)
    for _ in range(5):
        browser.find_element("id", "again").click()
        _wait(browser, ("deciding", "waiting"))
        clicks += play_by_clicks(browser, rng, reached)
        if COMMON <= reached | REACHED:
            break
    assert check_frames(browser, 0) > clicks
    assert "play" in reached and len(reached) >= 3, reached
    REACHED.update(reached)
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    server.remove(table)
    print(players, "players: reached", sorted(reached), clicks, "clicks")


def test_the_games_reached_every_common_decision_kind() -> None:
    """Over the games above (run first, in file order): play, draw, keep the drawn card, name a
    colour, aim a Green Shell, challenge a Wild Draw Four, each clicked at least once."""
    if not REACHED:
        pytest.skip("the games above did not run")
    assert COMMON <= REACHED, REACHED


def test_two_people_a_spectator_and_a_reload_in_one_browser(served, browser) -> None:
    """Two people in their own tabs and a spectator: each tab acts only when its seat decides,
    a reloaded tab rejoins its seat at the open decision, and the spectator's table shows no
    card face in any seat's panel."""
    from selenium.webdriver.common.by import By

    server, base = served
    table = server.add_table(TableConfig(Rules(num_players=3), (0, 1), ("greedy",), seed=21,
                                         pause=0.02))
    _viewport(browser, 1280, 800)
    tabs = {}
    for name, token in (("p0", table.tokens[0]), ("p1", table.tokens[1]),
                        ("spectator", table.spectator_token)):
        browser.switch_to.new_window("tab")
        browser.get(f"{base}/play/{token}#capture")
        tabs[name] = browser.current_window_handle
    reloaded = False
    clicks = {"p0": 0, "p1": 0}
    deadline = time.monotonic() + 120
    over = False
    while not over:
        assert time.monotonic() < deadline, "the game did not end"
        for name in ("p0", "p1"):
            browser.switch_to.window(tabs[name])
            state = browser.execute_script("return document.body.dataset.state")
            if state == "over":
                over = True
                break
            if state != "deciding":
                continue
            if not reloaded and clicks[name] == 2:  # leave and come back: the same decision
                ask = browser.execute_script("return document.body.dataset.ask")
                browser.refresh()
                _wait(browser, ("deciding",))
                assert browser.execute_script("return document.body.dataset.ask") == ask
                reloaded = True
            options = browser.find_elements(By.CSS_SELECTOR, "[data-action]")
            ask = browser.execute_script("return document.body.dataset.ask")
            options[0].click()
            clicks[name] += 1
            end = time.monotonic() + 30
            while browser.execute_script("return document.body.dataset.ask") == ask and \
                    browser.execute_script("return document.body.dataset.state") == "deciding":
                assert time.monotonic() < end
                time.sleep(0.02)
        time.sleep(0.02)
    assert reloaded and clicks["p0"] >= 2 and clicks["p1"] >= 1
    for name, seat in (("p0", 0), ("p1", 1)):
        browser.switch_to.window(tabs[name])
        check_frames(browser, seat)
    browser.switch_to.window(tabs["spectator"])
    _wait(browser, ("over", "waiting"))
    faces = browser.find_elements(By.CSS_SELECTOR, "#table g.seat g.card[data-code]")
    assert faces == [] and browser.find_elements(By.CSS_SELECTOR, "[data-action]") == []
    assert "spectator" in browser.find_element("id", "who").text
    for handle in tabs.values():
        browser.switch_to.window(handle)
        browser.close()
    browser.switch_to.window(browser.window_handles[0])
    server.remove(table)
