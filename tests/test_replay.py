"""Replays (evaluation/replay.py, cli/replay.py): recordings built from the engine, each seat's
part holding only what that seat may know, the self-contained page, tournament replays and the
``uno-mk replay`` command. The page itself is driven in a browser by test_replay_browser.py."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from uno_mk_env import Game, Rules
from uno_mk_env.agents import make_agent
from uno_mk_env.cli.app import main
from uno_mk_env.engine.cards import CODES, kind
from uno_mk_env.engine.events import event_for
from uno_mk_env.evaluation.replay import record_game, record_games, write_json
from uno_mk_env.evaluation.replay_format import FORMAT, ReplayError, load_recording
from uno_mk_env.evaluation.replay_page import replay_html
from uno_mk_env.render.table import table_data
from uno_mk_env.render.text import events_text

ROOT = Path(__file__).resolve().parents[1]
PPO = str(ROOT / "models" / "ppo_4p.npz")


@pytest.fixture(scope="module")
def recording() -> dict:
    return record_games(["strategic", "greedy", f"ppo:{PPO}"], 3, seed=5, games=2)


def engine_replay(game: dict) -> list[Game]:
    """The game re-played on the engine from the recorded actions: the state before every
    step (copies)."""
    g = Game(Rules.from_dict(game["rules"]), seed=game["seed"])
    states = []
    for step in game["steps"]:
        states.append(g.clone())
        if step["actor"] >= 0:
            g.step(step["spectator"]["action"])
    return states


def test_a_recording_is_the_engines_game(recording):
    assert recording["format"] == FORMAT and len(recording["games"]) == 2
    for game in recording["games"]:
        states = engine_replay(game)
        assert states[-1].game_over and game["result"]["winner"] == states[-1].winner
        assert game["result"]["decisions"] == len(game["steps"]) - 1
        for step, g in zip(game["steps"], states):
            t = step["spectator"]["table"]
            d = g.to_dict()
            assert t["hands"] == [sorted(h, key=kind) for h in d["hands"]]
            assert t["top_card"] == d["discard_pile"][-1]
            assert t["active_colour"] == d["active_colour"]
            assert t["current_player"] == g.current_player
            if step["actor"] >= 0:
                assert step["actor"] == g.current_player and step["phase"] == g.phase_name
                assert [a for a, _ in step["spectator"]["legal"]] == list(g.legal_action_ids())


def test_each_seat_part_is_built_from_that_seats_view_only(recording):
    game = recording["games"][0]
    names = game["names"]
    states = engine_replay(game)
    for i, (step, g) in enumerate(zip(game["steps"], states)):
        for s, part in enumerate(step["seats"]):
            t = part["table"]
            assert t == table_data(g, s, names, t["last"])
            assert [h is None for h in t["hands"]] == [x != s for x in range(game["players"])]
            assert ("legal" in part) == (s == step["actor"])  # options only for the decider
            if i + 1 < len(states):  # what the decision caused, as this seat saw it
                after = states[i + 1]
                new = after.events[g.event_count - after.events_start:]
                seen = [e2 for e in new if (e2 := event_for(e, s)) is not None]
                assert part["events"] == events_text(seen, names, s)


def test_no_seat_part_names_another_seats_drawn_cards(recording):
    for game in recording["games"]:
        for step in game["steps"]:
            for s, part in enumerate(step["seats"]):
                text = json.dumps(part)
                for t, name in enumerate(game["names"]):
                    if t != s:
                        cards = r" (drew a card|draws \d+) \((?:[RYGB][0-9SRD]|W[4B])[ )]"
                        assert not re.search(re.escape(name) + cards, text), (s, t)


def test_probabilities_of_a_policy_are_recorded(recording):
    seen = 0
    for game in recording["games"]:
        ppo_seat = game["agents"].index(f"ppo:{PPO}")
        for step in game["steps"]:
            probs = step["spectator"].get("probs")
            if step["actor"] == ppo_seat:
                legal = [a for a, _ in step["spectator"]["legal"]]
                assert probs is not None and abs(sum(probs) - 1) < 1e-3
                assert legal[int(np.argmax(probs))] == step["spectator"]["action"]
                seen += 1
            elif step["actor"] >= 0:
                assert probs is None
    assert seen > 0


def test_recording_is_deterministic_and_json(tmp_path, recording):
    again = record_games(["strategic", "greedy", f"ppo:{PPO}"], 3, seed=5, games=2)
    assert json.dumps(again) == json.dumps(recording)
    path = write_json(recording, tmp_path / "r.json")
    assert load_recording(path) == json.loads(json.dumps(recording))


def test_game_i_of_a_recording_is_the_game_of_seed_plus_i():
    """The documented deal contract (``--seed S``: game i uses seed S + i): game i of a
    recording is ``Game(rules, seed=S + i)`` and the same game a one-game recording of seed
    S + i holds (its agents seeded alike)."""
    rec = record_games(["greedy", "random"], 3, seed=4, games=3)
    for i, game in enumerate(rec["games"]):
        assert game["seed"] == 4 + i
        assert engine_replay(game)[0].to_dict() == Game(Rules(num_players=3), seed=4 + i).to_dict()
        alone = record_games(["greedy", "random"], 3, seed=4 + i)["games"]
        assert json.dumps(alone) == json.dumps([game])


def test_the_page_is_self_contained(recording):
    html = replay_html(recording)
    assert html.startswith("<!DOCTYPE html>")
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls  # a namespace name, never fetched
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=\"(?!data:)", html)
    assert html.count("<script") == 3


def test_names_cannot_break_out_of_the_page():
    rules = Rules(num_players=2)
    players = [make_agent("greedy", seed=0), make_agent("random", seed=1)]
    game = record_game(players, rules, 3, labels=["</script><b>x", "a&b\"c"])
    html = replay_html({"format": FORMAT, "version": 1, "games": [game]})
    assert "</script><b>" not in html and html.count("</script>") == 3


@pytest.mark.parametrize("content,message", [
    (None, "cannot read replay file"),
    ("{not json", "is not JSON"),
    ('{"format": "other"}', "is not a replay recording"),
    ('{"format": "uno-mk-replay", "version": 99, "games": []}', "version 99"),
    ('{"format": "uno-mk-replay", "version": 1, "games": [{"players": 2}]}', "has no 'names'"),
])
def test_bad_recordings_are_refused_in_one_line(tmp_path, content, message):
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ReplayError, match=message) as e:
        load_recording(path)
    assert "\n" not in str(e.value)


# ------------------------------------------------------------------------------- tournaments
def test_a_tournament_records_its_first_games(tmp_path):
    from uno_mk_env.evaluation.tournament import TournamentResult, run_tournament

    result = run_tournament(["greedy", "random"], num_players=2, games=4, seed=3, replays=3)
    assert [g["index"] for g in result.replays] == [0, 1, 2]
    for game, record in zip(result.replays, result.records):
        assert game["result"]["winner"] == record.winner
        assert game["result"]["decisions"] == record.decisions == len(game["steps"]) - 1
        labels = [result.entrants[e] for e in record.seats]
        assert game["agents"] == labels
    paths = result.save(tmp_path, plot=False)
    assert load_recording(paths["replays"])["games"] == json.loads(json.dumps(result.replays))
    assert load_recording(tmp_path)["games"][0]["index"] == 0  # a folder finds replays.json
    plain = run_tournament(["greedy", "random"], num_players=2, games=4, seed=3)
    assert plain.replays is None and plain == result  # replays change no result
    assert "replays" not in plain.save(tmp_path / "plain", plot=False)
    assert isinstance(result, TournamentResult)
    with pytest.raises(ValueError, match="replays"):
        run_tournament(["greedy"], num_players=2, games=2, replays=-1)


# --------------------------------------------------------------------------------- commands
def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_replay_command_writes_a_page_and_a_recording(tmp_path):
    html, data = tmp_path / "r.html", tmp_path / "r.json"
    code, out, err = run_cli("replay", "--agents", "greedy,random", "--players", "3",
                             "--seed", "4", "--games", "2", "--out", str(html), "--json",
                             str(data))
    assert code == 0, err
    assert f"Replay written to {html} (2 games" in out
    rec = load_recording(data)
    assert [g["seed"] for g in rec["games"]] == [4, 5] and rec["games"][0]["players"] == 3
    assert "UNO Mario Kart replay" in html.read_text()
    again = tmp_path / "again.html"
    code, out, err = run_cli("replay", "--from", str(data), "--game", "1", "--out", str(again))
    assert code == 0, err and "(1 game," in out
    shown = json.loads(re.search(r'id="replay-data">(.*?)</script>', again.read_text()).group(1))
    assert shown["games"] == [rec["games"][1]]


@pytest.mark.parametrize("argv,message", [
    (["--from", "missing.json"], "cannot read replay file"),
    (["--agents", "nobody"], "unknown agent 'nobody'"),
    (["--agents", "greedy", "--players", "11"], "bad player count 11"),
    (["--agents", "greedy", "--game", "0"], "--game selects games of a recording"),
    (["--agents", "greedy", "--rule", "colours=5"], "unknown rule option 'colours'"),
])
def test_replay_command_bad_arguments_are_one_line(tmp_path, argv, message):
    argv = [a if a != "missing.json" else str(tmp_path / a) for a in argv]
    code, out, err = run_cli("replay", *argv, "--out", str(tmp_path / "x.html"))
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "x.html").exists()


def test_replay_command_from_a_tournament(tmp_path):
    folder = tmp_path / "t"
    code, out, err = run_cli("tournament", "--agents", "greedy,random", "--players", "2",
                             "--games", "2", "--seed", "1", "--out", str(folder), "--no-plot",
                             "--replays", "2")
    assert code == 0, err
    assert (folder / "replays.json").is_file()
    code, out, err = run_cli("replay", "--from", str(folder), "--game", "5")
    assert code == 2 and "game 5 is not in the recording (games 0-1)" in err
    code, out, err = run_cli("replay", "--from", str(folder))
    assert code == 0, err
    assert (folder / "replays.html").is_file() and "(2 games," in out


def test_codes_in_tables_are_card_codes(recording):
    table = recording["games"][0]["steps"][0]["spectator"]["table"]
    assert set(table["hands"][0]) <= set(CODES) and table["top_card"] in CODES


def test_replays_need_no_extra(tmp_path):
    """Recording and writing a page need only the base install (numpy): no Pillow, pygame,
    scipy, gymnasium, pettingzoo, torch or matplotlib."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "for m in ('PIL', 'pygame', 'scipy', 'gymnasium', 'pettingzoo', 'torch', 'matplotlib',\n"
        "          'openskill', 'rich', 'tqdm'):\n"
        "    sys.modules[m] = None  # as if not installed\n"
        "from uno_mk_env.cli.app import main\n"
        "argv = ['replay', '--agents', 'greedy,random', '--seed', '1', '--out', 'r.html']\n"
        "sys.exit(main(argv))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r.html").is_file() and "Replay written to r.html" in proc.stdout


