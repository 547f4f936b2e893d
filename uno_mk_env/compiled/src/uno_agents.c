/* GreedyAgent, StrategicAgent and RandomAgent (uno_mk_env/agents/rule_based.py, base.py),
 * reading only what the deciding seat's PlayerView holds. Floating-point expressions keep the
 * Python evaluation order, so every score, and so every choice, is the same double. */
#include "uno_agents.h"
#include <math.h>
#include <string.h>
#include "patchlevel.h"  /* PY_VERSION_HEX: which sum() the reference's Python does */

#define WIN 1e6
static const int POINTS_OF_RANK[13] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 20, 20, 20};

static inline int pymod(int x, int n) {
    int m = x % n;
    return m < 0 ? m + n : m;
}
static inline int points_of(int k) { return k >= UNO_W4 ? 50 : POINTS_OF_RANK[k % 13]; }

/* builtin sum() of floats: plain left to right before Python 3.12, Neumaier-compensated since */
static double py_sum(const double *x, int count) {
    if (!count) return 0.0;
    double f = x[0];
#if PY_VERSION_HEX >= 0x030C0000
    double c = 0.0;
    for (int i = 1; i < count; i++) {
        double t = f + x[i];
        if (fabs(f) >= fabs(x[i]))
            c += (f - t) + x[i];
        else
            c += (x[i] - t) + f;
        f = t;
    }
    if (c != 0.0 && isfinite(c)) f += c;
#else
    for (int i = 1; i < count; i++) f += x[i];
#endif
    return f;
}

/* ------------------------------------------------------------------ shared helpers */
static void colour_counts(const uint8_t *hand, int *counts) {
    for (int c = 0; c < 4; c++) {
        int s = 0;
        for (int k = 13 * c; k < 13 * c + 13; k++) s += hand[k];
        counts[c] = s;
    }
}

static int colour_points(const uint8_t *hand, int c) {
    int s = 0;
    for (int i = 0; i < 13; i++) s += hand[13 * c + i] * POINTS_OF_RANK[i];
    return s;
}

static uint64_t held_of(const uint8_t *hand) {
    uint64_t held = 0;
    for (int k = 0; k < UNO_NUM_KINDS; k++)
        if (hand[k]) held |= 1ULL << k;
    return held;
}

static int view_w4_is_legal(const uno_game *g, int seat) {
    return uno_w4_is_legal(held_of(g->hands[seat]), g->colour, g->r.item_box_counts_for_w4);
}

/* (total unseen, unseen per colour, unseen WB) */
static int unseen(const uno_game *g, int seat, int *per_colour, int *wb) {
    const uint8_t *hand = g->hands[seat], *disc = g->discard_counts;
    int total = 0;
    for (int c = 0; c < 4; c++) {
        int s = 25;
        for (int k = 13 * c; k < 13 * c + 13; k++) s -= hand[k] + disc[k];
        per_colour[c] = s;
        total += s;
    }
    *wb = 8 - hand[UNO_WB] - disc[UNO_WB];
    int w4 = 4 - hand[UNO_W4] - disc[UNO_W4];
    return total + *wb + w4;
}

static int shell_target(const uno_game *g, int me) {
    int n = g->n, best_k = 1, best_size = -1, best_away = 0;
    for (int k = 1; k < n; k++) {
        int away = g->direction == 1 ? k : n - k;
        int size = g->sizes[(me + k) % n];
        if (best_size < 0 || size < best_size || (size == best_size && away < best_away)) {
            best_size = size;
            best_away = away;
            best_k = k;
        }
    }
    return UNO_TARGET_BASE + best_k - 1;
}

static int in_legal(const uint8_t *legal, int count, int a) {
    for (int i = 0; i < count; i++)
        if (legal[i] == a) return 1;
    return 0;
}

/* always catch, then always call (R8) */
static int uno_reflex(const uint8_t *legal, int count) {
    if (in_legal(legal, count, UNO_CATCH_UNO)) return UNO_CATCH_UNO;
    if (in_legal(legal, count, UNO_CALL_UNO)) return UNO_CALL_UNO;
    return -1;
}

