/* bench/kmx.py: word 0 rounds of the kmx calls that need no Python (kmx_cycles,
   kmx_cluster, kmx_word, kmx_word_count, kmx_region, kmx_region_uncached, and a
   kmx_flush and kmx_invalidate of a region nothing was written to), between two submits,
   so that Python times the calls alone. */
#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    uint32_t rounds = kmx_word(0);
    uint64_t sum = 0;
    kmx_submit();
    for (uint32_t i = 0; i < rounds; i++) {
        sum += kmx_cycles();
        sum += (uint64_t)kmx_cluster();
        sum += kmx_word(0) + kmx_word_count();
        sum += (uint64_t)kmx_region(0, 0) + (uint64_t)kmx_region_uncached(0);
        kmx_flush(0);
        kmx_invalidate(0);
    }
    kmx_submit();
    uint32_t low = (uint32_t)sum;
    kmx_result(0, &low, 1);
    return 0;
}
