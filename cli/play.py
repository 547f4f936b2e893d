"""``uno-mk play``: a person plays against agents in the terminal.

::

    uno-mk play --opponents greedy,random --players 3 --seed 1 [--rule uno_catch=next_player]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import numpy as np

from uno_mk_env import Game, PlayerView, Rules
from uno_mk_env import actions as A
from uno_mk_env.agents import Agent
from uno_mk_env.agents.base import build_agent
from uno_mk_env.engine.cards import CODE_TO_KIND, CODES, COLOUR_NAMES, COLOURS, W4
from uno_mk_env.engine.phases import Phase
from uno_mk_env.engine.rewards import places
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.evaluation.match import MatchStopped, play_match
from uno_mk_env.render.text import RecentDecisions, action_text, offered_actions, render_game

from .common import CLIError, add_rule_args, check_agents, players, rules_from_args, specs

MAX_RECENT_DECISIONS = 20  #: decisions of the others shown before each of the player's turns


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("play", help="play against agents in the terminal",
                              description="Play UNO Mario Kart in the terminal against agents.")
    p.add_argument("--opponents", default="random",
                   help="comma-separated agent specs, cycled over the other seats "
                        "(default: random; see 'uno-mk agents')")
    p.add_argument("--players", type=int, help="players at the table, 2-10 "
                   "(default: you + one per opponent)")
    p.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    p.add_argument("--seed", type=int, help="game seed (default: a fresh one, printed)")
    add_rule_args(p)


def run(args: argparse.Namespace, out: TextIO) -> int:
    opponents = specs(args.opponents, "--opponents")
    rules = rules_from_args(args.preset, args.rule, args.rounds_to_500)
    n = players(args.players, rules, 1 + len(opponents))
    if len(opponents) > n - 1:
        raise CLIError(f"{len(opponents)} opponents do not fit a table of {n}")
    if not 0 <= args.seat < n:
        raise CLIError(f"bad --seat {args.seat}: seats are 0 to {n - 1}")
    check_agents(opponents)
    seed = args.seed
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    elif seed < 0:
        raise CLIError(f"--seed must be a non-negative int, got {seed}")
    rules.pop("num_players", None)
    input_fn = getattr(args, "input_fn", None) or input
    return play(opponents, n, seed, rules, seat=args.seat, input_fn=input_fn, output=out)


def choice_label(action: int, view: PlayerView, names: Sequence[str]) -> str:
    """A menu line: what choosing ``action`` means, in words
    (:func:`uno_mk_env.render.text.action_text`), with the code a card may be typed by."""
    label = action_text(action, view, names)
    return f"{label} [{CODES[action]}]" if action < A.DRAW else label


_WORDS = {
    A.DRAW: {"draw", "d"}, A.KEEP: {"keep", "k"}, A.CHALLENGE: {"challenge", "c"},
    A.ACCEPT: {"accept", "a"}, A.CALL_UNO: {"uno", "call", "u"}, A.CATCH_UNO: {"catch"},
}


def _aliases(action: int) -> set[str]:
    """Words the player may type instead of the choice's number."""
    words = {A.ACTION_NAMES[action].lower()}
    if action < A.DRAW:
        words.add(CODES[action].lower())
    elif A.COLOUR_BASE <= action < A.TARGET_BASE:
        c = action - A.COLOUR_BASE
        words |= {COLOURS[c].lower(), COLOUR_NAMES[c].lower()}
    else:
        words |= _WORDS.get(action, set())
    return words


