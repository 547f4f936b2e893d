"""Throughput of the *peer* card-game engines we compare our UNO engine against.

The peers are optional dependencies (the ``bench`` extra: ``rlcard==1.2.0`` and
``open-spiel``).  This module imports without them; each measuring function raises
:class:`PeerUnavailableError` (a subclass of :class:`ImportError`) when its peer is
missing, and :func:`available` reports which peers can be imported.

Every driver plays uniformly random legal games and uses the same per-decision
sampling scheme we use for our own engine: floats are drawn from a seeded
:class:`numpy.random.Generator` in buffers of :data:`BUFFER_SIZE` and an action is picked
as ``legal[int(u * len(legal))]``.  Only the play loop (including re-deals) is timed
with :func:`time.perf_counter`; imports and object construction are not.

Peer-specific notes
-------------------
* RLCard's ``UnoGame.step`` already returns the next player's state, whose
  ``"legal_actions"`` entry *is* ``game.get_legal_actions()`` for the player to move;
  the driver samples from it instead of recomputing the list (which would double
  RLCard's legal-move cost).  A ``"draw"`` action draws one card and, if it is playable
  (a wild, or same colour as the target), RLCard plays it automatically within the
  same step, so a draw is one decision.
* ``rlcard.make("uno", ...)`` ignores ``game_num_players`` (RLCard 1.2.0 only forwards
  game configs for blackjack and hold'em), so the env is always 2-player; ``UnoGame``
  itself does honour ``num_players``.
* OpenSpiel's ``crazy_eights`` deals and draws through explicit chance nodes.  They
  are resolved by sampling ``state.chance_outcomes()`` and are timed but *not* counted
  as decisions.  Nominating a suit after playing an eight is a separate decision.
"""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

import numpy as np

__all__ = [
    "BUFFER_SIZE",
    "PeerUnavailableError",
    "available",
    "openspiel_crazy_eights_decisions",
    "rlcard_env_steps",
    "rlcard_game_decisions",
]

#: Number of uniform floats drawn from the generator at a time.
BUFFER_SIZE = 4096

_INSTALL_HINT = "install the benchmark extra: pip install 'uno-mk-env[bench]'"


class PeerUnavailableError(ImportError):
    """Raised when an optional peer implementation is not installed or fails to import."""


def _import_rlcard() -> ModuleType:
    """Import and return the ``rlcard`` package or raise :class:`PeerUnavailableError`."""
    try:
        import rlcard
        import rlcard.games.uno.game  # fail early if UNO is broken
    except ImportError as exc:
        raise PeerUnavailableError(
            f"RLCard peer unavailable ({exc}); {_INSTALL_HINT} (needs rlcard==1.2.0)"
        ) from exc
    return rlcard


def _import_pyspiel() -> ModuleType:
    """Import and return ``pyspiel`` (OpenSpiel) or raise :class:`PeerUnavailableError`."""
    try:
        import pyspiel
    except ImportError as exc:
        raise PeerUnavailableError(
            f"OpenSpiel peer unavailable ({exc}); {_INSTALL_HINT} (needs open-spiel)"
        ) from exc
    return pyspiel


def available() -> dict[str, bool]:
    """Return which peers can be imported, keyed ``"rlcard"`` and ``"open_spiel"``."""
    result: dict[str, bool] = {}
    for name, importer in (("rlcard", _import_rlcard), ("open_spiel", _import_pyspiel)):
        try:
            importer()
        except PeerUnavailableError:
            result[name] = False
        else:
            result[name] = True
    return result


def _check_args(budget: int, num_players: int) -> None:
    """Validate the common arguments of the measuring functions."""
    if budget < 1:
        raise ValueError(f"budget must be a positive number of decisions, got {budget}")
    if num_players < 2:
        raise ValueError(f"num_players must be at least 2, got {num_players}")


def rlcard_game_decisions(budget: int, seed: int, num_players: int = 2) -> tuple[float, int]:
    """Play random games directly on RLCard's ``UnoGame`` until ``budget`` decisions.

    Each decision is one ``game.step(action)`` with ``action`` drawn uniformly from the
    current player's legal actions; a finished game is immediately re-dealt with
    ``game.init_game()``.  RLCard's own shuffling / wild-colour RNG
    (``game.np_random``) is seeded with ``seed`` as well.

    Args:
        budget: Number of decisions to make.
        seed: Seed for both the action sampler and RLCard's game RNG.
        num_players: Number of players passed to ``UnoGame(num_players=...)``.

    Returns:
        ``(decisions per second, games completed)``.

    Raises:
        PeerUnavailableError: If RLCard is not installed.
    """
    _check_args(budget, num_players)
    _import_rlcard()
    from rlcard.games.uno.game import UnoGame

    rng = np.random.default_rng(seed)
    game: Any = UnoGame(num_players=num_players)
    game.np_random = np.random.RandomState(seed)  # RLCard uses RandomState
    step = game.step
    is_over = game.is_over
    init_game = game.init_game
    buf: list[float] = rng.random(BUFFER_SIZE).tolist()
    j = 0
    decisions = 0
    games = 0

    start = time.perf_counter()
    state, _ = init_game()
    while decisions < budget:
        # ``state["legal_actions"]`` == game.get_legal_actions() for the player to move.
        legal = state["legal_actions"]
        if j == BUFFER_SIZE:
            buf = rng.random(BUFFER_SIZE).tolist()
            j = 0
        state, _ = step(legal[int(buf[j] * len(legal))])
        j += 1
        decisions += 1
        if is_over():
            games += 1
            state, _ = init_game()
    elapsed = time.perf_counter() - start
    return decisions / elapsed, games


