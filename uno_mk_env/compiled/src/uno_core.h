/* The compiled core of uno-mk-env: the rules engine (docs/rules.md R1-R10) in flat C arrays.
 *
 * Every function here mirrors one of the Python reference engine (uno_mk_env/game.py and its
 * helpers) statement for statement, and draws from the random generator in the same order
 * with numpy's own algorithms, so that a game stepped here and one stepped in Python with the
 * same seed and actions stay bit-identical (tests/test_compiled_lockstep.py checks it at every
 * step). The constants are the Python ones (uno_mk_env.cards, .actions, .phases, .view); the
 * extension checks them against the Python values when it is imported.
 */
#ifndef UNO_CORE_H
#define UNO_CORE_H

#include <stdint.h>
#include "numpy/random/bitgen.h"

#define UNO_MAX_PLAYERS 10
#define UNO_NUM_KINDS 54
#define UNO_NUM_CARDS 112
#define UNO_NUM_COLOURS 4
#define UNO_NUM_ITEMS 5
#define UNO_W4 52
#define UNO_WB 53
#define UNO_SKIP 10
#define UNO_REVERSE 11
#define UNO_DRAW_TWO 12

/* action ids (uno_mk_env.actions) */
#define UNO_DRAW 54
#define UNO_KEEP 55
#define UNO_COLOUR_BASE 56
#define UNO_TARGET_BASE 60
#define UNO_CHALLENGE 69
#define UNO_ACCEPT 70
#define UNO_CALL_UNO 71
#define UNO_CATCH_UNO 72
#define UNO_NUM_ACTIONS 73

/* phases (uno_mk_env.phases.Phase) */
enum { PH_PLAY, PH_PLAY_DRAWN, PH_CHOOSE_COLOUR, PH_CHOOSE_TARGET, PH_CHALLENGE, PH_GAME_OVER,
       PH_UNO_CATCH };
/* colour contexts (uno_mk_env.view) */
enum { CTX_AFTER_W4, CTX_AFTER_BOB_OMB, CTX_AT_START };
/* items (uno_mk_env.cards) */
enum { IT_MUSHROOM, IT_BANANA, IT_GREEN_SHELL, IT_LIGHTNING, IT_BOB_OMB };
#define UNO_VOID_MEMORY 8
#define UNO_OBS_SIZE 437
#define UNO_MAX_ROUND 255

/* rule option codes */
enum { LAST_WB_OTHERS_ONLY, LAST_WB_FULL, LAST_WB_NONE };
enum { CATCH_AUTO, CATCH_NEXT_PLAYER, CATCH_ANY_PLAYER };
enum { MATCH_SINGLE_ROUND, MATCH_TARGET_SCORE, MATCH_FIXED_ROUNDS };

/* event types, in the order of uno_mk_env.compiled._core.EVENT_TYPES */
enum { EV_DEAL, EV_START_CARD, EV_PLAY, EV_DRAW, EV_KEEP, EV_COLOUR, EV_FLIP, EV_ITEM, EV_TARGET,
       EV_SKIP, EV_REVERSE, EV_ACCEPT, EV_CHALLENGE, EV_REVEAL, EV_UNO, EV_CATCH, EV_LET_PASS,
       EV_RESHUFFLE, EV_STALEMATE, EV_ROUND_END };
/* draw reasons, in the order of uno_mk_env.events.DRAW_REASONS */
enum { DR_DEAL, DR_VOLUNTARY, DR_DRAW_TWO, DR_WILD_DRAW_FOUR, DR_CHALLENGE_FAILED,
       DR_CHALLENGE_WON, DR_BANANA, DR_GREEN_SHELL, DR_LIGHTNING, DR_BOB_OMB, DR_UNO_PENALTY };

/* The rule options (uno_mk_env.rules.Rules) as codes. Counts that only bound a loop of draws
 * are clamped to UNO_DRAW_CAP: a draw never takes more than the deck holds (R9). */
#define UNO_DRAW_CAP 1000
typedef struct {
    int n, hand_size;
    int start_reflip, start_chooser_first_player, two_player_reverse_skips;
    int item_box_counts_for_w4, w4_strict;
    int lightning_draw;          /* clamped to UNO_DRAW_CAP */
    double lightning_draw_f;     /* the option as a Python float (strategic's estimate) */
    int banana_last_player, last_item_box, uno_on, uno_catch;
    int uno_penalty;             /* clamped to UNO_DRAW_CAP */
    int stalemate_lowest_hand, match;
    int64_t target_score, rounds;  /* clamped to 2**62 */
} uno_rules;

/* numpy's PCG64 state (numpy.random.PCG64: 128-bit LCG, XSL-RR output, a 32-bit buffer). */
typedef struct {
    uint64_t state_hi, state_lo, inc_hi, inc_lo;
    int has_uint32;
    uint32_t uinteger;
} uno_pcg64;

/* The event log: records of int64 (type, length, fields...) and their offsets. */
typedef struct {
    int64_t *data;
    int64_t len, cap;
    int64_t *offsets;
    int64_t count, offsets_cap;
} uno_events;