/* ------------------------------------------------------------------ greedy */
static int greedy_act(uno_game *g, const uno_agent_params *p) {
    int count;
    const uint8_t *legal = uno_legal(g, &count);
    if (count == 1) return legal[0];
    int reflex = uno_reflex(legal, count);
    if (reflex >= 0) return reflex;
    int me = g->current_player;
    const uint8_t *hand = g->hands[me];
    switch (g->phase) {
    case PH_PLAY: {
        int counts[4], best = -1;
        colour_counts(hand, counts);
        for (int i = 0; i < count; i++) {  /* max by (points, colour held, -kind) */
            int k = legal[i];
            if (k >= UNO_W4) continue;
            if (best < 0) {
                best = k;
                continue;
            }
            int pk = points_of(k), pb = points_of(best);
            int ck = counts[k / 13], cb = counts[best / 13];
            if (pk > pb || (pk == pb && (ck > cb || (ck == cb && -k > -best)))) best = k;
        }
        if (best >= 0) return best;
        if (in_legal(legal, count, UNO_WB)) return UNO_WB;
        if (in_legal(legal, count, UNO_W4) && view_w4_is_legal(g, me)) return UNO_W4;
        return UNO_DRAW;
    }
    case PH_PLAY_DRAWN:
        return g->drawn == UNO_W4 && !view_w4_is_legal(g, me) ? UNO_KEEP : g->drawn;
    case PH_CHOOSE_COLOUR: {
        int counts[4], best = 0;
        colour_counts(hand, counts);
        for (int c = 1; c < 4; c++)
            if (counts[c] > counts[best] ||
                (counts[c] == counts[best] && colour_points(hand, c) > colour_points(hand, best)))
                best = c;
        return UNO_COLOUR_BASE + best;
    }
    case PH_CHOOSE_TARGET:
        return shell_target(g, me);
    case PH_CHALLENGE:
        return g->w4_hand_size >= p->greedy_challenge_hand ? UNO_CHALLENGE : UNO_ACCEPT;
    default:
        return legal[0];
    }
}

/* ------------------------------------------------------------------ strategic */
uno_pcg64 *uno_agent_seeded(uno_agent *a) { return a->npool ? &a->pool_rng : &a->rng; }

/* OpponentPool.reset: current = agents[rng.choice(len, p=weights)] (one uniform, then
 * searchsorted(cdf, u, side="right")), then current.reset(rng.integers(2**63)) */
void uno_agent_pool_draw(uno_agent *a) {
    bitgen_t b;
    uno_pcg64_bitgen(&b, &a->pool_rng);
    double u = uno_random(&b);
    int i = 0;
    while (i < a->npool - 1 && a->pool_cdf[i] <= u) i++;
    a->kind = a->pool_kinds[i];
    uno_seed_from_u64(&a->rng, uno_integers(&b, 1ULL << 63));
}

void uno_agent_forget(uno_agent *a) {
    a->has_key = 0;
    a->nvoid = 0;
    a->nseen = 0;
    a->has_pending = 0;
    a->seen_w4s = 0;
}

static double weight(const uno_game *g, const uno_agent_params *p, int seat) {
    int size = g->sizes[seat];
    double bonus = (0 < size && size < 4) ? p->threat[size] : p->threat[0];
    return 1.0 / (g->n - 1) + bonus;
}

static double void_of(const uno_agent *a, int seat, int colour) {
    return (0 <= seat && seat < a->nvoid) ? a->void_[seat][colour] : 0.0;
}

static double follow(const uno_agent_params *p, int n_left) {
    return p->follow_any * (double)(n_left > 0) + p->follow_each * (double)(n_left < 4 ? n_left : 4);
}

static int discard_total(const uno_game *g) {
    int s = 0;
    for (int k = 0; k < UNO_NUM_KINDS; k++) s += g->discard_counts[k];
    return s;
}

