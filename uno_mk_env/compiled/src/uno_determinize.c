/* Game.determinize(seat, rng): a game consistent with what ``seat`` sees, its hidden cards
 * resampled; uno_mk_env/sampling.py's game_from_view (validate=False, no condition) step for
 * step, drawing from ``rng`` (the caller's numpy Generator) in the same order. It reads only
 * what PlayerView holds for the seat (the comments name the view's fields).
 */
#include "uno_core.h"
#include <string.h>

static const uint8_t COPIES[UNO_NUM_KINDS] = {
    1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 4, 8};

/* remove pool[i], shifting the rest down (list.pop(i)) */
static int pool_pop(uint8_t *pool, int *m, int i) {
    int k = pool[i];
    memmove(pool + i, pool + i + 1, (size_t)(*m - i - 1));
    (*m)--;
    return k;
}

/* sampling._sample_drawn_card: the card another seat is deciding whether to play (R4.2) */
static int sample_drawn_card(uno_game *g, uint8_t *pool, int *m, int rest, bitgen_t *rng) {
    int colour = g->colour, top = g->discard[g->ndiscard - 1];
    int wb_counts = g->r.item_box_counts_for_w4;
    int strict_ok = 1;
    if (g->r.w4_strict) {
        int beside = 0;
        for (int i = 0; i < *m; i++) beside += uno_w4_is_legal(1ULL << pool[i], colour, wb_counts);
        strict_ok = beside - 1 >= rest;
    }
    int candidates[UNO_NUM_CARDS], nc = 0;
    for (int i = 0; i < *m; i++) {
        int k = pool[i];
        if ((k != UNO_W4 || strict_ok) && uno_playable(k, top, colour)) candidates[nc++] = i;
    }
    if (!nc) return -1;
    int card = pool_pop(pool, m, candidates[uno_integers(rng, (uint64_t)nc)]);
    uint8_t *hand = g->hands[g->current_player];
    hand[card]++;
    if (card == UNO_W4 && g->r.w4_strict) {
        int allowed[UNO_NUM_CARDS], na = 0;
        for (int i = 0; i < *m && na < rest; i++)
            if (uno_w4_is_legal(1ULL << pool[i], colour, wb_counts)) allowed[na++] = i;
        for (int j = na - 1; j >= 0; j--) hand[pool_pop(pool, m, allowed[j])]++;
    }
    return card;
}

/* sampling._sample_w4_illegal: R6.1 judged on w4_hand_size of the W4 player's sampled cards */
static int sample_w4_illegal(const uno_game *g, bitgen_t *rng) {
    int kinds[UNO_NUM_CARDS], m = 0, perm[UNO_NUM_CARDS];
    const uint8_t *hand = g->hands[g->w4_player];
    for (int k = 0; k < UNO_NUM_KINDS; k++)
        for (int c = 0; c < hand[k] && m < UNO_NUM_CARDS; c++) kinds[m++] = k;
    uno_permutation(rng, perm, m);
    uint64_t held = 0;
    int take = g->w4_hand_size < m ? g->w4_hand_size : m;
    for (int i = 0; i < take; i++) held |= 1ULL << kinds[perm[i]];
    return !uno_w4_is_legal(held, g->w4_prev_colour, g->r.item_box_counts_for_w4);
}

/* agents/ismcts.py ISMCTSAgent._deal's condition (Game.from_view's hook): with the belief
 * voids[s * 4 + c] that seat s holds no colour c, its cards of c are swapped with random
 * other-coloured cards of the draw pile; the viewer and a seat deciding on its drawn card keep
 * their hands */
static void condition_voids(uno_game *g, int seat, const double *voids, bitgen_t *rng) {
    int n = g->n;
    double draws[UNO_MAX_PLAYERS * 4];
    for (int i = 0; i < n * 4; i++) draws[i] = uno_random(rng);
    int drawing = g->phase == PH_PLAY_DRAWN ? g->current_player : -1;
    uint8_t *pile = g->draw_pile;
    for (int s = 0; s < n; s++) {
        if (s == seat || s == drawing) continue;
        uint8_t *hand = g->hands[s];
        for (int c = 0; c < 4; c++) {
            if (voids[s * 4 + c] <= draws[s * 4 + c]) continue;
            int others[UNO_NUM_CARDS], no = 0;
            for (int i = 0; i < g->ndraw; i++)
                if (pile[i] >= UNO_W4 || pile[i] / 13 != c) others[no++] = i;
            for (int k = 13 * c; k < 13 * c + 13; k++) {
                while (hand[k] && no) {
                    int j = (int)uno_integers(rng, (uint64_t)no);
                    int i = others[j];
                    memmove(others + j, others + j + 1, sizeof(int) * (size_t)(no - j - 1));
                    no--;
                    hand[k]--;
                    hand[pile[i]]++;
                    pile[i] = (uint8_t)k;
                }
            }
        }
    }
}

