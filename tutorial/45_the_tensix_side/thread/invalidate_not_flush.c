/* double.c with kmx_invalidate(2) where kmx_flush(2) belongs: the invalidate drops the
 * dirty results, and DRAM keeps what it held before, for the Tensix side to read.
 */
#include "kmx.h"

#define FRAMES 4

int kmx_main(int core) {
    (void)core;
    uint64_t frame_bytes, flags_bytes, results_bytes;
    const volatile uint32_t* frame = (const volatile uint32_t*)kmx_region(0, &frame_bytes);
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(1, &flags_bytes);
    uint32_t* results = (uint32_t*)kmx_region(2, &results_bytes);
    for (uint32_t n = 1; n <= FRAMES; n++) {
        do {
            kmx_invalidate(1);
        } while (flags[0] < n);
        kmx_invalidate(0);
        for (uint64_t i = 0; i < frame_bytes / 4; i++) {
            results[i] = 2 * frame[i];
        }
        kmx_invalidate(2);
        flags[16] = n;
        kmx_flush(1);
    }
    return 0;
}