# ------------------------------------------------------------ hostile recordings (issue 24)
def _set(data: dict, path: str, value) -> dict:
    """A deep copy of ``data`` with the field at ``path`` (``games.0.steps.3.seats``) set to
    ``value`` (``_DELETE``: removed)."""
    import copy

    out = copy.deepcopy(data)
    *parents, last = path.split(".")
    node = out
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    key = int(last) if isinstance(node, list) else last
    if value is _DELETE:
        del node[key]
    else:
        node[key] = value
    return out


_DELETE = object()
G = "games.0"
S0 = "games.0.steps.0"  # the first decision; {actor}: the seat that made it, {other}: another
BAD_FIELDS = [
    # the four cases of issue 24 item 8 (the deep one is in the next test)
    (f"{G}.title", 5, "games[0].title must be a string"),
    (f"{S0}.seats", [None, None, None], "games[0].steps[0].seats[0] must be an object"),
    (f"{S0}.seats.{{actor}}", None, "games[0].steps[0].seats[{actor}] must be an object"),
    (f"{G}.result", None, "games[0].result must be an object"),
    # every other field, typed and bounded
    (f"{G}.title", "x" * 20_000, "at most 10000 characters"),
    (f"{G}.players", 11, "players must be an int from 2 to 10"),
    (f"{G}.players", "3", "players must be an int"),
    (f"{G}.players", True, "players must be an int"),
    (f"{G}.names", ["a", "b"], "names must be a list of 3 strings"),
    (f"{G}.names", None, "names must be a list of 3 strings"),
    (f"{G}.agents", [1, 2, 3], "agents must be a list of 3 strings"),
    (f"{G}.seed", -1, "seed must be a non-negative int"),
    (f"{G}.seed", 1.5, "seed must be a non-negative int"),
    (f"{G}.agent_seeds", [1, 2], "agent_seeds must be a list of 3"),
    (f"{G}.max_steps", 0, "max_steps must be a positive int"),
    (f"{G}.index", -2, "index must be a non-negative int"),
    (f"{G}.rules", None, "rules must be an object"),
    (f"{G}.rules.hand_size", "x" * 500, "games[0].rules:"),
    (f"{G}.rules.num_players", 4, "rules are for 4 players, the game has 3"),
    (f"{G}.steps", _DELETE, "must be a list of 1 to"),
    (f"{G}.result.winner", 3, "winner must be a seat 0-2 or null"),
    (f"{G}.result.scores", [0, 0], "scores must be a list of 3"),
    (f"{G}.result.end", "lost", "end must be win or capped or no_winner"),
    (f"{G}.result.end", "capped", "disagree"),
    (f"{G}.result.decisions", "many", "decisions must be a non-negative int"),
    (f"{G}.steps", [], "steps must be a list of 1 to"),
    (f"{S0}", None, "games[0].steps[0] must be an object"),
    (f"{S0}.actor", 7, "actor must be a seat 0-2"),
    (f"{S0}.phase", "fly", "phase must be a phase name"),
    (f"{S0}.spectator", None, "spectator must be an object"),
    (f"{S0}.spectator.events", ["x"], "events must be a string"),
    (f"{S0}.spectator.table", None, "spectator.table must be an object"),
    (f"{S0}.spectator.table.hands", [["ZZ"], [], []], "hands must be a list of 3 hands"),
    (f"{S0}.spectator.table.hands", [["R1"] * 113, [], []], "hands must be a list of 3 hands"),
    (f"{S0}.spectator.table.top_card", "Q9", "top_card must be a card code"),
    (f"{S0}.spectator.table.top_card", ["R1"], "top_card must be a card code"),
    (f"{S0}.spectator.table.active_colour", "P", "active_colour must be R or Y or G or B"),
    (f"{S0}.spectator.table.direction", 0, "direction must be 1 or -1"),
    (f"{S0}.spectator.table.phase", "fly", "phase must be a phase name"),
    (f"{S0}.spectator.table.viewer", 0, "viewer must be null"),
    (f"{S0}.seats.0.table.viewer", 1, "seats[0].table.viewer must be 0"),
    (f"{S0}.spectator.table.hand_sizes", [1, 2, 500], "hand_sizes must be a list of 3 ints"),
    (f"{S0}.spectator.table.uno_called", [0, 0, 0], "uno_called must be a list of 3 booleans"),
    (f"{S0}.spectator.table.draw_pile", 10**30, "draw_pile must be an int from 0 to 112"),
    (f"{S0}.spectator.table.drawn_card", 5, "drawn_card must be null or a card code"),
    (f"{S0}.spectator.table.game_over", "no", "game_over must be a boolean"),
    (f"{S0}.spectator.table.winner", 9, "winner must be null or a seat"),
    (f"{S0}.spectator.table.item", "Mushroom", "item must be an object"),
    (f"{S0}.spectator.table.item", {"seat": 0, "item": "Star", "effect": "", "events": ""},
     "item.item must be an item name"),
    (f"{S0}.spectator.table.last", None, "last must be a string"),
    (f"{S0}.spectator.legal", [[99, "fly"]], "legal must be a list of 1 to 73"),
    (f"{S0}.spectator.legal", None, "legal must be a list of 1 to 73"),
    (f"{S0}.spectator.action", 72, "action must be one of its legal action ids"),
    (f"{S0}.spectator.probs", [0.5], "probs must be null or"),
    (f"{S0}.spectator.probs", "x", "probs must be null or"),
    (f"{S0}.seats.{{other}}.legal", [[0, "x"]], "seats[{other}] shows a decision it did not"),
    (f"{S0}.seats.{{actor}}.action", _DELETE, "seats[{actor}] has no 'action'"),
    ("games.0.steps.-1.actor", 0, "actor must be -1 (the final table)"),
    ("games.0.unknown", json.loads("[" * 20 + "]" * 20), "at most 16 levels"),
    ("env_version", 7, "env_version must be a string"),
]


