"""The browser table's server (``uno_mk_env.serve``) through Starlette's TestClient: the
protocol, whole games played over the socket, the saved recording and dataset rows, duplicate
scoring, and bad input (10,000+ fuzzed messages, the game compared before and after)."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from uno_mk_env import Rules  # noqa: E402
from uno_mk_env import actions as A  # noqa: E402
from uno_mk_env.cli.app import main  # noqa: E402
from uno_mk_env.evaluation.replay_format import load_recording  # noqa: E402
from uno_mk_env.serve.app import MAX_MESSAGE, Server, create_app, parse_message  # noqa: E402
from uno_mk_env.serve.dataset import load_rows  # noqa: E402
from uno_mk_env.serve.table import TableConfig  # noqa: E402

HOST = ("testserver",)


def _server(tmp_path: Path | None, players: int = 3, humans: tuple[int, ...] = (0,),
            agents: tuple[str, ...] | None = None, seed: int = 3, **rules) -> tuple:
    server = Server()
    app = create_app(server, HOST)
    n_agents = players - len(humans)
    specs = agents if agents is not None else ("greedy", "strategic", "random")[:1] * n_agents
    config = TableConfig(Rules(num_players=players, **rules), humans, tuple(specs), seed=seed,
                         pause=0, out=tmp_path)
    return server, app, config


def _frames_until(ws, stop) -> list[dict]:
    out = []
    while True:
        f = json.loads(ws.receive_text())
        out.append(f)
        if stop(f):
            return out


def play_game(ws, choose=lambda f: f["legal"][0][0], session: bool = True) -> list[dict]:
    """Plays one game over ``ws`` (the seat's socket) choosing with ``choose``; returns every
    frame received, up to the session frame (or the final state frame)."""
    frames = []
    while True:
        f = json.loads(ws.receive_text())
        frames.append(f)
        assert f["type"] != "error", f
        if f["type"] == "session" or (f["type"] == "state" and f["over"] and not session):
            return frames
        if f["type"] == "state" and f["legal"] and not f["over"]:
            ws.send_text(json.dumps({"type": "act", "ask": f["ask"], "action": choose(f)}))


# ------------------------------------------------------------------------------ messages
@pytest.mark.parametrize("text, why", [
    ("", "JSON"), ("{", "JSON"), ("[]", "JSON object"), ('"act"', "JSON object"),
    ('{"type": "act"}', "exactly the keys"), ('{"type": "act", "ask": 1, "action": 1, "x": 0}',
                                              "exactly the keys"),
    ('{"type": "act", "ask": true, "action": 1}', '"ask" must be'),
    ('{"type": "act", "ask": 1, "action": -1}', '"action" must be'),
    ('{"type": "act", "ask": 1, "action": 1.0}', '"action" must be'),
    ('{"type": "act", "ask": 1, "action": 99999999999999}', '"action" must be'),
    ('{"type": "again", "x": 1}', "message type"), ('{"type": "file", "path": "/etc"}',
                                                    "message type"),
    ('{"type": "act", "ask": [[[1]]], "action": 1}', "nests"),
    ("x" * (MAX_MESSAGE + 1), "larger than"),
])
def test_bad_messages_are_refused_with_one_line(text: str, why: str) -> None:
    from uno_mk_env.serve.app import MessageError

    with pytest.raises(MessageError, match=why) as info:
        parse_message(text)
    assert "\n" not in str(info.value)


def test_good_messages_parse() -> None:
    assert parse_message('{"type": "act", "ask": 3, "action": 54}')["action"] == 54
    assert parse_message('{"type":"again"}') == {"type": "again"}


# ------------------------------------------------------------------------------ routes
def test_pages_headers_and_unknown_links(tmp_path: Path) -> None:
    server, app, config = _server(None)
    with TestClient(app) as client:
        table = server.add_table(config)
        page = client.get(f"/play/{table.tokens[0]}")
        assert page.status_code == 200 and "table.js" in page.text
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert page.headers["referrer-policy"] == "no-referrer"
        assert table.tokens[0] not in page.text  # the page holds no secret of its own
        assert client.get("/play/not-a-token").status_code == 404
        assert client.get("/static/table.js").status_code == 200
        draw = client.get("/static/draw.js")
        assert "function unoDrawing" in draw.text and "export const CONSTANTS" in draw.text
        assert client.get("/static/../table.py").status_code == 404
        assert client.post(f"/play/{table.tokens[0]}").status_code == 405
        # another Host header (DNS rebinding) is refused
        assert client.get("/", headers={"host": "evil.example"}).status_code == 400
        with pytest.raises(Exception):  # noqa: B017  (the socket is closed before it opens)
            with client.websocket_connect("/ws/not-a-token") as ws:
                ws.receive_text()
        server.close()


# ------------------------------------------------------------------------------ whole games
def test_a_game_over_the_socket_is_saved_scored_and_replayable(tmp_path: Path) -> None:
    server, app, config = _server(tmp_path, players=3, agents=("greedy", "strategic"))
    with TestClient(app) as client:
        table = server.add_table(config)
        with client.websocket_connect(f"/ws/{table.tokens[0]}") as ws:
            frames = play_game(ws, choose=lambda f: f["legal"][-1][0])
            states = [f for f in frames if f["type"] == "state"]
            final = states[-1]
            assert final["over"] and final["result"].startswith("Game over")
            assert "you " in final["result"] and "point" in final["result"]
            session = frames[-1]
            assert session["reference"] == "strategic" and session["summary"]["games"] == 1
            assert "difference" in session["last"]
            # a finished game keeps only its recording (and the frames a rejoin is sent)
            assert table.game is None and table._rows == [] and table.recording["seed"] == 3
            # play again: the next game is dealt with the next seed
            ws.send_text('{"type": "again"}')
            again = play_game(ws)
            assert again[-1]["summary"]["games"] == 2
        server.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 4 and files[0].endswith("game-1.json") and files[1].endswith(".jsonl")
    # the recording opens with uno-mk replay --from, and is the game that was played
    recording = load_recording(tmp_path / files[0])
    game = recording["games"][0]
    assert game["seed"] == 3 and game["result"]["scores"] == final["table"]["scores"]
    assert main(["replay", "--from", str(tmp_path / files[0]), "--out",
                 str(tmp_path / "r.html")]) == 0
    # the rows: one per decision of the person, each action legal in its mask
    rows = load_rows(tmp_path / files[1])
    asked = [f for f in states if f["legal"]]
    assert len(rows["action"]) == len(asked) > 0
    assert all(rows["mask"][i, a] == 1 for i, a in enumerate(rows["action"]))
    assert rows["observation"].shape[0] == len(asked) and rows["observation"].shape[1] > 100
    assert [r[0] for r in np.argwhere(rows["mask"][0])] == [a for a, _ in asked[0]["legal"]]


def test_two_people_each_act_only_for_their_own_seat(tmp_path: Path) -> None:
    server, app, config = _server(None, players=4, humans=(0, 1), agents=("greedy", "random"))
    with TestClient(app) as client:
        table = server.add_table(config)
        with client.websocket_connect(f"/ws/{table.tokens[0]}") as a, \
                client.websocket_connect(f"/ws/{table.tokens[1]}") as b, \
                client.websocket_connect(f"/ws/{table.spectator_token}") as spectator:
            sockets = {0: a, 1: b}
            latest = {0: json.loads(a.receive_text()), 1: json.loads(b.receive_text())}
            spec = json.loads(spectator.receive_text())
            assert spec["seat"] is None and all(h is None for h in spec["table"]["hands"])
            refused = 0
            for _ in range(400):
                mover = next((s for s in (0, 1) if latest[s]["legal"]), None)
                if mover is None:
                    s = 0 if table.game.current_player != 1 else 1
                    latest[s] = json.loads(sockets[s].receive_text())
                    continue
                other = 1 - mover
                f = latest[mover]
                # the other person sends the mover's own move: refused, nothing changes
                sockets[other].send_text(json.dumps(
                    {"type": "act", "ask": f["ask"], "action": f["legal"][0][0]}))
                reply = json.loads(sockets[other].receive_text())
                while reply["type"] == "state":
                    latest[other] = reply
                    reply = json.loads(sockets[other].receive_text())
                assert reply["type"] == "error" and "not your decision" in reply["message"]
                refused += 1
                spectator.send_text(json.dumps(
                    {"type": "act", "ask": f["ask"], "action": f["legal"][0][0]}))
                reply = json.loads(spectator.receive_text())
                while reply["type"] == "state":
                    reply = json.loads(spectator.receive_text())
                assert reply["type"] == "error" and "spectator" in reply["message"]
                sockets[mover].send_text(json.dumps(
                    {"type": "act", "ask": f["ask"], "action": f["legal"][0][0]}))
                latest[mover] = json.loads(sockets[mover].receive_text())
                if latest[mover]["over"]:
                    break
            assert refused >= 5
        server.close()


def test_a_person_who_reconnects_gets_their_seat_back(tmp_path: Path) -> None:
    server, app, config = _server(None, players=2, agents=("greedy",))
    with TestClient(app) as client:
        table = server.add_table(config)
        with client.websocket_connect(f"/ws/{table.tokens[0]}") as ws:
            f = json.loads(ws.receive_text())
            ws.send_text(json.dumps({"type": "act", "ask": f["ask"], "action": f["legal"][0][0]}))
            f = _frames_until(ws, lambda g: bool(g["legal"]))[-1]
        with client.websocket_connect(f"/ws/{table.tokens[0]}") as ws:
            again = json.loads(ws.receive_text())
            assert again == f  # the latest frame, at once: the same decision is open
            assert again["legal"] and not again["over"]
            ws.send_text(json.dumps({"type": "act", "ask": again["ask"],
                                     "action": again["legal"][0][0]}))
            frames = play_game(ws)
            assert frames[-1]["type"] == "session"
        server.close()


# ------------------------------------------------------------------------------ bad input
def _snapshot(table) -> tuple:
    return (json.dumps(table.game.to_dict(include_events=True), sort_keys=True),
            {s: (p.ask, sorted(p.legal)) for s, p in table._pending.items()}, dict(table._asked),
            table.status, table.games)


def _fuzz_messages(rng: random.Random, f: dict, count: int) -> list[str | bytes]:
    legal = {a for a, _ in f["legal"]}
    illegal = [a for a in range(A.NUM_ACTIONS + 5) if a not in legal]
    ask = f["ask"]
    makers = [
        lambda: json.dumps({"type": "act", "ask": ask, "action": rng.choice(illegal)}),
        lambda: json.dumps({"type": "act", "ask": ask + rng.choice([-2, -1, 1, 7]),
                            "action": rng.choice(sorted(legal))}),
        lambda: json.dumps({"type": "act", "ask": ask, "action": rng.choice(sorted(legal)),
                            "extra": 1}),
        lambda: json.dumps({"type": rng.choice(["again", "ACT", "play", "path", ""])}),
        lambda: json.dumps({"type": "act", "ask": str(ask), "action": rng.choice(sorted(legal))}),
        lambda: json.dumps({"type": "act", "ask": ask, "action": rng.choice([True, None, 1.5,
                                                                             "54", [54]])}),
        lambda: json.dumps([{"type": "act"}] * rng.randint(0, 3)),
        lambda: "".join(rng.choice('{}[]":,acty01 \\') for _ in range(rng.randint(0, 40))),
        lambda: "{" * rng.randint(1, 200),
        lambda: json.dumps({"type": "act", "ask": ask, "action": 54, "pad": "x" * 600}),
        lambda: bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 30))),
        lambda: "\ud800" if rng.random() < 0.1 else json.dumps({"type": "act", "ask": -ask,
                                                                "action": 0}),
    ]
    return [rng.choice(makers)() for _ in range(count)]


def _open_decision(table, sockets, timeout: float = 30.0) -> tuple[int, dict] | None:
    """The seat whose decision is open and its frame (older frames read and dropped), or
    ``None`` once the game is over."""
    deadline = time.monotonic() + timeout
    while not table._pending:
        if table.status == "over" or table.game is not None and table.game.game_over:
            return None
        assert time.monotonic() < deadline, "no decision was opened"
        time.sleep(0.002)
    seat, pending = next(iter(table._pending.items()))
    ws = sockets[seat]
    skipped = _SKIPPED.pop(id(ws), {})
    if skipped.get("ask") == pending.ask and skipped.get("legal"):
        return seat, skipped
    frame = _frames_until(ws, lambda g: g["ask"] == pending.ask and bool(g["legal"]))
    return seat, frame[-1]


_SKIPPED: dict[int, dict] = {}  # the latest state frame _error_reply read past, per socket


def _error_reply(ws) -> dict:
    """The next error frame of ``ws``, reading past state frames (the latest is kept)."""
    frames = _frames_until(ws, lambda g: g["type"] == "error")
    states = [f for f in frames if f["type"] == "state"]
    if states:
        _SKIPPED[id(ws)] = states[-1]
    return frames[-1]


def test_ten_thousand_bad_messages_change_nothing(tmp_path: Path) -> None:
    """Malformed, oversized, illegal, stale (replayed), out-of-turn, other-seat and spectator
    messages: each gets exactly one error frame and the game, the open decision and the table
    stay as they were; then the game goes on normally."""
    server, app, config = _server(tmp_path, players=3, humans=(0, 1), agents=("greedy",))
    rng = random.Random(0)
    sent = decisions = 0
    with TestClient(app) as client:
        table = server.add_table(config)
        with client.websocket_connect(f"/ws/{table.tokens[0]}") as p0, \
                client.websocket_connect(f"/ws/{table.tokens[1]}") as p1, \
                client.websocket_connect(f"/ws/{table.spectator_token}") as spectator:
            sockets = [p0, p1]
            while sent < 10_000:
                opened = _open_decision(table, sockets)
                if opened is None:  # the game ended first: the next one
                    p0.send_text('{"type": "again"}')
                    time.sleep(0.05)
                    continue
                mover, f = opened
                decisions += 1
                before = _snapshot(table)
                for target, ws in ((mover, sockets[mover]), (1 - mover, sockets[1 - mover]),
                                   (None, spectator)):
                    batch = _fuzz_messages(rng, f, 40)
                    if target != mover:  # the mover's own legal moves, from another link
                        batch += [json.dumps({"type": "act", "ask": f["ask"], "action": a})
                                  for a, _ in f["legal"]]
                    for message in batch:
                        (ws.send_bytes if isinstance(message, bytes) else ws.send_text)(message)
                        reply = _error_reply(ws)
                        assert "\n" not in reply["message"] and len(reply["message"]) <= 300
                        sent += 1
                assert _snapshot(table) == before
                # a real move, then the same message replayed: refused, nothing else changes
                move = json.dumps({"type": "act", "ask": f["ask"], "action": f["legal"][0][0]})
                sockets[mover].send_text(move)
                sockets[mover].send_text(move)
                assert "decision" in _error_reply(sockets[mover])["message"]
                sent += 1
        server.close()
    assert sent >= 10_000 and decisions >= 20, (sent, decisions)


# ------------------------------------------------------------------------------ the command
def test_a_port_in_use_is_one_line_with_exit_2(capsys) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["serve", "--port", str(port), "--agents", "greedy"]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, message", [
    (["serve", "--host", "0.0.0.0"], "--allow-remote"),
    (["serve", "--humans", "0", "--players", "2"], "bad --humans"),
    (["serve", "--players", "11"], "bad player count"),
    (["serve", "--agents", "nobody"], "unknown agent"),
    (["serve", "--port", "70000"], "bad --port"),
    (["serve", "--pause", "-1"], "bad --pause"),
    (["serve", "--reference", "nobody"], "unknown agent"),
    (["serve", "--rule", "hand_size=0"], "hand_size"),
])
def test_bad_serve_arguments_are_one_line_with_exit_2(argv, message, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def _kind(action: int) -> str:
    if action < A.DRAW:
        return "play"
    names = {A.DRAW: "draw", A.KEEP: "keep", A.CHALLENGE: "challenge", A.ACCEPT: "accept",
             A.CALL_UNO: "uno", A.CATCH_UNO: "catch"}
    if action in names:
        return names[action]
    return "colour" if action < A.TARGET_BASE else "target"


def test_every_decision_kind_is_offered_and_taken_over_the_socket() -> None:
    """Seeded games at 2-4 players with a chooser preferring the rarer decisions: every masked
    decision kind is offered to the person and taken (play, draw, keep or play the drawn card,
    colour, Green Shell target, challenge and accept a W4, call UNO, catch a missed UNO out of
    turn)."""
    taken: set[str] = set()
    rng = random.Random(1)

    def choose(f: dict) -> int:
        actions = [a for a, _ in f["legal"]]
        rare = [a for a in actions if _kind(a) not in taken]
        action = rng.choice(rare or actions)
        taken.add(_kind(action))
        return action

    for i in range(40):
        n = 2 + i % 3
        server, app, config = _server(None, players=n, agents=("random",) * (n - 1),
                                      seed=100 + i, uno_catch="any_player")
        with TestClient(app) as client:
            table = server.add_table(config)
            with client.websocket_connect(f"/ws/{table.tokens[0]}") as ws:
                for f in play_game(ws, choose, session=False):
                    if f["type"] == "state" and f["legal"]:
                        labels = dict(map(tuple, f["legal"]))
                        assert all(labels.values())
            server.close()
        if taken >= {"play", "draw", "keep", "colour", "target", "challenge", "accept", "uno",
                     "catch"}:
            break
    assert taken >= {"play", "draw", "keep", "colour", "target", "challenge", "accept", "uno",
                     "catch"}, taken


def test_idle_tables_expire_and_their_links_stop_working() -> None:
    server, app, config = _server(None, players=2, agents=("greedy",))
    server.idle_timeout = 10.0
    table = server.add_table(config)
    token = table.tokens[0]
    assert server.expire(table.last_activity + 5) == []
    assert server.expire(table.last_activity + 11) == [table]
    assert token not in server.links and table.status == "stopped" and server.tables == {}
    table.wait(5)
    assert not table._thread.is_alive()  # the waiting game ended (MatchStopped)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_server_cleanly_with_every_finished_game_saved(
        tmp_path: Path, stop: signal.Signals) -> None:
    """``uno-mk serve`` in its own process: a game played to its end over a real socket is
    saved when it ends; SIGTERM or SIGINT (Ctrl-C) then stops the game in progress, closes the
    socket and exits with status 0."""
    from websockets.sync.client import connect

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "uno_mk_env", "serve", "--agents", "greedy", "--seed", "4",
         "--pause", "0", "--port", str(port), "--out", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(2)]
        link = lines[1].split()[-1]
        assert lines[1].strip().startswith("seat 0:") and link.startswith("http://127.0.0.1")
        deadline = time.monotonic() + 30
        while True:  # the port listens once uvicorn has started
            try:
                ws = connect(link.replace("http://", "ws://").replace("/play/", "/ws/"))
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not listen"
                time.sleep(0.1)
        rng = random.Random(0)
        with ws:
            while True:
                f = json.loads(ws.recv(timeout=30))
                if f["type"] == "session":
                    break
                if f["type"] == "state" and f["legal"] and not f["over"]:
                    ws.send(json.dumps({"type": "act", "ask": f["ask"],
                                        "action": rng.choice(f["legal"])[0]}))
            ws.send('{"type": "again"}')  # a second game, left in progress
            f = json.loads(ws.recv(timeout=30))
            assert f["type"] == "state" and not f["over"]
            proc.send_signal(stop)
            assert proc.wait(30) == 0
        out = proc.stdout.read()
    finally:
        proc.kill()
        proc.wait()
    assert "Stopped after 2 games" in out
    saved = sorted(p.name for p in tmp_path.iterdir())
    assert len(saved) == 2 and saved[0].endswith("game-1.json"), saved
    assert load_recording(tmp_path / saved[0])["games"][0]["seed"] == 4
