/* Batched tables (uno_mk_env.vector's UnoMarioKartVectorEnv and SelfPlayVectorEnv semantics):
 * N games stepped in one C loop, writing into the caller's buffers. */
#ifndef UNO_BATCH_H
#define UNO_BATCH_H

#include "uno_agents.h"

#define UNO_UNIFORM -1  /* an opponent slot played uniformly from the table's generator */

typedef struct {
    uno_game g;
    uno_pcg64 rng;        /* the table's np_random */
    int seat;             /* the learner's seat this episode */
    int64_t steps;        /* decisions of all seats but KEEP (max_steps) */
    int over, illegal;
    int pending;          /* ended, not dealt again yet (NEXT_STEP/DISABLED autoreset) */
    double reward, ret;
    int64_t length;       /* the learner's decisions this episode */
    int nagents;          /* distinct agent objects of the table */
    uno_agent agents[UNO_MAX_PLAYERS - 1];
    int agent_of[UNO_MAX_PLAYERS - 1];  /* opponent k seats after the learner -> agent, or -1 */
} uno_table;

typedef struct {
    uno_rules rules;
    uno_agent_params params;
    int num, learner_seat;  /* -1: drawn each episode */
    int self_play, points_mode;
    int same_step;          /* autoreset an ended table in the step it ends (else: NEXT_STEP) */
    double penalty;
    int64_t max_steps;      /* -1: none */
    uno_table *tables;
} uno_batch;

/* Buffers of one step; rows are tables. rewards: (N,) or (N, n) in self-play. */
typedef struct {
    float *obs;
    uint8_t *masks;
    double *rewards;
    uint8_t *terminated, *truncated;
    int64_t *seats;
    /* the episodes that ended this step (flags) and their outcome */
    uint8_t *ended;
    float *final_obs;
    int64_t *final_winner, *final_scores, *final_seat;
    uint8_t *final_illegal;
    double *episode_return;
    int64_t *episode_length, *episode_place;
} uno_outputs;

void uno_table_seed(uno_batch *b, int i, const uint32_t *entropy, int nwords);
void uno_table_deal(uno_batch *b, int i);  /* clears pending */
void uno_table_observe(uno_batch *b, int i, const uno_outputs *out);
int uno_batch_check(uno_batch *b, const int64_t *actions);  /* self-play: first illegal, or -1 */
void uno_batch_step(uno_batch *b, const int64_t *actions, const uno_outputs *out);

#endif