static void observe(uno_agent *a, const uno_game *g, const uno_agent_params *p, int me) {
    int n = g->n;
    if (!a->has_key || a->key_round != g->round || a->key_seat != me || a->key_n != n) {
        uno_agent_forget(a);
        a->has_key = 1;
        a->key_round = g->round;
        a->key_seat = me;
        a->key_n = n;
        a->nvoid = n;
        memset(a->void_, 0, sizeof a->void_);
        a->nseen = n;
        memcpy(a->seen_sizes, g->sizes, sizeof a->seen_sizes);
    }
    int m = a->nseen < n ? a->nseen : n;
    for (int s = 0; s < m; s++) {
        int now = g->sizes[s], seen = a->seen_sizes[s];
        if (now > seen && s != me) {
            double factor = pow(p->void_decay, (double)(now - seen));
            for (int c = 0; c < 4; c++) a->void_[s][c] = a->void_[s][c] * factor;
        }
    }
    if (a->has_pending) {
        if (g->discard[g->ndiscard - 1] == a->pending_top && discard_total(g) == a->pending_discarded)
            for (int s = 0; s < n; s++)
                if (g->sizes[s] == a->pending_sizes[s] + 1 && s != me) a->void_[s][a->pending_colour] = 1.0;
        a->has_pending = 0;
    }
    a->nseen = n;
    memcpy(a->seen_sizes, g->sizes, sizeof a->seen_sizes);
    int w4s = g->discard_counts[UNO_W4], w4p = g->w4_player;
    if (w4s > a->seen_w4s && w4p >= 0 && w4p != me && g->w4_prev_colour >= 0) {
        double prev = a->void_[w4p][g->w4_prev_colour];
        a->void_[w4p][g->w4_prev_colour] = prev >= p->w4_void ? prev : p->w4_void;
    }
    a->seen_w4s = w4s;
}

static int remember(uno_agent *a, const uno_game *g, int action) {
    if (action < UNO_W4) {
        a->pending_top = action;
        a->pending_colour = action / 13;
        a->pending_discarded = discard_total(g) + 1;
    } else if (UNO_COLOUR_BASE <= action && action < UNO_TARGET_BASE) {
        a->pending_top = g->discard[g->ndiscard - 1];
        a->pending_colour = action - UNO_COLOUR_BASE;
        a->pending_discarded = discard_total(g);
    } else {
        return action;
    }
    a->has_pending = 1;
    memcpy(a->pending_sizes, g->sizes, sizeof a->pending_sizes);
    return action;
}

static double p_challenged(const uno_game *g, int me, int left) {
    const uint8_t *disc = g->discard_counts;
    int c = g->colour, matching = 25;
    for (int k = 13 * c; k < 13 * c + 13; k++) matching -= disc[k];
    if (g->r.item_box_counts_for_w4) matching += 8 - disc[UNO_WB];
    int nxt = pymod(me + g->direction, g->n);
    int total = 112 - discard_total(g) - g->sizes[nxt] - 1;
    double p_none = 1.0;
    for (int i = 0; i < left; i++) {
        if (total - i <= 0) break;
        int num = total - matching - i;
        p_none *= (double)(num > 0 ? num : 0) / (double)(total - i);
    }
    return 1.0 - p_none;
}

static double score_w4(const uno_agent *a, const uno_game *g, const uno_agent_params *p,
                       const int *counts, int me, int nxt, int hold) {
    (void)a;
    double w = weight(g, p, nxt);
    double hit = 4.0 * w + p->skip * w;
    int most = counts[0];
    for (int c = 1; c < 4; c++)
        if (counts[c] > most) most = counts[c];
    double score = follow(p, most) + hit;
    if (hold) score -= p->hold_w4;
    if (!view_w4_is_legal(g, me)) {
        if (!p->bluff) return -WIN;
        int left = g->sizes[me] - 1;
        score -= p_challenged(g, me, left) * (4.0 + hit + p->turn_value) + p->bluff_margin;
    }
    return score;
}

