"""The replay viewer in a real browser: Debian's headless Chromium driven by Selenium opens the
page written by ``uno-mk replay`` from disk, steps through every decision with the keyboard, the
buttons and the slider, and checks what it displays against the engine's own state at sampled
steps, that a seat's view displays no other seat's hidden cards, and that the page logs no
console errors. It saves a screenshot. At 800 and 1280 px (issue 34) the replay page and the
documentation's environment page (built with mkdocs, as ``make docs`` builds it) are measured:
nothing overflows sideways, no name in a table is broken mid-word, the replay's table keeps
most of the window and its ``last:`` line shows in full.

Needs ``chromium`` and ``chromium-driver`` (``apt-get install -y chromium chromium-driver``) and
the ``selenium`` package (test extra). Without them the test fails with a message saying so when
``CI`` or ``UNO_MK_REQUIRE_BROWSER=1`` is set (``.ci/run`` installs the browser), and is skipped
with that reason elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from uno_mk_env import Game, Rules
from uno_mk_env.cli.app import main
from uno_mk_env.engine.actions import NUM_ACTIONS
from uno_mk_env.engine.cards import kind
from uno_mk_env.evaluation.replay_format import load_recording

CHROMIUM = ("/usr/bin/chromium", "chromium", "chromium-browser")
CHROMEDRIVER = ("/usr/bin/chromedriver", "chromedriver")
INSTALL = ("apt-get install -y chromium chromium-driver && pip install -e '.[test]' "
           "(selenium)")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1600,1000")
ROOT = Path(__file__).resolve().parents[1]
AGENTS = f"strategic,greedy,ppo:{ROOT / 'models' / 'ppo_4p.npz'}"
SEED = 6  # a 3-player game of 55 decisions with every kind of step


def _find(candidates: tuple[str, ...]) -> str | None:
    for c in candidates:
        found = shutil.which(c)
        if found:
            return found
    return None


def _unavailable(reason: str) -> None:
    required = os.environ.get("UNO_MK_REQUIRE_BROWSER") == "1" or bool(os.environ.get("CI"))
    message = f"the replay browser test needs {reason}: {INSTALL}"
    if required:
        pytest.fail(message + " (required here: CI or UNO_MK_REQUIRE_BROWSER=1 is set)",
                    pytrace=False)
    pytest.skip(message)


def chromium(folder: Path, logs: tuple[str, ...] = ("browser",)):
    """Debian's headless Chromium under Selenium (skipped or failed as :func:`_unavailable`
    says when it is missing), with a fresh profile in ``folder`` and the ``logs`` kept
    (``"performance"``: the DevTools network log); a generator: quit after its one ``yield``."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("the selenium package")
    binary, driver_path = _find(CHROMIUM), _find(CHROMEDRIVER)
    if binary is None or driver_path is None:
        _unavailable("Debian's chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={folder}")
    options.set_capability("goog:loggingPrefs", dict.fromkeys(logs, "ALL"))
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    yield from chromium(tmp_path_factory.mktemp("chromium-profile"))


@pytest.fixture(scope="module")
def replay(tmp_path_factory):
    """The page of one 3-player game (strategic, greedy, ppo) and the engine's state before
    every decision, re-played from the recorded actions."""
    folder = tmp_path_factory.mktemp("replay")
    html, data = folder / "game.html", folder / "game.json"
    code = main(["replay", "--agents", AGENTS, "--players", "3", "--seed", str(SEED),
                 "--out", str(html), "--json", str(data)])
    assert code == 0
    game = load_recording(data)["games"][0]
    g = Game(Rules.from_dict(game["rules"]), seed=game["seed"])
    states = []
    for step in game["steps"]:
        d = g.to_dict()
        states.append({
            "hands": [sorted(h, key=kind) for h in d["hands"]],
            "top": d["discard_pile"][-1], "colour": d["active_colour"],
            "current": g.current_player, "phase": g.phase_name,
            "legal": list(g.legal_action_ids()),
        })
        if step["actor"] >= 0:
            g.step(step["spectator"]["action"])
    return html, game, states


