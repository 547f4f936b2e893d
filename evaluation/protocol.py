"""The standard evaluation protocol behind ``uno-mk evaluate AGENT`` and the results tables: a
fixed, published set of deals per player count, duplicate deals with seat rotation, a fixed
suite of opponents, and a "benchmark card" (JSON + Markdown) that a paper can quote.

Protocol (version :data:`PROTOCOL_VERSION`, docs/evaluation.md)
    For each player count ``N`` in :data:`PLAYER_COUNTS` and each opponent ``X`` of the suite
    (:func:`suite`), one *line*: the agent against ``N - 1`` copies of ``X`` under the default
    rules (:class:`~uno_mk_env.Rules`, one round per game), played by
    :func:`~uno_mk_env.evaluation.tournament.run_tournament` with the root seed
    :data:`SEEDS` ``[N]``, duplicate deals and seat rotation (every deal is played ``N`` times,
    the agent in every seat once). Every line of every agent at ``N`` players plays the same
    deals, so lines compare paired. :data:`DEFAULT_GAMES` games per line, except the search
    opponents (:data:`SEARCH_OPPONENTS`), whose line plays at most :data:`SEARCH_LINE_GAMES`
    (a search opponent costs about a thousand times a rule agent's time per decision).
    Results do not depend on the number of worker processes.

Metrics of a line (all from the saved game records, :func:`line_metrics`)
    * ``win_rate``: games the agent won; 95 % Wilson score interval.
    * ``mean_place``: the agent's mean finishing place (1 = winner; then by points left in
      hand; equal keys share the better place).
    * ``points_per_round``: points the agent scored per round (docs/rules.md R10.2).
    * ``ahead``: the share of (game, opponent seat) pairs in which the agent finished ahead of
      that opponent, a tie counting half (at two players: the share of games it placed ahead).
    * For these three, 95 % normal intervals with standard errors *clustered by deal* (the
      ``N`` games of a deal share their cards, so they are not independent).

Cheating agents (``cheats = True``: ``oracle``) are refused unless ``allow_cheating``; their card
says so in capitals.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env import Rules, RulesError
from uno_mk_env import __version__ as PACKAGE_VERSION
from uno_mk_env.agents.base import build_agent
from uno_mk_env.agents.policy_file import resolve_model_path
from uno_mk_env.files import atomic_write_text, read_json

from .backends import session
from .match import admit
from .ratings import Z95
from .sprt import SprtSpec
from .tournament import (
    DEFAULT_MAX_STEPS,
    GameRecord,
    TournamentResult,
    run_tournament,
    schedule,
    wilson_interval,
)

__all__ = [
    "CARD_JSON", "CARD_MD", "DEFAULT_GAMES", "PLAYER_COUNTS", "PROTOCOL_NAME", "PROTOCOL_VERSION",
    "SEARCH_LINE_GAMES", "SEARCH_OPPONENTS", "SEEDS", "STAGING", "Line", "card_markdown",
    "check_cheating", "deal_seeds", "evaluate", "file_sha256", "line_metrics",
    "paired_difference", "publish", "recompute_card", "suite",
]

PROTOCOL_NAME = "uno-mk-env standard evaluation"
#: Bumped whenever anything below changes (seeds, suite, rules, metrics): numbers of different
#: versions are not comparable.
PROTOCOL_VERSION = 1
PLAYER_COUNTS = (2, 4)
#: Root seed of every line at each player count (the deals: :func:`deal_seeds`).
SEEDS = {2: 14_002, 3: 14_003, 4: 14_004, 5: 14_005, 6: 14_006, 7: 14_007, 8: 14_008,
         9: 14_009, 10: 14_010}
DEFAULT_GAMES = 10_000
#: The search opponent of the suite: ``ismcts`` at its default budget, written out so that the
#: protocol does not move when the registry's default does.
ISMCTS_OPPONENT = "ismcts:100"
SEARCH_OPPONENTS = (ISMCTS_OPPONENT,)
#: Games of a line against a search opponent (at most; fewer when ``games`` is smaller).
SEARCH_LINE_GAMES = 1_000
#: The shipped PPO agents, by the player count they were trained for (the repository's paths,
#: which name the package's copies from any working directory:
#: :func:`uno_mk_env.agents.shipped.find_shipped`).
PPO_MODELS = {2: "models/ppo_2p.npz", 4: "models/ppo_4p.npz"}
CARD_JSON = "card.json"
CARD_MD = "card.md"
#: The folder inside a card's folder where a run writes until its card is complete.
STAGING = ".new-card"
REPO = Path(__file__).resolve().parents[1]


def suite(num_players: int) -> list[str]:
    """The opponents of the protocol at ``num_players``: ``random``, ``greedy``, ``strategic``,
    ``ismcts`` (:data:`ISMCTS_OPPONENT`) and the shipped PPO agent trained for that player count
    (the 2-player one at other counts than 2 and 4: it reads any table size)."""
    model = PPO_MODELS.get(num_players, PPO_MODELS[2])
    return ["random", "greedy", "strategic", ISMCTS_OPPONENT, f"ppo:{model}"]


def line_games(opponent: str, games: int) -> int:
    """Games of the line against ``opponent`` when lines play ``games``."""
    return min(games, SEARCH_LINE_GAMES) if opponent in SEARCH_OPPONENTS else games


def resolve_spec(spec: str) -> str:
    """``spec`` with a model path that does not exist from here but does in the repository
    (``ppo:models/ppo_2p.npz`` run from another directory) made absolute."""
    name, sep, arg = spec.partition(":")
    if name == "ppo" and sep and not Path(arg).exists() and (REPO / arg).exists():
        return f"ppo:{REPO / arg}"
    return spec


def deal_seeds(num_players: int, games: int, seed: int | None = None) -> list[int]:
    """The ``Game`` seeds of the deals of a line of ``games`` games (one per block of
    ``num_players`` games; :func:`~uno_mk_env.evaluation.tournament.schedule`)."""
    root = SEEDS[num_players] if seed is None else seed
    tasks = schedule(num_players, num_players, games, root)
    return [t.game_seed for t in tasks[::num_players]]


def _sha256(values: Sequence[int]) -> str:
    return hashlib.sha256(",".join(map(str, values)).encode()).hexdigest()


def file_sha256(spec: str) -> str | None:
    """SHA-256 of the model file a ``ppo:PATH`` agent spec loads (``None`` for other specs), so
    that a result still names its model after the file at that path is replaced."""
    name, sep, arg = spec.partition(":")
    if name != "ppo" or not sep:
        return None
    try:  # the file the agent loads: a shipped name (ppo:ppo_2p), a path, a path + .zip/.npz
        path = resolve_model_path(resolve_spec(spec).partition(":")[2])
    except FileNotFoundError:
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------- statistics
def _clustered(values: Sequence[float], clusters: Sequence[int]) -> tuple[float, float, float]:
    """Mean of ``values`` and its 95 % normal interval with deal-clustered standard errors."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    ids = np.unique(np.asarray(clusters), return_inverse=True)[1]
    sums = np.bincount(ids, weights=x - mean)
    g = len(sums)
    var = float((sums**2).sum()) / n**2 * (g / (g - 1) if g > 1 else 1.0)
    half = Z95 * math.sqrt(var)
    return mean, mean - half, mean + half