@pytest.mark.parametrize("path,value,message", BAD_FIELDS,
                         ids=[f"{p}={str(v)[:20]}" for p, v, _ in BAD_FIELDS])
def test_every_field_of_a_recording_is_checked(tmp_path, recording, path, value, message):
    """Issue 24 item 8: a recording is validated in full; each bad field gives one ReplayError
    line of bounded length naming it, from the loader and from ``uno-mk replay --from``, and
    no page is written."""
    actor = recording["games"][0]["steps"][0]["actor"]
    path, message = (x.format(actor=actor, other=(actor + 1) % 3) for x in (path, message))
    file = tmp_path / "bad.json"
    file.write_text(json.dumps(_set(recording, path, value)))
    with pytest.raises(ReplayError) as e:
        load_recording(file)
    text = str(e.value)
    assert message in text and "\n" not in text and len(text) < 400 + len(str(file)), text
    out, err = io.StringIO(), io.StringIO()
    page = tmp_path / "page.html"
    assert main(["replay", "--from", str(file), "--out", str(page)], stdout=out,
                stderr=err) == 2
    assert err.getvalue().count("\n") == 1 and message in err.getvalue()
    assert not page.exists() and out.getvalue() == ""


def test_the_unchanged_recording_passes(tmp_path, recording):
    """The check is not a blanket refusal: the recording the cases above change loads."""
    file = tmp_path / "good.json"
    file.write_text(json.dumps(recording))
    assert load_recording(file) == recording


