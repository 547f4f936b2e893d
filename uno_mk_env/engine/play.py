"""The rules in motion (R3-R10): the deal, the legal actions of each decision and what each
action does, to the end of the round and of the game. :class:`Play` adds them to the
:class:`~.table.Table`; :class:`~.game.Game` adds views and snapshots.
"""


from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..errors import IllegalActionError
from . import actions as A
from .cards import (
    BANANA,
    COLOUR_OF,
    DECK,
    DRAW_TWO,
    GREEN_SHELL,
    ITEM_OF,
    LIGHTNING,
    MUSHROOM,
    NO_CARD,
    NUM_COLOURS,
    RANK_OF,
    REVERSE,
    SKIP,
    W4,
    WB,
    counts_to_kinds,
)
from .legality import CANDIDATES_ON, PLAY_IDS, UNO_KEY, W4_BIT, held_mask, w4_is_legal
from .phases import COLOUR_AFTER_BOB_OMB, COLOUR_AFTER_W4, COLOUR_AT_START, Phase
from .rules import MAX_PLAYERS, MIN_PLAYERS
from .table import FADE, VOID_MEMORY, Table

PLAY, PLAY_DRAWN, CHOOSE_COLOUR, CHOOSE_TARGET, CHALLENGE, GAME_OVER, UNO_CATCH = Phase  # hot path
_NO_CARD = NO_CARD
_IDS_0, _IDS_1, _IDS_2, _IDS_3, _IDS_4 = PLAY_IDS
_DRAW, _KEEP, _CALL_UNO, _CATCH_UNO = A.DRAW, A.KEEP, A.CALL_UNO, A.CATCH_UNO
_COLOUR_ACTIONS = tuple(range(A.COLOUR_BASE, A.COLOUR_BASE + NUM_COLOURS))
_CHALLENGE_ACTIONS = (A.CHALLENGE, A.ACCEPT)
_CATCH_ACTIONS = (A.ACCEPT, A.CATCH_UNO)  # R8 out of turn: let the miss pass, or catch it
#: Green Shell targets TARGET(+1 .. +N-1) by player count N.
_TARGET_ACTIONS = {
    n: tuple(range(A.TARGET_BASE, A.TARGET_BASE + n - 1))
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)
}


def _as_action_id(action: Any) -> int:
    """Accepts any integer type (numpy ints too) but not bools, floats or strings."""
    if not isinstance(action, bool):
        try:
            return operator.index(action)
        except TypeError:
            pass
    raise IllegalActionError(
        f"action must be an int action id 0-{A.NUM_ACTIONS - 1}, got {action!r}"
    )




