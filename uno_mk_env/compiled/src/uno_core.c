/* The rules engine, statement for statement the Python reference's (uno_mk_env/game.py): the
 * function names are the Python method names, and each draws from the generator exactly where
 * the reference does. Seats are taken modulo n with Python's sign rule (pymod).
 */
#include "uno_core.h"
#include <stdlib.h>
#include <string.h>

static const uint8_t COPIES[UNO_NUM_KINDS] = {
    1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 4, 8};

static inline int lowest_bit(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int i = 0;
    while (!(x & 1)) {
        x >>= 1;
        i++;
    }
    return i;
#endif
}

static inline int pymod(int x, int n) {
    int m = x % n;
    return m < 0 ? m + n : m;
}
static inline int colour_of(int k) { return k < UNO_W4 ? k / 13 : -1; }
static inline int rank_of(int k) { return k < UNO_W4 ? k % 13 : -1; }
static inline int item_of(int k) { return k < UNO_W4 ? k / 13 : IT_BOB_OMB; }
static inline int points_of(int k) {
    if (k >= UNO_W4) return 50;
    return k % 13 < 10 ? k % 13 : 20;
}
static inline int next_seat(const uno_game *g, int seat, int steps) {
    return pymod(seat + g->direction * steps, g->n);
}

/* ------------------------------------------------------------------ events */
static void ev_push(uno_game *g, int type, int nfields, const int64_t *fields, int ncards,
                    const int64_t *cards) {
    if (!g->event_log) return;
    uno_events *e = &g->ev;
    int64_t need = e->len + 2 + nfields + ncards;
    if (need > e->cap) {
        int64_t cap = e->cap ? e->cap : 1024;
        while (cap < need) cap *= 2;
        int64_t *data = (int64_t *)realloc(e->data, (size_t)cap * sizeof(int64_t));
        if (!data) {
            g->event_log = -1;  /* out of memory: reported by the next step */
            return;
        }
        e->data = data;
        e->cap = cap;
    }
    if (e->count == e->offsets_cap) {
        int64_t cap = e->offsets_cap ? e->offsets_cap * 2 : 256;
        int64_t *offsets = (int64_t *)realloc(e->offsets, (size_t)cap * sizeof(int64_t));
        if (!offsets) {
            g->event_log = -1;
            return;
        }
        e->offsets = offsets;
        e->offsets_cap = cap;
    }
    e->offsets[e->count++] = e->len;
    e->data[e->len++] = type;
    e->data[e->len++] = nfields + ncards;
    for (int i = 0; i < nfields; i++) e->data[e->len++] = fields[i];
    for (int i = 0; i < ncards; i++) e->data[e->len++] = cards[i];
}

static void ev0(uno_game *g, int type) { ev_push(g, type, 0, NULL, 0, NULL); }
static void ev1(uno_game *g, int type, int64_t a) { ev_push(g, type, 1, &a, 0, NULL); }
static void ev2(uno_game *g, int type, int64_t a, int64_t b) {
    int64_t f[2] = {a, b};
    ev_push(g, type, 2, f, 0, NULL);
}
static void ev3(uno_game *g, int type, int64_t a, int64_t b, int64_t c) {
    int64_t f[3] = {a, b, c};
    ev_push(g, type, 3, f, 0, NULL);
}
/* a hand as its sorted kinds (counts_to_kinds), after two fields */
static void ev_hand(uno_game *g, int type, int64_t a, int64_t b, const uint8_t *counts) {
    int64_t kinds[UNO_NUM_CARDS * 2];
    int m = 0;
    for (int k = 0; k < UNO_NUM_KINDS; k++)
        for (int c = 0; c < counts[k] && m < UNO_NUM_CARDS * 2; c++) kinds[m++] = k;
    int64_t f[2] = {a, b};
    ev_push(g, type, 2, f, m, kinds);
}

