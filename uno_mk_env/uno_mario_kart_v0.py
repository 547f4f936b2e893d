"""UNO Mario Kart as a PettingZoo AEC environment, version 0.

Description
    UNO Mario Kart (docs/rules.md) for 2-10 players: UNO with a 112-card deck where every card
    shows a Mario Kart item, and the Wild Item Box flips a card whose item fires (Mushroom,
    Banana Peel, Green Shell, Lightning, Bob-omb). The rules engine is :class:`uno_mk_env.Game`;
    this module only translates (seat ↔ agent, rewards, termination).

Usage
    >>> from uno_mk_env import uno_mario_kart_v0
    >>> env = uno_mario_kart_v0.env(num_players=4, render_mode=None)
    >>> env.reset(seed=7)
    >>> for agent in env.agent_iter():
    ...     obs, reward, terminated, truncated, info = env.last()
    ...     action = None if terminated or truncated else int(obs["action_mask"].nonzero()[0][0])
    ...     env.step(action)

Agents
    ``player_0 … player_{N-1}`` (seat order; ``player_{i+1}`` sits clockwise of ``player_i``).
    ``agent_selection`` is always the engine's decider: colour choices, Green Shell targets and
    challenges are decisions of the player who makes them, so the same agent may act several
    times in a row and turn order follows Skip, Reverse and extra turns. Under
    ``uno_catch="next_player"``/``"any_player"`` a player may also be asked out of turn whether
    it catches a missed UNO (phase ``uno_catch``: ``CATCH_UNO`` or ``ACCEPT`` to let it pass, R8).

Action Space
    ``Discrete(73)``, the same for every player count (docs/api.md#actions-and-phases):
    0-53 ``PLAY(kind)``, 54 ``DRAW``, 55 ``KEEP``, 56-59 ``COLOUR(R/Y/G/B)``,
    60-68 ``TARGET(+1 … +9)``, 69 ``CHALLENGE``, 70 ``ACCEPT``, 71 ``CALL_UNO``, 72 ``CATCH_UNO``.

Observation Space
    ``Dict(observation=Box(0, high, (437,), float32), action_mask=Box(0, 1, (73,), int8))``
    (437 = ``uno_mk_env.engine.observation.OBS_SIZE``). The vector is
    :func:`uno_mk_env.engine.observation.encode` of the seat's ``PlayerView``: its own hand, the top
    card
    and active colour, the phase, the card it just drew, the direction, per seat in relative
    clockwise order (slot 0 = itself, padded to 10): present, hand size, UNO called, score; the
    decider, pile sizes, the discard pile per kind, the latest W4's context, the W4 player's hand
    if this seat challenged it, the last item, and a few more
    (:func:`uno_mk_env.engine.observation.layout_markdown` lists every index). The mask is also in
    ``infos[agent]["action_mask"]``; it is all zero for every agent that is not deciding.
    ``state()`` / ``state_space`` give a perfect-information vector (all hands, the draw pile's
    contents, hidden W4 legality) for centralised critics
    (:func:`uno_mk_env.engine.observation.state_layout_markdown`).

Rewards
    ``reward="win"`` (default): when the game ends, the winner gets +1 and every other agent
    −1/(N−1); a game without a winner (stalemate with ``stalemate="no_score"``, tied
    ``fixed_rounds``) gives 0 to all. ``reward="points"``: when each round ends, its winner gets
    +(points scored)/100 and every other agent −(points left in its own hand)/100; a round without
    a winner gives 0. Both are zero-sum for every player count. In ``target_score`` and
    ``fixed_rounds`` matches ``"win"`` pays only at the end of the game, ``"points"`` as each
    round ends. Rewards of a step go to every agent (``rewards``); ``last()`` returns the sum
    since the agent last acted.

Episode End
    Termination for all agents when the game is over (``match="single_round"``, the default: one
    round; ``"target_score"``/``"fixed_rounds"``: the whole match, rounds are dealt automatically).
    Truncation for all agents after ``max_steps`` decisions (default 2000; ``None`` for no
    limit), with no reward. A ``KEEP`` is not counted and a draw's ``play_drawn`` decision is not
    cut off: when the cap falls does not tell other seats whether a drawn card was kept or could
    not be played (R4.2).
    Each finished agent is then stepped with ``None``. ``env()`` also
    terminates on an illegal action: −1 for the mover (``illegal_reward``), 0 for the others,
    ``infos[mover]["illegal_action"] = True`` and an ``IllegalActionWarning``; ``raw_env``
    raises the engine's ``IllegalActionError`` and changes nothing.

Arguments
    ``num_players`` (2-10, default 4), ``render_mode`` (``None``, ``"ansi"``, ``"rgb_array"``,
    ``"human"``; see Rendering), ``reward`` (``"win"``/``"points"``), ``max_steps`` (int ≥ 1 or
    ``None``), ``render_seat`` (``None`` or a seat), ``illegal_reward`` (``env()`` only, default
    −1.0) and every rule option of :data:`uno_mk_env.engine.rules.OPTIONS` as a keyword (validated;
    a
    bad one raises ``RulesError`` naming it). ``reset(seed=s)`` makes the episode and every
    following one reproducible.

Rendering
    ``render_mode=None`` (default) renders nothing and costs nothing. ``"ansi"``: ``render()``
    returns the table as text (:mod:`uno_mk_env.render.text`). ``"rgb_array"``: ``render()`` returns
    an image of the table, ``uint8`` of shape ``(800, 1280, 3)`` for every player count: every
    seat with its hand, hand size, UNO call and score, the top card and active colour, the draw
    pile, the direction, who decides in which phase, the last item fired and its effect
    (:mod:`uno_mk_env.render.image`). ``"human"``: that image in a pygame window, updated after
    every step (``metadata["render_fps"]`` = 2). The image modes need the ``render`` extra
    (``pip install 'uno-mk-env[render]'``: Pillow, pygame). ``render_seat=None`` draws the
    spectator's image (every hand face up) and the text of the deciding seat; ``render_seat=s``
    draws only what seat ``s`` may know (its ``PlayerView``) in both.

Version History
    v0: initial release.
    v0, package 0.4.0: ``render_mode="rgb_array"`` and ``render_seat`` are new.
    v0, package 0.4.0: ``"human"`` shows the image in a window (it printed the text).
    v0, package 0.7.0: the R8 catch window ruling: phase ``uno_catch`` (id 6, out of turn;
    ``ACCEPT`` lets a miss pass) and ``uno_catch="any_player"``; ``revealed_hand`` keeps each
    challenger's reveal for the round; ``max_steps`` does not count ``KEEP``. Observation size,
    action ids and default-rule play unchanged.
"""

from __future__ import annotations

from .envs.aec import GuardedUnoMarioKartEnv, IllegalActionWarning, UnoMarioKartEnv, env, raw_env

__all__ = ["GuardedUnoMarioKartEnv", "IllegalActionWarning", "UnoMarioKartEnv", "env", "raw_env"]