static double score_wb(const uno_game *g, const uno_agent_params *p, const int *counts, int me,
                       int hold) {
    const uint8_t *hand = g->hands[me];
    int per_colour[4], wb;
    int total = unseen(g, me, per_colour, &wb);
    if (total <= 0) return 0.0;
    int n = g->n, d = g->direction;
    double extra[4];
    for (int c = 0; c < 4; c++) {
        int can_match = counts[c] > 0 || hand[UNO_W4] > 0 || hand[UNO_WB] > 1;
        extra[c] = p->extra_turn * (can_match ? 1.0 : 0.3);
    }
    double weights[UNO_MAX_PLAYERS], best = 0.0;
    for (int i = 1; i < n; i++) {
        weights[i - 1] = weight(g, p, (me + i) % n);
        if (i == 1 || weights[i - 1] > best) best = weights[i - 1];
    }
    int prv = pymod(me - d, n);
    double item[4] = {extra[0], 2.0 * weight(g, p, prv), best,
                      extra[3] + g->r.lightning_draw_f * py_sum(weights, n - 1)};
    double score = 0.0, p_bob = 1.0;
    for (int c = 0; c < 4; c++) {
        double share = (double)per_colour[c] / (double)total;
        p_bob -= share;
        score += share * (follow(p, counts[c]) + item[c]);
    }
    int most = counts[0];
    for (int c = 1; c < 4; c++)
        if (counts[c] > most) most = counts[c];
    score += p_bob * (follow(p, most) - 2.0);
    if (hold) score -= p->hold_wb;
    if (hand[UNO_W4] && hand[UNO_WB] == 1 && g->r.item_box_counts_for_w4) score += p->unblock;
    return score;
}

static double score_card(const uno_agent *a, const uno_game *g, const uno_agent_params *p, int k,
                         int hold, const int *counts) {
    int me = g->current_player;
    const uint8_t *hand = g->hands[me];
    int left = g->sizes[me] - 1;
    if (left == 0) return WIN;
    int n = g->n, d = g->direction;
    int nxt = pymod(me + d, n);
    int wilds_left = hand[UNO_W4] + hand[UNO_WB] - (k >= UNO_W4);
    double score = 1.0;
    if (left == 1 && wilds_left == 1) score += p->finisher;
    if (k == UNO_W4) return score + score_w4(a, g, p, counts, me, nxt, hold);
    if (k == UNO_WB) return score + score_wb(g, p, counts, me, hold);
    score += p->points * (double)points_of(k);
    int c = k / 13, r = k % 13;
    int same_colour_left = counts[c] - 1;
    score += follow(p, same_colour_left);
    int skips = r == UNO_SKIP || r == UNO_DRAW_TWO ||
                (r == UNO_REVERSE && n == 2 && g->r.two_player_reverse_skips);
    int mover = (r == UNO_REVERSE && !skips) ? pymod(me - d, n) : pymod(me + d * (skips ? 2 : 1), n);
    if (mover != me) score += p->void_ * void_of(a, mover, c) * weight(g, p, mover);
    if (r == UNO_DRAW_TWO) score += 2.0 * weight(g, p, nxt);
    if (skips) {
        score += p->skip * weight(g, p, nxt);
        if (n == 2) {
            int follow_up = same_colour_left > 0 || wilds_left > 0;
            for (int cc = 0; cc < 4 && !follow_up; cc++)
                if (cc != c && hand[13 * cc + r]) follow_up = 1;
            if (follow_up) {
                if (left == 1) return WIN / 2;
                score += p->chain;
            }
        } else if (weight(g, p, nxt) < 1.0) {
            score -= p->hold_action;
        }
    } else if (r == UNO_REVERSE) {
        int prv = pymod(me - d, n);
        score += p->reverse * (weight(g, p, nxt) - weight(g, p, prv));
    }
    return score;
}

