"""Replays: record games decision by decision, and show them in a browser.

A *recording* is plain JSON (never a pickle): every decision of a game with the table before it
as a spectator sees it and as each seat sees it, the legal actions, the chosen action, the
policy's probabilities when the agent gives them (``action_probabilities(observation, mask)``,
as the ``ppo`` agent does) and what the decision caused, as one line of the event log per view.
Everything comes from the engine: each seat's part is built from ``game.view(seat)`` and
``game.events_for(seat)`` only (:func:`uno_mk_env.render_image.table_data`), the spectator's
from every seat's view and the full log.

:func:`replay_html` turns a recording into one self-contained HTML page (inline CSS, JS and SVG,
no network access, opens from disk): the table drawn as the image renderer draws it, buttons,
arrow keys and a slider to step through every decision, the legal actions with the chosen one
highlighted (and the probabilities), the event log, and a choice between the spectator's view
and any seat's view. A seat's view reads only that seat's part of the recording, so it shows
only what that seat may know (the legal actions and probabilities of a decision only to the
seat that made it).

Command line: ``uno-mk replay`` (``uno_mk_env.cli.replay``); tournaments record their first
games with ``run_tournament(..., replays=N)`` (``uno-mk tournament --replays N``).

Format (``FORMAT``, version ``VERSION``)::

    {"format": "uno-mk-replay", "version": 1, "env_version": "...", "games": [
      {"title", "seed", "rules", "players", "names", "agents", "agent_seeds", "max_steps",
       "result": {"winner", "scores", "decisions", "end"},
       "steps": [
         {"decision", "actor", "phase",
          "spectator": {"table", "events", "legal": [[id, label], ...], "action", "probs"},
          "seats": [{"table", "events"[, "legal", "action", "probs"]}, ...]},
         ...]}]}

``steps[i]`` shows the table before decision ``i`` (``table.last`` is the line of the decision
before it) and ``events`` is what decision ``i`` caused; the last step is the final table, with
``actor`` -1 and no action. Only the deciding seat's entry in ``seats`` has ``legal``,
``action`` and ``probs``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env import Game, Rules
from uno_mk_env import __version__ as ENV_VERSION
from uno_mk_env import actions as A
from uno_mk_env.agents.base import Agent, AgentError, agent_action, build_agent
from uno_mk_env.cards import CODES, COLOUR_NAMES, COLOURS, ITEM_NAMES, NAMES
from uno_mk_env.phases import PHASE_NAMES
from uno_mk_env.render_image import (
    GEOMETRY,
    ITEM_EFFECTS,
    PALETTE,
    last_decision_text,
    table_data,
)

__all__ = [
    "FORMAT", "VERSION", "ReplayError", "action_label", "load_recording", "record_game",
    "record_games", "replay_html", "seat_names", "write_html",
]

FORMAT = "uno-mk-replay"
VERSION = 1
DEFAULT_MAX_STEPS = 5000  #: as the tournament: decisions per round before the game is stopped


class ReplayError(ValueError):
    """A recording that cannot be read or shown (one line naming the file or the field)."""


def action_label(action: int, seat: int, names: Sequence[str]) -> str:
    """What ``action`` of ``seat`` means, in a few words (``"play R7 (Red 7)"``,
    ``"Green Shell at P2 greedy"``)."""
    if action < A.DRAW:
        return f"play {CODES[action]} ({NAMES[action]})"
    if action == A.DRAW:
        return "draw a card"
    if action == A.KEEP:
        return "keep the drawn card"
    if A.COLOUR_BASE <= action < A.TARGET_BASE:
        return f"name {COLOUR_NAMES[action - A.COLOUR_BASE]}"
    if A.TARGET_BASE <= action < A.CHALLENGE:
        k = action - A.TARGET_BASE + 1
        return f"Green Shell at {names[(seat + k) % len(names)]} (+{k})"
    return {A.CHALLENGE: "challenge the Wild Draw Four", A.ACCEPT: "accept: draw 4",
            A.CALL_UNO: "call UNO", A.CATCH_UNO: "catch the missed UNO"}[action]


def seat_names(labels: Sequence[str]) -> list[str]:
    """Display names ``P0 greedy``, ``P1 ppo:ppo_2p.npz`` (a model spec keeps its file name)."""
    out = []
    for s, label in enumerate(labels):
        name, sep, arg = label.partition(":")
        short = f"{name}:{Path(arg).name}" if sep and "/" in arg else label
        out.append(f"P{s} {short}")
    return out


def _probabilities(agent: Agent, game: Game, legal: tuple[int, ...]) -> list[float] | None:
    """The agent's probability of each legal action, when it has ``action_probabilities``."""
    method = getattr(agent, "action_probabilities", None)
    if method is None:
        return None
    from uno_mk_env.observation import action_mask, encode

    probs = np.asarray(method(encode(game.view(game.current_player)), action_mask(legal)))
    return [round(float(probs[a]), 4) for a in legal]


