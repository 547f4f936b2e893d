"""Documentation tables generated from the code's single sources of truth.

Any Markdown file of the project may hold blocks delimited by ``<!-- BEGIN generated:NAME -->``
/ ``<!-- END generated:NAME -->``; :func:`render` rewrites each block from
``GENERATORS[NAME]()``, and the tests fail when a committed file differs from its regeneration
(so the docs cannot go stale). Each table is generated into exactly one page of the
documentation site (``docs/environment.md``, ``docs/rules.md``, ``docs/api.md``,
``docs/ladder.md``); the README
holds none. Regenerate every file with::

    python tools/env_docs.py docs/*.md

(``--check`` lists stale files and exits 1 instead of writing). The blocks need only numpy and
the engine, except ``env_summary``, ``env_arguments`` and ``env_versions`` (docs/environment.md),
which import the PettingZoo env (the ``env`` extra), and ``shipped_ladder`` and
``shipped_ladder_commands`` (docs/ladder.md), which read the shipped agents' ladder folder
(benchmarks/ladder/) and fit its ratings (the ``eval`` extra), only when a file holds them.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import sys
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from uno_mk_env.engine import actions, cards
from uno_mk_env.engine.phases import PHASE_NAMES
from uno_mk_env.engine.rules import OPTIONS, PRESETS, Rules, options_table


def action_table() -> str:
    """The action-id table (docs/api.md#actions-and-phases), from
    :data:`uno_mk_env.engine.actions.ACTION_TABLE`."""
    rows = ["| ids | action | legal when (phase) |", "|---|---|---|"]
    rows += [f"| {ids} | {name} | {when} |" for ids, name, when in actions.ACTION_TABLE]
    return "\n".join(rows)


def card_table() -> str:
    """Kind ids, codes, names, copies, points and items of the 54 card kinds (R2,
    docs/api.md#card-kinds)."""
    rows = ["| kind ids | codes | cards | copies each | points | item |", "|---" * 6 + "|"]
    for c, colour in enumerate(cards.COLOUR_NAMES):
        base = 13 * c
        item = cards.ITEM_NAMES[c]
        rows.append(f"| {base}–{base + 9} | `{cards.CODES[base]}`…`{cards.CODES[base + 9]}` | "
                    f"{colour} 0–9 | 1 (0), 2 (1–9) | face value | {item} |")
        rows.append(f"| {base + 10}, {base + 11}, {base + 12} | `{cards.CODES[base + 10]}`, "
                    f"`{cards.CODES[base + 11]}`, `{cards.CODES[base + 12]}` | {colour} Skip, "
                    f"Reverse, Draw Two | 2 | 20 | {item} |")
    for k in (cards.W4, cards.WB):
        rows.append(f"| {k} | `{cards.CODES[k]}` | {cards.NAMES[k]} | {cards.COPIES[k]} | "
                    f"{cards.POINTS[k]} | {cards.ITEM_NAMES[cards.ITEM_OF[k]]} |")
    return "\n".join(rows)


def presets_table() -> str:
    """The named rule presets (:data:`uno_mk_env.engine.rules.PRESETS`) and the options they
    change."""
    rows = ["| preset | options changed from the defaults |", "|---|---|"]
    for name, options in PRESETS.items():
        changed = ", ".join(f"`{k}={v!r}`".replace("'", '"') for k, v in options.items())
        rows.append(f"| `{name}` | {changed or '(none: the defaults)'} |")
    return "\n".join(rows)


#: What each decision phase is (the phase table of docs/api.md#actions-and-phases).
PHASE_DOCS: dict[str, str] = {
    "play": "a turn: play a card (R4.1), `DRAW` (R4.2), `CALL_UNO` (R8)",
    "play_drawn": "after a voluntary draw of a playable card: play it or `KEEP` it (R4.2), "
                  "`CALL_UNO` (R8)",
    "choose_colour": "name a colour after a W4 (R6), a Bob-omb (R7.2) or a WB start card (R3.3)",
    "choose_target": "pick the Green Shell's victim (R7.2)",
    "challenge": "the player hit by a W4: `CHALLENGE` or `ACCEPT` (R6.3)",
    "game_over": "terminal: no decider (`current_player` is -1), no legal action",
    "uno_catch": "out of turn, at the start of `turn_player`'s turn (R8 ruling; `uno_catch` "
                 "`\"next_player\"`/`\"any_player\"` only): `CATCH_UNO` the missed UNO of "
                 "`uno_catchable`, or let it pass (`ACCEPT`)",
}


def phase_table() -> str:
    """Phase ids and names (:data:`uno_mk_env.PHASE_NAMES`) with what is decided."""
    missing = set(PHASE_NAMES) ^ set(PHASE_DOCS)
    if missing:
        raise KeyError(f"PHASE_DOCS and PHASE_NAMES differ on {sorted(missing)}")
    rows = ["| id | phase | what the decider does |", "|---|---|---|"]
    rows += [f"| {i} | `{name}` | {PHASE_DOCS[name]} |"
             for i, name in enumerate(PHASE_NAMES)]
    return "\n".join(rows)


#: What each field of ``PlayerView`` holds (docs/api.md#playerview).
VIEW_DOCS: dict[str, str] = {
    "seat": "the viewing seat",
    "num_players": "players at the table",
    "rules": "the game's `Rules`",
    "phase": "phase id (see the phase table)",
    "current_player": "the decider's seat; -1 once the game is over",
    "hand": "own hand: `bytes` of 54 counts per kind",
    "top_card": "kind of the discard pile's top card",
    "active_colour": "colour to match, 0–3 (R, Y, G, B)",
    "drawn_card": "kind just drawn, only for the decider in `play_drawn`; else -1",
    "direction": "1 clockwise, -1 counter-clockwise",
    "hand_sizes": "cards in each hand, by absolute seat",
    "uno_called": "whether each seat has called UNO",
    "scores": "game scores, by absolute seat",
    "draw_pile_size": "cards in the draw pile",
    "discard_pile_size": "cards in the discard pile",
    "discard_counts": "the discard pile: `bytes` of 54 counts per kind",
    "w4_player": "seat that played this round's latest W4, or -1",
    "w4_prev_colour": "active colour before that W4, or -1",
    "revealed_hand": "the W4 player's hand this seat saw by its latest challenge this round "
                     "(counts; another seat's later challenge does not erase it), or `None`",
    "revealed_by": "whose hand that was, or -1",
    "last_item": "item last fired this round (`cards.ITEM_NAMES` index), or -1",
    "uno_catchable": "seat whose missed UNO may be caught now (`uno_catch` `\"next_player\"` or "
                     "`\"any_player\"`), or -1",
    "uno_pending": "seat holding one card without a call whose penalty or catch is still open, "
                   "or -1",
    "dealer": "this round's dealer",
    "round": "round number, from 1",
    "colour_context": "why a colour is being chosen: 0 W4, 1 Bob-omb, 2 start card (3 is never "
                      "used, R7.3); -1 outside `choose_colour`",
    "idle_turns": "turns in a row whose voluntary draw found nothing (R9)",
    "turn_player": "seat whose turn it is",
    "previous_turn_player": "the last other seat whose turn came before, or -1",
    "void_evidence": "`bytes`, index `4 * seat + colour`: 8 when that seat last drew voluntarily "
                     "facing that colour (R4.2), minus the cards it drew since, floored at 0",
    "w4_hand_size": "cards the latest W4's player held beside it when playing it (public), "
                    "or -1",
    "w4_illegal": "whether that W4 broke R6.1 (1/0), only for the seat that played it; -1 "
                  "for the others",
    "legal_actions": "legal action ids, only for the decider; else `()`",
}


def view_table() -> str:
    """The fields of :class:`~uno_mk_env.PlayerView`, in order, with their meaning."""
    from uno_mk_env.engine.view import PlayerView

    missing = set(PlayerView._fields) ^ set(VIEW_DOCS)
    if missing:
        raise KeyError(f"VIEW_DOCS and PlayerView._fields differ on {sorted(missing)}")
    rows = ["| field | meaning |", "|---|---|"]
    rows += [f"| `{name}` | {VIEW_DOCS[name]} |" for name in PlayerView._fields]
    return "\n".join(rows)


#: What each key of ``Game.to_dict()`` holds (docs/api.md#state-dicts).
STATE_DOCS: dict[str, str] = {
    "format": "state-dict format number (this version reads 1)",
    "rules": "rule options (a partial mapping is filled with defaults)",
    "hands": "one list of card codes per seat",
    "draw_pile": "card codes; `draw_pile[0]` is drawn first",
    "discard_pile": "card codes; `discard_pile[-1]` is the top card",
    "active_colour": "`\"R\"`, `\"Y\"`, `\"G\"` or `\"B\"`",
    "current_player": "the decider's seat (`null` once the game is over)",
    "direction": "1 (clockwise) or -1",
    "phase": "a phase name",
    "dealer": "this round's dealer",
    "scores": "game scores, one int per seat",
    "round": "round number, from 1",
    "drawn_card": "the card just drawn, in `play_drawn` only",
    "uno_called": "one bool per seat",
    "uno_miss": "seat with a pending missed UNO, or `null`",
    "w4": "the latest W4: `player`, `previous_colour`, `illegal`, `hand_size`; or `null`",
    "colour_context": "why a colour is chosen (`w4`, `bob_omb`, `start`), or `null`",
    "reveals": "the hands challenges revealed this round, one per challenger (its latest): a "
               "list of `player`, `to`, `hand` (older dicts' `reveal`, one or `null`, is read "
               "too)",
    "last_item": "item name last fired this round, or `null`",
    "idle_turns": "stalemate count (R9)",
    "turn_player": "seat whose turn it is",
    "previous_turn_player": "the last other seat whose turn came before (-1: none)",
    "void_evidence": "one list of 4 ints 0–8 per seat (see `PlayerView.void_evidence`)",
    "round_over": "the last step ended a round",
    "game_over": "the game is over",
    "winner": "the game's winner, or `null`",
    "round_winner": "the latest round's winner, or `null`",
    "round_hand_points": "each seat's hand points when the latest round ended, or `null`",
    "num_steps": "decisions taken",
    "num_keeps": "of those, `KEEP`s (hidden from other seats: the public count is "
                 "`num_steps - num_keeps`, `Game.public_steps`)",
    "rng": "the game's bit-generator state (big integers as strings)",
}


def state_keys_table() -> str:
    """The keys of ``Game.to_dict()``, in order; which a minimal position must give."""
    from uno_mk_env.engine.game import Game
    from uno_mk_env.engine.state import REQUIRED

    keys = list(Game(seed=0).to_dict())
    missing = set(keys) ^ set(STATE_DOCS)
    if missing:
        raise KeyError(f"STATE_DOCS and Game.to_dict() differ on {sorted(missing)}")
    rows = ["| key | required | meaning |", "|---|---|---|"]
    rows += [f"| `{k}` | {'yes' if k in REQUIRED else ''} | {STATE_DOCS[k]} |" for k in keys]
    return "\n".join(rows)


def events_format() -> str:
    """The event tuples, as the :mod:`uno_mk_env.engine.events` docstring lists them."""
    from uno_mk_env.engine import events

    literal = re.search(r"::\n\n((?:    .*\n|\n)+?)\n(?!    )", events.__doc__)
    if literal is None:
        raise ValueError("uno_mk_env.engine.events lost its '::' block of event formats")
    lines = [line[4:] for line in literal.group(1).rstrip().splitlines()]
    reasons = ", ".join(f"`{r}`" for r in events.DRAW_REASONS)
    return "```text\n" + "\n".join(lines) + "\n```\n\nDraw reasons: " + reasons + "."


def _observation_layout() -> str:
    from uno_mk_env.engine import observation

    return observation.layout_markdown()


def _state_layout() -> str:
    from uno_mk_env.engine import observation

    return observation.state_layout_markdown()


# ------------------------------------------------------------------ the environment page
def _player_range() -> tuple[int, int]:
    """The smallest and largest ``num_players`` the rules accept."""
    spec = OPTIONS["num_players"]
    ok = [n for n in range(0, actions.MAX_OPPONENTS + 3) if spec.check(n)]
    return ok[0], ok[-1]


def env_summary() -> str:
    """The PettingZoo-style summary table of ``uno_mario_kart_v0``."""
    from uno_mk_env.engine import observation
    from uno_mk_env.envs.aec import UnoMarioKartEnv

    meta = UnoMarioKartEnv.metadata
    low, high = _player_range()
    default = OPTIONS["num_players"].default
    top = observation.observation_high(Rules()).max()
    rows = [
        ("Import", f"`from uno_mk_env import {meta['name']}`"),
        ("Actions", "Discrete"),
        ("Parallel API", "Yes" if meta["is_parallelizable"] else "No"),
        ("Manual Control", "No (play against agents in a terminal: `uno-mk play`)"),
        ("Agents", f"`agents= ['player_0', …, 'player_{{N-1}}']` (N = `num_players`, "
                   f"default {default})"),
        ("Num Agents", f"{low}–{high}"),
        # a Discrete space's sample is one integer: shape (), values 0..n-1 (PettingZoo's pages)
        ("Action Shape", "()"),
        ("Action Values", f"[0, {actions.NUM_ACTIONS - 1}] (`Discrete({actions.NUM_ACTIONS})`)"),
        ("Observation Shape", f"({observation.OBS_SIZE},)"),
        ("Observation Values", f"[0, {top:g}] (default rules; per entry: "
                               "`observation.observation_high(rules)`)"),
        ("State Shape", f"({observation.STATE_SIZE},)"),
        ("Render Modes", ", ".join(f"`{m}`" for m in meta["render_modes"])),
    ]
    lines = [f"| {k} | {v} |" for k, v in rows]
    lines.insert(1, "|---|---|")  # the first row is the table's header, as on PettingZoo's pages
    return "\n".join(lines)


#: What each env argument means (docs/environment.md#arguments); defaults come from the code.
ENV_ARGUMENT_DOCS: dict[str, str] = {
    "num_players": "players at the table; agents `player_0` … `player_{N-1}` in seat order",
    "render_mode": "`render()` returns the table as text (`\"ansi\"`) or as an image "
                   "(`\"rgb_array\"`, `uint8` 800×1280×3), or shows the image in a window after "
                   "every step (`\"human\"`; the image modes need the `render` extra)",
    "reward": "`\"win\"`: +1 to the winner, −1/(N−1) to the others; `\"points\"`: round points "
              "/ 100 (see [Rewards](#rewards))",
    "max_steps": "decisions per episode before every agent is truncated (`None`: no limit; a "
                 "`KEEP` is not counted nor a `play_drawn` decision cut off, R4.2)",
    "render_seat": "whose view is rendered: `None` = the spectator's image (every hand face up) "
                   "and the deciding seat's text; a seat = only what it may know",
    "illegal_reward": "`env()` only: the mover's reward when an illegal action ends the episode "
                      "(`raw_env` raises `IllegalActionError` instead)",
}


def _env_parameters() -> dict[str, inspect.Parameter]:
    """The keyword arguments ``uno_mario_kart_v0.env()`` takes, by name (the raw env's and the
    guarded env's own)."""
    from uno_mk_env.envs.aec import GuardedUnoMarioKartEnv, UnoMarioKartEnv

    params = dict(inspect.signature(UnoMarioKartEnv.__init__).parameters)
    params.update(inspect.signature(GuardedUnoMarioKartEnv.__init__).parameters)
    return {n: p for n, p in params.items()
            if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


#: Width of the generated signature's lines: a code block this wide fits the docs page's
#: content column at 800 and 1280 px without a scroll bar.
SIGNATURE_WIDTH = 64


def env_signature() -> str:
    """The call ``uno_mario_kart_v0.env(...)`` with every argument's default, wrapped to
    :data:`SIGNATURE_WIDTH` columns."""
    params = _env_parameters()
    head = "uno_mario_kart_v0.env("
    call = head + " ".join([*(f"{n}={params[n].default!r}," for n in ENV_ARGUMENT_DOCS),
                            "**rule_options)"]).replace("'", '"')
    lines = textwrap.wrap(call, SIGNATURE_WIDTH, subsequent_indent=" " * len(head),
                          break_long_words=False, break_on_hyphens=False)
    return "```py\n" + "\n".join(lines) + "\n```"


def env_arguments() -> str:
    """The keyword arguments of ``uno_mario_kart_v0.env()``: its signature, then defaults and
    allowed values from the code, then every rule option."""
    from uno_mk_env.engine.rewards import REWARD_MODES
    from uno_mk_env.envs.screen import RENDER_MODES

    params = _env_parameters()
    low, high = _player_range()
    allowed = {
        "num_players": f"int {low}–{high}",
        "render_mode": " / ".join(["`None`"] + [f'`"{m}"`' for m in RENDER_MODES]),
        "reward": " / ".join(f'`"{m}"`' for m in REWARD_MODES),
        "max_steps": "int ≥ 1 / `None`",
        "render_seat": f"`None` / int 0–{high - 1}",
        "illegal_reward": "finite float",
    }
    missing = set(params) ^ set(ENV_ARGUMENT_DOCS)
    if missing:
        raise KeyError(f"ENV_ARGUMENT_DOCS and the env's arguments differ on {sorted(missing)}")
    rows = [env_signature(), "", "| argument | default | allowed | meaning |", "|---|---|---|---|"]
    for name in ENV_ARGUMENT_DOCS:
        default = f"`{params[name].default!r}`".replace("'", '"')
        rows.append(f"| `{name}` | {default} | {allowed[name]} | {ENV_ARGUMENT_DOCS[name]} |")
    rule_options = ", ".join(f"`{n}`" for n in OPTIONS if n not in params)
    rows.append(f"| every other rule option | | | {rule_options} "
                "([Rule options](rules.md#rule-options)) |")
    return "\n".join(rows)


def env_versions() -> str:
    """The ``Version History`` section of the ``uno_mario_kart_v0`` module docstring."""
    import importlib

    module = importlib.import_module("uno_mk_env.uno_mario_kart_v0")
    assert module.__doc__ is not None  # the docstring holds the version history
    section = module.__doc__.split("Version History\n", 1)[1]
    entries: list[str] = []
    for line in filter(None, map(str.strip, section.splitlines())):
        if re.match(r"v\d", line) or not entries:  # an entry starts with its env version
            entries.append(line)
        else:
            entries[-1] += " " + line
    return "\n".join(f"- {entry}" for entry in entries)


#: The shipped agents' ladder (docs/ladder.md): a ladder folder built with ``uno-mk ladder add``.
LADDER_DIR = "benchmarks/ladder"


@functools.cache  # both blocks of the page read it: one fit of the ratings
def _ladder() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    # the eval extra (scipy fits the ratings): imported only for a page holding these blocks
    from uno_mk_env.evaluation import ladder

    folder = Path(__file__).resolve().parent.parent / LADDER_DIR
    return ladder.load(folder), ladder.standings(folder)


def shipped_ladder() -> str:
    """The table of the shipped agents' ladder (:data:`LADDER_DIR`), as ``uno-mk ladder show``
    prints it, with the chance of beating ``strategic`` the ratings give."""
    _, rows = _ladder()
    anchor = next(r["rating"] for r in rows if r["agent"] == "strategic")
    out = ["| # | agent | rating | 95% interval | beats `strategic` | games | stopped |",
           "|---:|---|---:|---:|---:|---:|---|"]
    for i, r in enumerate(rows, 1):
        agent = f"`{r['agent']}`" + (" **cheats**" if r["cheats"] else "")
        chance = 1 / (1 + math.exp(anchor - r["rating"]))
        stop = {"first": "first entrant", "bound": f"interval < {r['bound']:g}",
                "max_games": f"at {r['max_games']:,} games (bound {r['bound']:g})"}
        out.append(f"| {i} | {agent} | {r['rating']:+.2f} | [{r['rating_ci_low']:+.2f}, "
                   f"{r['rating_ci_high']:+.2f}] | {chance:.3f} | {r['games']:,} | "
                   f"{stop.get(r['stopped'], 'unfinished')} |")
    return "\n".join(out)


def shipped_ladder_commands() -> str:
    """The commands that build the shipped agents' ladder, in the order its entrants joined."""
    data, _ = _ladder()
    lines = ["```bash"]
    for e in data["entrants"]:
        extra = (f" --seed {data['seed']}" if e["stopped"] == "first" else
                 f" --bound {e['bound']:g} --batch {e['batch']} --max-games {e['max_games']}"
                 + (" --allow-cheating" if e["cheats"] else ""))
        lines.append(f"uno-mk ladder add {e['spec']} --dir {LADDER_DIR}{extra}")
    return "\n".join([*lines, "```"])


#: Every generator, by block name: a ``generated:NAME`` block in any Markdown file of the project
#: is rewritten from ``GENERATORS[NAME]()``.
GENERATORS: dict[str, Callable[[], str]] = {
    "cards": card_table,
    "actions": action_table,
    "options": options_table,
    "observation": _observation_layout,
    "state": _state_layout,
    "presets": presets_table,
    "phases": phase_table,
    "view_fields": view_table,
    "state_keys": state_keys_table,
    "events": events_format,
    "env_summary": env_summary,
    "env_arguments": env_arguments,
    "env_versions": env_versions,
    "shipped_ladder": shipped_ladder,
    "shipped_ladder_commands": shipped_ladder_commands,
}

_BLOCK = re.compile(
    r"(<!-- BEGIN generated:(?P<name>[a-z_]+) -->\n)(?P<body>.*?)"
    r"(<!-- END generated:(?P=name) -->)",
    re.S,
)


def render(text: str) -> str:
    """``text`` (any Markdown file) with every generated block rewritten from the code.

    Raises:
        KeyError: for a block whose name is not in :data:`GENERATORS`.
    """

    def fill(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in GENERATORS:
            raise KeyError(f"unknown generated block {name!r}; known: {', '.join(GENERATORS)}")
        return f"{m.group(1)}{GENERATORS[name]()}\n{m.group(4)}"

    return _BLOCK.sub(fill, text)


def block_names(text: str) -> list[str]:
    """Names of the generated blocks present in ``text``."""
    return [m.group("name") for m in _BLOCK.finditer(text)]


def stale(paths: Iterable[Path]) -> list[Path]:
    """The files among ``paths`` whose generated blocks differ from a fresh regeneration."""
    return [p for p in paths if render(t := p.read_text(encoding="utf-8")) != t]


def main(argv: list[str] | None = None) -> int:
    """Rewrites the generated blocks of the given Markdown files in place (default: README.md
    and docs/*.md under the working directory). ``--check``: write nothing, list the stale
    files, exit 1 if there are any."""
    import argparse

    parser = argparse.ArgumentParser(prog="python tools/env_docs.py",
                                     description=(main.__doc__ or "").split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="Markdown files (default: "
                        "README.md and docs/*.md)")
    parser.add_argument("--check", action="store_true", help="write nothing; list the stale "
                        "files and exit 1 if there are any")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    paths = args.files or [Path("README.md"), *sorted(Path("docs").glob("*.md"))]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no such file: {', '.join(missing)}")
    if args.check:
        old = stale(paths)
        for path in old:
            print(f"{path}: stale, run python tools/env_docs.py", file=sys.stderr)
        return 1 if old else 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        new = render(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