typedef struct uno_game {
    uno_rules r;
    int n;
    uint8_t hands[UNO_MAX_PLAYERS][UNO_NUM_KINDS];
    uint64_t held[UNO_MAX_PLAYERS];
    int sizes[UNO_MAX_PLAYERS];
    uint8_t draw_pile[UNO_NUM_CARDS];  /* top = draw_pile[ndraw - 1] */
    int ndraw;
    uint8_t discard[UNO_NUM_CARDS];    /* top = discard[ndiscard - 1] */
    int ndiscard;
    uint8_t discard_counts[UNO_NUM_KINDS];
    int colour, current_player, direction, phase, dealer;
    int64_t scores[UNO_MAX_PLAYERS];
    int64_t round;
    int drawn;
    uint8_t uno_called[UNO_MAX_PLAYERS];
    int uno_miss;
    int w4_player, w4_prev_colour, w4_illegal, w4_hand_size, colour_context;
    int nreveals;  /* R6.3: one per challenger, oldest first */
    int reveal_player[UNO_MAX_PLAYERS], reveal_to[UNO_MAX_PLAYERS];
    uint8_t reveal_hand[UNO_MAX_PLAYERS][UNO_NUM_KINDS];
    int last_item, idle_turns, turn_player, previous_turn_player;
    uint8_t void_evidence[UNO_MAX_PLAYERS][UNO_NUM_COLOURS];
    int round_over, game_over, winner, round_winner;  /* -1: None */
    int has_round_hand_points;
    int64_t round_hand_points[UNO_MAX_PLAYERS];
    int64_t num_steps, num_keeps;
    /* the legal actions of the current decision, computed on demand */
    int legal_valid, nlegal;
    uint8_t legal[UNO_NUM_ACTIONS];
    /* the game's generator: its own PCG64, or a numpy bit generator (ext_rng) it borrows */
    uno_pcg64 pcg;
    bitgen_t bitgen;
    bitgen_t *ext_rng;
    /* events: off (0) for speed, or the log of Game(event_log="recent" (1) / "all" (2)) */
    int event_log;
    int64_t events_start, round_start;
    uno_events ev;
} uno_game;

/* random generation with numpy's algorithms (uno_rng.c) */
void uno_pcg64_seed(uno_pcg64 *p, const uint32_t *entropy, int nwords);
uint64_t uno_pcg64_next64(uno_pcg64 *p);
void uno_pcg64_bitgen(bitgen_t *b, uno_pcg64 *p);
uint64_t uno_integers(bitgen_t *rng, uint64_t n);         /* Generator.integers(n), n >= 1 */
void uno_shuffle(bitgen_t *rng, uint8_t *x, int n);         /* Generator.shuffle(list) */
void uno_permutation(bitgen_t *rng, int *out, int n);      /* Generator.permutation(n) */
double uno_random(bitgen_t *rng);                            /* Generator.random() */
void uno_seed_from_u64(uno_pcg64 *p, uint64_t seed);        /* default_rng(seed) */

static inline bitgen_t *uno_rng(uno_game *g) {
    if (g->ext_rng) return g->ext_rng;
    uno_pcg64_bitgen(&g->bitgen, &g->pcg);  /* the game may have been copied: re-point it */
    return &g->bitgen;
}

/* the engine (uno_core.c) */
void uno_game_init(uno_game *g, const uno_rules *r, int event_log);
void uno_game_free(uno_game *g);
int uno_game_copy(uno_game *dst, const uno_game *src);  /* deep copy; -1 on no memory */
int uno_new_game(uno_game *g);   /* Game.__init__ after the generator is set: deal round 1 */
const uint8_t *uno_legal(uno_game *g, int *count);
int uno_is_legal(uno_game *g, int action);
int uno_step(uno_game *g, int action);  /* 0, or -1 if illegal (nothing changed), -2 no memory */
int uno_hand_points(const uno_game *g, int seat);
int uno_w4_is_legal(uint64_t held, int colour, int item_box_counts);
int uno_playable(int card, int top, int colour);
int uno_events_failed(const uno_game *g);
int uno_event_append(uno_game *g, int type, int nfields, const int64_t *fields, int ncards,
                     const int64_t *cards);  /* 0, or -2 out of memory */

/* views and encoders (uno_encode.c) */
int uno_uno_catchable(const uno_game *g);
int uno_revealed_to(const uno_game *g, int seat);  /* index of the reveal shown to seat, or -1 */
void uno_encode(const uno_game *g, int seat, float *out);
void uno_mask(uno_game *g, uint8_t *out);
void uno_round_rewards(const uno_game *g, int points_mode, double *out);
int uno_place(const uno_game *g, int seat, int winner);

/* determinization (uno_determinize.c): Game.determinize(seat, rng) */
int uno_determinize(const uno_game *src, int seat, bitgen_t *rng, uno_game *dst);
/* the same, then the search's void-belief condition (voids: n x 4 beliefs, or NULL) */
int uno_determinize_voids(const uno_game *src, int seat, bitgen_t *rng, const double *voids,
                          uno_game *dst);

#endif