def why_not(action: int, view: PlayerView, rules: Rules) -> str:
    """Why the word the player typed (meaning ``action``) is not a choice now (docs/rules.md
    R8 for the UNO call and catch)."""
    if action == A.CALL_UNO:
        if rules.uno == "off":
            return "You cannot call UNO: these rules have no UNO call (uno=off)."
        held = int(sum(view.hand))
        if view.uno_called[view.seat] and held == 2:
            return "You have already called UNO."
        if view.phase not in (Phase.PLAY, Phase.PLAY_DRAWN):
            return "You cannot call UNO now: UNO is called on your turn, before you play a card."
        if held == 2:
            return ("You cannot call UNO now: you have no card to play after it (UNO is called "
                    "before playing your second-to-last card); draw instead.")
        return ("You cannot call UNO now: UNO is called holding exactly two cards, before "
                f"playing the second-to-last one (you hold {held}).")
    if action == A.CATCH_UNO:
        if rules.uno == "off":
            return "You cannot catch anyone: these rules have no UNO call (uno=off)."
        return ("You cannot catch anyone now: a catch is possible only at your first decision "
                "after a player was left with one card without calling UNO"
                + (" (and only with uno_catch=next_player; by default every miss is caught "
                   "automatically)." if rules.uno_catch != "next_player" else "."))
    if action < A.DRAW:
        return f"You cannot play {CODES[action]} now."
    return f"You cannot {A.ACTION_NAMES[action].lower().replace('_', ' ')} now."


_PHASE_HELP: dict[int, str] = {
    Phase.PLAY: "Play a card matching the active colour, or the top card's number or symbol, or a "
            "wild (W4, WB) - or draw one card instead (you may then play it if it fits). "
            "With two cards, call UNO before playing the second-to-last one.",
    Phase.PLAY_DRAWN: "You drew a card that fits: play it now or keep it (your turn ends).",
    Phase.CHOOSE_COLOUR: "Name the colour the next player must match.",
    Phase.CHOOSE_TARGET: "Green Shell: choose the opponent who draws one card.",
    Phase.CHALLENGE: "You were hit by a Wild Draw Four. It was legal only if its player held "
                       "no card of the colour that was active. Challenge: if it was illegal they "
                       "draw 4 and you play on; if it was legal you draw 6 and lose your turn. "
                       "Or accept: draw 4 and lose your turn.",
}

HELP = """Commands:
  1, 2, ...      choose that option
  R7, W4, WB     play that card;  draw / keep / uno / catch / challenge / accept;  red, y, ...
  ? or help      this help
  show           show the table again
  q or quit      leave the game
Cards: colour R Y G B + 0-9, S (Skip), R (Reverse), D (Draw Two); W4 = Wild Draw Four,
WB = Wild Item Box (flips the next card: red Mushroom = extra turn, yellow Banana = the player
before you draws 2, green Shell = an opponent of your choice draws 1, blue Lightning = all others
draw 1 and you play again, wild Bob-omb = you draw 2 and name a colour)."""


def seat_names(labels: Sequence[str], seat: int | None = None) -> list[str]:
    """``P<seat>:<label>`` per seat; the person's own seat is just ``P<seat>`` (the table marks
    it "(you)")."""
    return [f"P{s}" if s == seat else f"P{s}:{label}" for s, label in enumerate(labels)]


class TerminalPlayer(Agent):
    """The person at the terminal as an :class:`~uno_mk_env.agents.Agent` of the match driver
    (:mod:`uno_mk_env.evaluation.match`), and its observer: it keeps the recent decisions, and
    for each of the person's decisions shows the table as their seat sees it and asks
    (:func:`ask`). Quitting raises :class:`~uno_mk_env.evaluation.match.MatchStopped`."""

    name = "you"
    needs_observation = False

    def __init__(self, seat: int, names: Sequence[str], rules: Rules,
                 input_fn: Callable[[str], str], say: Callable[[str], None]) -> None:

        super().__init__()
        self.seat, self.names, self.rules = seat, list(names), rules
        self.input_fn, self.say = input_fn, say
        self.history = RecentDecisions(maxlen=None)
        self.shown_from = 0
        self._game: Game | None = None

    # observer: what the driver shows every seat's decisions (as the render's "Last events")
    def start(self, game: Game) -> None:
        self._game = game
        self.history.start(game)

    def before(self, game: Game, seat: int) -> None:
        self.history.before(game)

    def after(self, game: Game, seat: int, action: int) -> None:
        self.history.after(action)

    def recent(self) -> list[tuple[int, int]]:
        """The decisions since the person's last one (at most :data:`MAX_RECENT_DECISIONS`)."""
        items = list(self.history)
        return items[max(self.shown_from, len(items) - MAX_RECENT_DECISIONS):]

    def table(self, done: bool = False) -> str:
        """The table as the person's seat sees it."""

        assert self._game is not None
        return render_game(self._game, self.seat, self.names, self.recent(), done=done,
                           choices=False)

    def act(self, observation: np.ndarray | None, action_mask: np.ndarray,
            view: PlayerView) -> int:
        table = self.table()
        self.say("")
        self.say(table)
        action = ask(view, self.names, self.input_fn, self.say, table, self.rules)
        if action is None:
            raise MatchStopped("the player left the game")
        self.shown_from = len(self.history)
        return action


