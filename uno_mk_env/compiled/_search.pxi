# The search's core API: CPython's Mersenne Twister in C (SearchRandom) and random play.
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


