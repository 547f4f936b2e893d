/* N tables, one loop: the learner's action, its opponents until it decides again, rewards,
 * episode ends and same-step autoreset, in the order uno_mk_env/vector.py takes them (and so
 * drawing from each table's generators as it does). No Python object is touched: the caller
 * releases the GIL around uno_batch_step. */
#include "uno_batch.h"
#include <string.h>

static inline int pymod(int x, int n) {
    int m = x % n;
    return m < 0 ? m + n : m;
}

static bitgen_t table_rng(uno_table *t, bitgen_t *b) {
    uno_pcg64_bitgen(b, &t->rng);
    return *b;
}

/* gymnasium.Env.reset(seed) then each distinct agent's reset(seed drawn from np_random) */
void uno_table_seed(uno_batch *b, int i, const uint32_t *entropy, int nwords) {
    uno_table *t = &b->tables[i];
    bitgen_t rng;
    if (entropy) {
        uno_pcg64_seed(&t->rng, entropy, nwords);
        table_rng(t, &rng);
        for (int a = 0; a < t->nagents; a++)
            uno_seed_from_u64(uno_agent_seeded(&t->agents[a]), uno_integers(&rng, 1ULL << 63));
    }
    for (int a = 0; a < t->nagents; a++) {
        if (t->agents[a].npool) uno_agent_pool_draw(&t->agents[a]);
        uno_agent_forget(&t->agents[a]);
    }
}

static double after_step(uno_batch *b, uno_table *t, int action) {
    uno_game *g = &t->g;
    t->steps += action != UNO_KEEP;
    double reward = 0.0;
    if (g->round_over) {
        double r[UNO_MAX_PLAYERS];
        uno_round_rewards(g, b->points_mode, r);
        reward = r[t->seat];
    }
    if (g->game_over || (b->max_steps >= 0 && t->steps >= b->max_steps && g->phase != PH_PLAY_DRAWN))
        t->over = 1;
    return reward;
}

static int opponent_action(uno_batch *b, uno_table *t, int p) {
    int slot = pymod(p - t->seat, b->rules.n) - 1;
    int a = t->agent_of[slot];
    if (a >= 0) return uno_agent_act(&t->agents[a], &t->g, &b->params);
    int count;
    const uint8_t *legal = uno_legal(&t->g, &count);
    bitgen_t rng;
    table_rng(t, &rng);
    return legal[(int64_t)(uno_random(&rng) * (double)count)];
}

static void play_opponents(uno_batch *b, uno_table *t) {
    while (!t->over && t->g.current_player != t->seat) {
        int action = opponent_action(b, t, t->g.current_player);
        uno_step(&t->g, action);
        t->reward += after_step(b, t, action);
    }
}

static void new_game(uno_table *t, const uno_rules *r, bitgen_t *rng) {
    uno_game_init(&t->g, r, 0);
    uno_seed_from_u64(&t->g.pcg, uno_integers(rng, 1ULL << 63));
    uno_new_game(&t->g);
    t->steps = 0;
}

/* a new episode, played up to the learner's first decision; a deal that ends before is replaced */
void uno_table_deal(uno_batch *b, int i) {
    uno_table *t = &b->tables[i];
    bitgen_t rng;
    table_rng(t, &rng);
    t->pending = 0;
    if (b->self_play) {
        new_game(t, &b->rules, &rng);
        t->seat = t->g.current_player;
        t->over = 0;
        return;
    }
    do {
        t->seat = b->learner_seat >= 0 ? b->learner_seat : (int)uno_integers(&rng, (uint64_t)b->rules.n);
        new_game(t, &b->rules, &rng);
        t->over = t->illegal = 0;
        t->ret = 0.0;
        t->length = 0;
        play_opponents(b, t);
    } while (t->over);
}

void uno_table_observe(uno_batch *b, int i, const uno_outputs *out) {
    uno_table *t = &b->tables[i];
    if (b->self_play) t->seat = t->g.current_player;
    uno_encode(&t->g, t->seat, out->obs + (size_t)i * UNO_OBS_SIZE);
    uno_mask(&t->g, out->masks + (size_t)i * UNO_NUM_ACTIONS);
    out->seats[i] = t->seat;
}