/* "recent": keep the round that just ended and the new one (Game._deal) */
static void ev_new_round(uno_game *g) {
    if (g->event_log != 1) return;
    uno_events *e = &g->ev;
    int64_t drop = g->round_start;
    if (drop > 0) {
        int64_t cut = drop < e->count ? e->offsets[drop] : e->len;
        memmove(e->data, e->data + cut, (size_t)(e->len - cut) * sizeof(int64_t));
        e->len -= cut;
        for (int64_t i = drop; i < e->count; i++) e->offsets[i - drop] = e->offsets[i] - cut;
        e->count -= drop;
        g->events_start += drop;
    }
    g->round_start = e->count;
}

int uno_events_failed(const uno_game *g) { return g->event_log < 0; }

int uno_event_append(uno_game *g, int type, int nfields, const int64_t *fields, int ncards,
                     const int64_t *cards) {
    ev_push(g, type, nfields, fields, ncards, cards);
    return g->event_log < 0 ? -2 : 0;
}

/* ------------------------------------------------------------------ legality (R4.1, R6.1) */
static uint64_t COLOUR_MASK[UNO_NUM_COLOURS];
static uint64_t CANDIDATES[UNO_NUM_COLOURS][UNO_NUM_KINDS];
static int tables_ready = 0;

int uno_playable(int card, int top, int colour) {
    if (card >= UNO_W4) return 1;
    return colour_of(card) == colour || (top < UNO_W4 && rank_of(card) == rank_of(top));
}

static void init_tables(void) {
    if (tables_ready) return;
    for (int c = 0; c < UNO_NUM_COLOURS; c++) {
        COLOUR_MASK[c] = 0;
        for (int k = 13 * c; k < 13 * c + 13; k++) COLOUR_MASK[c] |= 1ULL << k;
        for (int top = 0; top < UNO_NUM_KINDS; top++) {
            uint64_t m = 0;
            for (int k = 0; k < UNO_NUM_KINDS; k++)
                if (uno_playable(k, top, c)) m |= 1ULL << k;
            CANDIDATES[c][top] = m;
        }
    }
    tables_ready = 1;
}

int uno_w4_is_legal(uint64_t held, int colour, int item_box_counts) {
    if (held & COLOUR_MASK[colour]) return 0;
    return !(item_box_counts && (held & (1ULL << UNO_WB)));
}

static int w4_legal_for(const uno_game *g, int seat) {
    return uno_w4_is_legal(g->held[seat], g->colour, g->r.item_box_counts_for_w4);
}

static int playable_now(const uno_game *g, int card) {
    return ((CANDIDATES[g->colour][g->discard[g->ndiscard - 1]] >> card) & 1) &&
           (card != UNO_W4 || !g->r.w4_strict || w4_legal_for(g, g->current_player));
}

static void compute_legal(uno_game *g) {
    int p = g->current_player, n = 0;
    uint8_t *ids = g->legal;
    int uno_key = 0;
    switch (g->phase) {
    case PH_PLAY: {
        uint64_t key = g->held[p] & CANDIDATES[g->colour][g->discard[g->ndiscard - 1]];
        if (g->r.w4_strict && (key & (1ULL << UNO_W4)) && !w4_legal_for(g, p))
            key ^= 1ULL << UNO_W4;
        while (key) {
            int k = lowest_bit(key);
            ids[n++] = (uint8_t)k;
            key &= key - 1;
        }
        ids[n++] = UNO_DRAW;
        uno_key = g->sizes[p] == 2 && g->r.uno_on && !g->uno_called[p];
        if (uno_key) ids[n++] = UNO_CALL_UNO;
        break;
    }
    case PH_PLAY_DRAWN:
        ids[n++] = (uint8_t)g->drawn;
        ids[n++] = UNO_KEEP;
        if (g->sizes[p] == 2 && g->r.uno_on && !g->uno_called[p]) ids[n++] = UNO_CALL_UNO;
        break;
    case PH_CHOOSE_COLOUR:
        for (int c = 0; c < UNO_NUM_COLOURS; c++) ids[n++] = (uint8_t)(UNO_COLOUR_BASE + c);
        break;
    case PH_CHOOSE_TARGET:
        for (int k = 0; k < g->n - 1; k++) ids[n++] = (uint8_t)(UNO_TARGET_BASE + k);
        break;
    case PH_CHALLENGE:
        ids[n++] = UNO_CHALLENGE;
        ids[n++] = UNO_ACCEPT;
        break;
    case PH_UNO_CATCH:
        ids[n++] = UNO_ACCEPT;
        ids[n++] = UNO_CATCH_UNO;
        g->nlegal = n;
        g->legal_valid = 1;
        return;
    default:
        g->nlegal = 0;
        g->legal_valid = 1;
        return;
    }
    int m = g->uno_miss;
    if (m >= 0 && g->r.uno_catch == CATCH_NEXT_PLAYER && m != p && g->sizes[m] == 1)
        ids[n++] = UNO_CATCH_UNO;  /* R8 "next_player": the next other decider's first decision */
    g->nlegal = n;
    g->legal_valid = 1;
}