@pytest.mark.parametrize("text,message", [
    ("[" * 100_000 + "]" * 100_000, "at most 16 levels"),
    ('{"format": "uno-mk-replay", "version": 1, "games": ' + "[" * 5000 + "]" * 5000 + "}",
     "at most 16 levels"),
    ('{"format": "uno-mk-replay", "version": 1, "games": [' + "9" * 5000 + "]}", "is not JSON"),
    ('{"format": "uno-mk-replay", "version": "' + "v" * 100_000 + '", "games": []}',
     "version 'vvvv"),
    ('{"format": "uno-mk-replay", "version": 1, "games": []}', "1 to 100 games"),
])
def test_hostile_json_is_one_bounded_line(tmp_path, text, message):
    file = tmp_path / "r.json"
    file.write_text(text)
    with pytest.raises(ReplayError, match=re.escape(message)) as e:
        load_recording(file)
    assert "\n" not in str(e.value) and len(str(e.value)) < 400 + len(str(file))


def test_too_many_games_too_large_and_not_utf8_are_refused(tmp_path, recording, monkeypatch):
    import uno_mk_env.evaluation.replay_format as replay

    many = {**recording, "games": recording["games"][:1] * (replay.MAX_REPLAY_GAMES + 1)}
    with pytest.raises(ReplayError, match=r"1 to \d+ games"):
        replay.check_recording(many)
    file = tmp_path / "r.json"
    file.write_bytes(b'{"format": "\xff"}')
    with pytest.raises(ReplayError, match="not UTF-8"):
        load_recording(file)
    file.write_text(json.dumps(recording))
    monkeypatch.setattr(replay, "MAX_RECORDING_BYTES", 1000)
    with pytest.raises(ReplayError, match="at most 1000 are read"):
        load_recording(file)


