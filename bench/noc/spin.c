/* bench/noc.py: the thread spins on a flag (kmx_invalidate and a load) word 0 times, then
   raises its own flag (flags byte 64) and flushes it. Submits before and after the spins,
   so that Python times the spins alone. */
#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(0, 0);
    uint32_t spins = kmx_word(0), seen = 0;
    kmx_submit();
    for (uint32_t i = 0; i < spins; i++) {
        kmx_invalidate(0);
        seen += flags[0];
    }
    kmx_submit();
    flags[16] = 1;
    kmx_flush(0);
    kmx_result(0, &seen, 1);
    return 0;
}
