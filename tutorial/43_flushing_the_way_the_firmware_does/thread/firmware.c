/* Lesson 35's tripling, kept in step with DRAM the way the card's firmware does it: a line
 * at a time through the L3's flush register, and a status word written past the cache. */
#include "kmx.h"
#include "kmx_cache.h"

int kmx_main(int core) {
    if (core != 0)
        return 0;
    uint64_t bytes;
    const uint32_t* numbers = (const uint32_t*)kmx_region(0, &bytes);
    uint32_t* tripled = (uint32_t*)kmx_region(1, 0);
    volatile uint32_t* status = (volatile uint32_t*)kmx_region_uncached(2);

    kmx_cache_flush_range(numbers, bytes);
    for (uint64_t i = 0; i < bytes / 4; i++)
        tripled[i] = 3 * numbers[i];
    kmx_cache_flush_range(tripled, bytes);
    status[0] = 1;
    return 0;
}
