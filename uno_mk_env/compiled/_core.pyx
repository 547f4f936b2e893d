# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True, embedsignature=True
"""The compiled core: the rules engine in C (``src/``), bit-identical with the Python reference.

:class:`CompiledGame` is one game (the API of :class:`uno_mk_env.Game` that drivers use, plus a
fast :meth:`CompiledGame.observation`); :class:`BatchedTables` steps many tables in one C loop
with the GIL released. Both take everything that is not a rule (validation of rules and state
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
    int UNO_VOID_MEMORY, UNO_W4, UNO_WB, UNO_DRAW_CAP
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
    ctypedef struct uno_agent:
        int kind
        uno_pcg64 rng

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


# ------------------------------------------------------------------------------ one game
cdef class CompiledGame:
    """One game on the compiled core: :class:`uno_mk_env.Game`'s interface and trajectories.

    Args:
        rules: the rule options (default ``Rules()``).
        seed: an int (the game's own PCG64, seeded as ``numpy.random.default_rng(seed)``), a
            ``numpy.random.Generator`` (borrowed, as ``Game`` borrows it: its state advances),
            or ``None`` (fresh entropy).
        event_log: ``"recent"`` or ``"all"`` as ``Game``, or ``"off"`` (no log: ``events`` is
            empty; the fastest).
    """

    cdef uno_game g
    cdef readonly object rules
    cdef object _ext  # the numpy Generator whose bit generator g.ext_rng borrows

    def __cinit__(self):
        memset(&self.g, 0, sizeof(uno_game))

    def __dealloc__(self):
        uno_game_free(&self.g)

    def __init__(self, rules=None, seed=None, event_log="recent"):
        self._setup(ref.Rules() if rules is None else rules, event_log)
        self._seed(seed)
        _check(uno_new_game(&self.g))

    cdef _setup(self, object rules, object event_log):
        if not isinstance(rules, ref.Rules):
            raise TypeError(f"rules must be a uno_mk_env.Rules, got {type(rules).__name__}")
        if event_log not in EVENT_LOGS:
            raise ValueError(f"event_log={ref.quote(event_log)} is not allowed; allowed: "
                             f"{EVENT_LOGS}")
        self.rules = rules
        cdef uno_rules r = _c_rules(rules)
        uno_game_free(&self.g)
        uno_game_init(&self.g, &r, EVENT_LOGS.index(event_log))
        self._ext = None

    cdef _setup_as(self, CompiledGame other, object event_log):
        """:meth:`_setup` with ``other``'s rules (checked and converted already)."""
        if event_log not in EVENT_LOGS:
            raise ValueError(f"event_log={ref.quote(event_log)} is not allowed; allowed: "
                             f"{EVENT_LOGS}")
        self.rules = other.rules
        uno_game_free(&self.g)
        uno_game_init(&self.g, &other.g.r, EVENT_LOGS.index(event_log))
        self._ext = None

    cdef _seed(self, object seed):
        if isinstance(seed, np.random.Generator):
            self._borrow(seed)
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
            _seed_pcg(&self.g.pcg, int(seed))
        elif seed is None:
            _seed_pcg(&self.g.pcg, np.random.SeedSequence().entropy)
        else:  # what numpy accepts (or refuses) beyond ints, as Game
            self._borrow(np.random.default_rng(seed))

    cdef _borrow(self, object generator):
        self._ext = generator
        self.g.ext_rng = _bitgen_of(generator)

    cdef _set_rng_state(self, object state):
        """A copy of a bit generator's ``state``: PCG64 in C, any other in a numpy object."""
        if state["bit_generator"] == "PCG64":
            self._ext = None
            self.g.ext_rng = NULL
            _set_pcg_state(&self.g.pcg, state)
        else:
            generator = np.random.Generator(getattr(np.random, state["bit_generator"])())
            generator.bit_generator.state = state
            self._borrow(generator)

    cdef object _rng_state(self):
        if self._ext is not None:
            return self._ext.bit_generator.state
        return _pcg_state(&self.g.pcg)

    # ---------------------------------------------------------------- state
    @property
    def num_players(self):
        return self.g.n

    @property
    def current_player(self):
        """The decider, ``-1`` when the game is over."""
        return self.g.current_player

    @property
    def phase(self):
        return _PHASES[self.g.phase]

    @property
    def phase_name(self):
        return ref.PHASE_NAMES[self.g.phase]

    @property
    def direction(self):
        return self.g.direction

    @property
    def dealer(self):
        return self.g.dealer

    @property
    def round(self):
        return self.g.round

    @property
    def scores(self):
        return [self.g.scores[s] for s in range(self.g.n)]

    @property
    def sizes(self):
        return [self.g.sizes[s] for s in range(self.g.n)]

    @property
    def top_card(self):
        return self.g.discard[self.g.ndiscard - 1]

    @property
    def active_colour(self):
        return self.g.colour

    @property
    def winner(self):
        return None if self.g.winner < 0 else self.g.winner

    @property
    def round_winner(self):
        return None if self.g.round_winner < 0 else self.g.round_winner

    @property
    def round_hand_points(self):
        if not self.g.has_round_hand_points:
            return None
        return tuple(self.g.round_hand_points[s] for s in range(self.g.n))

    @property
    def round_over(self):
        return bool(self.g.round_over)

    @property
    def game_over(self):
        return bool(self.g.game_over)

    @property
    def num_steps(self):
        return self.g.num_steps

    @property
    def num_keeps(self):
        return self.g.num_keeps

    @property
    def public_steps(self):
        """Decisions every seat can count (``num_steps`` without ``KEEP``s), as ``Game``."""
        return self.g.num_steps - self.g.num_keeps

    @property
    def event_log(self):
        return EVENT_LOGS[self.g.event_log]

    @property
    def events_start(self):
        return self.g.events_start

    @property
    def event_count(self):
        return self.g.events_start + self.g.ev.count

    def rollout_action(self, SearchRandom rnd, double epsilon):
        """``agents.ismcts_playout.rollout_action(self, rnd, epsilon)`` on the core (``rnd``
        drawn as the ``random.Random`` it stands for)."""
        return uno_rollout_action(&self.g, &rnd.m, epsilon)

    def simulate(self, SearchRandom rnd, int depth_cap, double epsilon, weights,
                 double exponent):
        """The search's simulation (``ISMCTSAgent``'s ``_simulate`` with the fast rollout) on
        the core: ``rollout_action`` until the round ends or ``depth_cap`` decisions (0: no
        cap); returns every seat's reward (``win_reward``, or at the cap ``logit_rewards`` with
        ``weights``, or the hand-size model ``size ** -exponent`` when ``weights`` is None)."""
        cdef uno_leaf_model leaf
        leaf.logit = weights is not None
        leaf.exponent = exponent
        if weights is not None:
            if len(weights) != 7:
                raise ValueError("weights must hold 7 numbers")
            for i in range(7):
                leaf.weights[i] = weights[i]
        cdef double rewards[10]
        uno_simulate(&self.g, &rnd.m, depth_cap, epsilon, &leaf, rewards)
        return [rewards[s] for s in range(self.g.n)]

    @property
    def hands(self):
        """Every seat's hand as counts per kind (``bytes``; ``Game.hands``' layout), for the
        search's playout policy, which reads its own determinizations."""
        return [(<char *>self.g.hands[s])[:UNO_NUM_KINDS] for s in range(self.g.n)]

    @property
    def colour(self):
        return self.g.colour

    def hand(self, int seat):
        """A copy of ``seat``'s hand as counts per kind."""
        self._check_seat(seat)
        return [self.g.hands[seat][k] for k in range(UNO_NUM_KINDS)]

    def hand_points(self, int seat):
        self._check_seat(seat)
        return uno_hand_points(&self.g, seat)

    def next_seat(self, int seat, int steps=1):
        return (seat + self.g.direction * steps) % self.g.n

    cdef _check_seat(self, int seat):
        if not 0 <= seat < self.g.n:
            raise ValueError(f"seat {seat} out of range 0-{self.g.n - 1}")

    # ---------------------------------------------------------------- play
    def legal_action_ids(self):
        """Legal action ids, ascending (empty when the game is over)."""
        cdef int count
        cdef const uint8_t *ids = uno_legal(&self.g, &count)
        return tuple([ids[i] for i in range(count)])

    def legal_actions(self):
        """Bool mask of shape ``(73,)`` over action ids."""
        mask = np.zeros(UNO_NUM_ACTIONS, dtype=np.uint8)
        cdef uint8_t[::1] view = mask
        uno_mask(&self.g, &view[0])
        return mask.view(bool)

    def step(self, action):
        """Applies the decider's ``action``.

        Raises:
            IllegalActionError: ``action`` is not legal now (nothing is changed), with the
                reference's message.
        """
        if type(action) is not int:
            action = _as_action_id(action)
        cdef int rc = -1
        if 0 <= action < UNO_NUM_ACTIONS:
            rc = uno_step(&self.g, action)
        if rc == -1:
            self._raise_illegal(action)
        _check(rc)

    cdef _raise_illegal(self, object a):
        in_range = 0 <= a < ref.NUM_ACTIONS
        name = ref.ACTION_NAMES[a] if in_range else f"out of 0-{ref.NUM_ACTIONS - 1}"
        if self.g.game_over:
            raise ref.IllegalActionError(
                f"action {a} ({name}): the game is over, no action is legal")
        legal = self.legal_action_ids()
        raise ref.IllegalActionError(
            f"illegal action {a} ({name}) for player {self.g.current_player} in phase "
            f"'{self.phase_name}'; legal: {list(legal)} "
            f"({', '.join(ref.ACTION_NAMES[x] for x in legal)})")

    def round_rewards(self, reward):
        """``uno_mk_env.engine.rewards.round_rewards(game, reward)``: every seat's reward of the step
        that just ended a round (``reward``: ``"win"`` or ``"points"``)."""
        if reward not in ref.REWARD_MODES:
            raise ValueError(f"reward={ref.quote(reward)} is not allowed; allowed: "
                             f"{ref.REWARD_MODES}")
        cdef double out[10]
        uno_round_rewards(&self.g, reward == "points", out)
        return [out[s] for s in range(self.g.n)]

    # ---------------------------------------------------------------- what a seat sees
    def observation(self, int seat, float[::1] out=None):
        """``uno_mk_env.engine.observation.encode(game.view(seat))``, written in C (into ``out``, a
        float32 array of 437, when given; else a new array)."""
        self._check_seat(seat)
        result = None
        if out is None:
            result = np.empty(UNO_OBS_SIZE, np.float32)
            out = result
        if out.shape[0] != UNO_OBS_SIZE:
            raise ValueError(f"out must hold {UNO_OBS_SIZE} float32, got {out.shape[0]}")
        uno_encode(&self.g, seat, &out[0])
        return result if result is not None else np.asarray(out)

    def view(self, int seat):
        """What ``seat`` may know, as the reference's :class:`~uno_mk_env.PlayerView`."""
        self._check_seat(seat)
        cdef uno_game *g = &self.g
        cdef int n = g.n
        decider = g.current_player == seat
        shown = uno_revealed_to(g, seat)
        revealed = None
        revealed_by = -1
        if shown >= 0:
            revealed = bytes([g.reveal_hand[shown][k] for k in range(UNO_NUM_KINDS)])
            revealed_by = g.reveal_player[shown]
        return ref.PlayerView(
            seat, n, self.rules, _PHASES[g.phase], g.current_player,
            bytes([g.hands[seat][k] for k in range(UNO_NUM_KINDS)]),
            g.discard[g.ndiscard - 1], g.colour, g.drawn if decider else ref.NO_CARD,
            g.direction, tuple([g.sizes[s] for s in range(n)]),
            tuple([bool(g.uno_called[s]) for s in range(n)]),
            tuple([g.scores[s] for s in range(n)]), g.ndraw, g.ndiscard,
            bytes([g.discard_counts[k] for k in range(UNO_NUM_KINDS)]), g.w4_player,
            g.w4_prev_colour, revealed, revealed_by, g.last_item, uno_uno_catchable(g),
            g.uno_miss, g.dealer, g.round, g.colour_context, g.idle_turns, g.turn_player,
            g.previous_turn_player,
            bytes([g.void_evidence[s][c] for s in range(n) for c in range(4)]),
            g.w4_hand_size, g.w4_illegal if seat == g.w4_player else -1,
            self.legal_action_ids() if decider else (),
        )

    # ---------------------------------------------------------------- events
    cdef object _event(self, int64_t i):
        cdef int64_t *rec = self.g.ev.data + self.g.ev.offsets[i]
        cdef int64_t kind = rec[0], length = rec[1]
        cdef int64_t *f = rec + 2
        name = EVENT_TYPES[kind]
        if name == "draw":
            return (name, f[0], tuple([f[j] for j in range(2, length)]), ref.DRAW_REASONS[f[1]])
        if name == "reveal":
            return (name, f[0], f[1], tuple([f[j] for j in range(2, length)]))
        if name == "challenge":
            return (name, f[0], f[1], bool(f[2]))
        if name == "round_end":
            return (name, None if f[0] < 0 else f[0], f[1],
                    tuple([f[j] for j in range(3, length)]))
        return (name, *[f[j] for j in range(length)])

    @property
    def events(self):
        """The omniscient event log, as the reference's tuples."""
        return [self._event(i) for i in range(self.g.ev.count)]

    def events_since(self, int64_t number):
        """The events numbered ``number`` on (``event_count`` counts every event so far)."""
        start = max(number - self.g.events_start, 0)
        return [self._event(i) for i in range(start, self.g.ev.count)]

    def events_for(self, seat):
        """The event log as ``seat`` may see it (``None``: the full log)."""
        if seat is None:
            return self.events
        return [seen for e in self.events if (seen := ref.event_for(e, seat)) is not None]

    cdef _append_event(self, tuple event):
        """Appends a reference event tuple to the C log (state dict interchange)."""
        name = event[0]
        fields, cards = [], []
        if name == "draw":
            fields, cards = [event[1], _DRAW_REASON_CODE[event[3]]], list(event[2])
        elif name == "reveal":
            fields, cards = [event[1], event[2]], list(event[3])
        elif name == "round_end":
            fields = [-1 if event[1] is None else event[1], event[2], len(event[3])]
            cards = list(event[3])
        else:
            fields = [int(x) for x in event[1:]]
        cdef int64_t buf[128]
        values = fields + cards
        if len(values) > 128:
            raise ref.StateError(f"event {ref.quote(event)} is longer than any game's")
        for j, v in enumerate(values):
            buf[j] = v
        _check(uno_event_append(&self.g, _EVENT_CODE[name], len(fields), buf, len(cards),
                                buf + len(fields)))

    # ---------------------------------------------------------------- interchange
    def to_game(self):
        """The same position as a reference :class:`~uno_mk_env.Game` (its generator a copy)."""
        cdef uno_game *g = &self.g
        cdef int n = g.n
        game = ref.Game.__new__(ref.Game)
        game._setup(self.rules, None, "all" if g.event_log == 2 else "recent")
        game._rng_source = self._rng_state()  # a state dict: Game builds its generator from it
        game.hands = [bytearray([g.hands[s][k] for k in range(UNO_NUM_KINDS)]) for s in range(n)]
        game.held = [g.held[s] for s in range(n)]
        game.sizes = [g.sizes[s] for s in range(n)]
        game.draw_pile = [g.draw_pile[i] for i in range(g.ndraw)]
        game.discard = [g.discard[i] for i in range(g.ndiscard)]
        game.discard_counts = bytearray([g.discard_counts[k] for k in range(UNO_NUM_KINDS)])
        game.colour = g.colour
        game.current_player = g.current_player
        game.direction = g.direction
        game.phase = _PHASES[g.phase]
        game.dealer = g.dealer
        game.scores = self.scores
        game.round = g.round
        game.drawn = g.drawn
        game.uno_called = [bool(g.uno_called[s]) for s in range(n)]
        game.uno_miss = g.uno_miss
        game.w4_player = g.w4_player
        game.w4_prev_colour = g.w4_prev_colour
        game.w4_illegal = bool(g.w4_illegal)
        game.w4_hand_size = g.w4_hand_size
        game.colour_context = g.colour_context
        game.reveals = tuple([(g.reveal_player[i], g.reveal_to[i], _kinds(g.reveal_hand[i]))
                              for i in range(g.nreveals)])
        game.last_item = g.last_item
        game.idle_turns = g.idle_turns
        game.turn_player = g.turn_player
        game.previous_turn_player = g.previous_turn_player
        game.void_evidence = [bytearray([g.void_evidence[s][c] for c in range(4)])
                              for s in range(n)]
        game.round_over = bool(g.round_over)
        game.game_over = bool(g.game_over)
        game.winner = self.winner
        game.round_winner = self.round_winner
        game.round_hand_points = self.round_hand_points
        game.num_steps = g.num_steps
        game.num_keeps = g.num_keeps
        game.events = self.events
        game.events_start = g.events_start
        game._round_start = g.round_start
        game._legal = () if g.game_over else None
        return game

    @classmethod
    def from_game(cls, game, event_log=None):
        """The position of a reference ``game`` (its generator's state copied, never shared)."""
        if not isinstance(game, ref.Game):
            raise TypeError(f"from_game needs a uno_mk_env.Game, got {type(game).__name__}")
        cdef CompiledGame c = cls.__new__(cls)
        c._setup(game.rules, game.event_log if event_log is None else event_log)
        c._set_rng_state(game.rng.bit_generator.state)
        cdef uno_game *g = &c.g
        n = g.n
        for s in range(n):
            for k in range(UNO_NUM_KINDS):
                g.hands[s][k] = game.hands[s][k]
            g.held[s] = game.held[s]
            g.sizes[s] = game.sizes[s]
            g.scores[s] = game.scores[s]
            g.uno_called[s] = game.uno_called[s]
            for col in range(4):
                g.void_evidence[s][col] = game.void_evidence[s][col]
        g.ndraw = len(game.draw_pile)
        for i, k in enumerate(game.draw_pile):
            g.draw_pile[i] = k
        g.ndiscard = len(game.discard)
        for i, k in enumerate(game.discard):
            g.discard[i] = k
        for k in range(UNO_NUM_KINDS):
            g.discard_counts[k] = game.discard_counts[k]
        g.colour = game.colour
        g.current_player = game.current_player
        g.direction = game.direction
        g.phase = int(game.phase)
        g.dealer = game.dealer
        g.round = game.round
        g.drawn = game.drawn
        g.uno_miss = game.uno_miss
        g.w4_player = game.w4_player
        g.w4_prev_colour = game.w4_prev_colour
        g.w4_illegal = game.w4_illegal
        g.w4_hand_size = game.w4_hand_size
        g.colour_context = game.colour_context
        g.nreveals = len(game.reveals)
        for i, (w4p, to, shown) in enumerate(game.reveals):
            g.reveal_player[i] = w4p
            g.reveal_to[i] = to
            memset(g.reveal_hand[i], 0, UNO_NUM_KINDS)
            for k in shown:
                g.reveal_hand[i][k] += 1
        g.last_item = game.last_item
        g.idle_turns = game.idle_turns
        g.turn_player = game.turn_player
        g.previous_turn_player = game.previous_turn_player
        g.round_over = game.round_over
        g.game_over = game.game_over
        g.winner = -1 if game.winner is None else game.winner
        g.round_winner = -1 if game.round_winner is None else game.round_winner
        g.has_round_hand_points = game.round_hand_points is not None
        if game.round_hand_points is not None:
            for s in range(n):
                g.round_hand_points[s] = game.round_hand_points[s]
        g.num_steps = game.num_steps
        g.num_keeps = game.num_keeps
        g.legal_valid = 0
        if g.event_log > 0:
            for event in game.events:
                c._append_event(event)
            g.events_start = game.events_start
            g.round_start = game._round_start
        return c

    def to_dict(self, include_events=False):
        """The reference's state dict (``Game.to_dict``) of this position."""
        return self.to_game().to_dict(include_events)

    @classmethod
    def from_dict(cls, d, seed=None, event_log=None):
        """A game from a state dict, validated by the reference (``Game.from_dict``)."""
        return cls.from_game(ref.Game.from_dict(d, seed), event_log)

    def clone(self):
        """An independent deep copy (generator included)."""
        cdef CompiledGame c = CompiledGame.__new__(CompiledGame)
        c.rules = self.rules
        _copy(&c.g, &self.g)
        c.g.ext_rng = NULL
        if self._ext is not None:
            c._set_rng_state(self._ext.bit_generator.state)
        return c

    def determinize(self, int seat, rng, event_log="off", voids=None):
        """``Game.determinize(seat, rng)`` on the core: the same game drawn with the same draws
        from ``rng`` (a numpy Generator), from what ``seat`` sees only. Its event log is off
        unless asked (``"recent"``: the reference's empty log, for comparisons).

        ``voids`` (``num_players`` rows of 4 beliefs that a seat holds no card of a colour; a
        float64 array of shape ``(num_players, 4)`` is read as it is): then the IS-MCTS
        agent's condition (``agents/ismcts.py``, ``ISMCTSAgent._deal``), as
        ``Game.from_view(view, rng, condition)`` applies it."""
        self._check_seat(seat)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        cdef double[:, ::1] beliefs
        cdef const double *given = NULL
        if voids is not None:
            array = np.ascontiguousarray(voids, dtype=np.float64)  # a no-op for such an array
            if array.shape != (self.g.n, 4):
                raise ValueError(f"voids must hold {self.g.n} rows of 4 beliefs, got shape "
                                 f"{array.shape}")
            beliefs = array
            given = &beliefs[0, 0]
        cdef CompiledGame c = CompiledGame.__new__(CompiledGame)
        c._setup_as(self, event_log)
        cdef bitgen_t *bitgen = _bitgen_of(rng)
        cdef int rc
        with rng.bit_generator.lock:
            rc = uno_determinize_voids(&self.g, seat, bitgen, given, &c.g)
        if rc < 0:
            raise ref.StateError("determinize: no unseen card could be the playable card the "
                                 "deciding seat drew")
        return c

    def __eq__(self, other):
        if isinstance(other, (CompiledGame, ref.Game)):
            return self.to_dict() == other.to_dict()
        return NotImplemented

    __hash__ = None

    def __reduce__(self):
        return (CompiledGame.from_game, (self.to_game(), EVENT_LOGS[self.g.event_log]))

    def __repr__(self):
        return (f"CompiledGame(players={self.g.n}, round={self.g.round}, "
                f"phase={self.phase_name!r}, current_player={self.g.current_player})")


cdef class SearchRandom:
    """``random.Random(seed)`` on the core (Mersenne Twister, seeded and drawn as CPython does),
    for the search's playouts: :meth:`CompiledGame.rollout_action` and
    :meth:`CompiledGame.simulate` draw from it as the Python playouts draw from the
    ``random.Random`` it stands for."""

    cdef uno_mt m

    def __init__(self, seed):
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {ref.quote(seed)}")
        words = _words(int(seed)) or [0]
        if len(words) > 16:
            raise ValueError(f"seed {ref.quote(seed)} is larger than 512 bits")
        cdef uint32_t key[16]
        for j, w in enumerate(words):
            key[j] = w
        uno_mt_seed(&self.m, key, len(words))

    def random(self):
        return uno_mt_random(&self.m)

    def getrandbits(self, int k):
        if not 0 <= k <= 64:
            raise ValueError(f"k must be from 0 to 64, got {k}")
        return uno_mt_getrandbits(&self.m, k)

    def randrange(self, n):
        if not isinstance(n, (int, np.integer)) or not 1 <= n < 2**64:
            raise ValueError(f"n must be an int from 1 to 2**64 - 1, got {ref.quote(n)}")
        return uno_mt_randbelow(&self.m, n)


def random_play(rules, int64_t decisions, uint64_t seed=0):
    """Uniformly random legal play on the core, in C without the GIL: ``decisions`` decisions,
    a new game (seeded ``seed``, ``seed + 1``, ...) whenever one ends; returns the number of
    games finished. The engine's own speed, for ``benchmarks/compiled_speed.py``."""
    if not isinstance(rules, ref.Rules):
        raise TypeError(f"rules must be a uno_mk_env.Rules, got {type(rules).__name__}")
    cdef uno_rules r = _c_rules(rules)
    cdef uno_game *g = <uno_game *>calloc(1, sizeof(uno_game))
    if g == NULL:
        raise MemoryError()
    cdef uno_pcg64 pick
    uno_seed_from_u64(&pick, seed ^ 0x9E3779B97F4A7C15)
    cdef int64_t i, games = 0
    cdef int count
    cdef const uint8_t *ids
    with nogil:
        uno_game_init(g, &r, 0)
        uno_seed_from_u64(&g.pcg, seed)
        uno_new_game(g)
        for i in range(decisions):
            if g.game_over:
                games += 1
                uno_game_init(g, &r, 0)
                uno_seed_from_u64(&g.pcg, seed + <uint64_t>games)
                uno_new_game(g)
            ids = uno_legal(g, &count)
            uno_step(g, ids[uno_pcg64_next64(&pick) % <uint64_t>count])
    free(g)
    return games


cdef void _copy(uno_game *dst, const uno_game *src) except *:
    if uno_game_copy(dst, src) < 0:
        raise MemoryError("the compiled core ran out of memory copying an event log")


cdef int _check(int rc) except -1:
    if rc == -2:
        raise MemoryError("the compiled core ran out of memory for its event log")
    return rc


# ------------------------------------------------------------------------ batched tables
_AGENT_KINDS = {"random": AG_RANDOM, "greedy": AG_GREEDY, "strategic": AG_STRATEGIC}
#: StrategicParams of uno_mk_env.agents.rule_based (the agents' layer is above the core, which
#: cannot import it; tests/test_compiled_agents.py checks these are its defaults).
STRATEGIC_DEFAULTS = {
    "points": 0.005, "follow_any": 0.5, "follow_each": 0.2, "draw": -1.5, "keep": -0.5,
    "threat": (0.0, 3.0, 1.5, 0.6), "skip": 0.6, "chain": 2.0, "reverse": 1.0,
    "hold_action": 0.3, "hold_w4": 9.0, "hold_wb": 4.0, "finisher": 1.0, "extra_turn": 0.8,
    "unblock": 0.5, "bluff": True, "bluff_margin": 0.0, "trust": 0.25, "turn_value": 1.0,
    "void": 2.0, "void_colour": 3.0, "w4_void": 0.7, "void_decay": 0.75, "colour_unseen": 0.5,
}
#: GreedyAgent's default challenge_hand.
GREEDY_CHALLENGE_HAND = 5


cdef uno_agent_params _c_params(object params, int challenge_hand) except *:
    cdef uno_agent_params p
    memset(&p, 0, sizeof(p))
    get = params.get if isinstance(params, dict) else (lambda name: getattr(params, name))
    p.points, p.follow_any, p.follow_each = get("points"), get("follow_any"), get("follow_each")
    p.draw, p.keep, p.skip, p.chain = get("draw"), get("keep"), get("skip"), get("chain")
    p.reverse, p.hold_action, p.hold_w4 = get("reverse"), get("hold_action"), get("hold_w4")
    p.hold_wb, p.finisher, p.extra_turn = get("hold_wb"), get("finisher"), get("extra_turn")
    p.unblock, p.bluff, p.bluff_margin = get("unblock"), get("bluff"), get("bluff_margin")
    p.trust, p.turn_value, p.void_ = get("trust"), get("turn_value"), get("void")
    p.void_colour, p.w4_void = get("void_colour"), get("w4_void")
    p.void_decay, p.colour_unseen = get("void_decay"), get("colour_unseen")
    threat = tuple(get("threat"))
    if len(threat) != 4:
        raise ValueError(f"strategic params: threat must hold 4 numbers, got {ref.quote(threat)}")
    for i in range(4):
        p.threat[i] = threat[i]
    p.greedy_challenge_hand = challenge_hand
    return p


def _opponent_specs(opponents, int n):
    """``opponents`` as ``(slot -> agent index or -1, kinds of the distinct agents)``."""
    allowed = (None, *_AGENT_KINDS)
    if opponents is None or isinstance(opponents, str):
        if opponents not in allowed:
            raise ValueError(f"opponent {ref.quote(opponents)} is not allowed; allowed: "
                             f"{allowed}")
        if opponents is None:
            return [-1] * (n - 1), []
        return [0] * (n - 1), [_AGENT_KINDS[opponents]]  # one agent for every seat
    specs = list(opponents)
    if len(specs) != n - 1:
        raise ValueError(f"opponents must name num_players - 1 = {n - 1} opponents, got "
                         f"{len(specs)}")
    slots, kinds = [], []
    for spec in specs:
        if spec not in allowed:
            raise ValueError(f"opponent {ref.quote(spec)} is not allowed; allowed: {allowed}")
        if spec is None:
            slots.append(-1)
        else:
            slots.append(len(kinds))
            kinds.append(_AGENT_KINDS[spec])
    return slots, kinds


cdef class BatchedTables:
    """``num_envs`` tables on the compiled core, stepped in one C loop without the GIL.

    Two modes, the two vector envs of :mod:`uno_mk_env.envs.vector`:

    * a learner seat at each table (``self_play=False``): the other seats are played inside
      :meth:`step` by ``opponents`` until the learner decides again (``UnoMarioKartVectorEnv``,
      seed for seed);
    * every seat is the learner (``self_play=True``): :meth:`step` applies the decider's
      action and returns every seat's reward (``SelfPlayVectorEnv``).

    Args:
        num_envs: tables.
        num_players: seats per table (2-10).
        opponents: ``None`` (uniform over the legal actions from the table's generator, as the
            vector env's ``None``), ``"random"``, ``"greedy"`` or ``"strategic"`` (one agent of
            that kind for every opponent seat, as the vector env given one agent), or a
            sequence of ``num_players - 1`` of those (one agent per seat, ``opponents[k]``
            ``k + 1`` seats clockwise from the learner).
        learner_seat: a seat, or ``None`` (drawn at every deal from the table's generator).
        reward: ``"win"`` or ``"points"``.
        illegal_action_penalty: the learner's reward for an illegal action (the episode ends).
        max_steps: truncation after that many decisions of all seats (``KEEP`` not counted,
            never inside a ``play_drawn`` decision), or ``None``.
        self_play: see above.
        same_step: auto-reset an ended table inside the step it ends (``SAME_STEP``); else
            the table shows its ended episode's last observation and an all-``False`` mask, and
            the next :meth:`step` deals it again, ignoring its action (``NEXT_STEP``; a caller
            that wants ``DISABLED`` deals it with :meth:`reset` ``indices`` instead).
        strategic_params: the ``strategic`` agents' weights (a ``StrategicParams`` or a
            mapping of its fields); default :data:`STRATEGIC_DEFAULTS`.
        **rule_options: the rule options (:class:`uno_mk_env.Rules`).

    The buffers (``obs``, ``masks``, ``rewards``, ``terminated``, ``truncated``, ``seats`` and
    the ended episodes' ``ended``, ``final_obs``, ``final_winner``, ``final_scores``,
    ``final_seat``, ``final_illegal``, ``episode_return``, ``episode_length``,
    ``episode_place``) are numpy arrays owned by this object and rewritten by every
    :meth:`reset` and :meth:`step`: copy what must outlive the next call.
    """

    cdef uno_batch b
    cdef uno_outputs out
    cdef readonly object rules
    cdef readonly int num_envs
    cdef readonly bint self_play
    cdef readonly object obs, masks, rewards, terminated, truncated, seats, ended, final_obs
    cdef readonly object final_winner, final_scores, final_seat, final_illegal
    cdef readonly object episode_return, episode_length, episode_place
    cdef object _actions
    cdef bint _started

    def __cinit__(self):
        memset(&self.b, 0, sizeof(uno_batch))

    def __dealloc__(self):
        if self.b.tables != NULL:
            for i in range(self.b.num):
                uno_game_free(&self.b.tables[i].g)
            free(self.b.tables)

    def __init__(self, num_envs, num_players=2, opponents=None, learner_seat=None,
                 reward="win", illegal_action_penalty=-1.0, max_steps=None, self_play=False,
                 strategic_params=None, same_step=True, **rule_options):
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or not 1 <= num_envs:
            raise ValueError(f"num_envs must be a positive int, got {ref.quote(num_envs)}")
        self.rules = ref.Rules(num_players=num_players, **rule_options)
        n = self.rules.num_players
        if reward not in ref.REWARD_MODES:
            raise ValueError(f"reward={ref.quote(reward)} is not allowed; allowed: "
                             f"{ref.REWARD_MODES}")
        if max_steps is not None and (not isinstance(max_steps, int)
                                      or isinstance(max_steps, bool) or max_steps < 1):
            raise ValueError(f"max_steps must be a positive int or None, got "
                             f"{ref.quote(max_steps)}")
        if learner_seat is not None and (not isinstance(learner_seat, int)
                                         or isinstance(learner_seat, bool)
                                         or not 0 <= learner_seat < n):
            raise ValueError(f"learner_seat must be None or a seat 0-{n - 1}, got "
                             f"{ref.quote(learner_seat)}")
        if (isinstance(illegal_action_penalty, bool)
                or not isinstance(illegal_action_penalty, (int, float, np.integer, np.floating))
                or not math.isfinite(float(illegal_action_penalty))):
            raise ValueError("illegal_action_penalty must be a finite number, got "
                             f"{ref.quote(illegal_action_penalty)}")
        slots, kinds = _opponent_specs(opponents, n)
        if self_play and (opponents is not None or learner_seat is not None):
            raise ValueError("self_play tables have no opponents and no learner seat")
        self.num_envs = num_envs
        self.self_play = self_play
        self.b.rules = _c_rules(self.rules)
        self.b.params = _c_params(STRATEGIC_DEFAULTS if strategic_params is None
                                  else strategic_params, GREEDY_CHALLENGE_HAND)
        self.b.num = num_envs
        self.b.learner_seat = -1 if learner_seat is None else learner_seat
        self.b.self_play = self_play
        self.b.same_step = bool(same_step) or self_play
        self.b.points_mode = reward == "points"
        self.b.penalty = float(illegal_action_penalty)
        self.b.max_steps = -1 if max_steps is None else min(max_steps, _CAP)
        self.b.tables = <uno_table *>calloc(num_envs, sizeof(uno_table))
        if self.b.tables == NULL:
            raise MemoryError(f"no memory for {num_envs} tables")
        cdef uno_table *t
        for i in range(num_envs):
            t = &self.b.tables[i]
            uno_game_init(&t.g, &self.b.rules, 0)
            t.nagents = len(kinds)
            for a, kind in enumerate(kinds):
                t.agents[a].kind = kind
            for slot in range(n - 1):
                t.agent_of[slot] = slots[slot] if slot < len(slots) else -1
        self._allocate(n)
        self._started = False

    def _allocate(self, int n):
        num = self.num_envs
        self.obs = np.zeros((num, UNO_OBS_SIZE), np.float32)
        self.masks = np.zeros((num, UNO_NUM_ACTIONS), bool)
        shape = [num, n] if self.self_play else [num]
        self.rewards = np.zeros(shape, np.float64)
        self.terminated = np.zeros(num, bool)
        self.truncated = np.zeros(num, bool)
        self.seats = np.zeros(num, np.int64)
        self.ended = np.zeros(num, bool)
        self.final_obs = np.zeros((num, UNO_OBS_SIZE), np.float32)
        self.final_winner = np.full(num, -1, np.int64)
        self.final_scores = np.zeros((num, n), np.int64)
        self.final_seat = np.zeros(num, np.int64)
        self.final_illegal = np.zeros(num, bool)
        self.episode_return = np.zeros(num, np.float64)
        self.episode_length = np.zeros(num, np.int64)
        self.episode_place = np.zeros(num, np.int64)
        self._actions = np.zeros(num, np.int64)
        cdef float[:, ::1] obs = self.obs
        cdef uint8_t[:, ::1] masks = self.masks.view(np.uint8)
        cdef double[::1] rewards = self.rewards.reshape(-1)
        cdef uint8_t[::1] terminated = self.terminated.view(np.uint8)
        cdef uint8_t[::1] truncated = self.truncated.view(np.uint8)
        cdef int64_t[::1] seats = self.seats
        cdef uint8_t[::1] ended = self.ended.view(np.uint8)
        cdef float[:, ::1] final_obs = self.final_obs
        cdef int64_t[::1] final_winner = self.final_winner
        cdef int64_t[::1] final_scores = self.final_scores.reshape(-1)
        cdef int64_t[::1] final_seat = self.final_seat
        cdef uint8_t[::1] final_illegal = self.final_illegal.view(np.uint8)
        cdef double[::1] episode_return = self.episode_return
        cdef int64_t[::1] episode_length = self.episode_length
        cdef int64_t[::1] episode_place = self.episode_place
        self.out.obs = &obs[0, 0]
        self.out.masks = &masks[0, 0]
        self.out.rewards = &rewards[0]
        self.out.terminated = &terminated[0]
        self.out.truncated = &truncated[0]
        self.out.seats = &seats[0]
        self.out.ended = &ended[0]
        self.out.final_obs = &final_obs[0, 0]
        self.out.final_winner = &final_winner[0]
        self.out.final_scores = &final_scores[0]
        self.out.final_seat = &final_seat[0]
        self.out.final_illegal = &final_illegal[0]
        self.out.episode_return = &episode_return[0]
        self.out.episode_length = &episode_length[0]
        self.out.episode_place = &episode_place[0]

    def reset(self, seed=None, indices=None):
        """Deals a new game at every table (or at the tables ``indices``, a sequence of table
        numbers, once every table has been dealt): ``seed`` reseeds table ``i`` with
        ``seed + i`` (or ``seed[i]`` for a list; ``None`` entries keep the table's generators),
        as the vector envs' ``reset``; writes those tables' ``obs``, ``masks`` and ``seats``."""
        seeds = _table_seeds(seed, self.num_envs)
        chosen = range(self.num_envs) if indices is None else [int(i) for i in indices]
        if not self._started and len(chosen) != self.num_envs:
            raise RuntimeError("the first reset() deals every table")
        for i in chosen:
            if not 0 <= i < self.num_envs:
                raise IndexError(f"table {i} out of range 0-{self.num_envs - 1}")
        for i in chosen:
            s = seeds[i]
            if s is None and not self._started:
                s = np.random.SeedSequence().entropy  # a table never seeded: fresh entropy
            if s is None:
                uno_table_seed(&self.b, i, NULL, 0)
            else:
                self._seed_table(i, s)
            uno_table_deal(&self.b, i)
            uno_table_observe(&self.b, i, &self.out)
        self._started = True

    cdef _seed_table(self, int i, object seed):
        words = _words(seed)
        cdef uint32_t buf[16]
        if len(words) > 16:
            raise ValueError(f"seed {ref.quote(seed)} is larger than 512 bits")
        for j, w in enumerate(words):
            buf[j] = w
        uno_table_seed(&self.b, i, buf, len(words))

    def step(self, actions):
        """Steps every table with ``actions`` (``(num_envs,)`` ints), the GIL released.

        Raises:
            TypeError: ``actions`` is not an integer array of shape ``(num_envs,)``.
            ValueError: an id outside 0-72. Nothing is changed in either case.
            IllegalActionError: (self-play only) an illegal action, naming the table; nothing
                is changed. With a learner seat an illegal action ends its episode with the
                penalty instead.
        """
        if not self._started:
            raise RuntimeError("reset() needs to be called before step()")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise TypeError(f"actions must be an integer array of shape ({self.num_envs},), "
                            f"got {a.dtype} of shape {a.shape}")
        cdef int64_t[::1] acts = self._actions
        cdef int64_t[::1] given
        cdef int bad, i
        if a.dtype == np.int64 and a.flags.c_contiguous:  # the usual case: checked in C
            given = a
            for i in range(self.num_envs):
                if not 0 <= given[i] < UNO_NUM_ACTIONS:
                    break
                acts[i] = given[i]
            else:
                i = -1
            if i >= 0:
                self._out_of_range(a)
        else:
            if a.min() < 0 or a.max() >= UNO_NUM_ACTIONS:
                self._out_of_range(a)
            self._actions[:] = a
        if self.self_play:
            bad = uno_batch_check(&self.b, &acts[0])
            if bad >= 0:
                legal = self._legal(bad)
                raise ref.IllegalActionError(
                    f"table {bad}: illegal action {acts[bad]} "
                    f"({ref.ACTION_NAMES[acts[bad]]}); legal: {list(legal)}")
        with nogil:
            uno_batch_step(&self.b, &acts[0], &self.out)

    def _out_of_range(self, a):
        raise ValueError(f"actions must be ids 0-{UNO_NUM_ACTIONS - 1}, got values "
                         f"{a.min()}..{a.max()}")

    cdef tuple _legal(self, int i):
        cdef int count
        cdef const uint8_t *ids = uno_legal(&self.b.tables[i].g, &count)
        return tuple([ids[j] for j in range(count)])

    def pending(self):
        """``(num_envs,)`` bool: the tables whose episode ended and that are not dealt again
        yet (``same_step=False``)."""
        return np.array([self.b.tables[i].pending for i in range(self.num_envs)], bool)

    def game(self, int i):
        """A :class:`CompiledGame` copy of table ``i``'s current game (hidden state included)."""
        if not 0 <= i < self.num_envs:
            raise IndexError(f"table {i} out of range 0-{self.num_envs - 1}")
        cdef CompiledGame c = CompiledGame.__new__(CompiledGame)
        c.rules = self.rules
        _copy(&c.g, &self.b.tables[i].g)
        return c

    def table_rng_state(self, int i):
        """The state of table ``i``'s generator (``np_random``), as numpy shows a PCG64's."""
        return _pcg_state(&self.b.tables[i].rng)


def _table_seeds(seed, int n):
    if seed is None:
        return [None] * n
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {ref.quote(seed)}")
        return [int(seed) + i for i in range(n)]
    seeds = list(seed)
    if len(seeds) != n:
        raise ValueError(f"seed must be an int, None or {n} seeds (one per table), got "
                         f"{len(seeds)}")
    for s in seeds:
        if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer))
                              or s < 0):
            raise ValueError(f"each seed must be a non-negative int or None, got "
                             f"{ref.quote(s)}")
    return [None if s is None else int(s) for s in seeds]
