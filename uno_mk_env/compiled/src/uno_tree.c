/* agents/ismcts.py's _Search on the core, decision for decision and draw for draw (see
 * uno_tree.h): the same determinizations (uno_determinize_voids from the agent's generator),
 * the same UCB1 with availability counts and root prior bonus, the same expansion order, the
 * same simulations (uno_simulate) and back-ups, in the same floating-point order. */
#include "uno_tree.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
static double now_seconds(void) {
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart / (double)f.QuadPart;
}
#else
#include <time.h>
static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#endif

#define ERR_DEAL (-1)
#define ERR_MEMORY (-2)
#define FULL (-3)
#define ERR_ILLEGAL (-4)

/* uno_step, its failures as this file's errors */
static int play(uno_game *g, int a) {
    int rc = uno_step(g, a);
    return rc == -1 ? ERR_ILLEGAL : rc < 0 ? ERR_MEMORY : 0;
}

static int64_t bytes_used(int64_t nodes, int64_t deals) {
    return nodes * (int64_t)sizeof(uno_node) + deals * (int64_t)(sizeof(uno_game) + 8);
}

/* the next capacity of an array of `unit` bytes a slot now holding `cap` (`first` when empty),
 * doubled or as far as max_bytes allows beside `others` bytes; 0 when it cannot grow */
static int64_t grown(const uno_tree *t, int64_t cap, int64_t first, int64_t unit,
                     int64_t others) {
    int64_t room = (t->p.max_bytes - others) / unit;
    int64_t want = cap ? 2 * cap : first;
    if (want > room) want = room;
    return want > cap && want <= INT32_MAX ? want : 0;
}

/* a new child of `parent` for `action`, chosen by `player`: its index, or FULL / ERR_MEMORY */
static int32_t new_node(uno_tree *t, int32_t parent, int action, int player) {
    if (t->nnodes == t->cap) {
        int64_t cap = grown(t, t->cap, 256, (int64_t)sizeof(uno_node),
                            bytes_used(0, t->deals_cap));
        if (!cap) return FULL;
        uno_node *nodes = (uno_node *)realloc(t->nodes, (size_t)cap * sizeof(uno_node));
        if (!nodes) return ERR_MEMORY;
        t->nodes = nodes;
        t->cap = cap;
    }
    int32_t i = (int32_t)t->nnodes++;
    uno_node *node = &t->nodes[i];
    memset(node, 0, sizeof *node);
    node->first = -1;
    node->action = action;
    node->player = player;
    if (parent >= 0) {  /* at the front: the order of siblings is never read */
        node->next = t->nodes[parent].first;
        t->nodes[parent].first = i;
    } else {
        node->next = -1;
    }
    return i;
}

static int push_path(uno_tree *t, int32_t node) {
    if (t->npath == t->path_cap) {
        int64_t cap = t->path_cap ? 2 * t->path_cap : 256;
        int32_t *path = (int32_t *)realloc(t->path, (size_t)cap * sizeof(int32_t));
        if (!path) return ERR_MEMORY;
        t->path = path;
        t->path_cap = cap;
    }
    t->path[t->npath++] = node;
    return 0;
}

/* t->mark[a] = child index + 1 for every child of `node` (unmark clears them) */
static void mark_children(uno_tree *t, int32_t node) {
    for (int32_t c = t->nodes[node].first; c >= 0; c = t->nodes[c].next)
        t->mark[t->nodes[c].action] = c + 1;
}

static void unmark_children(uno_tree *t, int32_t node) {
    for (int32_t c = t->nodes[node].first; c >= 0; c = t->nodes[c].next)
        t->mark[t->nodes[c].action] = 0;
}

static int32_t child_of(const uno_tree *t, int32_t node, int action) {
    for (int32_t c = t->nodes[node].first; c >= 0; c = t->nodes[c].next)
        if (t->nodes[c].action == action) return c;
    return -1;
}

static int in_list(const uint8_t *ids, int count, int action) {
    for (int i = 0; i < count; i++)
        if (ids[i] == action) return 1;
    return 0;
}

/* _ucb_choice: the action of `actions` (all marked) maximising UCB1 with availability counts,
 * plus `bonus` for `prior`; the first on ties */
static int ucb_choice(const uno_tree *t, const uint8_t *actions, int count, int prior,
                      double bonus) {
    int best_a = -1;
    double best_v = -1e300, c = t->p.c;
    for (int i = 0; i < count; i++) {
        int a = actions[i];
        const uno_node *child = &t->nodes[t->mark[a] - 1];
        double visits = (double)child->visits;
        double v = child->total / visits + c * sqrt(log((double)child->avail) / visits);
        if (a == prior) v += bonus;
        if (v > best_v) { best_a = a; best_v = v; }
    }
    return best_a;
}