class Play(Table):
    """The rules of one game, on its :class:`~.table.Table`."""

    __slots__ = ()

    def _deal(self, dealer: int) -> None:
        """R3: shuffle, deal one at a time from the dealer's left, flip the start card."""
        self._reset_round_state()
        self.round += 1
        self.dealer = dealer
        n = self.num_players
        if self.event_log == "recent":  # keep the round that just ended and the new one
            drop = self._round_start
            del self.events[:drop]
            self.events_start += drop
            self._round_start = len(self.events)
        self.events.append(("deal", self.round, dealer))
        pile = list(DECK)
        self.rng.shuffle(pile)
        self.draw_pile = pile
        hands = self.hands
        for _ in range(self.rules.hand_size):
            for j in range(1, n + 1):
                hands[(dealer + j) % n][self._take(pile)] += 1
        self.sizes = [self.rules.hand_size] * n
        self.held = [held_mask(h) for h in hands]
        for seat in range(n):
            self.events.append(("draw", seat, counts_to_kinds(hands[seat]), "deal"))
        reflip = self.rules.start_action_cards == "reflip"
        while True:
            card = self._take(pile)
            if card == W4:  # R3.3: back into the pile, reshuffle, flip again
                # Terminates: the pile always holds a card other than a W4 here (at most 107 of
                # the 112 cards are dealt, and a reflip needs one left, below).
                pile.append(card)
                self.rng.shuffle(pile)
                continue
            self.discard.append(card)
            self.discard_counts[card] += 1
            self.events.append(("start_card", card))
            if reflip and card < W4 and RANK_OF[card] >= SKIP and any(k != W4 for k in pile):
                continue  # Czech text: ignore a coloured action card and flip another onto it
            # R3.3 ruling: with nothing left to flip but W4s, the last action card stays and
            # applies as under "apply".
            break
        left = (dealer + 1) % n
        if card == WB:  # R3.3: no item; a player names the colour, then left of dealer starts
            chooser = dealer if self.rules.start_item_box_chooser == "dealer" else left
            self.current_player = chooser
            self.phase = CHOOSE_COLOUR
            self.colour_context = COLOUR_AT_START
            return
        self.colour = card // 13
        rank = card % 13
        if rank < SKIP:
            self._begin_turn(left)
        elif rank == SKIP:
            self.events.append(("skip", left))
            self._begin_turn((dealer + 2) % n)
        elif rank == REVERSE:
            self.direction = -1
            self._begin_turn(dealer)
        else:  # DRAW_TWO
            self._draw(left, 2, "draw_two")
            self.events.append(("skip", left))
            self._begin_turn((dealer + 2) % n)

    def at_step_cap(self, limit: int | None, steps: int | None = None) -> bool:
        """The step cap that every driver applies (the envs' ``max_steps``, OpenSpiel's
        ``max_game_length``, the match driver's cap per round): ``steps`` public decisions taken
        (default :attr:`public_steps`; a ``KEEP`` is not counted), ``limit`` reached (``None``:
        no cap), and not inside a drawn card's decision, so that where a game is cut tells no
        seat a hidden choice (R4.2)."""
        if limit is None:
            return False
        return (self.public_steps if steps is None else steps) >= limit and (
            self.phase != Phase.PLAY_DRAWN)

    def legal_action_ids(self) -> tuple[int, ...]:
        """Legal action ids, ascending (empty when the game is over). The fast path."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal

    def legal_actions(self) -> np.ndarray:
        """Bool mask of shape ``(73,)`` over action ids (docs/api.md#actions-and-phases)."""
        mask = np.zeros(A.NUM_ACTIONS, dtype=bool)
        mask[list(self.legal_action_ids())] = True
        return mask

    def _compute_legal(self) -> tuple[int, ...]:
        phase = self.phase
        p = self.current_player
        ids: tuple[int, ...]
        if phase == PLAY:
            # R4.1: the active colour's kinds, the top card's rank in other colours, both wilds.
            key = self.held[p] & CANDIDATES_ON[self.colour][self.discard[-1]]
            if self._w4_strict and key & W4_BIT and not self._w4_is_legal(p):
                key ^= W4_BIT
            if self.sizes[p] == 2 and self._uno_on and not self.uno_called[p]:
                key |= UNO_KEY
            # legality.play_phase_ids(key), inlined: this is the hot path
            ids = (_IDS_0[key & 0x7FF] + _IDS_1[key >> 11 & 0x7FF] + _IDS_2[key >> 22 & 0x7FF]
                   + _IDS_3[key >> 33 & 0x7FF] + _IDS_4[key >> 44])
        elif phase == PLAY_DRAWN:
            ids = (self.drawn, _KEEP)
            if self.sizes[p] == 2 and self._uno_on and not self.uno_called[p]:
                ids += (_CALL_UNO,)
        elif phase == CHOOSE_COLOUR:
            ids = _COLOUR_ACTIONS
        elif phase == CHOOSE_TARGET:
            ids = _TARGET_ACTIONS[self.num_players]
        elif phase == CHALLENGE:
            ids = _CHALLENGE_ACTIONS
        elif phase == UNO_CATCH:
            return _CATCH_ACTIONS
        else:
            return ()
        m = self.uno_miss
        if m >= 0 and not self._catch_auto and m != p and self.sizes[m] == 1 and (
                not self._catch_any):
            ids += (_CATCH_UNO,)  # R8 "next_player": at the next other decider's first decision
        return ids

    def _w4_is_legal(self, seat: int) -> bool:
        """R6.1: no card of the active colour in hand (a held WB counts as a match by default)."""
        return self._w4_is_legal_for(seat, self.colour)

    def _w4_is_legal_for(self, seat: int, colour: int) -> bool:
        return w4_is_legal(self.held[seat], colour, self.rules.item_box_counts_for_w4)

    def _playable(self, card: int) -> bool:
        """R4.1 for one card of the current player's hand (the candidates include both wilds;
        a strict W4 must also be legal, R6.2)."""
        return bool(CANDIDATES_ON[self.colour][self.discard[-1]] >> card & 1) and (
            card != W4 or not self._w4_strict or self._w4_is_legal(self.current_player)
        )

    def step(self, action: int) -> None:
        """Applies the current decider's ``action`` (an id of docs/api.md#actions-and-phases).

        Raises:
            IllegalActionError: if ``action`` is not legal now (nothing is changed).
        """
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if action.__class__ is not int:
            action = _as_action_id(action)
        if action not in legal:
            self._raise_illegal(action, legal)
        self._legal = None
        self.round_over = False
        self.num_steps += 1
        p = self.current_player
        if self.uno_miss >= 0 and not self._catch_auto and p != self.uno_miss and (
                self._catch_window(p, action)):
            return
        phase = self.phase
        if phase == PLAY:
            if action < _DRAW:
                self._play(p, action)
            elif action == _DRAW:
                self._voluntary_draw(p)
            else:
                self._call_uno(p)
        elif phase == PLAY_DRAWN:
            if action < _DRAW:
                self._play(p, action)
            elif action == _KEEP:
                self.num_keeps += 1
                self.events.append(("keep", p))
                self._begin_turn((p + self.direction) % self.num_players)
            else:
                self._call_uno(p)
        elif phase == CHOOSE_COLOUR:
            self._choose_colour(p, action - A.COLOUR_BASE)
        elif phase == CHOOSE_TARGET:
            target = (p + action - A.TARGET_BASE + 1) % self.num_players
            self.events.append(("target", p, target))
            self._draw(target, 1, "green_shell")
            self._after_item(p)
        else:  # CHALLENGE
            self._resolve_challenge(p, action == A.CHALLENGE)

    def _raise_illegal(self, a: int, legal: tuple[int, ...]) -> None:
        name = A.ACTION_NAMES[a] if 0 <= a < A.NUM_ACTIONS else f"out of 0-{A.NUM_ACTIONS - 1}"
        if self.game_over:
            raise IllegalActionError(f"action {a} ({name}): the game is over, no action is legal")
        raise IllegalActionError(
            f"illegal action {a} ({name}) for player {self.current_player} in phase "
            f"'{self.phase_name}'; legal: {list(legal)} "
            f"({', '.join(A.ACTION_NAMES[x] for x in legal)})"
        )

    def _begin_turn(self, seat: int) -> None:
        """Starts ``seat``'s turn (a normal or an extra one)."""
        m = self.uno_miss
        if m >= 0 and self._catch_auto:  # R8: an uncalled UNO is caught when the next turn begins
            self.uno_miss = -1
            if self.sizes[m] == 1:
                self.events.append(("catch", -1, m))
                self._draw(m, self.rules.uno_penalty, "uno_penalty")
        if seat != self.turn_player:
            self.previous_turn_player = self.turn_player
            self.turn_player = seat
        if self.sizes[seat] != 1:
            self.uno_called[seat] = False
        self.drawn = _NO_CARD
        if m >= 0 and not self._catch_auto and (self._catch_any or seat == m):
            # R8 ruling: the window opens now, before the turn's first decision; the players
            # after the offender are asked out of turn (under "next_player" only when this is
            # the offender's own turn: otherwise the turn's player is asked at its decision)
            self.current_player = self.next_seat(m)
            self.phase = UNO_CATCH
            return
        self.current_player = seat
        self.phase = PLAY

    def _catch_window(self, p: int, action: int) -> bool:
        """R8 with a pending miss and ``p`` (not the offender) deciding: True if ``action`` was
        the window's own decision (a catch, or the answer in phase ``uno_catch``)."""
        if self.phase == UNO_CATCH:
            self._answer_catch(p, action == _CATCH_UNO)
            return True
        if self._catch_any:  # its window opens at the start of the next turn only
            return False
        if action == _CATCH_UNO:  # "next_player": caught; the catcher still decides
            self._catch(p)
            return True
        self.uno_miss = -1  # the window closes with the next decider's first action
        return False

    def _catch(self, p: int) -> None:
        """R8: ``p`` catches the missed UNO; the offender draws the penalty."""
        offender = self.uno_miss
        self.uno_miss = -1
        self.events.append(("catch", p, offender))
        self._draw(offender, self.rules.uno_penalty, "uno_penalty")

    def _answer_catch(self, p: int, catch: bool) -> None:
        """R8 ruling, phase ``uno_catch``: ``p`` catches (the window ends) or lets the miss pass;
        under ``"any_player"`` the next player in turn order from the offender is asked then,
        until the turn comes back to the offender. Then the turn's player decides."""
        if catch:
            self._catch(p)
        else:
            self.events.append(("let_pass", p, self.uno_miss))
            nxt = self.next_seat(p)
            if self._catch_any and nxt != self.uno_miss:
                self.current_player = nxt
                return
            self.uno_miss = -1
        self.current_player = self.turn_player
        self.phase = PLAY

    def _pass_turn(self, seat: int, skip: int = 0) -> None:
        """Play passes on from ``seat``, skipping ``skip`` players."""
        self._begin_turn((seat + self.direction * (1 + skip)) % self.num_players)

    def _call_uno(self, p: int) -> None:
        self.uno_called[p] = True
        self.events.append(("uno", p))

    def _voluntary_draw(self, p: int) -> None:
        """R4.2: draw one; play it at once if playable (or keep it), else the turn ends."""
        pile = self.draw_pile
        if not pile:
            self._refill()
            pile = self.draw_pile
            if not pile:  # R9: nothing to draw; the turn ends. N such turns in a row: stalemate.
                self.void_evidence[p][self.colour] = VOID_MEMORY
                self.events.append(("draw", p, (), "voluntary"))
                self.idle_turns += 1
                if self.idle_turns >= self.num_players:
                    self.events.append(("stalemate",))
                    self._end_round(self._stalemate_winner())
                else:
                    self._begin_turn((p + self.direction) % self.num_players)
                return
        card = self._take(pile)
        self.hands[p][card] += 1
        self.held[p] |= 1 << card
        self.sizes[p] += 1
        if p == self.uno_miss:  # R8: no longer holding one uncalled card
            self.uno_miss = -1
        evidence = self.void_evidence[p]
        evidence[:] = evidence.translate(FADE[1])  # the drawn card fades the earlier signs
        evidence[self.colour] = VOID_MEMORY
        self.uno_called[p] = False
        self.idle_turns = 0
        self.events.append(("draw", p, (card,), "voluntary"))
        # R4.2: play it at once or keep it if playable (self._playable(card), inlined)
        if CANDIDATES_ON[self.colour][self.discard[-1]] >> card & 1 and (
                card != W4 or not self._w4_strict or self._w4_is_legal(p)):
            self.phase = PLAY_DRAWN
            self.drawn = card
        else:
            self._begin_turn((p + self.direction) % self.num_players)

    def _play(self, p: int, card: int) -> None:
        hand = self.hands[p]
        hand[card] -= 1
        if not hand[card]:
            self.held[p] ^= 1 << card
        self.drawn = _NO_CARD
        self.sizes[p] -= 1
        size = self.sizes[p]
        self.idle_turns = 0
        prev_colour = self.colour
        self.discard.append(card)
        self.discard_counts[card] += 1
        self.events.append(("play", p, card))
        if size == 1 and self._uno_on and not self.uno_called[p]:
            self.uno_miss = p
        out = size == 0
        if card == W4:
            if out:  # R6.4 / R10.1: always legal, no challenge, no colour; next draws 4
                self._draw(self.next_seat(p), 4, "wild_draw_four")
                self._end_round(p)
                return
            self.w4_player = p
            self.w4_prev_colour = prev_colour
            self.w4_illegal = not self._w4_is_legal(p)
            self.w4_hand_size = size
            self.phase = CHOOSE_COLOUR
            self.colour_context = COLOUR_AFTER_W4
            return
        if card == WB:
            self._item_box(p, out)
            return
        self.colour = COLOUR_OF[card]
        rank = RANK_OF[card]
        if rank < SKIP:
            if out:
                self._end_round(p)
            else:
                self._begin_turn((p + self.direction) % self.num_players)
        elif rank == DRAW_TWO:
            victim = self.next_seat(p)
            self._draw(victim, 2, "draw_two")
            if out:
                self._end_round(p)
            else:
                self.events.append(("skip", victim))
                self._pass_turn(p, 1)
        elif out:
            self._end_round(p)
        elif rank == SKIP or (self.num_players == 2 and self.rules.two_player_reverse_skips):
            self.events.append(("skip", self.next_seat(p)))
            self._pass_turn(p, 1)
        else:  # REVERSE
            self.direction = -self.direction
            self.events.append(("reverse", p, self.direction))
            self._pass_turn(p)

    def _choose_colour(self, p: int, colour: int) -> None:
        self.colour = colour
        self.events.append(("colour", p, colour))
        ctx = self.colour_context
        self.colour_context = -1
        if ctx == COLOUR_AFTER_W4:
            victim = self.next_seat(p)
            if self.rules.w4_strict:
                self._draw(victim, 4, "wild_draw_four")
                self.events.append(("skip", victim))
                self._pass_turn(p, 1)
            else:
                self.current_player = victim
                self.phase = CHALLENGE
        elif ctx == COLOUR_AT_START:
            self._begin_turn((self.dealer + 1) % self.num_players)
        elif self.sizes[p] == 0:  # a last-card WB whose Bob-omb drew nothing (R7.4 "full")
            self._end_round(p)
        else:  # Bob-omb: play passes on
            self._pass_turn(p)

    def _resolve_challenge(self, victim: int, challenge: bool) -> None:
        """R6.3: accept (draw 4, lose the turn) or challenge (hand shown to the challenger)."""
        w4p = self.w4_player
        if not challenge:
            self.events.append(("accept", victim))
            self._draw(victim, 4, "wild_draw_four")
            self.events.append(("skip", victim))
            self._pass_turn(victim)
            return
        illegal = self.w4_illegal
        self.events.append(("challenge", victim, w4p, illegal))
        shown = counts_to_kinds(self.hands[w4p])
        # R6.3: each challenger keeps what it saw for the round (its own latest challenge)
        self.reveals = (*(r for r in self.reveals if r[1] != victim), (w4p, victim, shown))
        self.events.append(("reveal", w4p, victim, shown))
        if illegal:
            self._draw(w4p, 4, "challenge_won")
            self._begin_turn(victim)
        else:
            self._draw(victim, 6, "challenge_failed")
            self.events.append(("skip", victim))
            self._pass_turn(victim)

    def _item_box(self, p: int, out: bool) -> None:
        """R7: flip the top of the draw pile and fire its item."""
        if out and self.rules.last_item_box == "none":
            self._end_round(p)
            return
        if not self.draw_pile:
            self._refill()
        # R7.3: the discard pile holds the WB on the card it was played on (at least the start
        # card), so the refill always leaves a card to flip
        assert self.draw_pile, "R7.3: a Wild Item Box always has a card to flip"
        flipped = self._take(self.draw_pile)
        self.discard.append(flipped)
        self.discard_counts[flipped] += 1
        self.events.append(("flip", p, flipped))
        item = ITEM_OF[flipped]
        self.last_item = item
        self.events.append(("item", p, item))
        if flipped < W4:
            self.colour = COLOUR_OF[flipped]
        resolve_self = not out or self.rules.last_item_box == "full"
        if item == MUSHROOM:
            self._after_item(p, extra_turn=True)
        elif item == BANANA:
            if self.rules.banana_target == "previous_seat":
                victim = self.next_seat(p, -1)
            else:
                victim = self.previous_turn_player if self.previous_turn_player >= 0 else (
                    self.next_seat(p, -1))
            self._draw(victim, 2, "banana")
            self._after_item(p)
        elif item == GREEN_SHELL:
            self.phase = CHOOSE_TARGET
        elif item == LIGHTNING:
            n_draw = self.rules.lightning_draw
            for i in range(1, self.num_players):
                self._draw(self.next_seat(p, i), n_draw, "lightning")
            self._after_item(p, extra_turn=True)
        elif resolve_self:  # BOB_OMB: draw 2, then name the colour of the flipped wild
            self._draw(p, 2, "bob_omb")
            self.phase = CHOOSE_COLOUR
            self.colour_context = COLOUR_AFTER_BOB_OMB
        else:
            self._end_round(p)

    def _after_item(self, p: int, extra_turn: bool = False) -> None:
        if self.sizes[p] == 0:  # R7.4: the player went out with the WB
            self._end_round(p)
        elif extra_turn:
            self._begin_turn(p)
        else:
            self._pass_turn(p)

    def _stalemate_winner(self) -> int | None:
        if self.rules.stalemate == "no_score":
            return None
        values = [self.hand_points(s) for s in range(self.num_players)]
        low = min(values)
        return values.index(low) if values.count(low) == 1 else None

    def _end_round(self, winner: int | None) -> None:
        """R10: score the round, then end the game or deal the next round."""
        hand_points = tuple(self.hand_points(s) for s in range(self.num_players))
        points = 0
        if winner is not None:
            points = sum(hand_points) - hand_points[winner]
            self.scores[winner] += points
        self.round_winner = winner
        self.round_hand_points = hand_points
        self.round_over = True
        self.uno_miss = -1  # R8: nothing is pending once the round is over
        self.events.append(("round_end", winner, points, tuple(self.scores)))
        rules = self.rules
        if rules.match == "single_round":
            self._finish(winner)
        elif rules.match == "target_score":
            if winner is not None and self.scores[winner] >= rules.target_score:
                self._finish(winner)
            else:
                self._deal((self.dealer + 1) % self.num_players)
        elif self.round >= rules.rounds:  # fixed_rounds
            best = max(self.scores)
            self._finish(self.scores.index(best) if self.scores.count(best) == 1 else None)
        else:
            self._deal((self.dealer + 1) % self.num_players)

    def _finish(self, winner: int | None) -> None:
        self.game_over = True
        self.winner = winner
        self.phase = GAME_OVER
        self.current_player = -1
        self._legal = ()