def play(
    opponents: Sequence[str],
    num_players: int,
    seed: int,
    rules: dict[str, Any] | None = None,
    seat: int = 0,
    input_fn: Callable[[str], str] = input,
    output: TextIO | None = None,
) -> int:
    """A person plays at ``seat`` against agents (cycled over the other seats), in the terminal,
    through the match driver (:func:`uno_mk_env.evaluation.match.play_match`: no step cap; the
    agents are seeded with ``derive_seed(seed, seat)`` when built).

    Every decision of the person is prompted with numbered choices; bad input is re-prompted.
    ``input_fn`` and ``output`` let tests script a whole game. Returns 0 (a game finished, or
    the player quit).
    """
    out = output if output is not None else sys.stdout

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    rules_obj = Rules(**{**(rules or {}), "num_players": num_players})
    n = num_players
    if not 0 <= seat < n:
        raise CLIError(f"bad --seat {seat}: seats are 0 to {n - 1}")
    others = [s for s in range(n) if s != seat]
    labels = ["you"] * n
    players: list[Agent] = [None] * n  # type: ignore[list-item]
    for i, s in enumerate(others):
        spec = opponents[i % len(opponents)]
        players[s] = build_agent(spec, seed=derive_seed(seed, s))
        labels[s] = spec
    names = seat_names(labels, seat)
    person = TerminalPlayer(seat, names, rules_obj, input_fn, say)
    players[seat] = person
    length = {"single_round": "one round", "target_score": f"to {rules_obj.target_score} points",
              "fixed_rounds": f"{rules_obj.rounds} rounds"}[rules_obj.match]
    say(f"UNO Mario Kart ({length}): you are {names[seat]}; seed {seed}. Type ? for help.")
    try:
        outcome = play_match(players, rules_obj, seed, labels=names, observer=person)
    except MatchStopped:
        say("You left the game.")
        return 0
    say()
    say(person.table(done=True))
    say(result_text(outcome.game, seat, names))
    return 0


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _points(n: int) -> str:
    return f"{n} point{'s' if n != 1 else ''}"


def result_text(game: Game, seat: int, names: Sequence[str]) -> str:
    """How a finished game ended for the person at ``seat``, as sentences: their place and
    score first, then every other seat's, in place order (places as tournaments rank them,
    :func:`uno_mk_env.engine.rewards.places`: the winner, then score, then the points left in
    hand)."""
    n = game.num_players
    scores = list(game.scores)
    hand_points = [game.hand_points(s) for s in range(n)]
    place = places(game.winner, scores, hand_points)
    shared = {p for p in place if place.count(p) > 1}

    def finish(s: int, who: str) -> str:
        if s == game.winner:
            return f"{who} won with {_points(scores[s])}"
        joint = "joint " if place[s] in shared else ""
        return f"{who} finished {joint}{_ordinal(place[s])} with {_points(scores[s])}"

    others = sorted((s for s in range(n) if s != seat), key=lambda s: (place[s], s))
    text = "Game over: " + ("nobody won (stalemate). " if game.winner is None else "")
    text += finish(seat, "you") + "; " + ", ".join(finish(s, names[s]) for s in others) + "."
    by_hand = any(scores[a] == scores[b] and place[a] != place[b] and game.winner not in (a, b)
                  for a in range(n) for b in range(n))
    if by_hand:
        text += " Equal scores are ranked by the points of the cards left in hand, fewest first."
    return text


