"""The standard evaluation protocol (``uno_mk_env.evaluation.protocol``) and ``uno-mk evaluate``.

Its results do not depend on the number of worker processes; the card's numbers are exactly a
recomputation from the saved game records; the published deal seeds (docs/evaluation.md) are
the ones played; cheating agents cannot enter by accident; the metrics are checked on hand-built
records.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from uno_mk_env import Rules, RulesError
from uno_mk_env import __version__ as PACKAGE_VERSION
from uno_mk_env.agents.base import AgentSpecError
from uno_mk_env.cli.app import main
from uno_mk_env.evaluation import protocol
from uno_mk_env.evaluation.protocol import (
    DEFAULT_GAMES,
    PROTOCOL_VERSION,
    SEARCH_LINE_GAMES,
    SEEDS,
    deal_seeds,
    evaluate,
    line_metrics,
    plan,
    recompute_card,
    suite,
)
from uno_mk_env.evaluation.tournament import GameRecord

ROOT = Path(__file__).resolve().parents[1]


def _quick(tmp_path: Path | None = None, workers: int = 1, **kw) -> dict:
    args = {"agent": "greedy", "player_counts": (2, 4), "games": 8,
            "opponents": ["random", "strategic"], "workers": workers}
    args.update(kw)
    return evaluate(out_dir=tmp_path, **args)


def _numbers(card: dict) -> list[dict]:
    return [{k: v for k, v in line.items()} for line in card["lines"]]


# ----------------------------------------------------------------------------- reproducible
def test_results_do_not_depend_on_the_worker_count() -> None:
    one = _quick(workers=1)
    two = _quick(workers=2)
    assert _numbers(one) == _numbers(two)
    assert one["seeds"] == two["seeds"]


def test_search_and_learned_agents_do_not_depend_on_the_worker_count() -> None:
    """The same for agents with their own generators and a model file (searched decisions are
    seeded per game, the policy is loaded once per worker)."""
    for agent, opponents in (("ismcts:5", ["strategic"]), ("ppo:models/ppo_2p.npz", ["greedy"])):
        one = _quick(workers=1, agent=agent, opponents=opponents, player_counts=(2,), games=6)
        two = _quick(workers=2, agent=agent, opponents=opponents, player_counts=(2,), games=6)
        assert _numbers(one) == _numbers(two), agent


def test_card_numbers_equal_a_recomputation_from_the_saved_records(tmp_path: Path) -> None:
    card = _quick(tmp_path)
    saved = json.loads((tmp_path / protocol.CARD_JSON).read_text())
    assert saved == json.loads(json.dumps(card))
    assert recompute_card(tmp_path) == saved
    # the records are really what the numbers come from: alter one game and they move
    path = tmp_path / "games" / "2p_vs_strategic.json"
    data = json.loads(path.read_text())
    first = data["games"][0]
    agent_seat = first["seats"].index(0)
    first["winner"] = agent_seat if first["winner"] != agent_seat else 1 - agent_seat
    path.write_text(json.dumps(data))
    again = recompute_card(tmp_path)
    line = next(e for e in again["lines"] if e["name"] == "2p_vs_strategic")
    old = next(e for e in saved["lines"] if e["name"] == "2p_vs_strategic")
    assert line["wins"] != old["wins"]


def test_every_line_plays_the_published_deals() -> None:
    """Each line at N players replays the deals of :func:`deal_seeds` (root seed SEEDS[N]), the
    same for every opponent, so lines of different agents are paired."""
    card = _quick(player_counts=(2,))
    for line in plan((2,), 8, ["random", "strategic"]):
        result = protocol.run_line("greedy", line)
        seeds = [r.seed for r in result.records[::2]]
        assert seeds == deal_seeds(2, 8)
        assert all(0 in r.seats for r in result.records)  # the agent is entrant 0
    assert card["seeds"]["2"]["first_deal_seeds"] == deal_seeds(2, 8)[:3]


def test_the_documented_seeds_are_the_protocol_seeds() -> None:
    """docs/evaluation.md publishes the root seeds, the first deal seeds and the SHA-256 of the
    deal seeds of a default 10,000-game line: they must be what the code plays."""
    text = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    for n in protocol.PLAYER_COUNTS:
        seeds = deal_seeds(n, DEFAULT_GAMES)
        row = re.search(rf"^\| {n} \| (\d+) \| ([\d,]+) \| ([\d, ]+)… \| `([0-9a-f]{{64}})` \|",
                        text, re.M)
        assert row, f"docs/evaluation.md has no seed row for {n} players"
        assert int(row.group(1)) == SEEDS[n]
        assert int(row.group(2).replace(",", "")) == len(seeds)
        assert [int(x) for x in row.group(3).split(",")] == seeds[:len(row.group(3).split(","))]
        assert row.group(4) == protocol._sha256(seeds)


# ------------------------------------------------------------------------------------ the card
def test_card_records_what_a_paper_must_quote(tmp_path: Path) -> None:
    card = _quick(tmp_path, command="uno-mk evaluate greedy --games 8")
    assert card["protocol"]["version"] == PROTOCOL_VERSION
    assert card["package_version"] == PACKAGE_VERSION
    assert card["rules"]["4"] == Rules(num_players=4).to_dict()
    assert card["seeds"]["2"]["root_seed"] == SEEDS[2]
    assert card["command"] == "uno-mk evaluate greedy --games 8"
    assert "8 games per line (the protocol plays 10,000)" in card["protocol"]["deviations"]
    assert any(d.startswith("only against random and strategic (the protocol plays random, ")
               for d in card["protocol"]["deviations"])
    assert not card["cheats"]
    md = (tmp_path / protocol.CARD_MD).read_text()
    for text in (f"version {PROTOCOL_VERSION}", f"uno-mk-env {PACKAGE_VERSION}", "root 14002",
                 "`uno-mk evaluate greedy --games 8`", "## 2 players", "## 4 players",
                 "| `strategic` | 8 |", "clustered by deal"):
        assert text in md, text
    for line in card["lines"]:
        for key in ("win_rate", "mean_place", "points_per_round", "ahead"):
            stat = line[key]
            assert stat["ci_low"] <= stat["value"] <= stat["ci_high"], (line["name"], key)


@pytest.mark.parametrize(("counts", "phrase"), [
    ((2,), "played at 2 players only (the protocol also plays 4)"),
    ((4,), "played at 4 players only (the protocol also plays 2)"),
    ((3,), "played at 3 players (the protocol plays 2 and 4)"),
    ((2, 3, 4), "played at 2, 3 and 4 players (the protocol plays 2 and 4)"),
])
def test_the_cards_deviations_read_as_english(counts, phrase) -> None:
    """Issue 34: the card said "player counts 2 instead of 2, 4"."""
    assert protocol.deviations(counts, DEFAULT_GAMES, None, {}) == [phrase]
    assert protocol.deviations((2, 4), DEFAULT_GAMES, None, {}) == []
    assert protocol.deviations((2, 4), DEFAULT_GAMES, ["oracle"], {})[0].startswith(
        "against oracle (the protocol plays random, greedy, strategic, ismcts:100 and ")


def test_the_shipped_cards_say_their_deviations_in_english() -> None:
    """The cards in models/cards/ are what the current code writes for their JSON."""
    for path in sorted((ROOT / "models" / "cards").glob("*.json")):
        card = json.loads(path.read_text())
        assert path.with_suffix(".md").read_text() == protocol.card_markdown(card), path.name
        assert not any("instead of 2, 4" in d for d in card["protocol"]["deviations"])
        assert "players only (the protocol also plays" in card["protocol"]["deviations"][0]


def test_the_suite_and_the_search_line() -> None:
    assert suite(2) == ["random", "greedy", "strategic", protocol.ISMCTS_OPPONENT,
                        "ppo:models/ppo_2p.npz"]
    assert suite(4)[-1] == "ppo:models/ppo_4p.npz"
    lines = plan((2, 4), DEFAULT_GAMES)
    assert len(lines) == 10
    for line in lines:
        expected = SEARCH_LINE_GAMES if line.opponent.startswith("ismcts") else DEFAULT_GAMES
        assert line.games == expected and line.seed == SEEDS[line.num_players]
    assert all(line.games == 100 for line in plan((2,), 100))


# ------------------------------------------------------------------------------- metrics
def _rec(deal: int, seats, winner, places, scores=None, rounds: int = 1) -> GameRecord:
    n = len(seats)
    return GameRecord(index=deal, deal=deal, seed=deal, seats=tuple(seats), winner=winner,
                      end="win" if winner is not None else "no_winner",
                      scores=tuple(scores or [0] * n), hand_points=(0,) * n,
                      places=tuple(places), rounds=rounds, decisions=10)


def test_line_metrics_on_hand_built_records() -> None:
    records = [
        _rec(0, (0, 1, 2), 0, (1, 2, 3), scores=(30, 0, 0)),  # agent first
        _rec(0, (1, 0, 2), 0, (1, 3, 2), scores=(20, 0, 0)),  # agent last
        _rec(1, (2, 1, 0), None, (2, 1, 2)),                  # tie with seat 0 for second
        _rec(1, (0, 2, 1), 1, (2, 3, 1), scores=(0, 0, 40)),  # agent second
    ]
    m = line_metrics(records)
    assert (m["games"], m["deals"], m["wins"]) == (4, 2, 1)
    assert m["win_rate"]["value"] == 0.25
    assert m["mean_place"]["value"] == (1 + 3 + 2 + 2) / 4
    assert m["points_per_round"]["value"] == 30 / 4
    assert m["ahead"]["value"] == pytest.approx((1 + 0 + 0.25 + 0.5) / 4)
    assert m["outcomes"] == {"win": 3, "no_winner": 1, "capped": 0}


def test_clustered_interval_formula() -> None:
    """Mean ± 1.96 * sqrt(sum over deals of (deal sum - its share of the mean)^2 * G/(G-1)) / n."""
    values, deals = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0], [0, 0, 1, 1, 2, 2]
    mean, low, high = protocol._clustered(values, deals)
    sums = [1 - 2 * 0.5, 2 - 2 * 0.5, 0 - 2 * 0.5]
    se = (sum(s * s for s in sums) * 3 / 2) ** 0.5 / 6
    assert mean == 0.5 and high - mean == pytest.approx(1.959964 * se, rel=1e-6)


def test_paired_difference_compares_the_same_games_only() -> None:
    """Game by game on the same deal and seats: the agent's win and place in A minus in B, the
    interval clustered by deal; games only one side played do not count, none in common is
    refused."""
    b = [_rec(0, (0, 1), 1, (2, 1)), _rec(0, (1, 0), 1, (1, 2)),
         _rec(1, (0, 1), 1, (2, 1)), _rec(1, (1, 0), 0, (1, 2))]
    a = [_rec(0, (0, 1), 0, (1, 2)), *b[1:], _rec(2, (0, 1), 0, (1, 2))]  # won deal 0's first
    d = protocol.paired_difference(a, b)
    assert (d["games"], d["deals"]) == (4, 2)
    assert d["win_rate"]["value"] == 0.25 and d["mean_place"]["value"] == -0.25
    low, high = protocol._clustered([1.0, 0.0, 0.0, 0.0], [0, 0, 1, 1])[1:]
    assert (d["win_rate"]["ci_low"], d["win_rate"]["ci_high"]) == (low, high)
    same = protocol.paired_difference(b, b)["win_rate"]
    assert same == {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0}
    with pytest.raises(ValueError, match="share no game"):
        protocol.paired_difference(a[-1:], b)


# ------------------------------------------------------------------------------ cheating
def test_cheating_agents_cannot_enter_evaluate_by_accident(tmp_path: Path) -> None:
    for spec in ("oracle", "oracle:deck", "oracle:hands:10"):
        with pytest.raises(AgentSpecError, match=f"agent '{spec}' cheats"):
            _quick(tmp_path / "refused", agent=spec)
    assert not (tmp_path / "refused").exists()  # refused before anything was played
    with pytest.raises(AgentSpecError, match="opponent 'oracle:5' cheats"):
        _quick(opponents=["oracle:5"], allow_cheating=True)


def test_an_allowed_cheating_agent_gets_a_card_that_says_so(tmp_path: Path) -> None:
    card = _quick(tmp_path, agent="oracle:6", player_counts=(2,), games=4,
                  opponents=["random"], allow_cheating=True)
    assert card["cheats"] is True
    assert "THIS AGENT CHEATS" in (tmp_path / protocol.CARD_MD).read_text()


def test_cli_refuses_a_cheating_agent_in_one_line(tmp_path: Path, capsys) -> None:
    code = main(["evaluate", "oracle", "--games", "4", "--out", str(tmp_path / "card")])
    err = capsys.readouterr().err
    assert code == 2 and "cheats" in err and "--allow-cheating" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "card").exists()  # refused before the output place is made


# ------------------------------------------------------------------------------------ CLI
def test_cli_runs_again_into_the_same_folder_and_refuses_a_games_file(tmp_path: Path,
                                                                      capsys) -> None:
    """A second evaluation into a card's folder is refused in one line unless --force (a card
    used to be overwritten silently); with --force it replaces the card (its games/ folder used
    to be refused as "not a file"); a file where the games/ folder goes is refused before
    playing."""
    argv = ["evaluate", "random", "--players", "2", "--games", "4", "--opponents", "greedy",
            "--out", str(tmp_path / "card")]
    assert main(argv) == 0, capsys.readouterr().err
    before = (tmp_path / "card" / protocol.CARD_JSON).read_bytes()
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already holds a card" in err and "--force" in err, err
    assert (tmp_path / "card" / protocol.CARD_JSON).read_bytes() == before
    assert main([*argv, "--force"]) == 0, capsys.readouterr().err
    assert (tmp_path / "card" / "games" / "2p_vs_greedy.json").is_file()
    (tmp_path / "blocked").mkdir()
    (tmp_path / "blocked" / "games").write_text("x")
    capsys.readouterr()
    assert main(argv[:-1] + [str(tmp_path / "blocked")]) == 2
    err = capsys.readouterr().err
    assert "games" in err and "not a directory" in err and err.count("\n") == 1, err
    assert not (tmp_path / "blocked" / protocol.CARD_JSON).exists()


def test_cli_writes_the_card_and_prints_each_line(tmp_path: Path, capsys) -> None:
    out_dir = tmp_path / "card"
    code = main(["evaluate", "greedy", "--players", "2", "--games", "4", "--opponents",
                 "random,strategic", "--out", str(out_dir)])
    out = capsys.readouterr().out
    assert code == 0
    assert "2 players vs random: win rate" in out and "# Benchmark card: `greedy`" in out
    card = json.loads((out_dir / protocol.CARD_JSON).read_text())
    assert card["command"] == ("uno-mk evaluate greedy --players 2 --games 4 --opponents "
                               "random,strategic")
    assert sorted(p.name for p in (out_dir / "games").iterdir()) == [
        "2p_vs_random.json", "2p_vs_strategic.json"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--players", "11"], "bad player count 11"),
    (["--games", "0"], "--games must be at least 1"),
    (["--opponents", " , "], "--opponents needs at least one agent"),
    (["--preset", "nope"], "unknown preset 'nope'"),
    (["--rule", "nope=1"], "unknown rule option 'nope'"),
    (["--rule", "num_players=3"], "--rule num_players: the player counts are --players"),
    (["--rule", "w4_strict=maybe"], "w4_strict"),
])
def test_cli_bad_arguments_are_one_line_errors(argv, message, tmp_path: Path, capsys) -> None:
    code = main(["evaluate", "greedy", "--out", str(tmp_path / "x"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_other_rules_are_a_recorded_deviation_that_the_games_play(tmp_path: Path) -> None:
    """``--preset`` / ``--rule``: every line plays those rules (its game records say so), the
    card records them, names the deviation and the command that reproduces it."""
    out_dir = tmp_path / "strict"
    assert main(["evaluate", "greedy", "--players", "2", "4", "--games", "8", "--opponents",
                 "strategic", "--preset", "strict", "--rule", "uno_penalty=4",
                 "--out", str(out_dir)]) == 0
    card = json.loads((out_dir / protocol.CARD_JSON).read_text())
    options = {"w4_strict": True, "uno": "off", "uno_penalty": 4}
    assert card["rule_options"] == options
    assert card["command"].endswith("--preset strict --rule uno_penalty=4")
    assert ("under the rules w4_strict=True, uno=off, uno_penalty=4 (the protocol plays the "
            "default rules)") in card["protocol"]["deviations"]
    for n in (2, 4):
        assert card["rules"][str(n)] == Rules(num_players=n, **options).to_dict()
        games = json.loads((out_dir / "games" / f"{n}p_vs_strategic.json").read_text())
        assert games["config"]["rules"] == Rules(num_players=n, **options).to_dict()
    assert "rules w4_strict=True, uno=off, uno_penalty=4, one round per game" in (
        out_dir / protocol.CARD_MD).read_text()
    default = _quick(player_counts=(2,), opponents=["strategic"])
    assert default["rule_options"] == {} and not any(
        "rules" in d for d in default["protocol"]["deviations"])
    with pytest.raises(RulesError, match="num_players"):
        _quick(rules={"num_players": 3})