int uno_batch_check(uno_batch *b, const int64_t *actions) {
    for (int i = 0; i < b->num; i++)
        if (!uno_is_legal(&b->tables[i].g, (int)actions[i])) return i;
    return -1;
}

static void record_end(uno_batch *b, int i, const uno_outputs *out) {
    uno_table *t = &b->tables[i];
    uno_game *g = &t->g;
    int n = b->rules.n;
    int winner = g->game_over ? g->winner : -1;
    out->ended[i] = 1;
    out->final_winner[i] = winner;
    for (int s = 0; s < n; s++) out->final_scores[(size_t)i * n + s] = g->scores[s];
    if (b->self_play) {
        out->episode_length[i] = t->steps;
        return;
    }
    uno_encode(g, t->seat, out->final_obs + (size_t)i * UNO_OBS_SIZE);
    out->final_seat[i] = t->seat;
    out->final_illegal[i] = (uint8_t)t->illegal;
    out->episode_return[i] = t->ret;
    out->episode_length[i] = t->length;
    out->episode_place[i] = uno_place(g, t->seat, winner);
}

static void step_self_play(uno_batch *b, int i, int action, const uno_outputs *out) {
    uno_table *t = &b->tables[i];
    uno_game *g = &t->g;
    int n = b->rules.n;
    double *rewards = out->rewards + (size_t)i * n;
    uno_step(g, action);
    t->steps += action != UNO_KEEP;
    if (g->round_over) uno_round_rewards(g, b->points_mode, rewards);
    if (g->game_over)
        out->terminated[i] = 1;
    else if (b->max_steps >= 0 && t->steps >= b->max_steps && g->phase != PH_PLAY_DRAWN)
        out->truncated[i] = 1;
    if (out->terminated[i] || out->truncated[i]) {
        record_end(b, i, out);
        uno_table_deal(b, i);
    }
    uno_table_observe(b, i, out);
}

/* NEXT_STEP: the table whose episode ended last step is dealt again, its action ignored */
static void deal_pending(uno_batch *b, int i, const uno_outputs *out) {
    out->rewards[i] = 0.0;
    uno_table_seed(b, i, NULL, 0);
    uno_table_deal(b, i);
    uno_table_observe(b, i, out);
}

/* NEXT_STEP/DISABLED: the ended table shows its episode's last observation and no legal action */
static void hold_ended(uno_batch *b, int i, const uno_outputs *out) {
    uno_table *t = &b->tables[i];
    t->pending = 1;
    uno_encode(&t->g, t->seat, out->obs + (size_t)i * UNO_OBS_SIZE);
    memset(out->masks + (size_t)i * UNO_NUM_ACTIONS, 0, UNO_NUM_ACTIONS);
}

static void step_learner(uno_batch *b, int i, int action, const uno_outputs *out) {
    uno_table *t = &b->tables[i];
    if (t->pending) {
        deal_pending(b, i, out);
        return;
    }
    t->reward = 0.0;
    if (uno_step(&t->g, action) == -1) {
        t->over = t->illegal = 1;
        t->reward = b->penalty;
    } else {
        t->reward += after_step(b, t, action);
        if (!t->over) play_opponents(b, t);
    }
    out->rewards[i] = t->reward;
    t->ret += t->reward;
    t->length += 1;
    if (t->over) {
        out->terminated[i] = t->g.game_over || t->illegal;
        out->truncated[i] = !out->terminated[i];
        record_end(b, i, out);
        if (!b->same_step) {
            hold_ended(b, i, out);
            return;
        }
        uno_table_seed(b, i, NULL, 0);  /* reset(seed=None): the agents forget, keep their streams */
        uno_table_deal(b, i);
    }
    uno_table_observe(b, i, out);
}

void uno_batch_step(uno_batch *b, const int64_t *actions, const uno_outputs *out) {
    int n = b->rules.n;
    memset(out->terminated, 0, (size_t)b->num);
    memset(out->truncated, 0, (size_t)b->num);
    memset(out->ended, 0, (size_t)b->num);
    if (b->self_play)
        memset(out->rewards, 0, (size_t)b->num * n * sizeof(double));
    for (int i = 0; i < b->num; i++) {
        if (b->self_play)
            step_self_play(b, i, (int)actions[i], out);
        else
            step_learner(b, i, (int)actions[i], out);
    }
}