const uint8_t *uno_legal(uno_game *g, int *count) {
    if (!g->legal_valid) compute_legal(g);
    *count = g->nlegal;
    return g->legal;
}

int uno_is_legal(uno_game *g, int action) {
    int count;
    const uint8_t *ids = uno_legal(g, &count);
    for (int i = 0; i < count; i++)
        if (ids[i] == action) return 1;
    return 0;
}

int uno_hand_points(const uno_game *g, int seat) {
    int total = 0;
    for (int k = 0; k < UNO_NUM_KINDS; k++) total += g->hands[seat][k] * points_of(k);
    return total;
}

/* ------------------------------------------------------------------ construction */
static void reset_round_state(uno_game *g) {
    int n = g->n;
    memset(g->hands, 0, sizeof g->hands);
    memset(g->held, 0, sizeof g->held);
    memset(g->sizes, 0, sizeof g->sizes);
    g->ndraw = 0;
    g->ndiscard = 0;
    memset(g->discard_counts, 0, sizeof g->discard_counts);
    g->colour = 0;
    g->current_player = 0;
    g->direction = 1;
    g->phase = PH_PLAY;
    g->drawn = -1;
    memset(g->uno_called, 0, sizeof g->uno_called);
    g->uno_miss = -1;
    g->w4_player = -1;
    g->w4_prev_colour = -1;
    g->w4_illegal = 0;
    g->w4_hand_size = -1;
    g->colour_context = -1;
    g->nreveals = 0;
    g->last_item = -1;
    g->idle_turns = 0;
    g->turn_player = -1;
    g->previous_turn_player = -1;
    memset(g->void_evidence, 0, sizeof g->void_evidence);
    g->legal_valid = 0;
    (void)n;
}

void uno_game_init(uno_game *g, const uno_rules *r, int event_log) {
    init_tables();
    memset(g, 0, sizeof *g);
    g->r = *r;
    g->n = r->n;
    g->event_log = event_log;
    g->winner = -1;
    g->round_winner = -1;
    g->dealer = 0;
    reset_round_state(g);
}

void uno_game_free(uno_game *g) {
    free(g->ev.data);
    free(g->ev.offsets);
    memset(&g->ev, 0, sizeof g->ev);
}

int uno_game_copy(uno_game *dst, const uno_game *src) {
    uno_events ev = dst->ev;  /* reuse dst's buffers */
    memcpy(dst, src, sizeof *dst);
    dst->ev = ev;
    dst->ev.len = 0;
    dst->ev.count = 0;
    if (src->event_log > 0 && src->ev.count) {
        if (ev.cap < src->ev.len) {
            int64_t *data = (int64_t *)realloc(ev.data, (size_t)src->ev.len * sizeof(int64_t));
            if (!data) return -1;
            dst->ev.data = data;
            dst->ev.cap = src->ev.len;
        }
        if (ev.offsets_cap < src->ev.count) {
            int64_t *off = (int64_t *)realloc(ev.offsets, (size_t)src->ev.count * sizeof(int64_t));
            if (!off) return -1;
            dst->ev.offsets = off;
            dst->ev.offsets_cap = src->ev.count;
        }
        memcpy(dst->ev.data, src->ev.data, (size_t)src->ev.len * sizeof(int64_t));
        memcpy(dst->ev.offsets, src->ev.offsets, (size_t)src->ev.count * sizeof(int64_t));
        dst->ev.len = src->ev.len;
        dst->ev.count = src->ev.count;
    }
    if (!dst->ext_rng) uno_pcg64_bitgen(&dst->bitgen, &dst->pcg);
    return 0;
}