def _ratio_clustered(
    num: Sequence[float], den: Sequence[float], clusters: Sequence[int]
) -> tuple[float, float, float]:
    """Ratio of sums ``sum(num) / sum(den)`` with a deal-clustered delta-method interval."""
    x = np.asarray(num, dtype=float)
    y = np.asarray(den, dtype=float)
    if y.sum() == 0:
        return math.nan, math.nan, math.nan
    r = float(x.sum() / y.sum())
    ids = np.unique(np.asarray(clusters), return_inverse=True)[1]
    resid = np.bincount(ids, weights=x - r * y)
    g = len(resid)
    var = float((resid**2).sum()) / y.sum() ** 2 * (g / (g - 1) if g > 1 else 1.0)
    half = Z95 * math.sqrt(var)
    return r, r - half, r + half


def _stat(value: float, low: float, high: float, lo: float = -math.inf,
          hi: float = math.inf) -> dict[str, float]:
    """A metric and its interval, the interval clipped to the metric's range ``[lo, hi]``."""
    return {"value": value, "ci_low": max(low, lo), "ci_high": min(high, hi)}


def line_metrics(records: Sequence[GameRecord], agent: int = 0) -> dict[str, Any]:
    """The metrics of a line (see the module docstring) for entrant ``agent`` (the evaluated
    agent is entrant 0 of every line) from its game records."""
    deals, wins, places, points, rounds, ahead = [], 0, [], [], [], []
    ends = {"win": 0, "no_winner": 0, "capped": 0}
    for rec in records:
        seat = rec.seats.index(agent)
        deals.append(rec.deal)
        wins += rec.winner == seat
        ends[rec.end] += 1
        places.append(rec.places[seat])
        points.append(rec.scores[seat])
        rounds.append(rec.rounds)
        mine = rec.places[seat]
        others = [p for s, p in enumerate(rec.places) if s != seat]
        ahead.append(sum((mine < p) + 0.5 * (mine == p) for p in others) / len(others))
    n = len(records)
    lo, hi = wilson_interval(wins, n)
    return {
        "games": n,
        "deals": len(set(deals)),
        "wins": wins,
        "win_rate": _stat(wins / n if n else math.nan, lo, hi),
        "mean_place": _stat(*_clustered(places, deals), 1.0, float(len(records[0].seats))
                            if records else math.inf),
        "points_per_round": _stat(*_ratio_clustered(points, rounds, deals), 0.0),
        "ahead": _stat(*_clustered(ahead, deals), 0.0, 1.0),
        "outcomes": ends,
    }