#: One call reads everything the checks need from the page.
READ = """
const svg = document.getElementById('table');
const seats = [...svg.querySelectorAll('g.seat')].map((g) => ({
  seat: Number(g.dataset.seat), size: Number(g.dataset.handSize),
  faces: [...g.querySelectorAll('g.card[data-code]')].map((c) => c.dataset.code),
  backs: g.querySelectorAll('g.card.back').length}));
const legal = [...document.querySelectorAll('#legal li[data-action]')];
return {step: Number(svg.dataset.step), view: svg.dataset.view,
  current: Number(svg.dataset.currentPlayer), phase: svg.dataset.phase,
  top: svg.dataset.topCard, colour: svg.dataset.activeColour,
  topShown: svg.querySelector('g.top-card').dataset.code,
  seats: seats, legal: legal.map((li) => Number(li.dataset.action)),
  chosen: legal.filter((li) => li.classList.contains('chosen'))
    .map((li) => Number(li.dataset.action)),
  slider: Number(document.getElementById('slider').value),
  log: document.getElementById('log').innerText};
"""


def read(driver) -> dict:
    return driver.execute_script(READ)


def view_steps(game: dict, view: str) -> list[int]:
    """The steps a view shows (seat_steps): a seat's view skips other seats' hidden KEEPs."""
    return [i for i, step in enumerate(game["steps"])
            if view == "spectator" or not step.get("hidden") or str(step["actor"]) == view]


def check_against_engine(page: dict, state: dict, game: dict, view: str) -> None:
    """What the page displays at this step (its position among the steps the view shows)
    equals the engine's state."""
    step = game["steps"][view_steps(game, view)[page["step"]]]
    assert page["top"] == page["topShown"] == state["top"]
    assert page["colour"] == state["colour"]
    assert page["current"] == state["current"] and page["phase"] == state["phase"]
    for seat in page["seats"]:
        s = seat["seat"]
        assert seat["size"] == len(state["hands"][s])
        if view == "spectator" or str(s) == view:
            assert seat["faces"] == state["hands"][s] and seat["backs"] == 0
        else:  # another seat in a seat's view: card backs only
            assert seat["faces"] == [] and seat["backs"] == len(state["hands"][s])
    if step["actor"] >= 0 and view in ("spectator", str(step["actor"])):
        assert page["legal"] == state["legal"]
        assert page["chosen"] == [step["spectator"]["action"]]
    else:
        assert page["legal"] == [] and page["chosen"] == []