/* ------------------------------------------------------------------ piles (R9) */
static void refill(uno_game *g) {
    if (g->ndiscard <= 1) return;
    uint8_t top = g->discard[--g->ndiscard];
    uno_shuffle(uno_rng(g), g->discard, g->ndiscard);
    memcpy(g->draw_pile, g->discard, (size_t)g->ndiscard);
    g->ndraw = g->ndiscard;
    g->discard[0] = top;
    g->ndiscard = 1;
    memset(g->discard_counts, 0, sizeof g->discard_counts);
    g->discard_counts[top] = 1;
    ev1(g, EV_RESHUFFLE, g->ndraw);
}

static void fade(uint8_t *evidence, int k) {
    for (int c = 0; c < UNO_NUM_COLOURS; c++) evidence[c] = evidence[c] > k ? evidence[c] - k : 0;
}

/* seat draws up to n cards (fewer if both piles run out, R9) */
static void draw_cards(uno_game *g, int seat, int n, int reason) {
    int64_t got[UNO_NUM_CARDS];
    int m = 0;
    uint64_t bits = 0;
    for (int i = 0; i < n; i++) {
        if (!g->ndraw) {
            refill(g);
            if (!g->ndraw) break;
        }
        int card = g->draw_pile[--g->ndraw];
        g->hands[seat][card]++;
        bits |= 1ULL << card;
        got[m++] = card;
    }
    if (m) {
        g->held[seat] |= bits;
        g->sizes[seat] += m;
        if (seat == g->uno_miss) g->uno_miss = -1;
        fade(g->void_evidence[seat], m < UNO_VOID_MEMORY ? m : UNO_VOID_MEMORY);
        g->uno_called[seat] = 0;
        g->idle_turns = 0;
    }
    int64_t f[2] = {seat, reason};
    ev_push(g, EV_DRAW, 2, f, m, got);
}

/* ------------------------------------------------------------------ end of round / game */
static void deal(uno_game *g, int dealer);

static void finish(uno_game *g, int winner) {
    g->game_over = 1;
    g->winner = winner;
    g->phase = PH_GAME_OVER;
    g->current_player = -1;
    g->nlegal = 0;
    g->legal_valid = 1;
}

static int stalemate_winner(const uno_game *g) {
    if (!g->r.stalemate_lowest_hand) return -1;
    int low = 0, count = 0, at = -1;
    for (int s = 0; s < g->n; s++) {
        int v = uno_hand_points(g, s);
        if (at < 0 || v < low) {
            low = v;
            count = 1;
            at = s;
        } else if (v == low) {
            count++;
        }
    }
    return count == 1 ? at : -1;
}

static void end_round(uno_game *g, int winner) {
    int64_t total = 0, points = 0;
    for (int s = 0; s < g->n; s++) {
        g->round_hand_points[s] = uno_hand_points(g, s);
        total += g->round_hand_points[s];
    }
    if (winner >= 0) {
        points = total - g->round_hand_points[winner];
        g->scores[winner] += points;
    }
    g->has_round_hand_points = 1;
    g->round_winner = winner;
    g->round_over = 1;
    g->uno_miss = -1;
    int64_t f[3] = {winner, points, g->n};
    ev_push(g, EV_ROUND_END, 3, f, g->n, g->scores);
    switch (g->r.match) {
    case MATCH_SINGLE_ROUND:
        finish(g, winner);
        break;
    case MATCH_TARGET_SCORE:
        if (winner >= 0 && g->scores[winner] >= g->r.target_score)
            finish(g, winner);
        else
            deal(g, pymod(g->dealer + 1, g->n));
        break;
    default:
        if (g->round >= g->r.rounds) {
            int64_t best = g->scores[0];
            for (int s = 1; s < g->n; s++)
                if (g->scores[s] > best) best = g->scores[s];
            int count = 0, at = -1;
            for (int s = 0; s < g->n; s++)
                if (g->scores[s] == best) {
                    if (at < 0) at = s;
                    count++;
                }
            finish(g, count == 1 ? at : -1);
        } else {
            deal(g, pymod(g->dealer + 1, g->n));
        }
    }
}