def paired_difference(a: Sequence[GameRecord], b: Sequence[GameRecord],
                      agent: int = 0) -> dict[str, Any]:
    """Entrant ``agent``'s results in ``a`` minus its results in ``b``, game by game where both
    played the same deal in the same seats (two lines on the protocol's deals, or two
    tournaments with one seed): the win and the place, each a mean difference with its 95 %
    interval clustered by deal. Paired, the interval is narrower than the two lines' own
    whenever the agents decide alike (a policy and its fine-tune).

    Raises:
        ValueError: the two share no game.
    """
    def keyed(records: Sequence[GameRecord]) -> dict[tuple[Any, ...], GameRecord]:
        return {(r.deal, r.seed, r.seats): r for r in records}

    ka, kb = keyed(a), keyed(b)
    common = sorted(set(ka) & set(kb))
    if not common:
        raise ValueError("the two results share no game (same deal, seed and seats)")
    deals, wins, places = [], [], []
    for key in common:
        ra, rb = ka[key], kb[key]
        seat = ra.seats.index(agent)
        deals.append(ra.deal)
        wins.append(float(ra.winner == seat) - float(rb.winner == seat))
        places.append(float(ra.places[seat] - rb.places[seat]))
    return {"games": len(common), "deals": len(set(deals)),
            "win_rate": _stat(*_clustered(wins, deals)),
            "mean_place": _stat(*_clustered(places, deals))}


# --------------------------------------------------------------------------------- lines
@dataclass(frozen=True)
class Line:
    """One line of the protocol: the agent against ``num_players - 1`` copies of ``opponent``."""

    num_players: int
    opponent: str
    games: int
    seed: int

    @property
    def name(self) -> str:
        """A file-safe name, e.g. ``2p_vs_strategic``."""
        opp = self.opponent
        if opp.startswith("ppo:"):
            opp = Path(opp[4:]).stem
        safe = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in opp)
        return f"{self.num_players}p_vs_{safe}"


