/* A parallel reduction: each core sums its share of region 0 (uint32), adds it to a
   shared total with an atomic, and after a barrier core 0 reports the total and how
   many cores took part. Word 0: unused; the share is every cores-th element. */
#include "kmx.h"

static uint64_t total;
static uint32_t arrived;

int kmx_main(int core) {
    uint64_t bytes;
    const uint32_t* x = (const uint32_t*)kmx_region(0, &bytes);
    uint64_t n = bytes / 4;
    uint64_t cores = kmx_word(0);
    if (core == 0) kmx_invalidate(0);
    kmx_barrier();
    uint64_t sum = 0;
    for (uint64_t i = core; i < n; i += cores) sum += x[i];
    __atomic_fetch_add(&total, sum, __ATOMIC_RELAXED);
    __atomic_fetch_add(&arrived, 1, __ATOMIC_RELAXED);
    kmx_barrier();
    if (core == 0) {
        uint32_t out[3] = {(uint32_t)total, (uint32_t)(total >> 32), arrived};
        kmx_result(0, out, 3);
    }
    return 10 + core;
}
