# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True, embedsignature=True
"""The compiled core: the rules engine in C (``src/``), bit-identical with the Python reference.

:class:`CompiledGame` is one game (the API of :class:`uno_mk_env.Game` that drivers use, plus a
fast :meth:`CompiledGame.observation`); :class:`BatchedTables` steps many tables in one C loop
with the GIL released; :class:`MatchTable` is one game of the match driver, its rule-based
agents deciding in C. They take everything that is not a rule (validation of rules and state
dicts, the event and view formats) from the reference, through :mod:`._reference`.
"""

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset

import math
import operator

import numpy as np

from . import _reference as ref

cdef extern from "numpy/random/bitgen.h":
    ctypedef struct bitgen_t:
        void *state

cdef extern from "uno_core.h" nogil:
    int UNO_MAX_PLAYERS, UNO_NUM_KINDS, UNO_NUM_CARDS, UNO_NUM_ACTIONS, UNO_OBS_SIZE
    int UNO_VOID_MEMORY, UNO_W4, UNO_WB, UNO_DRAW_CAP, UNO_KEEP
    int PH_GAME_OVER, PH_PLAY_DRAWN
    int LAST_WB_OTHERS_ONLY, LAST_WB_FULL, LAST_WB_NONE
    int CATCH_AUTO, CATCH_NEXT_PLAYER, CATCH_ANY_PLAYER
    int MATCH_SINGLE_ROUND, MATCH_TARGET_SCORE, MATCH_FIXED_ROUNDS

    ctypedef struct uno_rules:
        int n, hand_size
        int start_reflip, start_chooser_first_player, two_player_reverse_skips
        int item_box_counts_for_w4, w4_strict
        int lightning_draw
        double lightning_draw_f
        int banana_last_player, last_item_box, uno_on, uno_catch
        int uno_penalty
        int stalemate_lowest_hand, match
        int64_t target_score, rounds

    ctypedef struct uno_pcg64:
        uint64_t state_hi, state_lo, inc_hi, inc_lo
        int has_uint32
        uint32_t uinteger

    ctypedef struct uno_events:
        int64_t *data
        int64_t len
        int64_t *offsets
        int64_t count

    ctypedef struct uno_game:
        uno_rules r
        int n
        uint8_t hands[10][54]
        uint64_t held[10]
        int sizes[10]
        uint8_t draw_pile[112]
        int ndraw
        uint8_t discard[112]
        int ndiscard
        uint8_t discard_counts[54]
        int colour, current_player, direction, phase, dealer
        int64_t scores[10]
        int64_t round
        int drawn
        uint8_t uno_called[10]
        int uno_miss
        int w4_player, w4_prev_colour, w4_illegal, w4_hand_size, colour_context
        int nreveals
        int reveal_player[10]
        int reveal_to[10]
        uint8_t reveal_hand[10][54]
        int last_item, idle_turns, turn_player, previous_turn_player
        uint8_t void_evidence[10][4]
        int round_over, game_over, winner, round_winner
        int has_round_hand_points
        int64_t round_hand_points[10]
        int64_t num_steps, num_keeps
        int legal_valid
        uno_pcg64 pcg
        bitgen_t *ext_rng
        int event_log
        int64_t events_start, round_start
        uno_events ev

    void uno_pcg64_seed(uno_pcg64 *p, const uint32_t *entropy, int nwords)
    uint64_t uno_pcg64_next64(uno_pcg64 *p)
    void uno_seed_from_u64(uno_pcg64 *p, uint64_t seed)
    void uno_game_init(uno_game *g, const uno_rules *r, int event_log)
    void uno_game_free(uno_game *g)
    int uno_game_copy(uno_game *dst, const uno_game *src)
    int uno_new_game(uno_game *g)
    const uint8_t *uno_legal(uno_game *g, int *count)
    int uno_step(uno_game *g, int action)
    int uno_hand_points(const uno_game *g, int seat)
    int uno_uno_catchable(const uno_game *g)
    int uno_revealed_to(const uno_game *g, int seat)
    void uno_encode(const uno_game *g, int seat, float *out)
    void uno_mask(uno_game *g, uint8_t *out)
    void uno_round_rewards(const uno_game *g, int points_mode, double *out)
    int uno_determinize(const uno_game *src, int seat, bitgen_t *rng, uno_game *dst)
    int uno_determinize_voids(const uno_game *src, int seat, bitgen_t *rng, const double *voids,
                              uno_game *dst)
    int uno_event_append(uno_game *g, int type, int nfields, const int64_t *fields, int ncards,
                         const int64_t *cards)