/* ------------------------------------------------------------------ turn flow */
static void begin_turn(uno_game *g, int seat) {
    int m = g->uno_miss;
    int automatic = g->r.uno_catch == CATCH_AUTO;
    if (m >= 0 && automatic) {  /* R8: an uncalled UNO is caught when the next turn begins */
        g->uno_miss = -1;
        if (g->sizes[m] == 1) {
            ev2(g, EV_CATCH, -1, m);
            draw_cards(g, m, g->r.uno_penalty, DR_UNO_PENALTY);
        }
    }
    if (seat != g->turn_player) {
        g->previous_turn_player = g->turn_player;
        g->turn_player = seat;
    }
    if (g->sizes[seat] != 1) g->uno_called[seat] = 0;
    g->drawn = -1;
    if (m >= 0 && !automatic && (g->r.uno_catch == CATCH_ANY_PLAYER || seat == m)) {
        g->current_player = next_seat(g, m, 1);
        g->phase = PH_UNO_CATCH;
        return;
    }
    g->current_player = seat;
    g->phase = PH_PLAY;
}

static void pass_turn(uno_game *g, int seat, int skip) {
    begin_turn(g, pymod(seat + g->direction * (1 + skip), g->n));
}

static void catch_uno(uno_game *g, int p) {
    int offender = g->uno_miss;
    g->uno_miss = -1;
    ev2(g, EV_CATCH, p, offender);
    draw_cards(g, offender, g->r.uno_penalty, DR_UNO_PENALTY);
}

static void answer_catch(uno_game *g, int p, int caught) {
    if (caught) {
        catch_uno(g, p);
    } else {
        ev2(g, EV_LET_PASS, p, g->uno_miss);
        int nxt = next_seat(g, p, 1);
        if (g->r.uno_catch == CATCH_ANY_PLAYER && nxt != g->uno_miss) {
            g->current_player = nxt;
            return;
        }
        g->uno_miss = -1;
    }
    g->current_player = g->turn_player;
    g->phase = PH_PLAY;
}

/* R8 with a pending miss and p (not the offender) deciding: 1 if action was the window's own */
static int catch_window(uno_game *g, int p, int action) {
    if (g->phase == PH_UNO_CATCH) {
        answer_catch(g, p, action == UNO_CATCH_UNO);
        return 1;
    }
    if (g->r.uno_catch == CATCH_ANY_PLAYER) return 0;
    if (action == UNO_CATCH_UNO) {
        catch_uno(g, p);
        return 1;
    }
    g->uno_miss = -1;
    return 0;
}

static void stalemate_or_pass(uno_game *g, int p) {
    g->idle_turns++;
    if (g->idle_turns >= g->n) {
        ev0(g, EV_STALEMATE);
        end_round(g, stalemate_winner(g));
    } else {
        begin_turn(g, pymod(p + g->direction, g->n));
    }
}

static void voluntary_draw(uno_game *g, int p) {
    if (!g->ndraw) {
        refill(g);
        if (!g->ndraw) {  /* R9: nothing to draw; the turn ends */
            g->void_evidence[p][g->colour] = UNO_VOID_MEMORY;
            ev_push(g, EV_DRAW, 2, (int64_t[]){p, DR_VOLUNTARY}, 0, NULL);
            stalemate_or_pass(g, p);
            return;
        }
    }
    int card = g->draw_pile[--g->ndraw];
    g->hands[p][card]++;
    g->held[p] |= 1ULL << card;
    g->sizes[p]++;
    if (p == g->uno_miss) g->uno_miss = -1;
    fade(g->void_evidence[p], 1);
    g->void_evidence[p][g->colour] = UNO_VOID_MEMORY;
    g->uno_called[p] = 0;
    g->idle_turns = 0;
    int64_t c = card;
    ev_push(g, EV_DRAW, 2, (int64_t[]){p, DR_VOLUNTARY}, 1, &c);
    if (playable_now(g, card)) {  /* R4.2: play it at once or keep it */
        g->phase = PH_PLAY_DRAWN;
        g->drawn = card;
    } else {
        begin_turn(g, pymod(p + g->direction, g->n));
    }
}

