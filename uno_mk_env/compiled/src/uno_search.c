/* agents/ismcts_playout.py and ISMCTSAgent's simulation on the core, decision for decision and
 * draw for draw (see uno_search.h). */
#include "uno_search.h"
#include <math.h>

/* ---- CPython's Modules/_randommodule.c ---- */
static void mt_init(uno_mt *m, uint32_t s) {
    m->mt[0] = s;
    for (int i = 1; i < UNO_MT_N; i++)
        m->mt[i] = 1812433253U * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t)i;
    m->index = UNO_MT_N;
}

void uno_mt_seed(uno_mt *m, const uint32_t *key, int nkey) {
    mt_init(m, 19650218U);
    uint32_t *mt = m->mt;
    int i = 1, j = 0;
    for (int k = UNO_MT_N > nkey ? UNO_MT_N : nkey; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= UNO_MT_N) { mt[0] = mt[UNO_MT_N - 1]; i = 1; }
        if (j >= nkey) j = 0;
    }
    for (int k = UNO_MT_N - 1; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - (uint32_t)i;
        i++;
        if (i >= UNO_MT_N) { mt[0] = mt[UNO_MT_N - 1]; i = 1; }
    }
    mt[0] = 0x80000000U;
}

uint32_t uno_mt_next(uno_mt *m) {
    static const uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    uint32_t y, *mt = m->mt;
    if (m->index >= UNO_MT_N) {
        int kk;
        for (kk = 0; kk < UNO_MT_N - 397; kk++) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + 397] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        for (; kk < UNO_MT_N - 1; kk++) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + (397 - UNO_MT_N)] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        y = (mt[UNO_MT_N - 1] & 0x80000000U) | (mt[0] & 0x7fffffffU);
        mt[UNO_MT_N - 1] = mt[396] ^ (y >> 1) ^ mag01[y & 0x1U];
        m->index = 0;
    }
    y = mt[m->index++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}