/* _step_into: plays `a` from `node`, through its child (created for the decider if new),
 * counted available and appended to the path; the child's index or an error */
static int32_t step_into(uno_tree *t, int32_t node, int a) {
    uno_game *g = &t->g;
    int32_t child = child_of(t, node, a);
    if (child < 0) {
        child = new_node(t, node, a, g->current_player);
        if (child < 0) return child;
    }
    t->nodes[child].avail++;
    if (push_path(t, child) < 0) return ERR_MEMORY;
    int rc = play(g, a);
    return rc < 0 ? rc : child;
}

/* _expansion and _selection at `node` with its children marked: the action to play and
 * whether it expands (a new child), after counting the tried legal ones available */
static int choose(uno_tree *t, int32_t node, const uint8_t *legal, int count, uno_mt *rnd,
                  int *expands) {
    int untried = -1;
    for (int i = 0; i < count; i++) {
        int a = legal[i];
        if (!t->mark[a]) {
            if (untried < 0) untried = a;
        } else {
            t->nodes[t->mark[a] - 1].avail++;
        }
    }
    int prior = t->p.prior;
    *expands = untried >= 0;
    if (untried >= 0) {
        if (node == 0)
            return prior >= 0 && in_list(legal, count, prior) && !t->mark[prior] ? prior : untried;
        int a = uno_rollout_action(&t->g, rnd, 0.0);
        return t->mark[a] ? untried : a;
    }
    if (node == 0) {
        if (t->p.tested && t->mark[prior]
            && t->nodes[t->mark[prior] - 1].visits * 4 < t->iterations)
            return prior;  /* the test against the prior needs samples of it too */
        return ucb_choice(t, legal, count, prior, t->p.bonus);
    }
    return ucb_choice(t, legal, count, -1, 0.0);
}

/* _descend: reflex and forced moves followed, UCB1 while every legal action has a child, and
 * the first node with an untried action gets one child */
static int descend(uno_tree *t, int32_t node, uno_mt *rnd) {
    uno_game *g = &t->g;
    while (!(g->round_over || g->game_over)) {
        int count;
        const uint8_t *legal = uno_legal(g, &count);
        if (legal[count - 1] >= UNO_CALL_UNO || count == 1) {  /* reflex or forced */
            int a = legal[0];
            if (count > 1)
                a = in_list(legal, count, UNO_CATCH_UNO) ? UNO_CATCH_UNO : legal[count - 1];
            node = step_into(t, node, a);
            if (node < 0) return node;
            continue;
        }
        int expands;
        mark_children(t, node);
        int a = choose(t, node, legal, count, rnd, &expands);
        int32_t child = expands ? -1 : t->mark[a] - 1;
        unmark_children(t, node);
        if (expands) {
            int32_t rc = step_into(t, node, a);
            return rc < 0 ? rc : 0;
        }
        node = child;
        if (push_path(t, node) < 0) return ERR_MEMORY;
        int rc = play(g, a);
        if (rc < 0) return rc;
    }
    return 0;
}

/* one deal of the carrier into `dst` */
static int deal(uno_tree *t, bitgen_t *rng, uno_game *dst) {
    const double *voids = t->p.has_voids ? t->p.voids : NULL;
    return uno_determinize_voids(t->carrier, t->p.seat, rng, voids, dst) < 0 ? ERR_DEAL : 0;
}

static void seed_from_u64(uno_mt *m, uint64_t seed) {  /* random.Random(seed) */
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uno_mt_seed(m, key, key[1] ? 2 : 1);
}

/* _crn_root: the root action first, then its m-th visit's deal and rollout seed; the root
 * child's index (appended to the path) or an error, t->g the deal after the root action */
