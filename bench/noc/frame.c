/* bench/noc.py: the thread doubles region "frame" into region "results" word 0 times,
   flushing the results each time, between two submits (Python times the rounds alone);
   then raises its flag (flags byte 64) for a stand-in that waits for it. */
#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    uint64_t bytes;
    const uint32_t* frame = (const uint32_t*)kmx_region(0, &bytes);
    uint32_t* results = (uint32_t*)kmx_region(1, 0);
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(2, 0);
    uint32_t rounds = kmx_word(0);
    kmx_invalidate(0);
    kmx_submit();
    for (uint32_t n = 0; n < rounds; n++) {
        for (uint64_t i = 0; i < bytes / 4; i++)
            results[i] = 2 * frame[i] + n;
        kmx_flush(1);
    }
    kmx_submit();
    flags[16] = 1;
    kmx_flush(2);
    return 0;
}