double uno_mt_random(uno_mt *m) {
    uint32_t a = uno_mt_next(m) >> 5, b = uno_mt_next(m) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

uint64_t uno_mt_getrandbits(uno_mt *m, int k) {
    if (k <= 0) return 0;
    if (k <= 32) return uno_mt_next(m) >> (32 - k);
    uint64_t low = uno_mt_next(m);
    return low | ((uint64_t)(uno_mt_next(m) >> (64 - k)) << 32);
}

uint64_t uno_mt_randbelow(uno_mt *m, uint64_t n) {
    int k = 0;
    while (k < 64 && (n >> k)) k++;  /* n.bit_length() */
    uint64_t r = uno_mt_getrandbits(m, k);
    while (r >= n) r = uno_mt_getrandbits(m, k);
    return r;
}

/* ---- agents/ismcts_playout.py ---- */
static int colour_count(const uint8_t *hand, int c) {
    int total = 0;
    for (int k = 13 * c; k < 13 * c + 13; k++) total += hand[k];
    return total;
}

static int most_held_colour(const uint8_t *hand) {
    int best = 0, best_count = colour_count(hand, 0);
    for (int c = 1; c < 4; c++) {
        int count = colour_count(hand, c);
        if (count > best_count) { best = c; best_count = count; }
    }
    return best;
}

static int honest_w4(const uno_game *g, const uint8_t *hand) {
    uint64_t held = 0;
    for (int k = 0; k < UNO_NUM_KINDS; k++)
        if (hand[k]) held |= 1ULL << k;
    return uno_w4_is_legal(held, g->colour, g->r.item_box_counts_for_w4);
}

static int rollout_coloured(const uint8_t *coloured, int nc, const uint8_t *hand, uno_mt *rnd,
                            double epsilon, double action_bonus) {
    if (nc == 1) return coloured[0];
    if (uno_mt_random(rnd) < epsilon) return coloured[uno_mt_randbelow(rnd, (uint64_t)nc)];
    int best = coloured[0];
    double best_key = -1.0;
    for (int i = 0; i < nc; i++) {
        int k = coloured[i], b = 13 * (k / 13);
        double key = (double)colour_count(hand, k / 13) + uno_mt_random(rnd) * 0.5;
        if (k - b >= UNO_SKIP) key += action_bonus;
        if (key > best_key) { best = k; best_key = key; }
    }
    return best;
}

static int pymod(int x, int n) {
    int m = x % n;
    return m < 0 ? m + n : m;
}

static int rollout_play(uno_game *g, const uint8_t *legal, int count, uno_mt *rnd,
                        double epsilon) {
    int p = g->current_player, n = g->n;
    const uint8_t *hand = g->hands[p];
    int threat = g->sizes[pymod(p + g->direction, n)] <= 2;
    int has_w4 = 0, has_wb = 0, nc = 0;
    uint8_t coloured[UNO_NUM_ACTIONS];
    for (int i = 0; i < count; i++) {
        if (legal[i] < UNO_W4) coloured[nc++] = legal[i];
        else if (legal[i] == UNO_W4) has_w4 = 1;
        else if (legal[i] == UNO_WB) has_wb = 1;
    }
    if (threat && has_w4 && honest_w4(g, hand)) return UNO_W4;
    if (nc) return rollout_coloured(coloured, nc, hand, rnd, epsilon, (n == 2 || threat) ? 2.0 : 0.0);
    if (has_wb) return UNO_WB;
    if (has_w4 && honest_w4(g, hand)) return UNO_W4;
    return UNO_DRAW;
}

static int smallest_hand_offset(const uno_game *g) {
    int n = g->n, p = g->current_player, best = 1;
    for (int j = 2; j < n; j++)
        if (g->sizes[(p + j) % n] < g->sizes[(p + best) % n]) best = j;
    return best;
}

int uno_rollout_action(uno_game *g, uno_mt *rnd, double epsilon) {
    int count;
    const uint8_t *legal = uno_legal(g, &count);
    if (count == 1) return legal[0];
    if (legal[count - 1] >= UNO_CALL_UNO) {
        for (int i = 0; i < count; i++)
            if (legal[i] == UNO_CATCH_UNO) return UNO_CATCH_UNO;
        return UNO_CALL_UNO;
    }
    switch (g->phase) {
    case PH_PLAY: return rollout_play(g, legal, count, rnd, epsilon);
    case PH_PLAY_DRAWN: return legal[0];
    case PH_CHOOSE_COLOUR: return UNO_COLOUR_BASE + most_held_colour(g->hands[g->current_player]);
    case PH_CHOOSE_TARGET: return UNO_TARGET_BASE + smallest_hand_offset(g) - 1;
    case PH_CHALLENGE: return UNO_ACCEPT;
    default: return legal[0];
    }
}

/* rewards.expected_win_rewards */
static void expected_win_rewards(const double *weights, int n, double *out) {
    double lose = -1.0 / (n - 1), total = 0.0;
    for (int s = 0; s < n; s++) total += weights[s];
    for (int s = 0; s < n; s++) out[s] = weights[s] / total * (1.0 - lose) + lose;
}

/* leaf_features . weights, summed in Python's order (0 + w0 f0 + w1 f1 + ...) */
static double logit_score(const uno_game *g, int s, const double *w) {
    const uint8_t *h = g->hands[s];
    int actions = 0, colours = 0;
    for (int b = 0; b < 52; b += 13) {
        actions += h[b + 10] + h[b + 11] + h[b + 12];
        for (int k = b; k < b + 13; k++)
            if (h[k]) { colours++; break; }
    }
    int dist = pymod((s - g->current_player) * g->direction, g->n);
    double f[7] = {log((double)(g->sizes[s] > 1 ? g->sizes[s] : 1)), (double)h[UNO_W4],
                   (double)h[UNO_WB], (double)actions, (double)colours, dist == 0 ? 1.0 : 0.0,
                   dist == 1 ? 1.0 : 0.0};
    double total = 0.0;
    for (int i = 0; i < 7; i++) total += w[i] * f[i];
    return total;
}

void uno_simulate(uno_game *g, uno_mt *rnd, int depth_cap, double epsilon,
                  const uno_leaf_model *leaf, double *rewards) {
    int n = g->n, steps = 0;
    while (!(g->round_over || g->game_over)) {
        if (depth_cap && steps >= depth_cap) break;
        uno_step(g, uno_rollout_action(g, rnd, epsilon));
        steps++;
    }
    double weights[UNO_MAX_PLAYERS];
    if (g->round_over || g->game_over) {
        int winner = g->round_winner;
        for (int s = 0; s < n; s++)
            rewards[s] = winner < 0 ? 0.0 : s == winner ? 1.0 : -1.0 / (n - 1);
        return;
    }
    if (leaf->logit) {
        double scores[UNO_MAX_PLAYERS], top = -INFINITY;
        for (int s = 0; s < n; s++) {
            scores[s] = logit_score(g, s, leaf->weights);
            if (scores[s] > top) top = scores[s];
        }
        for (int s = 0; s < n; s++) weights[s] = exp(scores[s] - top);
    } else {
        for (int s = 0; s < n; s++)
            weights[s] = pow((double)(g->sizes[s] > 1 ? g->sizes[s] : 1), -leaf->exponent);
    }
    expected_win_rewards(weights, n, rewards);
}
