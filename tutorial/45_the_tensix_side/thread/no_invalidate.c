/* double.c without its kmx_invalidate(0): the thread reads each new frame through the
 * cache, which still holds the lines of the first one, while the Tensix side's writes
 * went to DRAM past it. */
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
        for (uint64_t i = 0; i < frame_bytes / 4; i++) {
            results[i] = 2 * frame[i];
        }
        kmx_flush(2);
        flags[16] = n;
        kmx_flush(1);
    }
    return 0;
}