# ------------------------------------------- a hidden KEEP in a seat's view (issue 24, item 1)
class _DrawThenKeep:
    """Seat 0 draws and keeps what it drew; the other seats play their first legal action."""

    name = "script"
    needs_observation = False

    def reset(self, seed=None) -> None:
        pass

    def act(self, observation, action_mask, view) -> int:
        from uno_mk_env import actions as A

        if view.phase == A.PLAY_DRAWN:
            return A.KEEP
        return A.DRAW if view.seat == 0 else int(np.flatnonzero(action_mask)[0])


def kept_or_unplayable(drawn: str, monkeypatch) -> dict:
    """R4.2's two worlds, recorded by :func:`record_game` through the match driver (which is
    dealt this position): 3 players, R3 on top; seat 0 draws ``drawn``, R7 (playable: it keeps
    it, a hidden KEEP) or B7 (not playable: the turn ends, no decision); seat 1 then plays its
    last card and wins."""
    from scenario import make

    import uno_mk_env.evaluation.match as match

    def deal(rules, seed):
        return make({"rules": {"num_players": 3}, "hands": ["G1 G2", "R5", "B4 B5 B6"],
                     "discard_pile": "R3", "draw_pile": f"{drawn} G9 Y9"})

    monkeypatch.setattr(match, "Game", deal)
    return record_game([_DrawThenKeep() for _ in range(3)], deal(None, 0).rules, 0,
                       title="R4.2: kept or unplayable")


def _page_data(html: str) -> dict:
    found = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html,
                      re.S)
    assert found
    return json.loads(found.group(1))