def _tables(game: Game, names: Sequence[str], last: Sequence[str]) -> list[dict[str, Any]]:
    """Spectator table, then one per seat (``last[0]`` spectator, ``last[1 + s]`` seat s)."""
    n = game.num_players
    return [table_data(game, None, names, last[0])] + [
        table_data(game, s, names, last[1 + s]) for s in range(n)
    ]


def record_game(
    players: Sequence[Agent],
    rules: Rules,
    game_seed: int,
    agent_seeds: Sequence[int | None] | None = None,
    labels: Sequence[str] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    title: str | None = None,
) -> dict[str, Any]:
    """Plays one game as the tournament does (:func:`uno_mk_env.evaluation.tournament.play_game`:
    agents reset with their seeds, ``Game(rules, seed=game_seed)``, every decision through
    :func:`~uno_mk_env.agents.base.agent_action`, a round beyond ``max_steps`` decisions stops
    the game) and records it (one game of the format in the module docstring).

    Raises:
        AgentError: an agent failed (names it and the seat).
    """
    n = rules.num_players
    if len(players) != n:
        raise ValueError(f"{len(players)} players given for a table of {n}")
    labels = list(labels) if labels is not None else [a.name for a in players]
    names = seat_names(labels)
    seeds = list(agent_seeds) if agent_seeds is not None else [None] * n
    for seat, agent in enumerate(players):
        agent.reset(seeds[seat])
    g = Game(rules, seed=game_seed)
    lasts = [last_decision_text(g, g.events_start, None, names)] + [
        last_decision_text(g, g.events_start, s, names) for s in range(n)
    ]
    steps: list[dict[str, Any]] = []
    in_round = 0
    capped = False
    while not g.game_over:
        if in_round >= max_steps:
            capped = True
            break
        p = g.current_player
        legal = g.legal_action_ids()
        tables = _tables(g, names, lasts)
        if getattr(players[p], "cheats", False):  # a reference agent that sees hidden cards
            players[p].observe_game(g)  # type: ignore[attr-defined]
        probs = _probabilities(players[p], g, legal)
        action = agent_action(players[p], g, labels[p])
        start = g.event_count
        phase = g.phase_name
        g.step(action)
        in_round = 0 if g.round_over else in_round + 1
        lasts = [last_decision_text(g, start, None, names)] + [
            last_decision_text(g, start, s, names) for s in range(n)
        ]
        decision = {"legal": [[a, action_label(a, p, names)] for a in legal],
                    "action": action, "probs": probs}
        seats = []
        for s in range(n):
            entry: dict[str, Any] = {"table": tables[1 + s], "events": lasts[1 + s]}
            if s == p:
                entry.update(decision)
            seats.append(entry)
        steps.append({
            "decision": len(steps), "actor": p, "phase": phase,
            "spectator": {"table": tables[0], "events": lasts[0], **decision},
            "seats": seats,
        })
    tables = _tables(g, names, lasts)
    steps.append({
        "decision": len(steps), "actor": -1, "phase": PHASE_NAMES[g.phase],
        "spectator": {"table": tables[0], "events": ""},
        "seats": [{"table": tables[1 + s], "events": ""} for s in range(n)],
    })
    winner = None if capped else g.winner
    return {
        "title": title or f"{n} players: {', '.join(labels)} (seed {game_seed})",
        "seed": game_seed,
        "rules": rules.to_dict(),
        "players": n,
        "names": names,
        "agents": labels,
        "agent_seeds": seeds,
        "max_steps": max_steps,
        "result": {
            "winner": winner, "scores": list(g.scores), "decisions": g.num_steps,
            "end": "capped" if capped else ("win" if winner is not None else "no_winner"),
        },
        "steps": steps,
    }


