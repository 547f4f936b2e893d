# The search's core API: CPython's Mersenne Twister in C (SearchRandom), random play, and the
# IS-MCTS search run whole on the core (TreeSearch, src/uno_tree.c; its carrier, view_carrier).
# Included by _core.pyx (one extension module, split by idea: Cython include); the
# declarations and helpers it uses are at the top of _core.pyx.

cdef class SearchRandom:
    """``random.Random(seed)`` on the core (Mersenne Twister, seeded and drawn as CPython does),
    for the search's playouts: :meth:`CompiledGame.rollout_action` and
    :meth:`CompiledGame.simulate` draw from it as the Python playouts draw from the
    ``random.Random`` it stands for."""

    cdef uno_mt m

    def __init__(self, seed):
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {ref.quote(seed)}")
        words = _words(int(seed)) or [0]
        if len(words) > 16:
            raise ValueError(f"seed {ref.quote(seed)} is larger than 512 bits")
        cdef uint32_t key[16]
        for j, w in enumerate(words):
            key[j] = w
        uno_mt_seed(&self.m, key, len(words))

    def random(self):
        return uno_mt_random(&self.m)

    def getrandbits(self, int k):
        if not 0 <= k <= 64:
            raise ValueError(f"k must be from 0 to 64, got {k}")
        return uno_mt_getrandbits(&self.m, k)

    def randrange(self, n):
        if not isinstance(n, (int, np.integer)) or not 1 <= n < 2**64:
            raise ValueError(f"n must be an int from 1 to 2**64 - 1, got {ref.quote(n)}")
        return uno_mt_randbelow(&self.m, n)


def random_play(rules, int64_t decisions, uint64_t seed=0):
    """Uniformly random legal play on the core, in C without the GIL: ``decisions`` decisions,
    a new game (seeded ``seed``, ``seed + 1``, ...) whenever one ends; returns the number of
    games finished. The engine's own speed, for ``benchmarks/compiled_speed.py``."""
    if not isinstance(rules, ref.Rules):
        raise TypeError(f"rules must be a uno_mk_env.Rules, got {type(rules).__name__}")
    cdef uno_rules r = _c_rules(rules)
    cdef uno_game *g = <uno_game *>calloc(1, sizeof(uno_game))
    if g == NULL:
        raise MemoryError()
    cdef uno_pcg64 pick
    uno_seed_from_u64(&pick, seed ^ 0x9E3779B97F4A7C15)
    cdef int64_t i, games = 0
    cdef int count
    cdef const uint8_t *ids
    with nogil:
        uno_game_init(g, &r, 0)
        uno_seed_from_u64(&g.pcg, seed)
        uno_new_game(g)
        for i in range(decisions):
            if g.game_over:
                games += 1
                uno_game_init(g, &r, 0)
                uno_seed_from_u64(&g.pcg, seed + <uint64_t>games)
                uno_new_game(g)
            ids = uno_legal(g, &count)
            uno_step(g, ids[uno_pcg64_next64(&pick) % <uint64_t>count])
    free(g)
    return games


cdef void _copy(uno_game *dst, const uno_game *src) except *:
    if uno_game_copy(dst, src) < 0:
        raise MemoryError("the compiled core ran out of memory copying an event log")


cdef int _check(int rc) except -1:
    if rc == -2:
        raise MemoryError("the compiled core ran out of memory for its event log")
    return rc




from libc.stdint cimport int32_t

cdef extern from "uno_tree.h" nogil:
    ctypedef struct uno_node:
        int32_t first, next, action, player
        int64_t visits, avail
        double total, squares
    ctypedef struct uno_tree_params:
        int seat, prior, tested, crn, depth_cap
        double c, bonus, epsilon
        int nroot
        uint8_t root_legal[73]
        int has_voids
        double voids[40]
        uno_leaf_model leaf
        int64_t max_bytes
    ctypedef struct uno_tree:
        uno_node *nodes
        int64_t nnodes, iterations
        int full
    int uno_tree_init(uno_tree *t, const uno_game *carrier, const uno_tree_params *p,
                      const uno_mt *master)
    void uno_tree_free(uno_tree *t)
    int uno_tree_run(uno_tree *t, bitgen_t *rng, int64_t iterations, double seconds)