static void after_item(uno_game *g, int p, int extra_turn) {
    if (g->sizes[p] == 0)
        end_round(g, p);
    else if (extra_turn)
        begin_turn(g, p);
    else
        pass_turn(g, p, 0);
}

static void item_box(uno_game *g, int p, int out) {
    if (out && g->r.last_item_box == LAST_WB_NONE) {
        end_round(g, p);
        return;
    }
    if (!g->ndraw) refill(g);
    /* R7.3: the discard pile holds the WB on another card, so there is always one to flip */
    int flipped = g->draw_pile[--g->ndraw];
    g->discard[g->ndiscard++] = (uint8_t)flipped;
    g->discard_counts[flipped]++;
    ev2(g, EV_FLIP, p, flipped);
    int item = item_of(flipped);
    g->last_item = item;
    ev2(g, EV_ITEM, p, item);
    if (flipped < UNO_W4) g->colour = colour_of(flipped);
    int resolve_self = !out || g->r.last_item_box == LAST_WB_FULL;
    switch (item) {
    case IT_MUSHROOM:
        after_item(g, p, 1);
        break;
    case IT_BANANA: {
        int victim = next_seat(g, p, -1);
        if (g->r.banana_last_player && g->previous_turn_player >= 0) victim = g->previous_turn_player;
        draw_cards(g, victim, 2, DR_BANANA);
        after_item(g, p, 0);
        break;
    }
    case IT_GREEN_SHELL:
        g->phase = PH_CHOOSE_TARGET;
        break;
    case IT_LIGHTNING:
        for (int i = 1; i < g->n; i++) draw_cards(g, next_seat(g, p, i), g->r.lightning_draw, DR_LIGHTNING);
        after_item(g, p, 1);
        break;
    default:
        if (resolve_self) {  /* Bob-omb: draw 2, then name the colour of the flipped wild */
            draw_cards(g, p, 2, DR_BOB_OMB);
            g->phase = PH_CHOOSE_COLOUR;
            g->colour_context = CTX_AFTER_BOB_OMB;
        } else {
            end_round(g, p);
        }
    }
}

static void play_card(uno_game *g, int p, int card) {
    uint8_t *hand = g->hands[p];
    hand[card]--;
    if (!hand[card]) g->held[p] ^= 1ULL << card;
    g->drawn = -1;
    int size = --g->sizes[p];
    g->idle_turns = 0;
    int prev_colour = g->colour;
    g->discard[g->ndiscard++] = (uint8_t)card;
    g->discard_counts[card]++;
    ev2(g, EV_PLAY, p, card);
    if (size == 1 && g->r.uno_on && !g->uno_called[p]) g->uno_miss = p;
    int out = size == 0;
    if (card == UNO_W4) {
        if (out) {  /* R6.4 / R10.1: always legal, no challenge, no colour; next draws 4 */
            draw_cards(g, next_seat(g, p, 1), 4, DR_WILD_DRAW_FOUR);
            end_round(g, p);
            return;
        }
        g->w4_player = p;
        g->w4_prev_colour = prev_colour;
        g->w4_illegal = !w4_legal_for(g, p);
        g->w4_hand_size = size;
        g->phase = PH_CHOOSE_COLOUR;
        g->colour_context = CTX_AFTER_W4;
        return;
    }
    if (card == UNO_WB) {
        item_box(g, p, out);
        return;
    }
    g->colour = colour_of(card);
    int rank = rank_of(card);
    if (rank < UNO_SKIP) {
        if (out)
            end_round(g, p);
        else
            begin_turn(g, pymod(p + g->direction, g->n));
    } else if (rank == UNO_DRAW_TWO) {
        int victim = next_seat(g, p, 1);
        draw_cards(g, victim, 2, DR_DRAW_TWO);
        if (out) {
            end_round(g, p);
        } else {
            ev1(g, EV_SKIP, victim);
            pass_turn(g, p, 1);
        }
    } else if (out) {
        end_round(g, p);
    } else if (rank == UNO_SKIP || (g->n == 2 && g->r.two_player_reverse_skips)) {
        ev1(g, EV_SKIP, next_seat(g, p, 1));
        pass_turn(g, p, 1);
    } else {
        g->direction = -g->direction;
        ev2(g, EV_REVERSE, p, g->direction);
        pass_turn(g, p, 0);
    }
}

