/* The same two calls in the right order: the flush writes the tripled numbers to DRAM,
 * then the invalidate drops lines that are clean, and nothing is lost. */
#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    uint64_t numbers_bytes;
    uint64_t tripled_bytes;
    const uint32_t* numbers = (const uint32_t*)kmx_region(0, &numbers_bytes);
    uint32_t* tripled = (uint32_t*)kmx_region(1, &tripled_bytes);
    if (numbers == 0 || tripled == 0) {
        return 1;
    }
    kmx_invalidate(0);
    for (uint64_t i = 0; i < numbers_bytes / 4; i++) {
        tripled[i] = 3 * numbers[i];
    }
    kmx_flush(1);
    kmx_invalidate(1);
    const uint32_t count = (uint32_t)(numbers_bytes / 4);
    kmx_result(0, &count, 1);
    return 0;
}