def test_r4_2_a_seat_view_of_the_replay_cannot_tell_a_kept_card_from_an_unplayable_one(
        monkeypatch):
    """Issue 24 item 1: seats 1 and 2's view of the replay (every step they are shown, its
    table, counter, events and ``last`` line, the decision count) is the same whether seat 0
    kept a playable drawn card or drew an unplayable one; the recording itself keeps the KEEP,
    marked hidden, for the drawer's view and the spectator's."""
    from uno_mk_env import actions as A
    from uno_mk_env.evaluation.replay import recording, seat_steps
    from uno_mk_env.evaluation.replay_format import check_recording

    kept, unplayable = (kept_or_unplayable(card, monkeypatch) for card in ("R7", "B7"))
    assert [s["actor"] for s in kept["steps"]] == [0, 0, 1, -1]
    assert [s["actor"] for s in unplayable["steps"]] == [0, 1, -1]
    assert kept["steps"][1]["hidden"] and kept["steps"][1]["spectator"]["action"] == A.KEEP
    assert not any("hidden" in s for s in unplayable["steps"] + kept["steps"][2:])
    assert kept["steps"] != unplayable["steps"]  # the worlds differ (the spectator sees it)
    for seat in (1, 2):
        shown = seat_steps(kept, seat)
        assert shown == seat_steps(unplayable, seat)
        assert [s["table"]["decision"] for s in shown] == [0, 1, 2]  # the public count
        assert shown[0]["events"] == "P0 script drew a card"
        assert shown[1]["table"]["last"] == "P0 script drew a card"  # not empty
        assert shown[1]["table"]["current_player"] == 1
    # the page holds the same, and a seat's view reads only that (test_replay_browser.py)
    pages = [_page_data(replay_html(recording([g]))) for g in (kept, unplayable)]
    for seat in (1, 2):
        assert seat_steps(pages[0]["games"][0], seat) == seat_steps(pages[1]["games"][0], seat)
    # the drawer sees its own KEEP; the spectator sees every step
    own = seat_steps(kept, 0)
    assert [s["actor"] for s in own] == [0, 0, 1, -1] and own[1]["action"] == A.KEEP
    assert own[2]["table"]["last"] == kept["steps"][1]["spectator"]["events"] == (
        "P0 script kept it")
    check_recording(recording([kept]))


@pytest.mark.parametrize("step,value,message", [
    (1, "yes", "steps[1].hidden must be a boolean, true only on a KEEP decision"),
    (0, True, "steps[0].hidden must be a boolean, true only on a KEEP decision"),
    (-1, True, "steps[3].hidden must be a boolean, true only on a KEEP decision"),
])
def test_the_hidden_mark_is_checked(monkeypatch, step, value, message):
    """``hidden`` is a boolean, and true only on a KEEP decision (not on a draw, nor on the
    final table)."""
    from uno_mk_env.evaluation.replay import recording
    from uno_mk_env.evaluation.replay_format import check_recording

    data = recording([kept_or_unplayable("R7", monkeypatch)])
    data["games"][0]["steps"][step]["hidden"] = value
    with pytest.raises(ReplayError, match=re.escape(message)):
        check_recording(data)
    data["games"][0]["steps"][step]["hidden"] = False  # an explicit false is fine
    check_recording(data)


def test_the_match_driver_caps_a_game_where_no_hidden_keep_shows(monkeypatch):
    """Issue 24 item 1: the step cap counts public decisions. With ``max_steps=1`` the kept and
    the unplayable worlds are both capped after seat 0's draw (one public decision), never in
    the middle of the drawn card's decision, and the capped games look alike to seat 1."""
    from scenario import make

    import uno_mk_env.evaluation.match as match

    outcomes = []
    for drawn in ("R7", "B7"):
        game = make({"rules": {"num_players": 3}, "hands": ["G1 G2", "R5", "B4 B5 B6"],
                     "discard_pile": "R3", "draw_pile": f"{drawn} G9 Y9"})
        monkeypatch.setattr(match, "Game", lambda rules, seed, game=game: game)
        outcomes.append(match.play_match([_DrawThenKeep() for _ in range(3)], game.rules, 0,
                                         max_steps=1))
    kept, unplayable = outcomes
    assert kept.capped and unplayable.capped
    assert kept.game.public_steps == unplayable.game.public_steps == 1
    assert kept.game.num_steps == 2 and unplayable.game.num_steps == 1
    assert kept.game.current_player == unplayable.game.current_player == 1
    assert kept.game.view(1).hand_sizes == unplayable.game.view(1).hand_sizes
