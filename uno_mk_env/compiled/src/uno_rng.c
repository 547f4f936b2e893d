/* numpy's generators, reproduced exactly: PCG64 seeded through SeedSequence (as
 * numpy.random.default_rng(seed)), and the draws the engine makes, through numpy's own
 * distribution functions (libnpyrandom: random_interval, random_bounded_uint64_fill,
 * random_standard_uniform), which take any bitgen_t, ours or a numpy Generator's.
 */
#include "uno_core.h"
#include <stdbool.h>
#include <stddef.h>

/* libnpyrandom (numpy/random/lib), declared as in numpy/random/distributions.h */
extern uint64_t random_interval(bitgen_t *bitgen_state, uint64_t max);
extern void random_bounded_uint64_fill(bitgen_t *bitgen_state, uint64_t off, uint64_t rng,
                                       intptr_t cnt, bool use_masked, uint64_t *out);
extern double random_standard_uniform(bitgen_t *bitgen_state);

/* ------------------------------------------------------------------ 128-bit arithmetic */
#define PCG_MULT_HI 2549297995355413924ULL
#define PCG_MULT_LO 4865540595714422341ULL

static inline void mul_64x64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
#if defined(__SIZEOF_INT128__)
    __uint128_t m = (__uint128_t)a * b;
    *hi = (uint64_t)(m >> 64);
    *lo = (uint64_t)m;
#else
    uint64_t a_lo = a & 0xFFFFFFFFULL, a_hi = a >> 32, b_lo = b & 0xFFFFFFFFULL, b_hi = b >> 32;
    uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
    uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xFFFFFFFFULL) + lo_hi;
    *hi = (hi_lo >> 32) + (cross >> 32) + hi_hi;
    *lo = (cross << 32) | (lo_lo & 0xFFFFFFFFULL);
#endif
}

/* state = state * MULT + inc (mod 2**128) */
static inline void pcg_step(uno_pcg64 *p) {
    uint64_t hi, lo;
    mul_64x64(p->state_lo, PCG_MULT_LO, &hi, &lo);
    hi += p->state_hi * PCG_MULT_LO + p->state_lo * PCG_MULT_HI;
    uint64_t new_lo = lo + p->inc_lo;
    hi += p->inc_hi + (new_lo < lo);
    p->state_hi = hi;
    p->state_lo = new_lo;
}

uint64_t uno_pcg64_next64(uno_pcg64 *p) {
    pcg_step(p);
    uint64_t x = p->state_hi ^ p->state_lo;
    unsigned int rot = (unsigned int)(p->state_hi >> 58);
    return (x >> rot) | (x << ((-rot) & 63));
}

static uint64_t next64(void *st) { return uno_pcg64_next64((uno_pcg64 *)st); }

static uint32_t next32(void *st) {
    uno_pcg64 *p = (uno_pcg64 *)st;
    if (p->has_uint32) {
        p->has_uint32 = 0;
        return p->uinteger;
    }
    uint64_t x = uno_pcg64_next64(p);
    p->has_uint32 = 1;
    p->uinteger = (uint32_t)(x >> 32);
    return (uint32_t)(x & 0xFFFFFFFFULL);
}

static double next_double(void *st) {
    return (double)(uno_pcg64_next64((uno_pcg64 *)st) >> 11) * (1.0 / 9007199254740992.0);
}

void uno_pcg64_bitgen(bitgen_t *b, uno_pcg64 *p) {
    b->state = p;
    b->next_uint64 = next64;
    b->next_uint32 = next32;
    b->next_double = next_double;
    b->next_raw = next64;
}

/* ------------------------------------------------------------------ SeedSequence -> PCG64 */
#define INIT_A 0x43b0d7e5U
#define MULT_A 0x931e8875U
#define INIT_B 0x8b51f9ddU
#define MULT_B 0x58f38dedU
#define MIX_MULT_L 0xca01f9ddU
#define MIX_MULT_R 0x4973f715U
#define XSHIFT 16
#define POOL_SIZE 4

static uint32_t hashmix(uint32_t value, uint32_t *hash_const) {
    value ^= *hash_const;
    *hash_const *= MULT_A;
    value *= *hash_const;
    value ^= value >> XSHIFT;
    return value;
}

static uint32_t mix(uint32_t x, uint32_t y) {
    uint32_t result = MIX_MULT_L * x - MIX_MULT_R * y;
    result ^= result >> XSHIFT;
    return result;
}

/* numpy.random.PCG64(numpy.random.SeedSequence(entropy)), ``entropy`` as its uint32 words
 * (least significant first), without a spawn key. */
void uno_pcg64_seed(uno_pcg64 *p, const uint32_t *entropy, int nwords) {
    uint32_t pool[POOL_SIZE];
    uint32_t hash_const = INIT_A;
    for (int i = 0; i < POOL_SIZE; i++)
        pool[i] = hashmix(i < nwords ? entropy[i] : 0, &hash_const);
    for (int src = 0; src < POOL_SIZE; src++)
        for (int dst = 0; dst < POOL_SIZE; dst++)
            if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], &hash_const));
    for (int src = POOL_SIZE; src < nwords; src++)
        for (int dst = 0; dst < POOL_SIZE; dst++)
            pool[dst] = mix(pool[dst], hashmix(entropy[src], &hash_const));
    /* generate_state(4, uint64): 8 words cycling over the pool, read as little-endian u64 */
    uint32_t words[8];
    uint32_t hc = INIT_B;
    for (int i = 0; i < 8; i++) {
        uint32_t v = pool[i % POOL_SIZE];
        v ^= hc;
        hc *= MULT_B;
        v *= hc;
        v ^= v >> XSHIFT;
        words[i] = v;
    }
    uint64_t s[4];
    for (int k = 0; k < 4; k++) s[k] = (uint64_t)words[2 * k] | ((uint64_t)words[2 * k + 1] << 32);
    /* pcg64_set_seed: state = s[0]:s[1], inc = s[2]:s[3]; pcg_setseq_128_srandom_r */
    p->state_hi = 0;
    p->state_lo = 0;
    p->inc_hi = (s[2] << 1) | (s[3] >> 63);
    p->inc_lo = (s[3] << 1) | 1U;
    pcg_step(p);
    uint64_t lo = p->state_lo + s[1];
    p->state_hi += s[0] + (lo < p->state_lo);
    p->state_lo = lo;
    pcg_step(p);
    p->has_uint32 = 0;
    p->uinteger = 0;
}

void uno_seed_from_u64(uno_pcg64 *p, uint64_t seed) {
    uint32_t words[2] = {(uint32_t)(seed & 0xFFFFFFFFULL), (uint32_t)(seed >> 32)};
    uno_pcg64_seed(p, words, words[1] ? 2 : 1);
}

/* ------------------------------------------------------------------ the engine's draws */
uint64_t uno_integers(bitgen_t *rng, uint64_t n) {
    uint64_t out;
    random_bounded_uint64_fill(rng, 0, n - 1, 1, false, &out);
    return out;
}

void uno_shuffle(bitgen_t *rng, uint8_t *x, int n) {
    for (int i = n - 1; i >= 1; i--) {
        int j = (int)random_interval(rng, (uint64_t)i);
        uint8_t t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
}

void uno_permutation(bitgen_t *rng, int *out, int n) {
    for (int i = 0; i < n; i++) out[i] = i;
    for (int i = n - 1; i >= 1; i--) {
        int j = (int)random_interval(rng, (uint64_t)i);
        int t = out[i];
        out[i] = out[j];
        out[j] = t;
    }
}

double uno_random(bitgen_t *rng) { return random_standard_uniform(rng); }
