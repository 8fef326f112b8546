/* bench/timing.py's kernels: the copy loops of tt-metal's tools/l2cpu measurements (one
 * hart reads a 303,872-byte buffer), and a pointer chase.
 *
 * Words: 0 the path (PATH_*), 1 the harts that copy at once (1 to 4), 2 the bytes a hart
 * copies. Regions: 0 the source (a slice of BYTES per core), 1 the destination (the same).
 * Each copying core gives back its cycles for the timed pass in result word 2 x core (low
 * 32 bits) and 2 x core + 1 (high). */
#include "kmx.h"

enum { PATH_L3_VECTOR = 0, PATH_L3_SCALAR = 1, PATH_DRAM_VECTOR = 2, PATH_UNCACHED_VECTOR = 3, PATH_CHASE = 4 };

/* The shape of sampling/fw/copy_rvv.c: vle64 and vse64 at LMUL 1, 64 bytes an iteration. */
static void copy_vector(uint64_t *to, const uint64_t *from, uint64_t words) {
    while (words) {
        uint64_t vl;
        __asm__ volatile("vsetvli %0, %1, e64, m1, ta, ma" : "=r"(vl) : "r"(words));
        __asm__ volatile("vle64.v v8, (%0)" : : "r"(from) : "memory");
        __asm__ volatile("vse64.v v8, (%0)" : : "r"(to) : "memory");
        from += vl;
        to += vl;
        words -= vl;
    }
}

/* 8-byte scalar loads (and stores), one a word. */
static void copy_scalar(uint64_t *to, const uint64_t *from, uint64_t words) {
    const uint64_t *end = from + words;
    __asm__ volatile(
        "1: ld t0, 0(%0)\n"
        "   sd t0, 0(%1)\n"
        "   addi %0, %0, 8\n"
        "   addi %1, %1, 8\n"
        "   bne %0, %2, 1b\n"
        : "+r"(from), "+r"(to) : "r"(end) : "t0", "memory");
}

/* A chain of loads through a small ring (each load's address is the last load's value). */
static uint64_t chase(uint64_t *ring, uint64_t steps) {
    for (uint64_t i = 0; i < 64; i++)
        ring[i] = (uint64_t)&ring[(i + 17) % 64];
    uint64_t *p = ring;
    for (uint64_t i = 0; i < 64; i++) /* (warm) */
        p = (uint64_t *)*p;
    uint64_t start = kmx_cycles();
    __asm__ volatile(
        "1: ld %0, 0(%0)\n"
        "   ld %0, 0(%0)\n"
        "   ld %0, 0(%0)\n"
        "   ld %0, 0(%0)\n"
        "   addi %1, %1, -4\n"
        "   bnez %1, 1b\n"
        : "+r"(p), "+r"(steps) : : "memory");
    return kmx_cycles() - start + ((uint64_t)p & 0);
}

static uint64_t ring[64];

int kmx_main(int core) {
    uint32_t path = kmx_word(0), harts = kmx_word(1), bytes = kmx_word(2);
    uint64_t size = 0;
    uint8_t *from = kmx_region(0, &size);
    uint8_t *to = kmx_region(1, 0);
    uint8_t *uncached = kmx_region_uncached(0);
    uint64_t words = bytes / 8, cycles = 0;
    int copies = (uint32_t)core < harts;
    from += (uint64_t)core * bytes;
    to += (uint64_t)core * bytes;
    uncached += (uint64_t)core * bytes;
    if (path == PATH_CHASE) {
        if (core == 0)
            cycles = chase(ring, bytes);
    } else {
        if (copies) /* none of it cached (and Python's bytes read, not stale lines) */
            kmx_invalidate(0);
        if (copies && (path == PATH_L3_VECTOR || path == PATH_L3_SCALAR)) /* a first pass brings the buffer in */
            copy_vector((uint64_t *)to, (const uint64_t *)from, words);
        kmx_barrier();
        uint64_t start = kmx_cycles();
        if (copies) {
            if (path == PATH_L3_SCALAR)
                copy_scalar((uint64_t *)to, (const uint64_t *)from, words);
            else if (path == PATH_UNCACHED_VECTOR)
                copy_vector((uint64_t *)to, (const uint64_t *)uncached, words);
            else
                copy_vector((uint64_t *)to, (const uint64_t *)from, words);
        }
        cycles = kmx_cycles() - start;
        if (copies)
            kmx_flush(1); /* (the copy reaches DRAM: outside the timed pass) */
        kmx_barrier();
    }
    uint32_t out[2] = {(uint32_t)cycles, (uint32_t)(cycles >> 32)};
    if (copies || (path == PATH_CHASE && core == 0))
        kmx_result(2 * (uint64_t)core, out, 2);
    kmx_barrier();
    return 0;
}