#: The size a search's tree (and, with common random numbers, its stored deals) stops at.
TREE_MAX_BYTES = 256 << 20


cdef class TreeSearch:
    """``ISMCTSAgent``'s search (``agents/ismcts.py``, ``_Search`` with the fast rollout) run
    whole on the core: every iteration determinizes ``carrier`` for ``seat`` from ``rng`` (with
    the void beliefs ``voids``, as :meth:`CompiledGame.determinize`), selects and expands with
    the same tree policy, simulates as :meth:`CompiledGame.simulate` and backs up, drawing the
    rollouts from ``master`` (a :class:`SearchRandom`, copied) as the Python search draws from
    its ``random.Random``. :meth:`run` runs the iterations; :meth:`node` and :meth:`children`
    read the tree (node 0 is the root). The tree stops growing at ``max_bytes``
    (:attr:`full`)."""

    cdef uno_tree *t
    cdef CompiledGame carrier
    cdef object rng

    def __cinit__(self):
        self.t = NULL

    def __dealloc__(self):
        if self.t != NULL:
            uno_tree_free(self.t)
            free(self.t)

    def __init__(self, CompiledGame carrier not None, int seat, rng, SearchRandom master not None,
                 root_legal, int prior, double exploration, double bonus, int depth_cap,
                 double epsilon, bint crn, bint tested, voids, weights, double exponent,
                 int64_t max_bytes=TREE_MAX_BYTES):
        carrier._check_seat(seat)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        legal = [int(a) for a in root_legal]
        if not 1 <= len(legal) <= UNO_NUM_ACTIONS or any(
                not 0 <= a < UNO_NUM_ACTIONS for a in legal):
            raise ValueError(f"root_legal must hold 1-{UNO_NUM_ACTIONS} action ids, got "
                             f"{ref.quote(root_legal)}")
        if not -1 <= prior < UNO_NUM_ACTIONS or (tested and prior not in legal):
            raise ValueError(f"prior {prior} is not an action id or -1 (or, tested, not a root "
                             "action)")
        if depth_cap < 0 or max_bytes < 1 << 16:
            raise ValueError("depth_cap must be >= 0 and max_bytes >= 65536")
        cdef uno_tree_params p
        memset(&p, 0, sizeof(p))
        p.seat, p.prior, p.tested, p.crn, p.depth_cap = seat, prior, tested, crn, depth_cap
        p.c, p.bonus, p.epsilon = exploration, bonus, epsilon
        p.nroot = len(legal)
        for i, a in enumerate(legal):
            p.root_legal[i] = a
        cdef int n = carrier.g.n
        if voids is not None:
            array = np.ascontiguousarray(voids, dtype=np.float64)
            if array.shape != (n, 4):
                raise ValueError(f"voids must hold {n} rows of 4 beliefs, got shape "
                                 f"{array.shape}")
            p.has_voids = 1
            for i, v in enumerate(array.ravel()):
                p.voids[i] = v
        p.leaf.logit = weights is not None
        p.leaf.exponent = exponent
        if weights is not None:
            if len(weights) != 7:
                raise ValueError("weights must hold 7 numbers")
            for i in range(7):
                p.leaf.weights[i] = weights[i]
        p.max_bytes = max_bytes
        self.carrier, self.rng = carrier, rng
        if self.t != NULL:
            uno_tree_free(self.t)
            free(self.t)
        self.t = <uno_tree *>calloc(1, sizeof(uno_tree))
        if self.t == NULL or uno_tree_init(self.t, &carrier.g, &p, &master.m) < 0:
            raise MemoryError("the search's tree")

    def run(self, int64_t iterations, seconds=None):
        """Runs up to ``iterations`` iterations (at least one), or until ``seconds`` (a float)
        passed after the first; returns the number of iterations of the search so far."""
        cdef double limit = -1.0 if seconds is None else max(float(seconds), 0.0)
        cdef bitgen_t *bitgen = _bitgen_of(self.rng)
        cdef int rc
        with self.rng.bit_generator.lock:
            with nogil:
                rc = uno_tree_run(self.t, bitgen, iterations, limit)
        if rc == -1:
            raise ref.StateError("determinize: no unseen card could be the playable card the "
                                 "deciding seat drew")
        if rc == -4:
            raise ValueError("a root action is not legal in a determinization: root_legal is "
                             "not the view's")
        if rc < 0:
            raise MemoryError("the compiled core ran out of memory for the search's tree")
        return self.t.iterations

    @property
    def iterations(self):
        return self.t.iterations

    @property
    def full(self):
        """True when the tree reached ``max_bytes`` and the search stopped."""
        return bool(self.t.full)

    @property
    def num_nodes(self):
        return self.t.nnodes

    def node(self, int64_t i):
        """Node ``i``'s ``(visits, avail, total, squares, player)`` (``_Node``'s fields)."""
        if not 0 <= i < self.t.nnodes:
            raise IndexError(f"node {i} of {self.t.nnodes}")
        cdef uno_node *node = &self.t.nodes[i]
        return node.visits, node.avail, node.total, node.squares, node.player

    def children(self, int64_t i):
        """Node ``i``'s children as ``(action, node index)`` pairs."""
        if not 0 <= i < self.t.nnodes:
            raise IndexError(f"node {i} of {self.t.nnodes}")
        out = []
        cdef int32_t c = self.t.nodes[i].first
        while c >= 0:
            out.append((self.t.nodes[c].action, c))
            c = self.t.nodes[c].next
        return out