def ask(
    view: PlayerView,
    names: Sequence[str],
    input_fn: Callable[[str], str],
    say: Callable[[str], None],
    table: str,
    rules: Rules,
) -> int | None:
    """Prompts until a legal action is chosen; ``None`` when the player quits (or input ends).
    With a single choice (a Green Shell at two players), Enter takes it."""
    legal = _menu_order(offered_actions(view))
    lookup = _words_for(legal)
    # every action's words, to say why one is not a choice now
    known = _words_for((A.DRAW, A.KEEP, A.CHALLENGE, A.ACCEPT, A.CALL_UNO, A.CATCH_UNO))
    if len(legal) == 1:
        prompt = "Press Enter to choose 1 (? for help, q to quit): "
        hint = "Press Enter (or 1) to choose it, ? for help or q to quit."
    else:
        prompt = f"Choose 1-{len(legal)} (? for help, q to quit): "
        hint = f"Enter a number from 1 to {len(legal)}, ? for help or q to quit."

    def menu() -> None:
        say("Your choices:")
        for i, a in enumerate(legal, 1):
            say(f"  {i:>2}) {choice_label(a, view, names)}")

    menu()
    while True:
        try:
            raw = input_fn(prompt)
        except (EOFError, KeyboardInterrupt):
            say("")
            return None
        text = raw.strip().lower()
        if text in ("q", "quit", "exit"):
            return None
        if text in ("?", "h", "help"):
            say(_PHASE_HELP.get(view.phase, ""))
            say(HELP)
            menu()
            continue
        if text in ("show", "s", "table"):
            say(table)
            menu()
            continue
        action = _chosen(text, legal, lookup)
        if action is not None:
            return action
        reason = _not_a_choice(raw, text, view, rules, known)
        if reason is not None:
            say(reason)
        say(hint)


def _menu_order(actions: Sequence[int]) -> list[int]:
    """``actions`` in the order :func:`ask` numbers them: cards and other choices by id, then
    draw or keep, then a Wild Draw Four, then the reflex actions (call UNO, catch)."""
    order = {A.CATCH_UNO: 2, A.CALL_UNO: 1}  # the reflex actions after the real choices
    return sorted(actions, key=lambda a: (order.get(a, 0), a == A.DRAW or a == A.KEEP, a == W4, a))


def _words_for(actions: Sequence[int]) -> dict[str, int]:
    """Every word of ``actions`` (:func:`_aliases`) mapped to its action, the first action
    keeping a word two of them share."""
    words: dict[str, int] = {}
    for a in actions:
        for word in _aliases(a):
            words.setdefault(word, a)
    return words


def _chosen(text: str, legal: Sequence[int], lookup: dict[str, int]) -> int | None:
    """The action the player's (stripped, lower-case) ``text`` chooses from the numbered
    ``legal`` choices: Enter with a single choice, a number or a word; ``None`` if none."""
    if len(legal) == 1 and text == "":
        return legal[0]
    if text.isdigit() and 1 <= int(text) <= len(legal):
        return legal[int(text) - 1]
    return lookup.get(text)


def _not_a_choice(raw: str, text: str, view: PlayerView, rules: Rules,
                  known: dict[str, int]) -> str | None:
    """Why the player's input is not a choice now: for a card code or an action word, why that
    card or action cannot be chosen (:func:`why_not`); ``None`` for empty input."""
    if text.upper() in CODE_TO_KIND:
        return why_not(CODE_TO_KIND[text.upper()], view, rules)
    if text in known:
        return why_not(known[text], view, rules)
    if text:
        return f"{raw.strip()!r} is not a choice."
    return None