def console_errors(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_replay_page_in_chromium(browser, replay, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    html, game, states = replay
    last = len(game["steps"]) - 1
    assert last == game["result"]["decisions"] > 20
    browser.get(html.as_uri())
    assert browser.title.startswith("UNO Mario Kart replay")
    body = browser.find_element(By.TAG_NAME, "body")
    sampled = set(range(0, last + 1, 7)) | {last}

    # the keyboard: every decision forward, then back
    page = read(browser)
    assert page["step"] == 0 and page["view"] == "spectator"
    check_against_engine(page, states[0], game, "spectator")
    for i in range(1, last + 1):
        body.send_keys(Keys.ARROW_RIGHT)
        page = read(browser)
        assert page["step"] == page["slider"] == i
        if i in sampled:
            check_against_engine(page, states[i], game, "spectator")
    body.send_keys(Keys.ARROW_RIGHT)  # past the end: stays
    assert read(browser)["step"] == last
    for i in range(last - 1, -1, -1):
        body.send_keys(Keys.ARROW_LEFT)
        assert read(browser)["step"] == i
    body.send_keys(Keys.END)
    assert read(browser)["step"] == last
    body.send_keys(Keys.HOME)
    assert read(browser)["step"] == 0

    # the buttons: every decision forward, then back
    nxt, prev = browser.find_element(By.ID, "next"), browser.find_element(By.ID, "prev")
    for i in range(1, last + 1):
        nxt.click()
        page = read(browser)
        assert page["step"] == i
        if i in sampled:
            check_against_engine(page, states[i], game, "spectator")
    for i in range(last - 1, -1, -1):
        prev.click()
        assert read(browser)["step"] == i
    browser.find_element(By.ID, "last").click()
    assert read(browser)["step"] == last
    browser.find_element(By.ID, "first").click()
    assert read(browser)["step"] == 0

    # the slider
    for i in sorted(sampled):
        browser.execute_script(
            "const s = document.getElementById('slider'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('input'));", i)
        page = read(browser)
        assert page["step"] == i
        check_against_engine(page, states[i], game, "spectator")

    # the policy's probabilities are shown for the ppo seat's decisions
    ppo_step = next(i for i, s in enumerate(game["steps"]) if s["spectator"].get("probs"))
    browser.execute_script(
        "const s = document.getElementById('slider'); s.value = arguments[0];"
        "s.dispatchEvent(new Event('input'));", ppo_step)
    shown = browser.find_elements(By.CSS_SELECTOR, "#legal li .p")
    assert [float(p.text) for p in shown] == pytest.approx(
        game["steps"][ppo_step]["spectator"]["probs"], abs=6e-4)

    # each seat's view: at every step, no other seat's card face is displayed
    view = Select(browser.find_element(By.ID, "view"))
    for seat in range(game["players"]):
        view.select_by_value(str(seat))
        browser.find_element(By.ID, "first").click()
        body.send_keys(Keys.HOME)
        others = [n for s, n in enumerate(game["names"]) if s != seat]
        for pos, i in enumerate(view_steps(game, str(seat))):
            page = read(browser)
            assert page["step"] == pos and page["view"] == str(seat)
            check_against_engine(page, states[i], game, str(seat))
            for name in others:  # the log names no card another seat drew
                assert f"{name} drew a card (" not in page["log"]
            body.send_keys(Keys.ARROW_RIGHT)
        if seat == 1:
            browser.find_element(By.ID, "prev").click()
            browser.save_screenshot(str(tmp_path / "seat_view.png"))
    view.select_by_value("spectator")
    body.send_keys(Keys.HOME)
    for _ in range(3):
        body.send_keys(Keys.ARROW_RIGHT)

    # a link names a game, a decision and a view; stepping keeps the address up to date
    # The page is already open, so this is a same-document navigation: its hashchange is
    # asynchronous, and the focus may still be on the view <select> (which keeps arrow keys).
    from selenium.webdriver.support.ui import WebDriverWait

    at = len(view_steps(game, "2")) - 4
    browser.get(html.as_uri() + f"#game=0&step={at}&view=2")
    WebDriverWait(browser, 10).until(lambda d: read(d)["step"] == at)
    page = read(browser)
    assert (page["step"], page["view"]) == (at, "2")
    check_against_engine(page, states[view_steps(game, "2")[at]], game, "2")
    browser.execute_script("document.activeElement && document.activeElement.blur()")
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.ARROW_RIGHT)
    assert browser.execute_script("return location.hash") == f"#game=0&step={at + 1}&view=2"
    browser.execute_script("location.hash = '#step=4'")  # hashchange is asynchronous
    WebDriverWait(browser, 10).until(lambda d: read(d)["step"] == 4)
    assert read(browser)["view"] == "spectator"

    shot = tmp_path / "replay.png"
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000 and (tmp_path / "seat_view.png").is_file()
    assert console_errors(browser) == []


def test_a_broken_page_would_be_noticed(browser, tmp_path):
    """The console check sees a script error (so the test above means something)."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><title>x</title><script>undefinedFunction();</script>")
    browser.get_log("browser")  # drop earlier entries
    browser.get(page.as_uri())
    errors = console_errors(browser)
    assert errors and "undefinedFunction" in json.dumps(errors)


def test_a_missing_browser_fails_in_ci_and_skips_elsewhere(monkeypatch):
    monkeypatch.delenv("UNO_MK_REQUIRE_BROWSER", raising=False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="needs Debian's chromium.*apt-get install"):
        _unavailable("Debian's chromium and chromium-driver")
    monkeypatch.delenv("CI")
    monkeypatch.setenv("UNO_MK_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="UNO_MK_REQUIRE_BROWSER=1"):
        _unavailable("the selenium package")
    monkeypatch.delenv("UNO_MK_REQUIRE_BROWSER")
    with pytest.raises(pytest.skip.Exception, match="needs the selenium package"):
        _unavailable("the selenium package")


#: Everything a view displays: the header, the table, the decision panel and the log, the
#: counter, the slider, the address and the view menu.
DISPLAYED = """
const q = (id) => document.getElementById(id);
return {header: document.querySelector('header').outerHTML,
  main: document.querySelector('main').outerHTML, counter: q('counter').textContent,
  slider: [q('slider').value, q('slider').max], hash: location.hash, view: q('view').value,
  views: q('view').innerHTML, footer: document.querySelector('footer').outerHTML};
"""


def walk(driver, uri: str) -> list[dict]:
    """What the page at ``uri`` displays at each of its steps, walked with the next button,
    then with End and Home."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver.get(uri)
    seen = [driver.execute_script(DISPLAYED)]
    nxt = driver.find_element(By.ID, "next")
    for _ in range(int(seen[-1]["slider"][1])):  # bounded: a page that does not step fails
        if seen[-1]["slider"][0] == seen[-1]["slider"][1]:
            break
        nxt.click()
        seen.append(driver.execute_script(DISPLAYED))
    assert seen[-1]["slider"][0] == seen[-1]["slider"][1], "the next button does not step"
    body = driver.find_element(By.TAG_NAME, "body")
    for key in (Keys.HOME, Keys.END):
        body.send_keys(key)
        seen.append(driver.execute_script(DISPLAYED))
    return seen


def test_a_seat_view_cannot_tell_a_kept_card_from_an_unplayable_one(browser, tmp_path,
                                                                     monkeypatch):
    """Issue 24 item 1 in the browser: seats 1 and 2's views of the page (every step: table,
    decision panel, event log, counter, slider, address, result line) display the same whether
    seat 0 kept a playable drawn card or drew an unplayable one; the drawer's view and the
    spectator's show the KEEP."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    from test_replay import kept_or_unplayable

    from uno_mk_env.evaluation.replay import recording
    from uno_mk_env.evaluation.replay_page import write_html

    pages = {card: write_html(recording([kept_or_unplayable(card, monkeypatch)]),
                              tmp_path / f"{card}.html").as_uri() for card in ("R7", "B7")}
    for seat in (1, 2):
        kept, unplayable = (walk(browser, pages[card] + f"#view={seat}") for card in pages)
        assert len(kept) == 3 + 2 and kept[-1]["slider"] == ["2", "2"]
        assert kept == unplayable
        assert "P0 script drew a card" in kept[1]["main"]  # the "last" line after the draw
        assert "2 decisions" in kept[0]["header"]
    drawer = walk(browser, pages["R7"] + "#view=0")
    assert drawer[-1]["slider"] == ["3", "3"] and "kept it" in drawer[2]["main"]
    spectator = walk(browser, pages["R7"])
    assert spectator[-1]["slider"] == ["3", "3"] and "3 decisions" in spectator[0]["header"]
    # from the spectator's hidden step, seat 1's view opens at the draw before it
    browser.get(pages["R7"] + "#step=1")
    Select(browser.find_element(By.ID, "view")).select_by_value("1")
    assert read(browser)["step"] == 0 and read(browser)["view"] == "1"
    assert console_errors(browser) == []


# ------------------------------------------------------------------ layout at 800 and 1280 px
WIDTHS = (800, 1280)  # a small laptop window and a full HD one, both 1000 px high


@pytest.fixture
def viewport(browser):
    """Sets the page's viewport to ``(width, 1000)`` CSS pixels; restores it afterwards."""

    def size(width: int) -> None:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": False})

    yield size
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The documentation site, built as ``make docs`` builds it (mkdocs, the docs extra)."""
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                          "--site-dir", str(out)], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return out


#: Layout facts of any page: horizontal overflow of the document and of every element that
#: scrolls or clips sideways (a code block, a table's wrapper), by CSS selector.
OVERFLOW = """
const doc = document.documentElement;
const clipped = [...document.querySelectorAll(arguments[0])]
  .filter((e) => e.scrollWidth > e.clientWidth + 1)
  .map((e) => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 60));
