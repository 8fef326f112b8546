/* A thread for the trace's tests (tests/observe/test_trace.py): four cores sum their quarter of a
 * region into it, meet at a barrier, and core 0 submits the total; on request (word 0) one
 * core writes a word it never flushes, which the checker finds. */
#include "kmx.h"

int kmx_main(int core) {
    uint64_t bytes;
    uint32_t *data = (uint32_t *)kmx_region(0, &bytes);
    kmx_invalidate(0);
    kmx_barrier(); /* (every core invalidates before any writes) */
    uint64_t quarter = bytes / 4 / 4, sum = 0;
    for (uint64_t i = core * quarter; i < (core + 1) * quarter; i++)
        sum += data[i];
    data[core * quarter] = (uint32_t)sum;
    kmx_flush(0);
    kmx_barrier();
    if (kmx_word(0) == 1 && core == 2)
        data[bytes / 4 - 1] = 1; /* a write nobody flushes */
    if (core == 0) {
        uint32_t total = 0;
        kmx_invalidate(0);
        for (int c = 0; c < 4; c++)
            total += data[c * quarter];
        kmx_result(0, &total, 1);
        kmx_submit();
    }
    kmx_barrier();
    return 0;
}