def view_carrier(view):
    """What :meth:`CompiledGame.determinize` reads for ``view.seat``, straight from ``view`` (a
    :class:`PlayerView` just made by ``Game.view``, not re-validated): the public state and the
    seat's own hand, the other hands empty and no draw pile. Determinized from, it gives the
    games a compiled copy of ``Game.from_view(view, ...)`` gives (the search's carrier); it is
    not a game to play."""
    if not isinstance(view, ref.PlayerView):
        raise TypeError(f"view must be a PlayerView, got {type(view).__name__}")
    cdef CompiledGame c = CompiledGame.__new__(CompiledGame)
    c._setup(view.rules, "off")
    cdef uno_game *g = &c.g
    cdef int n = g.n, seat = view.seat, s, k, col
    hand, counts, evidence = view.hand, view.discard_counts, view.void_evidence
    for k in range(UNO_NUM_KINDS):
        g.hands[seat][k] = hand[k]
        g.discard_counts[k] = counts[k]
    for s in range(n):
        g.sizes[s] = view.hand_sizes[s]
        g.scores[s] = view.scores[s]
        g.uno_called[s] = view.uno_called[s]
        for col in range(4):
            g.void_evidence[s][col] = evidence[4 * s + col]
    g.discard[0] = view.top_card
    g.ndiscard = 1
    g.colour = view.active_colour
    g.current_player = view.current_player
    g.direction = view.direction
    g.phase = view.phase
    g.dealer = view.dealer
    g.round = view.round
    g.drawn = view.drawn_card if view.current_player == seat else -1
    g.uno_miss = view.uno_pending
    g.w4_player = view.w4_player
    g.w4_prev_colour = view.w4_prev_colour
    g.w4_illegal = max(view.w4_illegal, 0)
    g.w4_hand_size = view.w4_hand_size
    g.colour_context = view.colour_context
    if view.revealed_hand is not None:
        g.nreveals = 1
        g.reveal_player[0] = view.revealed_by
        g.reveal_to[0] = seat
        shown = view.revealed_hand
        for k in range(UNO_NUM_KINDS):
            g.reveal_hand[0][k] = shown[k]
    g.last_item = view.last_item
    g.idle_turns = view.idle_turns
    g.turn_player = view.turn_player
    g.previous_turn_player = view.previous_turn_player
    g.game_over = view.phase == PH_GAME_OVER
    return c
