"""Rule-based baseline agents: ``greedy`` and ``strategic``.

Both read only the :class:`~uno_mk_env.PlayerView` (never the observation vector, so drivers may
pass ``observation=None``), return a legal action id for every phase, player count and rule
preset, and are deterministic given their seed. They share the decisions a UNO player never
hesitates over:

* ``CATCH_UNO`` whenever it is legal (a free 2-card penalty for an opponent, R8), then
  ``CALL_UNO`` whenever it is legal (not calling can only cost cards, R8). Both leave the seat
  deciding, so the real decision follows on the next call.
* Green Shell target (R7.2): the opponent closest to going out (smallest hand); ties go to the
  one who plays soonest. ``TARGET(+k)`` hits the seat ``k`` clockwise whatever the direction.

Registered names (``uno_mk_env.agents.make_agent``): ``"greedy"`` (:class:`GreedyAgent`) and
``"strategic"`` (:class:`StrategicAgent`); neither takes an argument.

Public-information estimates used by ``strategic`` (R6 challenge, W4 bluff, Item Box value) come
from the *unseen* cards: the 112-card deck minus the seat's own hand minus the discard pile
(``PlayerView.discard_counts``). Every opponent hand is treated as a uniform sample of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from uno_mk_env import PlayerView
from uno_mk_env import actions as A
from uno_mk_env.engine.cards import (
    COLOUR_OF,
    DRAW_TWO,
    NUM_CARDS,
    POINTS,
    RANK_OF,
    REVERSE,
    SKIP,
    W4,
    WB,
)
from uno_mk_env.engine.phases import COLOUR_AFTER_W4, Phase

from .base import Agent, register
from .view_reading import (
    COLOURED_PER_COLOUR,
    colour_counts,
    colour_points,
    legal_ids,
    most_held_colour,
    p_holds_colour,
    shell_target,
    uno_reflex,
    unseen_counts,
    w4_is_legal,
)

# p_holds_colour and shell_target are re-exported: callers import them from here.
__all__ = ["GreedyAgent", "StrategicAgent", "StrategicParams", "p_holds_colour", "shell_target"]


# ------------------------------------------------------------------------------------- greedy
class GreedyAgent(Agent):
    """``greedy``: the simple club player.

    * Play: always play rather than draw. Shed the coloured card worth the most points (R2: an
      action card is 20, a 9 is 9), because that is what an opponent scores if they go out first;
      ties go to the colour held most, so the next turn is likelier to have a match. Wilds are
      kept for last because they are always playable: WB first (50 points, and holding it makes a
      W4 illegal, R6.1), then W4 only when it is legal; it never bluffs, it draws instead.
    * Drawn card (R4.2): play it, except an illegal W4 (kept).
    * Colour (W4, Bob-omb, start card): the colour held most (ties by points).
    * Challenge (R6.3): challenge only when the W4 player still holds at least
      ``challenge_hand`` cards: with that many cards, a hand with no card of the previous colour
      is unlikely, so the W4 was probably a bluff. Otherwise accept.
    * Green Shell: :func:`shell_target`. UNO: always catch, always call.
    """

    name = "greedy"

    def __init__(self, seed: int | None = None, challenge_hand: int = 5) -> None:
        super().__init__(seed)
        self.challenge_hand = challenge_hand

    def compiled_twin(self) -> tuple[str, Any] | None:
        return ("greedy", self.challenge_hand) if type(self) is GreedyAgent else None

    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, view: PlayerView
    ) -> int:
        legal = legal_ids(action_mask, view)
        if len(legal) == 1:
            return legal[0]
        reflex = uno_reflex(legal)
        if reflex is not None:
            return reflex
        phase = view.phase
        if phase == Phase.PLAY:
            return self._play(legal, view)
        if phase == Phase.PLAY_DRAWN:
            drawn = view.drawn_card
            return A.KEEP if drawn == W4 and not w4_is_legal(view) else drawn
        if phase == Phase.CHOOSE_COLOUR:
            return A.COLOUR_BASE + most_held_colour(view.hand)
        if phase == Phase.CHOOSE_TARGET:
            return shell_target(view)
        if phase == Phase.CHALLENGE:
            big = view.w4_hand_size >= self.challenge_hand  # its hand when it played the W4
            return A.CHALLENGE if big else A.ACCEPT
        return legal[0]

    def _play(self, legal: tuple[int, ...], view: PlayerView) -> int:
        hand = view.hand
        coloured = [a for a in legal if a < W4]
        if coloured:
            counts = colour_counts(hand)
            return max(coloured, key=lambda k: (POINTS[k], counts[COLOUR_OF[k]], -k))
        if WB in legal:
            return WB
        if W4 in legal and w4_is_legal(view):
            return W4
        return A.DRAW


@register("greedy", "rules: shed the highest-points card, wilds last, never bluff")
def _make_greedy(arg: str | None, seed: int | None) -> Agent:
    if arg:
        raise ValueError(f"agent 'greedy' takes no argument, got {arg!r}")
    return GreedyAgent(seed)


# ---------------------------------------------------------------------------------- strategic
@dataclass(frozen=True)
class StrategicParams:
    """Weights of :class:`StrategicAgent`'s move scores, in "cards in my hand" units.

    Every play scores ``1`` (one card shed) plus the terms below; ``DRAW`` scores ``draw`` and
    ``KEEP`` (a playable drawn card, R4.2) ``keep``. The defaults were tuned by paired-seat
    tournaments against ``greedy`` at 2 and 4 players (``tests/test_agents.py``, ``strength``).
    """

    points: float = 0.005
    """Per point of a coloured card shed (R2). Only a tie-break: winning the round depends on the
    number of cards, not their points (bigger weights lost games in tuning)."""
    follow_any: float = 0.5
    """Having at least one more card of the colour the play leaves active (a match next turn)."""
    follow_each: float = 0.2
    """Per further card of that colour (up to four)."""
    draw: float = -1.5
    """``DRAW`` instead of playing: one card more in hand and the turn given away. Wilds are never
    "held" against a draw (see ``hold_w4``), so this only matters against a bluff."""
    keep: float = -0.5
    """``KEEP`` a playable drawn card: the turn is given away."""
    threat: tuple[float, float, float, float] = (0.0, 3.0, 1.5, 0.6)
    """Extra weight of an opponent holding 1, 2 or 3 cards (index = hand size; more: ``threat[0]``).
    An opponent about to go out is the one whose draws and lost turns matter."""
    skip: float = 0.6
    """Making an opponent lose a turn (Skip, Draw Two, W4), times their weight."""
    chain: float = 2.0
    """Two-player Skip/Reverse/Draw Two with a card to follow it: I move again at once (R5), so it
    sheds two cards for one opponent turn."""
    reverse: float = 1.0
    """Reverse at 3+ players: passes the turn to the previous seat instead of the next one,
    worth ``reverse * (weight(next) - weight(previous))``."""
    hold_action: float = 0.3
    """Cost of spending a Skip/Draw Two at 3+ players while the next player is not threatening:
    kept, it stops whoever gets low later."""
    hold_w4: float = 9.0
    """Cost of spending the W4 while a coloured card could be played instead: kept, it is the
    finisher (always playable, always legal as the last card, R6.4). Large, so only a big threat
    (an opponent on one or two cards) brings it out early; never charged against a draw, because
    tuning showed drawing to save a wild loses."""
    hold_wb: float = 4.0
    """Cost of spending a WB while a coloured card could be played instead (always playable, and
    its flip takes the colour out of my hands, R7.1)."""
    finisher: float = 1.0
    """Leaving exactly one wild in hand: it goes out next turn whatever the colour."""
    extra_turn: float = 0.8
    """Mushroom/Lightning extra turn (R7.2) when the flipped colour can be matched."""
    unblock: float = 0.5
    """Playing the only WB while holding a W4: the held WB is what makes the W4 illegal (R6.1)."""
    bluff: bool = True
    """Consider an illegal W4 (R6.2) at all."""
    bluff_margin: float = 0.0
    """Extra cost of a bluff beyond its expected challenge loss."""
    trust: float = 0.25
    """Prior that a W4 is a bluff at all: the hypergeometric chance that the W4 player holds the
    previous colour is multiplied by it. Sensible players holding that colour play it rather than
    risk a failed bluff, so real bluffs are much rarer than the card count suggests."""
    turn_value: float = 1.0
    """Keeping my turn after a won challenge (R6.3)."""
    void: float = 2.0
    """Leaving a colour the next mover is believed void in, times that belief and their weight."""
    void_colour: float = 3.0
    """Naming a colour the next mover is believed void in, times that belief."""
    w4_void: float = 0.7
    """Belief that an opponent who played a W4 lacks the colour before it (most W4s are honest)."""
    void_decay: float = 0.75
    """Belief kept per card a void opponent draws later (about 3/4 of cards are another colour)."""
    colour_unseen: float = 0.5
    """Naming a colour: preference for colours with fewer unseen cards (harder to match)."""


_WIN = 1e6


class StrategicAgent(Agent):
    """``strategic``: a stronger rule player that scores every legal move and reads the table.

    Each option of a ``play``/``play_drawn`` decision gets a score in "cards in my hand" units
    (weights in :class:`StrategicParams`, tuned in tournaments) and the best is played. The terms
    and why:

    * **Shed and keep a follow-up.** Every play sheds a card; the play that leaves the most cards
      of the colour it makes active (``follow_*``) keeps a match for next turn, and playing the
      same number in another colour is how it switches into its strongest colour. Points (R2)
      only break ties.
    * **Play into the next player's void.** The agent remembers, between its own decisions, what
      the table showed: when nothing was played since it left colour ``c`` and an opponent's
      hand grew by exactly one card, that opponent drew voluntarily (R4.2) and so most likely
      holds no ``c``; an opponent's W4 suggests they lack the colour before it (R6.1). Beliefs
      fade with every card the opponent draws later. Leaving (or naming) a colour the next mover
      is void in is worth their weight (``void``, ``void_colour``): they draw instead of playing.
    * **Threats drive action cards.** Each opponent has a weight ``1/(N-1)`` plus a ``threat``
      bonus when they hold 1-3 cards. Skip/Draw Two/W4 are worth the victim's weight (and the
      drawn cards, times that weight), so at 3+ players Skip/Draw Two are saved for a next player
      who is about to go out (``hold_action``); a Reverse is worth the difference between the
      next and the previous player's weights. At 2 players a Skip/Reverse/Draw Two with a card
      to follow it is an immediate second move (``chain``), and one that leaves a playable last
      card wins outright.
    * **Wilds are finishers, but never worth a draw.** While a coloured card can be played, the
      W4 and the WB are kept (``hold_*``): the W4 is always playable and always legal as the last
      card (R6.4), so leaving exactly one wild is a bonus (``finisher``); an opponent on one or
      two cards still brings the W4 out early. When only wilds are playable they are played
      rather than drawing (drawing to save a wild lost games in tuning). The WB's value is its
      expected item (R7.2) over the unseen cards' colours: Mushroom/Lightning extra turn if the
      flipped colour can be matched, Banana (previous seat +2), Green Shell (best target +1),
      Lightning (everyone +1), Bob-omb (me +2); playing the only WB while holding a W4 makes the
      W4 legal again (R6.1).
    * **Bluff only when it pays.** An illegal W4 is scored as a legal one minus the expected loss
      if challenged (4 cards for me, the victim's draw and skip gone), where the chance of a
      challenge is what a calibrated opponent would estimate from my remaining hand size. So it
      bluffs with few cards left, against a next player about to win, or instead of a draw.
    * **Challenge by expected value (R6.3).** ``p`` = the hypergeometric chance that the W4
      player's hand (its size is public) holds a card of ``view.w4_prev_colour`` (or a WB when
      that makes the W4 illegal) among the unseen cards, times the bluff prior ``trust``.
      Challenge when ``p * (4 + turn + 4 * weight(W4 player)) > (1 - p) * 2``: a won challenge
      saves my 4 cards and my turn and gives them 4; a lost one costs 2 extra cards.
    * **Colour** (W4, Bob-omb, start card): most cards held (then points), then the next
      mover's believed void, then colours with few unseen cards (harder to match).
    * Green Shell: :func:`shell_target`. UNO: always catch, always call.

    The agent is deterministic (its generator is unused). Its memory is reset by :meth:`reset`
    and, to be safe with drivers that do not call it, whenever the round or the seat changes.

    Args:
        seed: seed of the agent's generator.
        params: the weights; defaults are the tuned ones.
    """

    name = "strategic"

    def __init__(self, seed: int | None = None, params: StrategicParams | None = None) -> None:
        super().__init__(seed)
        self.params = params if params is not None else StrategicParams()
        self._forget()

    def compiled_twin(self) -> tuple[str, Any] | None:
        return ("strategic", self.params) if type(self) is StrategicAgent else None

    def reset(self, seed: int | None = None) -> None:
        """New game: reseeds (when given a seed) and forgets the inferred void colours."""
        super().reset(seed)
        self._forget()

    # ------------------------------------------------------------------ memory
    def _forget(self) -> None:
        self._game_key: tuple[int, int, int] | None = None
        self._void: list[list[float]] = []
        self._seen_sizes: tuple[int, ...] = ()
        self._pending: tuple[int, int, int, tuple[int, ...]] | None = None
        self._seen_w4s = 0

    def _observe(self, view: PlayerView) -> None:
        """Updates the void-colour beliefs from what changed since my previous decision.

        If nothing was played since I left colour ``c`` on the table (same top card, same discard
        count), every opponent whose hand grew by exactly one card drew voluntarily facing ``c``
        (R4.2; penalties come in 2s and 4s): a sensible player does that only without a match, so
        it is marked void in ``c`` (belief 1). Each card an opponent draws later may be that
        colour, so beliefs decay by ``void_decay`` per card drawn. An opponent's W4 marks them
        void in ``view.w4_prev_colour`` with belief ``w4_void`` (an honest W4 needs that, R6.1).
        Public information only.
        """
        key = (view.round, view.seat, view.num_players)
        if key != self._game_key:
            self._forget()
            self._game_key = key
            self._void = [[0.0] * 4 for _ in range(view.num_players)]
            self._seen_sizes = view.hand_sizes
        sizes = view.hand_sizes
        decay = self.params.void_decay
        for s, (now, seen) in enumerate(zip(sizes, self._seen_sizes)):
            if now > seen and s != view.seat:
                factor = decay ** (now - seen)
                self._void[s] = [v * factor for v in self._void[s]]
        pending = self._pending
        if pending is not None:
            colour, top, discarded, before = pending
            if view.top_card == top and sum(view.discard_counts) == discarded:
                for s, (now, then) in enumerate(zip(sizes, before)):
                    if now == then + 1 and s != view.seat:
                        self._void[s][colour] = 1.0
            self._pending = None
        self._seen_sizes = sizes
        w4s = view.discard_counts[W4]
        w4p = view.w4_player
        if w4s > self._seen_w4s and w4p >= 0 and w4p != view.seat and view.w4_prev_colour >= 0:
            # A new W4 by an opponent: if it was honest (R6.1) they lack the previous colour.
            prev = self._void[w4p][view.w4_prev_colour]
            self._void[w4p][view.w4_prev_colour] = max(prev, self.params.w4_void)
        self._seen_w4s = w4s

    def _remember(self, view: PlayerView, action: int) -> int:
        """Records the colour my ``action`` leaves on the table, for :meth:`_observe`."""
        if action < W4:
            top, colour, discarded = action, COLOUR_OF[action], sum(view.discard_counts) + 1
        elif A.COLOUR_BASE <= action < A.TARGET_BASE:
            top, colour, discarded = (
                view.top_card, action - A.COLOUR_BASE, sum(view.discard_counts)
            )
        else:
            return action
        self._pending = (colour, top, discarded, view.hand_sizes)
        return action

    def void_beliefs(self) -> list[list[float]]:
        """Per seat, per colour: the current belief that the seat holds no card of that colour
        (see :meth:`_observe`); empty before the first decision of a game."""
        return [row[:] for row in self._void]

    def _void_of(self, seat: int, colour: int) -> float:
        """Belief that ``seat`` holds no card of ``colour``."""
        if 0 <= seat < len(self._void):
            return self._void[seat][colour]
        return 0.0

    # ------------------------------------------------------------------ dispatch
    def act(  # the mask may be None: the decider's view carries the legal actions
        self, observation: np.ndarray | None, action_mask: np.ndarray | None, view: PlayerView
    ) -> int:
        legal = legal_ids(action_mask, view)
        self._observe(view)
        if len(legal) == 1:
            return self._remember(view, legal[0]) if view.phase <= Phase.CHOOSE_COLOUR else legal[0]
        reflex = uno_reflex(legal)
        if reflex is not None:
            return reflex
        phase = view.phase
        if phase == Phase.PLAY or phase == Phase.PLAY_DRAWN:
            return self._remember(view, self._play(legal, view))
        if phase == Phase.CHOOSE_COLOUR:
            return self._remember(view, A.COLOUR_BASE + self._colour(view))
        if phase == Phase.CHOOSE_TARGET:
            return shell_target(view)
        if phase == Phase.CHALLENGE:
            return A.CHALLENGE if self._should_challenge(view) else A.ACCEPT
        return legal[0]

    # ------------------------------------------------------------------ weights
    def _weight(self, view: PlayerView, seat: int) -> float:
        """How much one card (or one lost turn) of opponent ``seat`` is worth to me."""
        size = view.hand_sizes[seat]
        threat = self.params.threat
        bonus = threat[size] if 0 < size < len(threat) else threat[0]
        return 1.0 / (view.num_players - 1) + bonus

    @staticmethod
    def _follow(p: StrategicParams, n_left: int) -> float:
        return p.follow_any * (n_left > 0) + p.follow_each * min(n_left, 4)

    # ------------------------------------------------------------------ play / play_drawn
    def _play(self, legal: tuple[int, ...], view: PlayerView) -> int:
        best, best_score = legal[0], -float("inf")
        # A wild is only "spent" when a coloured card could have been played instead.
        hold = legal[0] < W4
        counts = colour_counts(view.hand)
        for a in legal:
            if a < A.DRAW:
                score = self._score_card(a, view, hold, counts)
            elif a == A.DRAW:
                score = self.params.draw
            elif a == A.KEEP:
                score = self.params.keep
            else:
                continue
            if score > best_score:
                best, best_score = a, score
        return best

    def _score_card(self, k: int, view: PlayerView, hold: bool, counts: list[int]) -> float:
        p = self.params
        hand = view.hand
        left = view.hand_sizes[view.seat] - 1
        if left == 0:
            return _WIN
        n, me, d = view.num_players, view.seat, view.direction
        nxt = (me + d) % n
        wilds_left = hand[W4] + hand[WB] - (k >= W4)
        score = 1.0
        if left == 1 and wilds_left == 1:
            score += p.finisher
        if k == W4:
            return score + self._score_w4(view, counts, nxt, hold)
        if k == WB:
            return score + self._score_wb(view, counts, hold)
        score += p.points * POINTS[k]
        c, r = COLOUR_OF[k], RANK_OF[k]
        same_colour_left = counts[c] - 1
        score += self._follow(p, same_colour_left)
        skips = r == SKIP or r == DRAW_TWO or (
            r == REVERSE and n == 2 and view.rules.two_player_reverse_skips
        )
        if r == REVERSE and not skips:
            mover = (me - d) % n
        else:
            mover = (me + d * (2 if skips else 1)) % n
        if mover != me:
            score += p.void * self._void_of(mover, c) * self._weight(view, mover)
        if r == DRAW_TWO:
            score += 2 * self._weight(view, nxt)
        if skips:
            score += p.skip * self._weight(view, nxt)
            if n == 2:
                follow_up = same_colour_left > 0 or wilds_left > 0 or any(
                    hand[13 * cc + r] for cc in range(4) if cc != c
                )
                if follow_up:
                    if left == 1:
                        return _WIN / 2  # my next move plays the last card
                    score += p.chain
            elif self._weight(view, nxt) < 1.0:
                score -= p.hold_action
        elif r == REVERSE:
            prv = (me - d) % n
            score += p.reverse * (self._weight(view, nxt) - self._weight(view, prv))
        return score

    def _score_w4(self, view: PlayerView, counts: list[int], nxt: int, hold: bool) -> float:
        p = self.params
        hit = 4 * self._weight(view, nxt) + p.skip * self._weight(view, nxt)
        score = self._follow(p, max(counts)) + hit
        if hold:
            score -= p.hold_w4
        if not w4_is_legal(view):
            if not p.bluff:
                return -_WIN
            left = view.hand_sizes[view.seat] - 1
            score -= self._p_challenged(view, left) * (4.0 + hit + p.turn_value) + p.bluff_margin
        return score

    def _p_challenged(self, view: PlayerView, left: int) -> float:
        """Chance a calibrated next player challenges my W4: their estimate that I hold the
        active colour (or a WB) given my remaining hand size, from what they cannot see."""
        disc = view.discard_counts
        c = view.active_colour
        matching = COLOURED_PER_COLOUR - sum(disc[13 * c:13 * c + 13])
        if view.rules.item_box_counts_for_w4:
            matching += 8 - disc[WB]
        nxt = (view.seat + view.direction) % view.num_players
        total = NUM_CARDS - sum(disc) - view.hand_sizes[nxt] - 1  # minus the W4 itself
        p_none = 1.0
        for i in range(left):
            if total - i <= 0:
                break
            p_none *= max(total - matching - i, 0) / (total - i)
        return 1.0 - p_none

    def _score_wb(self, view: PlayerView, counts: list[int], hold: bool) -> float:
        p = self.params
        hand = view.hand
        total, per_colour, _ = unseen_counts(view)
        if total <= 0:
            return 0.0
        n, me, d = view.num_players, view.seat, view.direction
        can_match = [counts[c] > 0 or hand[W4] > 0 or hand[WB] > 1 for c in range(4)]
        extra = [p.extra_turn * (1.0 if can_match[c] else 0.3) for c in range(4)]
        others = [(me + i) % n for i in range(1, n)]
        prv = (me - d) % n
        item = [
            extra[0],  # Mushroom: another turn
            2 * self._weight(view, prv),  # Banana Peel: the previous seat draws 2
            max(self._weight(view, s) for s in others),  # Green Shell: best target draws 1
            extra[3] + view.rules.lightning_draw * sum(self._weight(view, s) for s in others),
        ]
        score = 0.0
        p_bob = 1.0
        for c in range(4):
            share = per_colour[c] / total
            p_bob -= share
            score += share * (self._follow(p, counts[c]) + item[c])
        score += p_bob * (self._follow(p, max(counts)) - 2.0)  # Bob-omb: I draw 2, name colour
        if hold:
            score -= p.hold_wb
        if hand[W4] and hand[WB] == 1 and view.rules.item_box_counts_for_w4:
            score += p.unblock
        return score

    # ------------------------------------------------------------------ other phases
    def _colour(self, view: PlayerView) -> int:
        hand = view.hand
        counts = colour_counts(hand)
        total, per_colour, _ = unseen_counts(view)
        total = max(total, 1)
        p = self.params
        n, me, d = view.num_players, view.seat, view.direction
        # After a W4 the next player draws and is skipped: the one after them moves next.
        mover = (me + d * (2 if view.colour_context == COLOUR_AFTER_W4 else 1)) % n
        void_w = p.void_colour if mover != me else 0.0
        return max(
            range(4),
            key=lambda c: (
                counts[c] + colour_points(hand, c) / 1000 - p.colour_unseen * per_colour[c] / total
                + void_w * self._void_of(mover, c),
                -c,
            ),
        )

    def _should_challenge(self, view: PlayerView) -> bool:
        p = self.params
        w4p = view.w4_player
        if w4p < 0 or view.w4_prev_colour < 0:
            return False
        # R6.1 judges the hand held when the W4 was played (cards drawn since do not count)
        prob = p.trust * p_holds_colour(
            view, view.w4_prev_colour, w4p, view.rules.item_box_counts_for_w4,
            size=view.w4_hand_size,
        )
        gain = 4.0 + p.turn_value + 4.0 * self._weight(view, w4p)
        return prob * gain > (1.0 - prob) * 2.0


@register("strategic", "rules: scores moves by follow-ups, threats, wild timing; EV challenges")
def _make_strategic(arg: str | None, seed: int | None) -> Agent:
    if arg:
        raise ValueError(f"agent 'strategic' takes no argument, got {arg!r}")
    return StrategicAgent(seed)