def plan(
    player_counts: Sequence[int] = PLAYER_COUNTS,
    games: int = DEFAULT_GAMES,
    opponents: Sequence[str] | None = None,
) -> list[Line]:
    """The lines of an evaluation (``opponents``: a subset or another list instead of the
    suite, a deviation from the protocol that the card records)."""
    lines = []
    for n in player_counts:
        if n not in SEEDS:
            raise ValueError(f"player count {n}: the protocol has seeds for {sorted(SEEDS)}")
        for opp in (suite(n) if opponents is None else opponents):
            lines.append(Line(n, opp, line_games(opp, games), SEEDS[n]))
    return lines


def run_line(
    agent: str, line: Line, workers: int = 1, allow_cheating: bool = False,
    progress: bool = False, rules: Mapping[str, Any] | None = None,
    progress_label: str | None = None, sprt: SprtSpec | None = None, backend: str = "local",
    address: str | None = None,
) -> TournamentResult:
    """Plays one line: ``agent`` (entrant 0) against ``num_players - 1`` copies of the
    opponent (``rules``: rule options instead of the default rules, a deviation), reporting
    its progress as ``progress_label`` (default: the line's name); with ``sprt`` the line
    stops as soon as that test of the agent against the opponents decides (a deviation); on
    ``backend`` (:mod:`~uno_mk_env.evaluation.backends`)."""
    specs = [resolve_spec(agent)] + [resolve_spec(line.opponent)] * (line.num_players - 1)
    return run_tournament(
        specs, line.num_players, line.games, seed=line.seed, rules=rules or None,
        duplicate=True,
        workers=workers, progress=progress, max_steps=DEFAULT_MAX_STEPS,
        allow_cheating=allow_cheating, progress_label=progress_label or line.name,
        sprt=sprt, backend=backend, address=address,
    )


def check_cheating(agent: str, opponents: Sequence[str], allow_cheating: bool) -> bool:
    """Whether ``agent`` cheats (refused without ``allow_cheating``; opponents never may).

    Raises:
        AgentSpecError: a spec cannot be built, a cheating agent without ``allow_cheating``, or
            a cheating opponent (one line).
    """
    cheats = admit(build_agent(resolve_spec(agent), seed=0), agent, allow_cheating)
    for opp in dict.fromkeys(opponents):  # the protocol's opponents are never admitted
        admit(build_agent(resolve_spec(opp), seed=0), opp, allow_cheating=False,
              refusal=f"opponent {opp!r} cheats: the protocol's opponents never do")
    return cheats


