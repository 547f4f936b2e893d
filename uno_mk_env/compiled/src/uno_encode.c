/* What one seat sees, written straight from the state: the observation vector of
 * uno_mk_env.observation.encode(game.view(seat)) (the pieces of OBS_PIECES, in order), the
 * action mask, the round rewards of uno_mk_env.rewards.round_rewards and the finishing place of
 * uno_mk_env.rewards.places.
 */
#include "uno_core.h"
#include <string.h>

int uno_uno_catchable(const uno_game *g) {
    int m = g->uno_miss;
    return (m >= 0 && g->r.uno_catch != CATCH_AUTO && g->sizes[m] == 1) ? m : -1;
}

int uno_revealed_to(const uno_game *g, int seat) {
    int found = -1;
    for (int i = 0; i < g->nreveals; i++)
        if (g->reveal_to[i] == seat) found = i;
    return found;
}

static inline float *one_hot(float *out, int width, int index) {
    memset(out, 0, (size_t)width * sizeof(float));
    if (index >= 0 && index < width) out[index] = 1.0f;
    return out + width;
}

static inline int rel(int seat, int me, int n) {
    if (seat < 0) return -1;
    int r = (seat - me) % n;
    return r < 0 ? r + n : r;
}

void uno_encode(const uno_game *g, int me, float *out) {
    int n = g->n;
    float *o = out;
    for (int k = 0; k < UNO_NUM_KINDS; k++) *o++ = (float)g->hands[me][k];
    o = one_hot(o, UNO_NUM_KINDS, g->discard[g->ndiscard - 1]);
    o = one_hot(o, UNO_NUM_COLOURS, g->colour);
    o = one_hot(o, 5, g->phase);  /* game_over and uno_catch: all 0 */
    o = one_hot(o, UNO_NUM_KINDS, g->current_player == me ? g->drawn : -1);
    *o++ = g->direction == 1 ? 1.0f : 0.0f;
    for (int i = 0; i < UNO_MAX_PLAYERS; i++) *o++ = i < n ? 1.0f : 0.0f;
    for (int i = 0; i < UNO_MAX_PLAYERS; i++) *o++ = i < n ? (float)g->sizes[(me + i) % n] : 0.0f;
    for (int i = 0; i < UNO_MAX_PLAYERS; i++)
        *o++ = i < n ? (float)g->uno_called[(me + i) % n] : 0.0f;
    for (int i = 0; i < UNO_MAX_PLAYERS; i++)
        *o++ = i < n ? (float)((double)g->scores[(me + i) % n] / 100.0) : 0.0f;
    o = one_hot(o, UNO_MAX_PLAYERS, rel(g->current_player, me, n));
    o = one_hot(o, UNO_MAX_PLAYERS, rel(g->previous_turn_player, me, n));
    o = one_hot(o, UNO_MAX_PLAYERS, rel(uno_uno_catchable(g), me, n));
    o = one_hot(o, UNO_MAX_PLAYERS, rel(g->uno_miss, me, n));
    *o++ = (float)g->ndraw;
    *o++ = (float)g->ndiscard;
    for (int k = 0; k < UNO_NUM_KINDS; k++) *o++ = (float)g->discard_counts[k];
    o = one_hot(o, UNO_NUM_COLOURS, g->w4_prev_colour);
    o = one_hot(o, UNO_MAX_PLAYERS, rel(g->w4_player, me, n));
    int shown = uno_revealed_to(g, me);
    for (int k = 0; k < UNO_NUM_KINDS; k++)
        *o++ = shown >= 0 ? (float)g->reveal_hand[shown][k] : 0.0f;
    o = one_hot(o, UNO_MAX_PLAYERS, shown >= 0 ? rel(g->reveal_player[shown], me, n) : -1);
    o = one_hot(o, UNO_NUM_ITEMS, g->last_item);
    o = one_hot(o, 4, g->colour_context);
    *o++ = (float)g->idle_turns;
    *o++ = (float)(g->round < UNO_MAX_ROUND ? g->round : UNO_MAX_ROUND);
    for (int i = 0; i < UNO_MAX_PLAYERS; i++)
        for (int c = 0; c < UNO_NUM_COLOURS; c++)
            *o++ = i < n ? (float)g->void_evidence[(me + i) % n][c] : 0.0f;
}

void uno_mask(uno_game *g, uint8_t *out) {
    int count;
    const uint8_t *ids = uno_legal(g, &count);
    memset(out, 0, UNO_NUM_ACTIONS);
    for (int i = 0; i < count; i++) out[ids[i]] = 1;
}

void uno_round_rewards(const uno_game *g, int points_mode, double *out) {
    int n = g->n;
    for (int s = 0; s < n; s++) out[s] = 0.0;
    if (!points_mode) {  /* "win": only when the game is over */
        if (!g->game_over || g->winner < 0) return;
        double lose = -1.0 / (n - 1);
        for (int s = 0; s < n; s++) out[s] = s == g->winner ? 1.0 : lose;
        return;
    }
    int w = g->round_winner;
    if (w < 0) return;
    for (int s = 0; s < n; s++) {
        if (s == w) continue;
        /* -points is an int in the reference: never a negative zero */
        out[s] = (double)(-g->round_hand_points[s]) / 100.0;
        out[w] += (double)g->round_hand_points[s] / 100.0;
    }
}

/* rewards.places: the winner, then score descending, then hand points ascending; equal keys
 * share the better place */
int uno_place(const uno_game *g, int seat, int winner) {
    int n = g->n, place = 1;
    int64_t pts[UNO_MAX_PLAYERS];
    /* uno_mk_env.rewards.episode_places: the points left in hand when the last round was
     * scored (shown to every seat, R10.2), else the public card counts */
    int scored = g->game_over && g->round_winner >= 0 && g->has_round_hand_points;
    for (int s = 0; s < n; s++) pts[s] = scored ? g->round_hand_points[s] : g->sizes[s];
    int k0 = seat != winner;
    for (int s = 0; s < n; s++) {
        int o0 = s != winner;
        int less = o0 < k0 || (o0 == k0 && (-g->scores[s] < -g->scores[seat] ||
                               (g->scores[s] == g->scores[seat] && pts[s] < pts[seat])));
        place += less;
    }
    return place;
}
