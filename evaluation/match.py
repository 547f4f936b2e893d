"""The one match driver: plays one game among agents (in the spirit of OpenSpiel's
``evaluate_bots``). Tournaments, the evaluation protocol, replays, ``uno-mk play`` and the best
response's evaluation all play their games through :func:`play_match`.

One game
    Every agent is reset with its seed (``agent_seeds``; none when the caller seeded the
    agents itself), the deal is ``Game(rules, seed=game_seed)`` (the seed fixes every shuffle),
    and every decision is asked of the current decider through
    :func:`~uno_mk_env.agents.base.agent_action` (its view, its observation, the mask; an illegal
    action or an exception is one :class:`~uno_mk_env.agents.base.AgentError` line). A person at
    the terminal is an agent like any other (``uno_mk_env.cli.play``).

The step cap
    A round that reaches ``max_steps`` public decisions without ending stops the game: it is
    *capped* and counted as having no winner (``None``: no cap). As in the env, a KEEP is not
    counted (other seats cannot tell it from drawing an unplayable card) and a game is never
    capped while a drawn card awaits its decision.

The cheating policy (stated here once)
    An agent with ``cheats = True`` (:class:`uno_mk_env.agents.oracle.CheatingAgent`) sees hidden
    cards: it plays only where the caller admits it (``allow_cheating``, the ``--allow-cheating``
    flag of the commands); anywhere else it is refused with one line before a card is dealt
    (:func:`admit`). Where it is admitted, the driver shows it the true game before each of its
    decisions (``observe_game``). The protocol's opponents and a best response's target are
    never admitted (their callers pass ``allow_cheating=False`` with their own reason).

The engine
    Where the compiled core runs (``UNO_MK_ENGINE``, docs/compiled.md) the game is played on it
    (:class:`~uno_mk_env.compiled._core.MatchTable`) and every seat whose agent names a compiled
    twin (``random``, ``greedy``, ``strategic``: :meth:`Agent.compiled_twin`) decides inside the
    core, from the generator state its ``reset`` left; the other seats are asked in Python from
    the core's views, as on the Python engine. The game, every choice and the outcome are the
    same, seed for seed (``tests/test_compiled_match.py``); ``outcome.game`` is then a
    ``CompiledGame`` (``Game``'s interface) and a random agent's generator is handed back as the
    game left it. The Python engine plays instead with an observer, a cheating agent, a
    strategic agent that was not reset (its memory of an earlier game lives in Python), a twin
    whose generator is not a PCG64, or ``UNO_MK_ENGINE=python``.

Observers
    An observer (``start(game)`` after the deal, ``before(game, seat)`` before each decision,
    ``after(game, seat, action)`` after the step) sees the game as it is played: the replay
    recorder and the terminal game use one. Observers must not change the game.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np

from uno_mk_env import Game, PlayerView, Rules, RulesError
from uno_mk_env import actions as A
from uno_mk_env.agents.base import Agent, AgentError, AgentSpecError, agent_action
from uno_mk_env.compiled import core
from uno_mk_env.errors import UnoMkError

if TYPE_CHECKING:
    from uno_mk_env.compiled._core import MatchTable

__all__ = ["MatchObserver", "MatchOutcome", "MatchStopped", "admit", "cheating_refusal",
           "cheats", "make_rules", "play_match"]


class MatchStopped(UnoMkError):
    """Raised by an agent (a person leaving the game) to end the game at once; :func:`play_match`
    lets it through instead of reporting an agent failure."""


class MatchObserver(Protocol):
    """What :func:`play_match` calls around each decision (see the module docstring)."""

    def start(self, game: Game) -> None: ...

    def before(self, game: Game, seat: int) -> None: ...

    def after(self, game: Game, seat: int, action: int) -> None: ...


@dataclass(frozen=True)
class MatchOutcome:
    """How a game ended: the finished (or capped) ``game``; ``capped`` when a round reached the
    step cap; ``winner`` is ``None`` then, after a stalemate or a tied fixed-rounds game."""

    game: Game  # or a CompiledGame (Game's interface) where the core played it
    capped: bool

    @property
    def winner(self) -> int | None:
        return None if self.capped else self.game.winner

    @property
    def end(self) -> str:
        """``"win"``, ``"no_winner"`` or ``"capped"``."""
        if self.capped:
            return "capped"
        return "win" if self.game.winner is not None else "no_winner"


def cheats(agent: Any) -> bool:
    """Whether ``agent`` sees hidden cards (``cheats = True``)."""
    return bool(getattr(agent, "cheats", False))


def cheating_refusal(label: str) -> str:
    """The one-line refusal of a cheating agent where cheating is not admitted."""
    return (f"agent {label!r} cheats (it sees hidden cards) and is refused here; it is only a "
            "reference for the skill ceiling, admitted only where cheating is allowed "
            "(allow_cheating=True; uno-mk tournament and evaluate --allow-cheating)")


def admit(agent: Any, label: str, allow_cheating: bool, refusal: str | None = None) -> bool:
    """The cheating policy (module docstring): returns whether ``agent`` cheats.

    Raises:
        AgentSpecError: ``agent`` cheats and ``allow_cheating`` is false; the message is
            ``refusal`` (default :func:`cheating_refusal` of ``label``).
    """
    if cheats(agent) and not allow_cheating:
        raise AgentSpecError(refusal or cheating_refusal(label))
    return cheats(agent)


def make_rules(rules: Mapping[str, Any] | Rules | None, num_players: int) -> Rules:
    """Validated rules for a table of ``num_players`` (a ``num_players`` in ``rules`` must agree).

    Raises:
        RulesError: naming the bad option (from :class:`~uno_mk_env.Rules`).
    """
    if isinstance(rules, Rules):
        if rules.num_players != num_players:
            raise RulesError(
                f"rules have num_players={rules.num_players} but num_players={num_players}"
            )
        return rules
    options = dict(rules or {})
    given = options.get("num_players", num_players)
    if given != num_players:
        raise RulesError(
            f"rule option num_players={given!r} contradicts num_players={num_players!r}"
        )
    options["num_players"] = num_players
    return Rules(**options)


def play_match(
    players: Sequence[Agent],
    rules: Rules,
    game_seed: int,
    agent_seeds: Sequence[int | None] | None = None,
    labels: Sequence[str] | None = None,
    max_steps: int | None = None,
    allow_cheating: bool = False,
    observer: MatchObserver | None = None,
    encode: Callable[[PlayerView], np.ndarray] | None = None,
) -> MatchOutcome:
    """Plays one game; ``players[seat]`` acts for ``seat`` (see the module docstring).

    Args:
        players: one agent per seat.
        rules: the table's rules (``rules.num_players`` seats).
        game_seed: the deal's seed.
        agent_seeds: each seat's ``reset`` seed; ``None``: the agents are not reset.
        labels: names in error messages (default: the agents' names).
        max_steps: decisions per round before the game is capped (``None``: no cap).
        allow_cheating: admit agents that see hidden cards (:func:`admit`).
        observer: called around every decision.
        encode: the observation encoder (default :func:`uno_mk_env.engine.observation.encode`).

    Raises:
        AgentSpecError: a cheating agent without ``allow_cheating``.
        AgentError: an agent chose an illegal action or raised (names it and the seat).
        MatchStopped: an agent ended the game (a person quitting).
    """
    n = rules.num_players
    if len(players) != n:
        raise ValueError(f"{len(players)} players given for a table of {n}")
    labels = list(labels) if labels is not None else [a.name for a in players]
    seeing = [admit(a, labels[s], allow_cheating) for s, a in enumerate(players)]
    if agent_seeds is not None:
        for seat, agent in enumerate(players):
            agent.reset(agent_seeds[seat])
    on_core = None
    if observer is None and not any(seeing):
        on_core = _core_table(players, rules, game_seed, max_steps, agent_seeds is not None)
    if on_core is not None:
        return _play_on_core(*on_core, players, labels, encode)
    g = Game(rules, seed=game_seed)
    if observer is not None:
        observer.start(g)
    in_round = 0
    while not g.game_over:
        if g.at_step_cap(max_steps, in_round):  # public decisions of this round
            return MatchOutcome(g, capped=True)
        p = g.current_player
        if seeing[p]:
            players[p].observe_game(g)  # type: ignore[attr-defined]
        if observer is not None:
            observer.before(g, p)
        action = _ask(players[p], g, labels[p], encode)
        g.step(action)
        in_round = 0 if g.round_over else in_round + (action != A.KEEP)
        if observer is not None:
            observer.after(g, p, action)
    return MatchOutcome(g, capped=False)


def _ask(agent: Agent, game: Any, label: str,
         encode: Callable[[PlayerView], np.ndarray] | None) -> int:
    """:func:`agent_action`, letting a :class:`MatchStopped` through."""
    try:
        return agent_action(agent, game, label, encode)
    except AgentError as e:
        if isinstance(e.__cause__, MatchStopped):
            raise e.__cause__ from None
        raise


Twin = tuple[int, str, Any, Mapping[str, Any]]


def _core_table(players: Sequence[Agent], rules: Rules, game_seed: int,
                max_steps: int | None, reset: bool) -> tuple[MatchTable, list[Twin | None]] | None:
    """The game on the compiled core and each seat's twin ``(slot, kind, setting, generator
    state)`` (module docstring), or ``None`` where the Python engine plays it."""
    module = core()
    if module is None:
        return None
    slots: dict[int, int] = {}
    twins: list[Twin | None] = []
    for agent in players:
        method = getattr(agent, "compiled_twin", None)
        twin = method() if callable(method) else None
        if twin is None:
            twins.append(None)
            continue
        kind, setting = twin
        state = agent.rng.bit_generator.state
        if (kind == "strategic" and not reset) or state["bit_generator"] != "PCG64":
            return None
        twins.append((slots.setdefault(id(agent), len(slots)), kind, setting, state))
    if not slots:
        return None  # no twin: nothing the core would decide
    return module.MatchTable(rules, game_seed, twins, max_steps), twins


def _play_on_core(table: MatchTable, twins: Sequence[Twin | None], players: Sequence[Agent],
                  labels: Sequence[str],
                  encode: Callable[[PlayerView], np.ndarray] | None) -> MatchOutcome:
    """Plays ``table``: the twins in C, the other seats asked in Python (their observations
    encoded by the core unless ``encode`` is given); then hands each random twin's generator
    back to its agent."""
    game = table.game

    def observation(view: PlayerView) -> np.ndarray:
        return game.observation(view.seat)  # encode(view), written in C

    while (seat := table.advance()) >= 0:
        table.step(_ask(players[seat], game, labels[seat], encode or observation))
    for agent, twin in zip(players, twins):
        if twin is not None and twin[1] == "random":
            agent.rng.bit_generator.state = table.rng_state(twin[0])
    # a CompiledGame has Game's interface (docs/compiled.md): the callers read it as a Game
    return MatchOutcome(cast(Game, game), capped=table.capped)