static int strategic_play(const uno_agent *a, uno_game *g, const uno_agent_params *p,
                          const uint8_t *legal, int count) {
    int best = legal[0];
    double best_score = -INFINITY;
    int hold = legal[0] < UNO_W4;
    int counts[4];
    colour_counts(g->hands[g->current_player], counts);
    for (int i = 0; i < count; i++) {
        int act = legal[i];
        double score;
        if (act < UNO_DRAW)
            score = score_card(a, g, p, act, hold, counts);
        else if (act == UNO_DRAW)
            score = p->draw;
        else if (act == UNO_KEEP)
            score = p->keep;
        else
            continue;
        if (score > best_score) {
            best = act;
            best_score = score;
        }
    }
    return best;
}

static int strategic_colour(const uno_agent *a, const uno_game *g, const uno_agent_params *p) {
    int me = g->current_player;
    const uint8_t *hand = g->hands[me];
    int counts[4], per_colour[4], wb;
    colour_counts(hand, counts);
    int total = unseen(g, me, per_colour, &wb);
    if (total < 1) total = 1;
    int n = g->n, d = g->direction;
    int mover = pymod(me + d * (g->colour_context == CTX_AFTER_W4 ? 2 : 1), n);
    double void_w = mover != me ? p->void_colour : 0.0;
    int best = 0;
    double best_value = 0.0;
    for (int c = 0; c < 4; c++) {
        double value = ((double)counts[c] + (double)colour_points(hand, c) / 1000.0) -
                       p->colour_unseen * (double)per_colour[c] / (double)total +
                       void_w * void_of(a, mover, c);
        if (c == 0 || value > best_value) {
            best = c;
            best_value = value;
        }
    }
    return best;
}

static double p_holds_colour(const uno_game *g, int me, int colour, int with_wb, int size) {
    int per_colour[4], wb;
    int total = unseen(g, me, per_colour, &wb);
    int matching = per_colour[colour] + (with_wb ? wb : 0);
    double p_none = 1.0;
    for (int i = 0; i < size; i++) {
        if (total - i <= 0) break;
        int num = total - matching - i;
        p_none *= (double)(num > 0 ? num : 0) / (double)(total - i);
    }
    return 1.0 - p_none;
}

static int should_challenge(const uno_game *g, const uno_agent_params *p) {
    int w4p = g->w4_player, me = g->current_player;
    if (w4p < 0 || g->w4_prev_colour < 0) return 0;
    double prob = p->trust * p_holds_colour(g, me, g->w4_prev_colour, g->r.item_box_counts_for_w4,
                                            g->w4_hand_size);
    double gain = 4.0 + p->turn_value + 4.0 * weight(g, p, w4p);
    return prob * gain > (1.0 - prob) * 2.0;
}

static int strategic_act(uno_agent *a, uno_game *g, const uno_agent_params *p) {
    int count;
    const uint8_t *legal = uno_legal(g, &count);
    int me = g->current_player;
    observe(a, g, p, me);
    if (count == 1) return g->phase <= PH_CHOOSE_COLOUR ? remember(a, g, legal[0]) : legal[0];
    int reflex = uno_reflex(legal, count);
    if (reflex >= 0) return reflex;
    switch (g->phase) {
    case PH_PLAY:
    case PH_PLAY_DRAWN:
        return remember(a, g, strategic_play(a, g, p, legal, count));
    case PH_CHOOSE_COLOUR:
        return remember(a, g, UNO_COLOUR_BASE + strategic_colour(a, g, p));
    case PH_CHOOSE_TARGET:
        return shell_target(g, me);
    case PH_CHALLENGE:
        return should_challenge(g, p) ? UNO_CHALLENGE : UNO_ACCEPT;
    default:
        return legal[0];
    }
}

/* ------------------------------------------------------------------ dispatch */
int uno_agent_act(uno_agent *a, uno_game *g, const uno_agent_params *p) {
    switch (a->kind) {
    case AG_GREEDY:
        return greedy_act(g, p);
    case AG_STRATEGIC:
        return strategic_act(a, g, p);
    default: {
        int count;
        const uint8_t *legal = uno_legal(g, &count);
        bitgen_t b;
        uno_pcg64_bitgen(&b, &a->rng);
        return legal[uno_integers(&b, (uint64_t)count)];
    }
    }
}