static void choose_colour(uno_game *g, int p, int colour) {
    g->colour = colour;
    ev2(g, EV_COLOUR, p, colour);
    int ctx = g->colour_context;
    g->colour_context = -1;
    if (ctx == CTX_AFTER_W4) {
        int victim = next_seat(g, p, 1);
        if (g->r.w4_strict) {
            draw_cards(g, victim, 4, DR_WILD_DRAW_FOUR);
            ev1(g, EV_SKIP, victim);
            pass_turn(g, p, 1);
        } else {
            g->current_player = victim;
            g->phase = PH_CHALLENGE;
        }
    } else if (ctx == CTX_AT_START) {
        begin_turn(g, pymod(g->dealer + 1, g->n));
    } else if (g->sizes[p] == 0) {
        end_round(g, p);
    } else {
        pass_turn(g, p, 0);
    }
}

static void resolve_challenge(uno_game *g, int victim, int challenge) {
    int w4p = g->w4_player;
    if (!challenge) {
        ev1(g, EV_ACCEPT, victim);
        draw_cards(g, victim, 4, DR_WILD_DRAW_FOUR);
        ev1(g, EV_SKIP, victim);
        pass_turn(g, victim, 0);
        return;
    }
    int illegal = g->w4_illegal;
    ev3(g, EV_CHALLENGE, victim, w4p, illegal);
    /* R6.3: each challenger keeps what it saw this round (its own latest challenge) */
    int kept = 0;
    for (int i = 0; i < g->nreveals; i++) {
        if (g->reveal_to[i] == victim) continue;
        if (kept != i) {
            g->reveal_player[kept] = g->reveal_player[i];
            g->reveal_to[kept] = g->reveal_to[i];
            memcpy(g->reveal_hand[kept], g->reveal_hand[i], UNO_NUM_KINDS);
        }
        kept++;
    }
    g->reveal_player[kept] = w4p;
    g->reveal_to[kept] = victim;
    memcpy(g->reveal_hand[kept], g->hands[w4p], UNO_NUM_KINDS);
    g->nreveals = kept + 1;
    ev_hand(g, EV_REVEAL, w4p, victim, g->hands[w4p]);
    if (illegal) {
        draw_cards(g, w4p, 4, DR_CHALLENGE_WON);
        begin_turn(g, victim);
    } else {
        draw_cards(g, victim, 6, DR_CHALLENGE_FAILED);
        ev1(g, EV_SKIP, victim);
        pass_turn(g, victim, 0);
    }
}

int uno_step(uno_game *g, int action) {
    if (action < 0 || action >= UNO_NUM_ACTIONS || !uno_is_legal(g, action)) return -1;
    g->legal_valid = 0;
    g->round_over = 0;
    g->num_steps++;
    int p = g->current_player;
    if (g->uno_miss >= 0 && g->r.uno_catch != CATCH_AUTO && p != g->uno_miss &&
        catch_window(g, p, action))
        return g->event_log < 0 ? -2 : 0;
    switch (g->phase) {
    case PH_PLAY:
        if (action < UNO_DRAW)
            play_card(g, p, action);
        else if (action == UNO_DRAW)
            voluntary_draw(g, p);
        else {
            g->uno_called[p] = 1;
            ev1(g, EV_UNO, p);
        }
        break;
    case PH_PLAY_DRAWN:
        if (action < UNO_DRAW) {
            play_card(g, p, action);
        } else if (action == UNO_KEEP) {
            g->num_keeps++;
            ev1(g, EV_KEEP, p);
            begin_turn(g, pymod(p + g->direction, g->n));
        } else {
            g->uno_called[p] = 1;
            ev1(g, EV_UNO, p);
        }
        break;
    case PH_CHOOSE_COLOUR:
        choose_colour(g, p, action - UNO_COLOUR_BASE);
        break;
    case PH_CHOOSE_TARGET: {
        int target = pymod(p + action - UNO_TARGET_BASE + 1, g->n);
        ev2(g, EV_TARGET, p, target);
        draw_cards(g, target, 1, DR_GREEN_SHELL);
        after_item(g, p, 0);
        break;
    }
    default:
        resolve_challenge(g, p, action == UNO_CHALLENGE);
    }
    return g->event_log < 0 ? -2 : 0;
}

