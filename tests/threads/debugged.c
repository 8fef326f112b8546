/* A thread for the debugger's tests (tests/test_gdb.py): four cores, a function to step
 * into, a region each core writes a word of, barriers, and on request (word 0) a fault
 * (1), an ebreak (2) or a failed assert (3). */
#include <assert.h>

#include "kmx.h"

int32_t *data; /* the region, for gdb's watch */

static int __attribute__((noinline)) scale(int value, int factor) {
    int scaled = value * factor;
    return scaled + 1;
}

int kmx_main(int core) {
    uint64_t bytes;
    data = (int32_t *)kmx_region(0, &bytes);
    kmx_invalidate(0);
    kmx_barrier(); /* (every core invalidates before any writes) */
    int total = 0;
    for (int i = 0; i < 4; i++)
        total += scale(data[core * 4 + i], core + 2);
    data[core * 4] = total;
    kmx_barrier();
    uint32_t ask = kmx_word(0);
    if (ask == 1 && core == 3) {
        volatile int *nowhere = (volatile int *)8;
        *nowhere = total;
    }
    if (ask == 2 && core == 0)
        __asm__ volatile("ebreak");
    if (ask == 3 && core == 2)
        assert(total == 0);
    kmx_flush(0);
    kmx_result((uint32_t)core, (const uint32_t *)&total, 1);
    return 0;
}
