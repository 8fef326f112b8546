/* Each hart copies its slice of region 0 into region 1, through the cached or the
 * uncached alias, with vector or scalar loads, and gives back the cycles it took. */
#include "kmx.h"

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

static void copy_scalar(uint64_t *to, const volatile uint64_t *from, uint64_t words) {
    for (uint64_t i = 0; i < words; i++)
        to[i] = from[i];
}

int kmx_main(int core) {
    const uint32_t uncached = kmx_word(0), vector = kmx_word(1), harts = kmx_word(2);
    uint64_t bytes = 0;
    kmx_region(0, &bytes);
    const uint64_t slice = bytes / 4, words = slice / 8;
    uint64_t *from = (uint64_t *)((uint8_t *)(uncached ? kmx_region_uncached(0) : kmx_region(0, 0)) + core * slice);
    uint64_t *to = (uint64_t *)((uint8_t *)kmx_region(1, 0) + core * slice);
    kmx_invalidate(0);
    kmx_barrier();
    const uint64_t start = kmx_cycles();
    if ((uint32_t)core < harts) {
        if (vector)
            copy_vector(to, from, words);
        else
            copy_scalar(to, from, words);
    }
    const uint32_t took = (uint32_t)(kmx_cycles() - start);
    kmx_flush(1);
    kmx_result((uint64_t)core, &took, 1);
    kmx_barrier();
    return 0;
}