static int32_t crn_root(uno_tree *t, bitgen_t *rng) {
    const uint8_t *legal = t->p.root_legal;
    int count = t->p.nroot, prior = t->p.prior, a, nchildren = 0;
    int32_t child;
    mark_children(t, 0);
    for (int32_t c = t->nodes[0].first; c >= 0; c = t->nodes[c].next) nchildren++;
    if (nchildren < count) {
        if (prior >= 0 && in_list(legal, count, prior) && !t->mark[prior]) {
            a = prior;
        } else {
            a = -1;  /* the first root action without a child */
            for (int i = 0; i < count && a < 0; i++)
                if (!t->mark[legal[i]]) a = legal[i];
        }
        unmark_children(t, 0);
        child = new_node(t, 0, a, t->p.seat);
        if (child < 0) return child;
    } else {
        if (t->p.tested && t->nodes[t->mark[prior] - 1].visits * 4 < t->iterations)
            a = prior;
        else
            a = ucb_choice(t, legal, count, prior, t->p.bonus);
        child = t->mark[a] - 1;
        unmark_children(t, 0);
    }
    for (int32_t c = t->nodes[0].first; c >= 0; c = t->nodes[c].next) t->nodes[c].avail++;
    int64_t m = t->nodes[child].visits;
    if (m == t->ndeals) {
        if (t->ndeals == t->deals_cap) {
            int64_t cap = grown(t, t->deals_cap, 4, (int64_t)(sizeof(uno_game) + 8),
                                bytes_used(t->cap, 0));
            if (!cap) return FULL;
            uno_game *deals = (uno_game *)realloc(t->deals, (size_t)cap * sizeof(uno_game));
            if (!deals) return ERR_MEMORY;
            t->deals = deals;
            uint64_t *seeds = (uint64_t *)realloc(t->seeds, (size_t)cap * sizeof(uint64_t));
            if (!seeds) return ERR_MEMORY;
            t->seeds = seeds;
            t->deals_cap = cap;
        }
        uno_game *d = &t->deals[t->ndeals];
        uno_game_init(d, &t->carrier->r, 0);  /* no event log: nothing to free */
        if (deal(t, rng, d) < 0) return ERR_DEAL;
        t->seeds[t->ndeals++] = uno_mt_getrandbits(&t->master, 63);
    }
    memcpy(&t->g, &t->deals[m], sizeof t->g);
    seed_from_u64(&t->crn_rnd, t->seeds[m]);
    if (push_path(t, child) < 0) return ERR_MEMORY;
    int rc = play(&t->g, a);  /* a root action is legal in every deal of the view */
    return rc < 0 ? rc : child;
}

/* iterate: determinize, select and expand, simulate, back up */
static int iterate(uno_tree *t, bitgen_t *rng) {
    uno_mt *rnd = &t->master;
    int rc;
    t->npath = 0;
    t->iterations++;
    if (t->p.crn) {
        int32_t child = crn_root(t, rng);
        if (child < 0) return child;
        rnd = &t->crn_rnd;
        rc = t->nodes[child].visits ? descend(t, child, rnd) : 0;
    } else {
        if (deal(t, rng, &t->g) < 0) return ERR_DEAL;
        rc = descend(t, 0, rnd);
    }
    if (rc < 0) return rc;
    double rewards[UNO_MAX_PLAYERS];
    uno_simulate(&t->g, rnd, t->p.depth_cap, t->p.epsilon, &t->p.leaf, rewards);
    for (int64_t i = 0; i < t->npath; i++) {
        uno_node *node = &t->nodes[t->path[i]];
        double r = rewards[node->player];
        node->visits++;
        node->total += r;
        node->squares += r * r;
    }
    return 0;
}

int uno_tree_init(uno_tree *t, const uno_game *carrier, const uno_tree_params *p,
                  const uno_mt *master) {
    memset(t, 0, sizeof *t);
    t->p = *p;
    t->carrier = carrier;
    t->master = *master;
    uno_game_init(&t->g, &carrier->r, 0);
    return new_node(t, -1, -1, -1) < 0 ? ERR_MEMORY : 0;
}

void uno_tree_free(uno_tree *t) {
    free(t->nodes);
    free(t->path);
    free(t->deals);
    free(t->seeds);
    t->nodes = NULL;
    t->path = NULL;
    t->deals = NULL;
    t->seeds = NULL;
    t->nnodes = t->cap = t->npath = t->path_cap = t->ndeals = t->deals_cap = 0;
}

int uno_tree_run(uno_tree *t, bitgen_t *rng, int64_t iterations, double seconds) {
    double deadline = seconds >= 0 ? now_seconds() + seconds : 0.0;
    for (int64_t i = 0; i < iterations; i++) {
        if (seconds >= 0 && i && now_seconds() >= deadline) break;
        int rc = iterate(t, rng);
        if (rc == FULL) {  /* this iteration is not counted: nothing was backed up */
            t->iterations--;
            t->full = 1;
            break;
        }
        if (rc < 0) return rc;
    }
    return 0;
}