return {inner: window.innerWidth, scroll: doc.scrollWidth, clipped: clipped};
"""

#: Inline code in the docs' tables that the browser broke across lines (a name split mid-word
#: has two boxes with no space between its halves).
BROKEN_NAMES = """
return [...document.querySelectorAll('.md-typeset table code')]
  .filter((c) => c.getClientRects().length > 1 && !/\\s/.test(c.textContent))
  .map((c) => c.textContent);
"""


def overflow(driver, selector: str) -> dict:
    return driver.execute_script(OVERFLOW, selector)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_environment_page_reads_at_800_and_1280_px(browser, viewport, site, width,
                                                       tmp_path):
    """Issue 34: no argument name broken mid-word, the signature and every table inside the
    page (no sideways scrolling anywhere), the action space's shape and range apart."""
    from selenium.webdriver.common.by import By

    viewport(width)
    browser.get((site / "environment.html").as_uri())
    page = overflow(browser, ".md-typeset pre > code, .md-typeset__table, .md-typeset__scrollwrap")
    assert page["inner"] == width and page["scroll"] <= width, page
    assert page["clipped"] == [], page["clipped"]
    assert browser.execute_script(BROKEN_NAMES) == []
    names = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "table td code")]
    assert {"num_players", "render_seat", "illegal_reward", "active_colour"} <= set(names)
    signature = browser.find_element(By.CSS_SELECTOR, "#arguments ~ div pre code").text
    assert signature.startswith("uno_mario_kart_v0.env(") and "render_seat=None" in signature
    rows = {r.find_element(By.CSS_SELECTOR, "td:first-child").text:
            r.find_element(By.CSS_SELECTOR, "td:last-child").text
            for r in browser.find_elements(By.CSS_SELECTOR, "table tr") if
            len(r.find_elements(By.TAG_NAME, "td")) == 2}
    assert rows["Action Shape"] == "()"
    assert rows["Action Values"].startswith(f"[0, {NUM_ACTIONS - 1}]")
    assert browser.save_screenshot(str(tmp_path / f"environment_{width}.png"))


