/* The IS-MCTS search's tree on the core: agents/ismcts.py's _Search (determinize, select and
 * expand, simulate, back up), iteration for iteration, so that whole searches run in C. The
 * Python search stays the reference (tests/test_compiled_ismcts.py). */
#ifndef UNO_TREE_H
#define UNO_TREE_H

#include "uno_search.h"

/* A node: _Node's fields; children in a singly linked list (indices into uno_tree.nodes). */
typedef struct {
    int32_t first, next;  /* first child, next sibling (-1: none) */
    int32_t action;       /* the action leading here (-1: the root) */
    int32_t player;       /* the seat that chose it (-1: the root) */
    int64_t visits, avail;
    double total, squares;
} uno_node;

/* The search's settings (SearchParams, the view, the prior) */
typedef struct {
    int seat, prior;
    int tested;           /* the significance test: the prior gets a quarter of the visits */
    int crn;              /* common random numbers at the root */
    int depth_cap;
    double c, bonus, epsilon;
    int nroot;
    uint8_t root_legal[UNO_NUM_ACTIONS];
    int has_voids;
    double voids[UNO_MAX_PLAYERS * 4];
    uno_leaf_model leaf;
    int64_t max_bytes;    /* the tree and the stored deals stop growing at this size */
} uno_tree_params;

typedef struct {
    uno_tree_params p;
    const uno_game *carrier;  /* the view's public state (determinized every iteration) */
    uno_mt master;            /* rollout randomness (random.Random(master seed)) */
    uno_mt crn_rnd;           /* with crn: the visit's own rollout generator */
    uno_node *nodes;
    int64_t nnodes, cap;
    int32_t *path;
    int64_t npath, path_cap;
    uno_game *deals;          /* with crn: the m-th sampled deal and rollout seed */
    uint64_t *seeds;
    int64_t ndeals, deals_cap;
    int64_t iterations;
    int full;                 /* the search stopped at max_bytes */
    int32_t mark[UNO_NUM_ACTIONS];  /* scratch: child index + 1 by action at one node */
    uno_game g;               /* the iteration's game */
} uno_tree;

/* 0, or -2 out of memory */
int uno_tree_init(uno_tree *t, const uno_game *carrier, const uno_tree_params *p,
                  const uno_mt *master);
void uno_tree_free(uno_tree *t);
/* Runs iterations until `iterations` were run in all or `seconds` (< 0: no limit) passed, at
 * least one; returns 0, -1 if a determinization found no game, -2 out of memory, -4 a root
 * action illegal in a deal (root_legal is not the view's). Stops early
 * (t->full) when the tree would outgrow max_bytes. */
int uno_tree_run(uno_tree *t, bitgen_t *rng, int64_t iterations, double seconds);

#endif