def record_games(
    agent_specs: Sequence[str],
    num_players: int,
    seed: int = 0,
    rules: Mapping[str, Any] | Rules | None = None,
    games: int = 1,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> dict[str, Any]:
    """A recording of ``games`` games of the agents ``agent_specs`` (cycled over the seats:
    ``greedy,random`` at 3 players seats ``greedy, random, greedy``).

    Game ``i`` is dealt with seed ``seed + i`` (``Game(rules, seed=seed + i)``, the deal of
    ``uno-mk play --seed`` with that seed, and game 0 of a recording with that seed); the agent
    at seat ``s`` is seeded with :func:`uno_mk_env.seeding.derive_seed` ``(seed + i, s)``, so
    the same arguments give the same recording.

    Raises:
        AgentSpecError: an agent spec cannot be built. RulesError: a bad rule option.
        ValueError: bad ``games``/``seed``/``max_steps``. AgentError: an agent failed.
    """
    from uno_mk_env.evaluation.tournament import make_rules
    from uno_mk_env.seeding import derive_seed

    rules_obj = make_rules(rules, num_players)
    for name, value, low in (("games", games, 1), ("seed", seed, 0), ("max_steps", max_steps, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"{name} must be an int ≥ {low}, got {value!r}")
    if not agent_specs:
        raise ValueError("no agents given")
    specs = [agent_specs[s % len(agent_specs)] for s in range(num_players)]
    out = []
    for i in range(games):
        # Not derive_seed(seed, i): the deal seed is the public contract above (``--seed S``
        # game i is ``--seed S+i`` game 0), printed in the CLI help and kept in recordings.
        game_seed = seed + i
        players = [build_agent(spec, seed=0) for spec in specs]
        agent_seeds = [derive_seed(game_seed, s) for s in range(num_players)]
        out.append(record_game(players, rules_obj, game_seed, agent_seeds, specs, max_steps))
    return recording(out)


def recording(games: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The top-level recording holding ``games`` (as :func:`record_game` makes them)."""
    return {"format": FORMAT, "version": VERSION, "env_version": ENV_VERSION,
            "games": list(games)}


# ------------------------------------------------------------------------------ files
def load_recording(path: str | Path) -> dict[str, Any]:
    """Reads a recording: a JSON file written by ``uno-mk replay --json`` or the
    ``replays.json`` of ``uno-mk tournament --replays N`` (a directory is searched for it).

    Raises:
        ReplayError: the file is missing, not JSON, or not a recording (one line naming it).
    """
    p = Path(path).expanduser()
    if p.is_dir():
        p = p / "replays.json"
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ReplayError(f"cannot read replay file {str(p)!r}: {e.strerror or e}") from None
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ReplayError(f"{str(p)!r} is not JSON: {e}") from None
    check_recording(data, str(p))
    return data


def check_recording(data: Any, where: str = "recording") -> None:
    """Checks the structure the viewer relies on.

    Raises:
        ReplayError: naming the first field that is missing or wrong.
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReplayError(f"{where} is not a replay recording (expected \"format\": "
                          f"{FORMAT!r})")
    if data.get("version") != VERSION:
        raise ReplayError(f"{where}: replay format version {data.get('version')!r} is not "
                          f"supported (this version reads {VERSION})")
    games = data.get("games")
    if not isinstance(games, list) or not games:
        raise ReplayError(f"{where}: \"games\" must be a non-empty list")
    for i, game in enumerate(games):
        if not isinstance(game, dict):
            raise ReplayError(f"{where}: games[{i}] is not an object")
        for key in ("players", "names", "steps", "title", "result"):
            if key not in game:
                raise ReplayError(f"{where}: games[{i}] has no {key!r}")
        n = game["players"]
        if not isinstance(game["steps"], list) or not game["steps"]:
            raise ReplayError(f"{where}: games[{i}].steps must be a non-empty list")
        for j, step in enumerate(game["steps"]):
            seats = step.get("seats") if isinstance(step, dict) else None
            if (not isinstance(step, dict) or "spectator" not in step
                    or not isinstance(seats, list) or len(seats) != n):
                raise ReplayError(f"{where}: games[{i}].steps[{j}] needs \"spectator\" and "
                                  f"{n} \"seats\"")


def select_games(data: Mapping[str, Any], indices: Sequence[int] | None) -> dict[str, Any]:
    """The recording with only the games ``indices`` (all when ``None``).

    Raises:
        ReplayError: an index outside the recording.
    """
    games = data["games"]
    if indices is None:
        return dict(data)
    for i in indices:
        if not 0 <= i < len(games):
            raise ReplayError(f"game {i} is not in the recording (games 0-{len(games) - 1})")
    return {**data, "games": [games[i] for i in indices]}


def _script_json(value: Any) -> str:
    """JSON safe inside ``<script>``: no ``<``, ``>`` or ``&`` (names are user text)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def replay_html(data: Mapping[str, Any], title: str | None = None) -> str:
    """One self-contained HTML page showing the recording ``data`` (see the module docstring).

    Raises:
        ReplayError: ``data`` is not a recording.
    """
    from uno_mk_env.evaluation.replay_viewer import CSS, JS, PAGE

    check_recording(data)
    constants = {
        "geometry": GEOMETRY, "palette": PALETTE, "item_names": ITEM_NAMES,
        "item_effects": ITEM_EFFECTS, "colours": COLOURS, "colour_names": COLOUR_NAMES,
        "card_names": dict(zip(CODES, NAMES)),
    }
    games = data["games"]
    title = title or (games[0]["title"] if len(games) == 1 else f"{len(games)} games")
    page = PAGE
    for key, value in (("TITLE", _html_escape("UNO Mario Kart replay: " + title)),
                       ("CSS", CSS), ("JS", JS), ("CONSTANTS", _script_json(constants)),
                       ("DATA", _script_json(dict(data)))):
        page = page.replace("{{" + key + "}}", value)
    return page


def _html_escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def write_html(data: Mapping[str, Any], path: str | Path, title: str | None = None) -> Path:
    """Writes :func:`replay_html` to ``path`` (parents created); returns the path.

    Raises:
        ReplayError: ``data`` is not a recording, or ``path`` cannot be written.
    """
    target = Path(path).expanduser()
    html = replay_html(data, title)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
    except OSError as e:
        raise ReplayError(f"cannot write {str(target)!r}: {e.strerror or e}") from None
    return target


def write_json(data: Mapping[str, Any], path: str | Path) -> Path:
    """Writes a recording as JSON (parents created); returns the path.

    Raises:
        ReplayError: ``path`` cannot be written.
    """
    target = Path(path).expanduser()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    except OSError as e:
        raise ReplayError(f"cannot write {str(target)!r}: {e.strerror or e}") from None
    return target


# --------------------------------------------------------------------------- tournaments
def record_tournament_games(
    tasks: Sequence[Any],
    entrants: Sequence[tuple[str, str]],
    rules: Rules,
    max_steps: int,
    records: Sequence[Any],
) -> list[dict[str, Any]]:
    """Records the tournament games ``tasks`` again, exactly as the tournament played them
    (same deal seed, same agent seeds; agents are deterministic given their seed), and checks
    each against its ``records`` entry (winner and number of decisions).

    Raises:
        AgentError: an agent failed, or a game did not replay as it was played (an agent that
            is not deterministic given its seed).
    """
    by_index = {r.index: r for r in records}
    out = []
    for task in tasks:
        labels = [entrants[e][0] for e in task.seats]
        players = [build_agent(entrants[e][1], seed=0) for e in task.seats]
        game = record_game(players, rules, task.game_seed, task.agent_seeds, labels, max_steps,
                           title=f"game {task.index} (deal {task.deal}): {', '.join(labels)}")
        record = by_index.get(task.index)
        result = game["result"]
        if record is not None and (result["winner"], result["decisions"]) != (
                record.winner, record.decisions):
            raise AgentError(
                f"game {task.index} did not replay as it was played (winner {record.winner}, "
                f"{record.decisions} decisions; replayed: winner {result['winner']}, "
                f"{result['decisions']} decisions): an agent is not deterministic given its seed"
            )
        game["index"] = task.index
        out.append(game)
    return out