/* ------------------------------------------------------------------ the deal (R3) */
static void deal(uno_game *g, int dealer) {
    reset_round_state(g);
    g->round++;
    g->dealer = dealer;
    int n = g->n;
    ev_new_round(g);
    ev2(g, EV_DEAL, g->round, dealer);
    uint8_t *pile = g->draw_pile;
    int m = 0;
    for (int k = 0; k < UNO_NUM_KINDS; k++)
        for (int c = 0; c < COPIES[k]; c++) pile[m++] = (uint8_t)k;
    bitgen_t *rng = uno_rng(g);
    uno_shuffle(rng, pile, m);
    for (int i = 0; i < g->r.hand_size; i++)
        for (int j = 1; j <= n; j++) g->hands[(dealer + j) % n][pile[--m]]++;
    for (int s = 0; s < n; s++) {
        g->sizes[s] = g->r.hand_size;
        uint64_t held = 0;
        for (int k = 0; k < UNO_NUM_KINDS; k++)
            if (g->hands[s][k]) held |= 1ULL << k;
        g->held[s] = held;
    }
    for (int s = 0; s < n; s++) {
        int64_t kinds[UNO_NUM_CARDS];
        int c = 0;
        for (int k = 0; k < UNO_NUM_KINDS; k++)
            for (int x = 0; x < g->hands[s][k]; x++) kinds[c++] = k;
        ev_push(g, EV_DRAW, 2, (int64_t[]){s, DR_DEAL}, c, kinds);
    }
    int card;
    for (;;) {
        card = pile[--m];
        if (card == UNO_W4) {  /* R3.3: back into the pile, reshuffle, flip again */
            pile[m++] = (uint8_t)card;
            uno_shuffle(rng, pile, m);
            continue;
        }
        g->discard[g->ndiscard++] = (uint8_t)card;
        g->discard_counts[card]++;
        ev1(g, EV_START_CARD, card);
        if (g->r.start_reflip && card < UNO_W4 && rank_of(card) >= UNO_SKIP) {
            int other = 0;
            for (int i = 0; i < m && !other; i++) other = pile[i] != UNO_W4;
            if (other) continue;  /* Czech text: flip another card onto a coloured action card */
        }
        break;
    }
    g->ndraw = m;
    int left = (dealer + 1) % n;
    if (card == UNO_WB) {  /* R3.3: a player names the colour, then left of the dealer starts */
        g->current_player = g->r.start_chooser_first_player ? left : dealer;
        g->phase = PH_CHOOSE_COLOUR;
        g->colour_context = CTX_AT_START;
        return;
    }
    g->colour = card / 13;
    int rank = card % 13;
    if (rank < UNO_SKIP) {
        begin_turn(g, left);
    } else if (rank == UNO_SKIP) {
        ev1(g, EV_SKIP, left);
        begin_turn(g, (dealer + 2) % n);
    } else if (rank == UNO_REVERSE) {
        g->direction = -1;
        begin_turn(g, dealer);
    } else {
        draw_cards(g, left, 2, DR_DRAW_TWO);
        ev1(g, EV_SKIP, left);
        begin_turn(g, (dealer + 2) % n);
    }
}

int uno_new_game(uno_game *g) {
    int dealer = (int)uno_integers(uno_rng(g), (uint64_t)g->n);
    deal(g, dealer);
    return g->event_log < 0 ? -2 : 0;
}