cdef extern from "uno_agents.h" nogil:
    int AG_RANDOM, AG_GREEDY, AG_STRATEGIC
    ctypedef struct uno_agent_params:
        double points, follow_any, follow_each, draw, keep, skip, chain, reverse
        double threat[4]
        double hold_action, hold_w4, hold_wb, finisher, extra_turn, unblock
        int bluff
        double bluff_margin, trust, turn_value, void_, void_colour, w4_void, void_decay
        double colour_unseen
        int greedy_challenge_hand
    int UNO_POOL_MAX
    ctypedef struct uno_agent:
        int kind
        uno_pcg64 rng
        int npool
        int pool_kinds[16]
        double pool_cdf[16]
    void uno_agent_forget(uno_agent *a)
    int uno_agent_act(uno_agent *a, uno_game *g, const uno_agent_params *p)

cdef extern from "uno_search.h" nogil:
    ctypedef struct uno_mt:
        uint32_t mt[624]
        int index
    ctypedef struct uno_leaf_model:
        int logit
        double weights[7]
        double exponent
    void uno_mt_seed(uno_mt *m, const uint32_t *key, int nkey)
    double uno_mt_random(uno_mt *m)
    uint64_t uno_mt_getrandbits(uno_mt *m, int k)
    uint64_t uno_mt_randbelow(uno_mt *m, uint64_t n)
    int uno_rollout_action(uno_game *g, uno_mt *rnd, double epsilon)
    void uno_simulate(uno_game *g, uno_mt *rnd, int depth_cap, double epsilon,
                      const uno_leaf_model *leaf, double *rewards)

cdef extern from "uno_batch.h" nogil:
    ctypedef struct uno_table:
        uno_game g
        uno_pcg64 rng
        int seat
        int pending
        int nagents
        uno_agent agents[9]
        int agent_of[9]
    ctypedef struct uno_batch:
        uno_rules rules
        uno_agent_params params
        int num, learner_seat, self_play, points_mode, same_step
        double penalty
        int64_t max_steps
        uno_table *tables
    ctypedef struct uno_outputs:
        float *obs
        uint8_t *masks
        double *rewards
        uint8_t *terminated
        uint8_t *truncated
        int64_t *seats
        uint8_t *ended
        float *final_obs
        int64_t *final_winner
        int64_t *final_scores
        int64_t *final_seat
        uint8_t *final_illegal
        double *episode_return
        int64_t *episode_length
        int64_t *episode_place
    void uno_table_seed(uno_batch *b, int i, const uint32_t *entropy, int nwords)
    void uno_table_deal(uno_batch *b, int i)
    void uno_table_observe(uno_batch *b, int i, const uno_outputs *out)
    int uno_batch_check(uno_batch *b, const int64_t *actions)
    void uno_batch_step(uno_batch *b, const int64_t *actions, const uno_outputs *out)


#: Event types, in the C core's order (src/uno_core.h); their fields are uno_mk_env.engine.events'.
EVENT_TYPES = (
    "deal", "start_card", "play", "draw", "keep", "colour", "flip", "item", "target", "skip",
    "reverse", "accept", "challenge", "reveal", "uno", "catch", "let_pass", "reshuffle",
    "stalemate", "round_end",
)
_EVENT_CODE = {name: i for i, name in enumerate(EVENT_TYPES)}
_DRAW_REASON_CODE = {name: i for i, name in enumerate(ref.DRAW_REASONS)}
#: Game(event_log=...) of the reference, and "off": no log at all (the batched tables' and a
#: search's choice: a step is then a few hundred nanoseconds).
EVENT_LOGS = ("off", *ref.EVENT_LOGS)
_PHASES = tuple(ref.Phase)
_U64 = (1 << 64) - 1
_CAP = 2 ** 62

# The constants of src/uno_core.h are the reference's (a mismatch is a build from other sources).
assert (UNO_NUM_KINDS, UNO_NUM_ACTIONS, UNO_OBS_SIZE, UNO_MAX_PLAYERS, UNO_W4, UNO_WB,
        UNO_VOID_MEMORY, PH_GAME_OVER) == (
    ref.NUM_KINDS, ref.NUM_ACTIONS, ref.OBS_SIZE, ref.MAX_PLAYERS, ref.W4, ref.WB,
    ref.VOID_MEMORY, int(ref.Phase.GAME_OVER)), "the compiled core's constants are stale"