def evaluate(
    agent: str,
    player_counts: Sequence[int] = PLAYER_COUNTS,
    games: int = DEFAULT_GAMES,
    opponents: Sequence[str] | None = None,
    workers: int = 1,
    allow_cheating: bool = False,
    out_dir: str | Path | None = None,
    command: str | None = None,
    on_line: Callable[[Line, dict[str, Any]], None] | None = None,
    progress: bool = False,
    rules: Mapping[str, Any] | None = None,
    sprt: SprtSpec | None = None,
    backend: str = "local",
    address: str | None = None,
) -> dict[str, Any]:
    """Runs the protocol for ``agent`` and returns its card (a JSON-safe dict).

    ``sprt``: each line stops as soon as this sequential test of the agent against the
    line's opponents decides (:mod:`~uno_mk_env.evaluation.sprt`; a deviation, recorded in
    the card with each line's decision and the games it used). ``backend`` and ``address``:
    where the games are played (:func:`~uno_mk_env.evaluation.tournament.run_tournament`);
    the card does not depend on it.

    ``rules``: rule options (:class:`~uno_mk_env.Rules` fields, ``num_players`` excepted)
    instead of the default rules; a deviation from the protocol, recorded in the card with
    the rules every line played.

    With ``out_dir`` the card (:data:`CARD_JSON`, :data:`CARD_MD`) and every line's full
    tournament result with its game records (``games/<line>.json``) are written there;
    :func:`recompute_card` recomputes the card's numbers from those records. The run writes
    into a staging folder (:data:`STAGING`, inside ``out_dir``) and moves its files into place
    only once the card is complete (:func:`publish`), so the folder never holds a card and
    game records of two different runs, whenever the run stops (see :func:`publish`); one
    evaluation per folder at a time (the command line locks it). ``on_line(line, metrics)`` is
    called as each line finishes.

    Raises:
        AgentSpecError: a spec cannot be built, or the agent cheats without ``allow_cheating``.
        ValueError: a player count without protocol seeds, or ``games < 1``.
        RulesError: a rule option that does not exist or a bad value (naming it).
    """
    if not isinstance(games, int) or isinstance(games, bool) or games < 1:
        raise ValueError(f"games must be an int ≥ 1, got {games!r}")
    rules = dict(rules or {})
    if "num_players" in rules:
        raise RulesError("rules: num_players is set by each line's player count, not a rule "
                         "option of an evaluation")
    for n in player_counts:
        Rules(num_players=n, **rules)  # every line's rules exist, before anything is played
    lines = plan(player_counts, games, opponents)
    cheats = check_cheating(agent, [line.opponent for line in lines], allow_cheating)
    card = _card_header(agent, player_counts, games, opponents, workers, cheats, command, rules,
                        sprt)
    out = Path(out_dir) if out_dir is not None else None
    if out is not None:
        _remove(out / STAGING)  # a killed run's
        (out / STAGING / "games").mkdir(parents=True)
    start = time.perf_counter()
    try:
        with session(backend, address, workers):  # one Ray for every line
            for number, line in enumerate(lines, 1):
                result = run_line(agent, line, workers, allow_cheating, progress, rules,
                                  f"line {number}/{len(lines)}, {line.name}", sprt, backend,
                                  address)
                metrics = line_metrics(result.records)
                if sprt is not None:
                    metrics["sprt"] = result.sprt()
                card["lines"].append(_line_entry(line, metrics))
                if out is not None:
                    atomic_write_text(out / STAGING / "games" / f"{line.name}.json",
                                      result.to_json(indent=None) + "\n")
                if on_line is not None:
                    on_line(line, metrics)
        card["run"] = {"workers": workers, "elapsed_s": round(time.perf_counter() - start, 1)}
        if out is not None:
            write_card(card, out / STAGING)
            publish(out / STAGING, out)
    finally:  # nothing of an unfinished run stays (a SIGKILL's is removed by the next run)
        if out is not None:
            _remove(out / STAGING)
    return card