int uno_determinize(const uno_game *src, int seat, bitgen_t *rng, uno_game *g) {
    return uno_determinize_voids(src, seat, rng, NULL, g);
}

int uno_determinize_voids(const uno_game *src, int seat, bitgen_t *rng, const double *voids,
                          uno_game *g) {
    int n = src->n;
    int unseen[UNO_NUM_KINDS];
    for (int k = 0; k < UNO_NUM_KINDS; k++)  /* view.hand, view.discard_counts */
        unseen[k] = COPIES[k] - src->hands[seat][k] - src->discard_counts[k];
    uint64_t seed = uno_integers(rng, 1ULL << 63);
    int event_log = g->event_log;
    uno_events ev = g->ev;
    uno_game_init(g, &src->r, event_log);
    g->ev = ev;
    g->ev.len = g->ev.count = 0;
    uno_seed_from_u64(&g->pcg, seed);
    uint8_t kinds[UNO_NUM_CARDS], pool[UNO_NUM_CARDS];
    int m = 0, perm[UNO_NUM_CARDS];
    for (int k = 0; k < UNO_NUM_KINDS; k++)
        for (int c = 0; c < unseen[k]; c++) kinds[m++] = (uint8_t)k;
    uno_permutation(rng, perm, m);
    for (int i = 0; i < m; i++) pool[i] = kinds[perm[i]];
    /* _copy_public_fields */
    g->colour = src->colour;
    g->current_player = src->current_player;
    g->direction = src->direction;
    g->phase = src->phase;
    g->dealer = src->dealer;
    memcpy(g->scores, src->scores, sizeof g->scores);
    g->round = src->round;
    memcpy(g->uno_called, src->uno_called, sizeof g->uno_called);
    g->uno_miss = src->uno_miss;  /* view.uno_pending */
    g->w4_player = src->w4_player;
    g->w4_prev_colour = src->w4_prev_colour;
    g->w4_hand_size = src->w4_hand_size;
    g->colour_context = src->colour_context;
    g->last_item = src->last_item;
    g->idle_turns = src->idle_turns;
    g->turn_player = src->turn_player;
    g->previous_turn_player = src->previous_turn_player;
    memcpy(g->void_evidence, src->void_evidence, sizeof g->void_evidence);
    g->game_over = src->phase == PH_GAME_OVER;
    /* the discard pile: its top card on the others in kind order (their order is not public) */
    int top = src->discard[src->ndiscard - 1];
    for (int k = 0; k < UNO_NUM_KINDS; k++)
        for (int c = 0; c < src->discard_counts[k] - (k == top); c++) g->discard[g->ndiscard++] = (uint8_t)k;
    g->discard[g->ndiscard++] = (uint8_t)top;
    memcpy(g->discard_counts, src->discard_counts, sizeof g->discard_counts);
    memcpy(g->hands[seat], src->hands[seat], UNO_NUM_KINDS);
    memcpy(g->sizes, src->sizes, sizeof g->sizes);
    int shown = uno_revealed_to(src, seat);
    if (shown >= 0) {
        g->nreveals = 1;
        g->reveal_player[0] = src->reveal_player[shown];
        g->reveal_to[0] = seat;
        memcpy(g->reveal_hand[0], src->reveal_hand[shown], UNO_NUM_KINDS);
    }
    int decider = src->current_player;
    if (src->phase == PH_PLAY_DRAWN) {
        if (decider == seat) {
            g->drawn = src->drawn;
        } else {
            g->drawn = sample_drawn_card(g, pool, &m, src->sizes[decider] - 1, rng);
            if (g->drawn < 0) return -1;
        }
    }
    for (int s = 0; s < n; s++) {
        if (s == seat) continue;
        int have = 0;
        for (int k = 0; k < UNO_NUM_KINDS; k++) have += g->hands[s][k];
        for (int i = have; i < src->sizes[s]; i++) g->hands[s][pool[--m]]++;
    }
    memcpy(g->draw_pile, pool, (size_t)m);
    g->ndraw = m;
    if (voids) condition_voids(g, seat, voids, rng);
    for (int s = 0; s < n; s++) {
        uint64_t held = 0;
        for (int k = 0; k < UNO_NUM_KINDS; k++)
            if (g->hands[s][k]) held |= 1ULL << k;
        g->held[s] = held;
    }
    if (seat == src->w4_player)  /* view.w4_illegal: the viewer played it and knows */
        g->w4_illegal = src->w4_illegal;
    else if (src->phase == PH_CHALLENGE || src->colour_context == CTX_AFTER_W4)
        g->w4_illegal = sample_w4_illegal(g, rng);
    if (g->game_over) {
        g->current_player = -1;
        g->nlegal = 0;
        g->legal_valid = 1;
    }
    return 0;
}
