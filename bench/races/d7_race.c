/* A race through DRAM bank D7, between the threads of clusters 2 and 3: each adds 1 to
   the counter in cluster 2's region 0, word 0 times, through its own cluster's cache as
   firmware does it: it flushes the counter's line (so that the load reads DRAM), loads,
   stores, and flushes the line again (so that DRAM holds the sum). The other cluster's
   turns can come between the load and the last flush. Cluster 3 reaches the counter at
   the address in words 1 and 2; with word 0 = 0 the thread reports its region's address
   instead. */
#include "kmx.h"
#include "kmx_cache.h"

int kmx_main(int core) {
    (void)core;
    uint32_t n = kmx_word(0);
    volatile uint32_t *counter = (volatile uint32_t *)kmx_region(0, 0);
    if (n == 0) {
        uint64_t at = (uint64_t)counter;
        uint32_t out[2] = {(uint32_t)at, (uint32_t)(at >> 32)};
        kmx_result(0, out, 2);
        return 0;
    }
    if (kmx_cluster() == 3)
        counter = (volatile uint32_t *)(((uint64_t)kmx_word(2) << 32) | kmx_word(1));
    for (uint32_t i = 0; i < n; i++) {
        kmx_cache_flush_line((void *)counter);
        *counter = *counter + 1;
        kmx_cache_flush_line((void *)counter);
    }
    return 0;
}