# ---------------------------------------------------------------------------------- helpers
cdef uno_rules _c_rules(object rules) except *:
    """The rule options as the C core's codes (``rules`` is a validated :class:`Rules`)."""
    cdef uno_rules r
    memset(&r, 0, sizeof(r))
    r.n = rules.num_players
    r.hand_size = rules.hand_size
    r.start_reflip = rules.start_action_cards == "reflip"
    r.start_chooser_first_player = rules.start_item_box_chooser == "first_player"
    r.two_player_reverse_skips = rules.two_player_reverse_skips
    r.item_box_counts_for_w4 = rules.item_box_counts_for_w4
    r.w4_strict = rules.w4_strict
    # a draw never takes more cards than the deck holds (R9): larger counts act alike
    r.lightning_draw = min(rules.lightning_draw, UNO_DRAW_CAP)
    try:
        r.lightning_draw_f = float(rules.lightning_draw)
    except OverflowError:
        r.lightning_draw_f = math.inf
    r.banana_last_player = rules.banana_target == "last_player"
    r.last_item_box = {"others_only": LAST_WB_OTHERS_ONLY, "full": LAST_WB_FULL,
                       "none": LAST_WB_NONE}[rules.last_item_box]
    r.uno_on = rules.uno == "on"
    r.uno_catch = {"auto": CATCH_AUTO, "next_player": CATCH_NEXT_PLAYER,
                   "any_player": CATCH_ANY_PLAYER}[rules.uno_catch]
    r.uno_penalty = min(rules.uno_penalty, UNO_DRAW_CAP)
    r.stalemate_lowest_hand = rules.stalemate == "lowest_hand"
    r.match = {"single_round": MATCH_SINGLE_ROUND, "target_score": MATCH_TARGET_SCORE,
               "fixed_rounds": MATCH_FIXED_ROUNDS}[rules.match]
    # scores and rounds never reach 2**62 (rules.max_score): larger targets act alike
    r.target_score = min(rules.target_score, _CAP)
    r.rounds = min(rules.rounds, _CAP)
    return r


def _words(value):
    """A non-negative int as uint32 words, least significant first (numpy's SeedSequence)."""
    if value == 0:
        return [0]
    words = []
    while value:
        words.append(value & 0xFFFFFFFF)
        value >>= 32
    return words


cdef void _seed_pcg(uno_pcg64 *p, object entropy) except *:
    """numpy.random.PCG64(SeedSequence(entropy)) for a non-negative int ``entropy``."""
    words = _words(entropy)
    cdef uint32_t *buf = <uint32_t *>calloc(len(words), sizeof(uint32_t))
    if buf == NULL:
        raise MemoryError()
    for i, w in enumerate(words):
        buf[i] = w
    uno_pcg64_seed(p, buf, len(words))
    free(buf)


cdef object _pcg_state(const uno_pcg64 *p):
    """The PCG64 state as ``numpy.random.PCG64().bit_generator.state`` shows it."""
    return {
        "bit_generator": "PCG64",
        "state": {"state": (<object>p.state_hi << 64) | p.state_lo,
                  "inc": (<object>p.inc_hi << 64) | p.inc_lo},
        "has_uint32": p.has_uint32,
        "uinteger": p.uinteger,
    }


cdef void _set_pcg_state(uno_pcg64 *p, object state) except *:
    s, inc = state["state"]["state"], state["state"]["inc"]
    p.state_hi, p.state_lo = (s >> 64) & _U64, s & _U64
    p.inc_hi, p.inc_lo = (inc >> 64) & _U64, inc & _U64
    p.has_uint32 = state["has_uint32"]
    p.uinteger = state["uinteger"]


cdef bitgen_t *_bitgen_of(object generator) except NULL:
    """The ``bitgen_t`` of a numpy Generator (numpy's documented C access)."""
    return <bitgen_t *>PyCapsule_GetPointer(generator.bit_generator.capsule, "BitGenerator")


def _as_action_id(action):
    """Any integer (numpy ints too) but not a bool, float or string (``Game.step``)."""
    if not isinstance(action, bool):
        try:
            return operator.index(action)
        except TypeError:
            pass
    raise ref.IllegalActionError(
        f"action must be an int action id 0-{ref.NUM_ACTIONS - 1}, got {ref.quote(action)}")


cdef tuple _kinds(const uint8_t *counts):
    out = []
    for k in range(UNO_NUM_KINDS):
        out.extend([k] * counts[k])
    return tuple(out)


include "_game.pxi"
include "_search.pxi"
include "_batch.pxi"
include "_match.pxi"
