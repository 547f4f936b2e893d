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
from uno_mk_env.cards import CODES, kind
from uno_mk_env.cli.app import main
from uno_mk_env.evaluation.replay import (
    FORMAT,
    ReplayError,
    load_recording,
    record_game,
    record_games,
    replay_html,
    write_json,
)
from uno_mk_env.events import event_for
from uno_mk_env.render import events_text
from uno_mk_env.render_image import table_data

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
