/* Lesson 35's thread with its kmx_flush(1) left out: what it writes into region 1 stays in
 * the cache, and nothing tells the cache to write it to DRAM. */
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
    const uint32_t count = (uint32_t)(numbers_bytes / 4);
    kmx_result(0, &count, 1);
    return 0;
}