def rlcard_env_steps(budget: int, seed: int, num_players: int = 2) -> tuple[float, int]:
    """Run the usual ``rlcard.make("uno")`` env loop with random actions for ``budget`` steps.

    The loop is the one users write: ``env.reset()``, then sample uniformly from the
    current state's ``"legal_actions"`` (action ids), ``env.step(action)`` (which returns
    the next player's state), and ``env.reset()`` whenever ``env.is_over()``.

    Args:
        budget: Number of ``env.step`` calls to make.
        seed: Seed for the action sampler and the env (``config["seed"]``).
        num_players: Requested ``game_num_players``.  RLCard 1.2.0's UNO env ignores
            this setting and is always 2-player, so anything else raises ``ValueError``.

    Returns:
        ``(steps per second, episodes completed)``.

    Raises:
        PeerUnavailableError: If RLCard is not installed.
        ValueError: If the env does not have ``num_players`` players.
    """
    _check_args(budget, num_players)
    rlcard = _import_rlcard()

    env: Any = rlcard.make("uno", config={"seed": seed, "game_num_players": num_players})
    if env.num_players != num_players:
        raise ValueError(
            f"rlcard.make('uno') built a {env.num_players}-player env although "
            f"game_num_players={num_players} was requested (RLCard ignores it for UNO)"
        )
    rng = np.random.default_rng(seed)
    step = env.step
    is_over = env.is_over
    reset = env.reset
    buf: list[float] = rng.random(BUFFER_SIZE).tolist()
    j = 0
    steps = 0
    episodes = 0

    start = time.perf_counter()
    state, _ = reset()
    while steps < budget:
        legal = list(state["legal_actions"])  # an OrderedDict {action_id: None}
        if j == BUFFER_SIZE:
            buf = rng.random(BUFFER_SIZE).tolist()
            j = 0
        state, _ = step(legal[int(buf[j] * len(legal))])
        j += 1
        steps += 1
        if is_over():
            episodes += 1
            state, _ = reset()
    elapsed = time.perf_counter() - start
    return steps / elapsed, episodes


def openspiel_crazy_eights_decisions(
    budget: int, seed: int, num_players: int = 2
) -> tuple[float, int]:
    """Play random OpenSpiel ``crazy_eights`` games until ``budget`` player decisions.

    Chance nodes (choosing the dealer, dealing and every drawn card) are resolved by
    sampling from ``state.chance_outcomes()``; they are timed but not counted as
    decisions.  Default game parameters are used apart from ``players`` (notably
    ``max_turns=100`` card plays, ``max_draw_cards=5``, no special cards, no reshuffle).

    Args:
        budget: Number of player decisions to make.
        seed: Seed for the sampler (OpenSpiel itself has no hidden RNG here).
        num_players: Value of the ``players`` game parameter.

    Returns:
        ``(decisions per second, games completed)``.

    Raises:
        PeerUnavailableError: If OpenSpiel is not installed.
    """
    _check_args(budget, num_players)
    pyspiel = _import_pyspiel()

    game = pyspiel.load_game("crazy_eights", {"players": num_players})
    chance = int(pyspiel.PlayerId.CHANCE)
    # With one deck (<= 5 players) every chance outcome is equiprobable, so an index
    # pick is exact; with two decks, duplicate cards make the outcomes non-uniform.
    uniform_chance = num_players <= 5
    rng = np.random.default_rng(seed)
    new_initial_state = game.new_initial_state
    buf: list[float] = rng.random(BUFFER_SIZE).tolist()
    j = 0
    decisions = 0
    games = 0

    start = time.perf_counter()
    state = new_initial_state()
    while decisions < budget:
        player = state.current_player()
        if j == BUFFER_SIZE:
            buf = rng.random(BUFFER_SIZE).tolist()
            j = 0
        u = buf[j]
        j += 1
        if player >= 0:
            legal = state.legal_actions()
            state.apply_action(legal[int(u * len(legal))])
            decisions += 1
        elif player == chance:
            outcomes = state.chance_outcomes()
            if uniform_chance:
                action = outcomes[int(u * len(outcomes))][0]
            else:
                action = outcomes[-1][0]
                for outcome, prob in outcomes:
                    u -= prob
                    if u < 0.0:
                        action = outcome
                        break
            state.apply_action(action)
        else:  # terminal
            games += 1
            state = new_initial_state()
    elapsed = time.perf_counter() - start
    if state.is_terminal():
        games += 1
    return decisions / elapsed, games
