"""No hidden information reaches a browser: every frame the browser table sends a seat (or a
spectator) is a function of what that receiver may know.

Two worlds: at every decision of many seeded games (2-10 players, several rule options), the
game is copied with every card the receiver cannot see resampled — the other seats' hands and
the draw pile dealt anew from the same cards, the other seats' drawn cards in the event log
replaced, another generator state — and the frame built for the receiver in both worlds must be
the same bytes. And every frame a seat actually receives over the socket holds no other seat's
card: their hands are counts only, no drawn card but its own, no draw pile order, no generator.
Whole games: world B of :mod:`uno_mk_env.serve.twins` shows the seat the same game as world A
(tests/test_serve_traffic.py plays both worlds in a real browser and compares the traffic).
"""

from __future__ import annotations

import json
import random
import re

import pytest

from uno_mk_env import Game, Rules
from uno_mk_env import actions as A
from uno_mk_env.agents.base import build_agent
from uno_mk_env.engine.cards import CODES
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.evaluation.match import play_match
from uno_mk_env.evaluation.replay import record_game, seat_names
from uno_mk_env.serve.frames import frame_text, last_text, sees_now, state_frame
from uno_mk_env.serve.twins import ScriptAgent, twin_of

CARD = r"([RYGB][0-9SRD]|W4|WB)[ )]"  # a card code in a list of cards
TABLES = [  # (players, rule options)
    (2, {}), (3, {"uno_catch": "next_player"}), (4, {"uno_catch": "any_player"}),
    (5, {"w4_strict": True}), (2, {"uno_catch": "any_player", "match": "target_score"}),
    (6, {"start_action_cards": "apply"}), (10, {}), (3, {"uno_penalty": 4}),
]


def other_world(game: Game, receiver: int | None, rng: random.Random) -> Game:
    """``game`` with every card ``receiver`` (``None``: a spectator, who sees no hand) cannot see
    resampled (see the module docstring)."""
    d = game.to_dict(include_events=True)
    n = game.num_players
    hidden_seats = [s for s in range(n) if s != receiver]
    pool = [c for s in hidden_seats for c in d["hands"][s]] + list(d["draw_pile"])
    rng.shuffle(pool)
    for s in hidden_seats:
        k = len(d["hands"][s])
        d["hands"][s], pool = pool[:k], pool[k:]
    d["draw_pile"] = pool
    d.pop("rng", None)
    twin = Game.from_dict(d, seed=rng.randrange(2**32))
    # the log (from_dict starts none): other seats' drawn cards and hands shown to another
    # seat are replaced
    kinds = range(len(CODES))
    twin.events = [
        ("draw", e[1], tuple(rng.choice(kinds) for _ in e[2]), e[3])
        if e[0] == "draw" and e[1] != receiver else
        ("reveal", e[1], e[2], tuple(rng.choice(kinds) for _ in e[3]))
        if e[0] == "reveal" and e[2] != receiver else e
        for e in game.events
    ]
    twin.events_start = game.events_start
    return twin


def frame_of(game: Game, receiver: int | None, names: list[str]) -> str:
    last = last_text(game, game.events_start, receiver, names)
    return frame_text(state_frame(game, receiver, names, last, [last], 1, True))


class TwoWorlds:
    """A match observer comparing each receiver's frame with the other world's before every
    decision."""

    def __init__(self, names: list[str], rng: random.Random) -> None:
        self.names, self.rng, self.compared = names, rng, 0

    def start(self, game: Game) -> None:
        pass

    def before(self, game: Game, seat: int) -> None:
        for receiver in [*range(game.num_players), None]:
            if not sees_now(game, receiver):
                continue
            if game.phase == A.PLAY_DRAWN and receiver != game.current_player:
                continue
            twin = other_world(game, receiver, self.rng)
            assert frame_of(twin, receiver, self.names) == frame_of(game, receiver, self.names)
            self.compared += 1

    def after(self, game: Game, seat: int, action: int) -> None:
        pass


def _two_worlds(games: int) -> int:
    compared = 0
    for i in range(games):
        n, options = TABLES[i % len(TABLES)]
        specs = [("strategic", "greedy", "random")[s % 3] for s in range(n)]
        names = seat_names(specs)
        watcher = TwoWorlds(names, random.Random(i))
        players = [build_agent(spec, seed=s) for s, spec in enumerate(specs)]
        play_match(players, Rules(num_players=n, **options), 1000 + i, list(range(n)), specs,
                   max_steps=400, observer=watcher)
        compared += watcher.compared
    return compared


def test_two_worlds_differing_in_hidden_cards_send_the_same_bytes() -> None:
    assert _two_worlds(6) > 800


@pytest.mark.slow
def test_two_worlds_over_three_hundred_games() -> None:
    assert _two_worlds(300) > 50_000


