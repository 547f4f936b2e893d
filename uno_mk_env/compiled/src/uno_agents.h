/* The rule-based agents of uno_mk_env.agents (rule_based.py, base.py) as batched opponents:
 * each decides exactly what the Python agent decides from the same view and memory. */
#ifndef UNO_AGENTS_H
#define UNO_AGENTS_H

#include "uno_core.h"

enum { AG_RANDOM, AG_GREEDY, AG_STRATEGIC };

/* StrategicParams, filled from the Python dataclass (its defaults are the one home) */
typedef struct {
    double points, follow_any, follow_each, draw, keep, threat[4], skip, chain, reverse;
    double hold_action, hold_w4, hold_wb, finisher, extra_turn, unblock;
    int bluff;
    double bluff_margin, trust, turn_value, void_, void_colour, w4_void, void_decay;
    double colour_unseen;
    int greedy_challenge_hand;  /* GreedyAgent(challenge_hand=5) */
} uno_agent_params;

#define UNO_POOL_MAX 16  /* most agents of one opponent pool */

typedef struct {
    int kind;
    uno_pcg64 rng;  /* Agent.rng (the random agent draws from it) */
    /* an opponent pool (uno_mk_env/training/opponents.py, no self-play): at every reset it
     * draws, from its own generator, the agent it plays and that agent's seed */
    int npool;      /* 0: a plain agent */
    int pool_kinds[UNO_POOL_MAX];
    double pool_cdf[UNO_POOL_MAX];  /* numpy's Generator.choice cdf of the weights */
    uno_pcg64 pool_rng;
    /* StrategicAgent's memory (_forget / _observe / _remember) */
    int has_key;
    int64_t key_round;
    int key_seat, key_n;
    int nvoid;
    double void_[UNO_MAX_PLAYERS][UNO_NUM_COLOURS];
    int nseen;
    int seen_sizes[UNO_MAX_PLAYERS];
    int has_pending, pending_colour, pending_top;
    int64_t pending_discarded;
    int pending_sizes[UNO_MAX_PLAYERS];
    int seen_w4s;
} uno_agent;

void uno_agent_forget(uno_agent *a);
uno_pcg64 *uno_agent_seeded(uno_agent *a);  /* the generator reset(seed) reseeds */
void uno_agent_pool_draw(uno_agent *a);     /* a pool's reset: which agent plays, its seed */
int uno_agent_act(uno_agent *a, uno_game *g, const uno_agent_params *p);

#endif