#: The replay page's layout: the table's width, the "last:" line's box and text, and whether
#: every text of the table lies inside its drawing (none cut at the SVG's edge).
REPLAY_LAYOUT = """
const svg = document.getElementById('table'), line = document.getElementById('last-line');
const box = svg.viewBox.baseVal, r = line.getBoundingClientRect();
const outside = [...svg.querySelectorAll('text')].filter((t) => {
  const b = t.getBBox();
  return b.x < 0 || b.y < 0 || b.x + b.width > box.width || b.y + b.height > box.height;
}).map((t) => t.textContent);
return {table: svg.getBoundingClientRect().width, last: line.textContent,
  left: r.left, right: r.right, top: r.top, bottom: r.bottom,
  clippedLast: line.scrollWidth > line.clientWidth + 1, outside: outside,
  inner: window.innerWidth, innerHeight: window.innerHeight};
"""


@pytest.mark.parametrize("width", WIDTHS)
def test_the_replay_page_reads_at_800_and_1280_px(browser, viewport, replay, width, tmp_path):
    """Issue 34: at 800 px the table keeps most of the window (it had shrunk to ~280 px), at
    both widths nothing overflows sideways and the "last:" line of the longest events shows in
    full, inside the window without scrolling."""
    html, game, _ = replay
    steps = view_steps(game, "spectator")
    longest = max(range(len(steps)),
                  key=lambda i: len(game["steps"][steps[i]]["spectator"]["table"]["last"]))
    last = game["steps"][steps[longest]]["spectator"]["table"]["last"]
    assert len(last) > 70  # longer than the image's line (the test would prove nothing)
    viewport(width)
    browser.get_log("browser")  # drop earlier pages' entries
    browser.get(html.as_uri() + f"#step={longest}")
    assert read(browser)["step"] == longest
    page = overflow(browser, "#controls, main, aside, section, #board")
    assert page["inner"] == width and page["scroll"] <= width, page
    assert page["clipped"] == [], page["clipped"]
    layout = browser.execute_script(REPLAY_LAYOUT)
    assert layout["table"] > 0.6 * width, layout
    assert layout["last"] == "last: " + last and "\u2026" not in layout["last"]
    assert 0 <= layout["left"] and layout["right"] <= width and not layout["clippedLast"]
    assert 0 <= layout["top"] and layout["bottom"] <= layout["innerHeight"], layout
    assert layout["outside"] == [], layout["outside"]
    assert browser.save_screenshot(str(tmp_path / f"replay_{width}.png"))
    assert console_errors(browser) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_no_documentation_page_breaks_a_name_in_a_table(browser, viewport, site, width):
    """docs/stylesheets/extra.css on every page: inline code in a table (an argument, an
    option, ``--workers``, ``openspiel-ismcts:100``) is never split across lines."""
    viewport(width)
    pages = sorted(p for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) > 20
    broken = {}
    for page in pages:
        browser.get(page.as_uri())
        if names := browser.execute_script(BROKEN_NAMES):
            broken[page.relative_to(site).as_posix()] = names
    assert broken == {}