def test_a_frame_holds_no_other_seats_card_over_the_socket(tmp_path) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from uno_mk_env.serve.app import Server, create_app
    from uno_mk_env.serve.table import TableConfig

    server = Server()
    app = create_app(server, ("testserver",))
    rng = random.Random(5)
    checked = 0
    with TestClient(app) as client:
        for n, options in TABLES[:4]:
            agents = tuple(("strategic", "greedy")[s % 2] for s in range(n - 1))
            table = server.add_table(TableConfig(Rules(num_players=n, **options), (0,), agents,
                                                 seed=n, pause=0))
            names = table.names
            with client.websocket_connect(f"/ws/{table.tokens[0]}") as ws:
                while True:
                    text = ws.receive_text()
                    f = json.loads(text)
                    if f["type"] == "session":
                        break
                    assert f["type"] == "state"
                    t = f["table"]
                    assert set(t) >= {"hands", "hand_sizes"} and "draw_pile_order" not in t
                    assert all(h is None for s, h in enumerate(t["hands"]) if s != 0)
                    assert len(t["hands"][0]) == t["hand_sizes"][0]
                    if t["drawn_card"] is not None:
                        assert t["current_player"] == 0 and t["phase"] == "play_drawn"
                    for s in range(1, n):  # another seat's draw never names its cards
                        who = re.escape(names[s])
                        assert not re.search(who + r" (drew a card|draws \d+) \(" + CARD, text)
                    assert "rng" not in text and "bit_generator" not in text
                    checked += 1
                    if f["legal"] and not f["over"]:
                        action = rng.choice(f["legal"])[0]
                        ws.send_text(json.dumps({"type": "act", "ask": f["ask"],
                                                 "action": action}))
            server.remove(table)
    assert checked > 100


def test_the_two_worlds_check_catches_a_leak() -> None:
    """The check can fail: a frame with every hand face up (the replay's spectator table)
    differs between the worlds."""
    from uno_mk_env.render.table import table_data

    g = Game(Rules(num_players=3), seed=4)
    twin = other_world(g, 0, random.Random(1))
    assert table_data(twin, 0) == table_data(g, 0)
    assert table_data(twin, None) != table_data(g, None)


def _world(rules: Rules, specs: list[str], seed: int, players, twin=None) -> dict:
    class Deal:  # applies the twin's exchanges to the deal, as the table does
        def start(self, game: Game) -> None:
            if twin is not None:
                twin.apply(game)

        def before(self, game: Game, seat: int) -> None:
            pass

        def after(self, game: Game, seat: int, action: int) -> None:
            pass

    seeds = [derive_seed(seed, s) for s in range(rules.num_players)]
    return record_game(players, rules, seed, seeds, specs, 400, observer=Deal())


def _seat_steps(recorded: dict, seat: int) -> list[dict]:
    return [st["seats"][seat] for st in recorded["steps"]
            if not st.get("hidden") or st["actor"] == seat]


def test_twin_worlds_show_a_seat_the_same_game() -> None:
    """World B of :mod:`uno_mk_env.serve.twins` (cards the seat never saw exchanged, the other
    seats replaying world A) shows the seat the same game at every step, though its hidden
    cards differ (some seats keep a drawn card in one world only)."""
    differ = keeps = 0
    for i in range(16):
        n, options = TABLES[i % len(TABLES)]
        rules, seat = Rules(num_players=n, **options), i % n
        specs = [("strategic", "greedy", "random")[s % 3] for s in range(n)]
        a = _world(rules, specs, 300 + i, [build_agent(s, seed=0) for s in specs])
        twin = twin_of(a, seat, random.Random(i))
        own = twin_of(a, (seat + 1) % n, random.Random(0)).scripts[seat]  # the seat's moves
        players = [twin.agent(s) if s != seat else ScriptAgent(own) for s in range(n)]
        b = _world(rules, specs, 300 + i, players, twin)
        assert _seat_steps(a, seat) == _seat_steps(b, seat)
        other = (seat + 1) % n
        differ += _seat_steps(a, other) != _seat_steps(b, other)
        keeps += sum(1 for st in a["steps"] if st.get("hidden")) != sum(
            1 for st in b["steps"] if st.get("hidden"))
    assert differ >= 8 and keeps >= 1, (differ, keeps)


def test_a_twin_exchanges_only_cards_the_seat_never_saw() -> None:
    """Every exchange moves cards between the draw pile and other seats' hands only, and the
    same exchanges seen from another seat would change what that seat sees."""
    rules, specs = Rules(num_players=3), ["strategic", "greedy", "random"]
    a = _world(rules, specs, 7, [build_agent(s, seed=0) for s in specs])
    twin = twin_of(a, 0, random.Random(1))
    places = [p for ex in twin.exchanges for p in ex.places]
    assert places and ("hand", 0) not in places and any(p[0] == "hand" for p in places)
    holder = next(p[1] for p in places if p[0] == "hand")
    g, h = Game(rules, seed=7), Game(rules, seed=7)
    twin.apply(h)
    assert g.view(0).hand == h.view(0).hand and g.view(holder).hand != h.view(holder).hand