def _remove(path: Path) -> None:
    """Removes the file, link or folder ``path`` if there is one."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def publish(staging: Path, out: Path) -> None:
    """Moves a finished card (:data:`CARD_JSON`, :data:`CARD_MD` and ``games/*.json`` in
    ``staging``) into ``out``, replacing the card there, in an order that keeps the folder
    consistent if the process dies at any point: the old card's files are removed first, then
    the new game records are moved in (each by an atomic rename) and the old card's other
    records removed, then the new card is moved in (:data:`CARD_MD`, then :data:`CARD_JSON`).
    So at every moment, each card file in ``out`` describes exactly the records there, or there
    is no card; renames within one folder need no space, so a full disk cannot stop it half-way.
    """
    for name in (CARD_JSON, CARD_MD):
        (out / name).unlink(missing_ok=True)
    games = out / "games"
    games.mkdir(exist_ok=True)
    new = {path.name for path in (staging / "games").glob("*.json")}
    for name in sorted(new):
        os.replace(staging / "games" / name, games / name)
    for path in games.glob("*.json"):  # an earlier card's lines that this card does not have
        if path.name not in new and path.is_file():
            path.unlink()
    for name in (CARD_MD, CARD_JSON):
        os.replace(staging / name, out / name)


def _card_header(
    agent: str, player_counts: Sequence[int], games: int, opponents: Sequence[str] | None,
    workers: int, cheats: bool, command: str | None, rules: Mapping[str, Any],
    sprt: SprtSpec | None = None,
) -> dict[str, Any]:
    return {
        "card": "uno-mk-env benchmark card",
        "agent": agent,
        "agent_file_sha256": file_sha256(agent),
        "cheats": cheats,
        "protocol": {
            "name": PROTOCOL_NAME, "version": PROTOCOL_VERSION,
            "player_counts": list(player_counts), "games_per_line": games,
            "search_opponents": list(SEARCH_OPPONENTS), "search_line_games": SEARCH_LINE_GAMES,
            "duplicate_deals": True, "seat_rotation": True, "max_steps": DEFAULT_MAX_STEPS,
            "deviations": deviations(player_counts, games, opponents, rules, sprt),
            **({"sprt": sprt.to_dict()} if sprt is not None else {}),
        },
        "package_version": PACKAGE_VERSION,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "command": command,
        "rules": {str(n): Rules(num_players=n, **rules).to_dict() for n in player_counts},
        "rule_options": dict(rules),
        "seeds": {
            str(n): {"root_seed": SEEDS[n], "deals": len(ds := deal_seeds(n, games)),
                     "first_deal_seeds": ds[:3], "deal_seeds_sha256": _sha256(ds)}
            for n in player_counts
        },
        "lines": [],
    }


def deviations(player_counts: Sequence[int], games: int, opponents: Sequence[str] | None,
               rules: Mapping[str, Any], sprt: SprtSpec | None = None) -> list[str]:
    """How an evaluation departs from the protocol, one English phrase per difference (the
    card's ``protocol.deviations``), e.g. ``"played at 2 players only (the protocol also plays
    4)"``; empty for the protocol itself."""
    out = []
    counts = list(dict.fromkeys(player_counts))
    if counts != list(PLAYER_COUNTS):
        where = f"played at {and_list(counts)} players"
        missing = [n for n in PLAYER_COUNTS if n not in counts]
        if set(counts) < set(PLAYER_COUNTS):
            out.append(f"{where} only (the protocol also plays {and_list(missing)})")
        else:
            out.append(f"{where} (the protocol plays {and_list(PLAYER_COUNTS)})")
    if games != DEFAULT_GAMES:
        out.append(f"{games:,} games per line (the protocol plays {DEFAULT_GAMES:,})")
    if opponents is not None:
        which = "only against" if set(opponents) <= {o for n in counts for o in suite(n)} else (
            "against")
        whole = [*suite(2)[:-1], "the shipped PPO agent of the table size"]
        out.append(f"{which} {and_list(opponents)} (the protocol plays {and_list(whole)})")
    if rules:
        out.append(f"under the rules {rules_text(rules)} (the protocol plays the default rules)")
    if sprt is not None:
        out.append(f"each line stopped by an SPRT of elo0={sprt.elo0:g} against "
                   f"elo1={sprt.elo1:g} (alpha={sprt.alpha:g}, beta={sprt.beta:g}, at least "
                   f"{sprt.min_games:,} games) once it decided (the protocol plays every game)")
    return out


def and_list(items: Sequence[Any]) -> str:
    """``[2]`` -> ``"2"``, ``[2, 4]`` -> ``"2 and 4"``, ``[2, 3, 4]`` -> ``"2, 3 and 4"``."""
    words = [str(item) for item in items]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def rules_text(rules: Mapping[str, Any]) -> str:
    """``{"w4_strict": True, "uno": "off"}`` -> ``"w4_strict=True, uno=off"``."""
    return ", ".join(f"{k}={v}" for k, v in rules.items())


def _rules_phrase(rules: Mapping[str, Any]) -> str:
    if not rules:
        return "default rules, one round per game"
    rounds = "" if rules.get("match") == "target_score" else ", one round per game"
    return f"rules {rules_text(rules)}{rounds}"


def _line_entry(line: Line, metrics: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "players": line.num_players, "opponent": line.opponent,
        "opponent_file_sha256": file_sha256(line.opponent), "seed": line.seed,
        "fair_share": 1 / line.num_players, "name": line.name, **metrics,
    }


def recompute_card(out_dir: str | Path) -> dict[str, Any]:
    """The card in ``out_dir`` with every line's metrics recomputed from its saved game
    records (``games/<line>.json``): equal to the saved card when nothing was altered."""
    out = Path(out_dir)
    card = read_json(out / CARD_JSON)
    for entry in card["lines"]:
        data = read_json(out / "games" / f"{entry['name']}.json")
        records = [GameRecord.from_dict(r) for r in data["games"]]
        entry.update(json.loads(json.dumps(line_metrics(records))))
        if "sprt" in entry:
            entry["sprt"] = json.loads(json.dumps(TournamentResult.from_dict(data).sprt()))
    return card


def write_card(card: Mapping[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """Writes the card as JSON and Markdown into ``out_dir``; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / CARD_JSON, "md": out / CARD_MD}
    atomic_write_text(paths["json"], json.dumps(card, indent=2) + "\n")
    atomic_write_text(paths["md"], card_markdown(card))
    return paths


# ------------------------------------------------------------------------------ markdown
def _fmt(stat: Mapping[str, float], digits: int = 3) -> str:
    return (f"{stat['value']:.{digits}f} [{stat['ci_low']:.{digits}f}, "
            f"{stat['ci_high']:.{digits}f}]")


def _games(entry: Mapping[str, Any]) -> str:
    """A line's games, with the sequential test's decision when it ran one."""
    test = entry.get("sprt")
    if not test:
        return f"{entry['games']:,}"
    early = "decided early" if test["decision"] != "inconclusive" else "undecided"
    return f"{entry['games']:,} (SPRT {test['decision']}, {early}, LLR {test['llr']:.2f})"


def card_markdown(card: Mapping[str, Any]) -> str:
    """The card as Markdown: a header a paper can quote and one table per player count."""
    p = card["protocol"]
    agent = card["agent"]
    lines = [f"# Benchmark card: `{agent}`", ""]
    if card.get("cheats"):
        lines += ["**THIS AGENT CHEATS: it sees hidden cards. A skill-ceiling reference, not a "
                  "result.**", ""]
    lines += [
        f"- protocol: {p['name']}, version {p['version']} (docs/evaluation.md)",
        f"- package: uno-mk-env {card['package_version']} (Python {card['python']}, numpy "
        f"{card['numpy']})",
        f"- games per line: {p['games_per_line']:,} (lines against "
        f"{', '.join(p['search_opponents'])}: at most {p['search_line_games']:,}); duplicate "
        "deals with seat rotation; "
        + _rules_phrase(card.get("rule_options") or {}),
        "- seeds: " + "; ".join(
            f"{n} players: root {s['root_seed']}, {s['deals']:,} deals (SHA-256 of the deal "
            f"seeds {s['deal_seeds_sha256'][:16]}…)" for n, s in card["seeds"].items()),
    ]
    if card.get("agent_file_sha256"):
        lines.append(f"- agent file SHA-256: {card['agent_file_sha256'][:16]}…")
    if card.get("command"):
        lines.append(f"- command: `{card['command']}`")
    if p["deviations"]:
        lines.append("- deviations from the protocol: " + "; ".join(p["deviations"]))
    lines.append("")
    for n in p["player_counts"]:
        rows = [e for e in card["lines"] if e["players"] == n]
        if not rows:
            continue
        opp_word = "opponent" if n == 2 else f"opponents ({n - 1} copies)"
        lines += [
            f"## {n} players (fair share {1 / n:.2f})", "",
            f"| {opp_word} | games | win rate [95% CI] | mean place | points per round | "
            "placed ahead |",
            "|---|---|---|---|---|---|",
        ]
        for e in rows:
            lines.append(
                f"| `{e['opponent']}` | {_games(e)} | {_fmt(e['win_rate'])} | "
                f"{_fmt(e['mean_place'], 2)} | {_fmt(e['points_per_round'], 1)} | "
                f"{_fmt(e['ahead'])} |"
            )
        lines.append("")
    if p.get("sprt"):
        lines += ["Games: a line marked SPRT was decided early by the sequential test (H1: the "
                  "agent is at least elo1 better than the opponent; H0: at most elo0; "
                  "inconclusive: it used every game), on the games shown.", ""]
    lines += [
        "Win rate: 95% Wilson interval. Mean place (1 = winner), points scored per round and "
        "the share of opponents the agent placed ahead of (ties half): 95% normal intervals, "
        "standard errors clustered by deal.",
        "",
    ]
    return "\n".join(lines)
