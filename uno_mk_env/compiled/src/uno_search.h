/* The IS-MCTS search's playouts on the core (agents/ismcts.py, agents/ismcts_playout.py):
 * Python's random.Random (MT19937, seeded and drawn as CPython does), the default policy
 * rollout_action, and a simulation scored by win_reward or the cut-off models. */
#ifndef UNO_SEARCH_H
#define UNO_SEARCH_H

#include "uno_core.h"

#define UNO_MT_N 624

typedef struct {
    uint32_t mt[UNO_MT_N];
    int index;
} uno_mt;

void uno_mt_seed(uno_mt *m, const uint32_t *key, int nkey);  /* random.Random(int) */
uint32_t uno_mt_next(uno_mt *m);
double uno_mt_random(uno_mt *m);                             /* random() */
uint64_t uno_mt_getrandbits(uno_mt *m, int k);               /* getrandbits(k), k <= 64 */
uint64_t uno_mt_randbelow(uno_mt *m, uint64_t n);            /* randrange(n), n >= 1 */

/* the cut-off model of a simulation that reached the depth cap */
typedef struct {
    int logit;            /* 1: logit_rewards with weights; 0: size ** -exponent */
    double weights[7];
    double exponent;
} uno_leaf_model;

int uno_rollout_action(uno_game *g, uno_mt *rnd, double epsilon);
/* plays rollout_action until the round ends or depth_cap decisions (0: no cap); rewards: n */
void uno_simulate(uno_game *g, uno_mt *rnd, int depth_cap, double epsilon,
                  const uno_leaf_model *leaf, double *rewards);

#endif
