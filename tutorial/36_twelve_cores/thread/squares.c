/* An X280 thread for four cores. Each core squares its quarter of the numbers in region 0
 * into region 1 and adds its squares up; once all four are done, core 0 reports the total. */
#include "kmx.h"

static uint64_t total; /* one for the whole thread: its four cores share it */

int kmx_main(int core) {
    uint64_t bytes;
    const uint32_t* numbers = (const uint32_t*)kmx_region(0, &bytes);
    uint32_t* squares = (uint32_t*)kmx_region(1, 0);
    if (numbers == 0 || squares == 0) {
        return 1;
    }
    if (core == 0) {
        kmx_invalidate(0);
    }
    kmx_barrier();

    const uint64_t count = bytes / 4;
    const uint64_t first = count * core / 4;
    const uint64_t end = count * (core + 1) / 4;
    uint64_t sum = 0;
    for (uint64_t i = first; i < end; i++) {
        squares[i] = numbers[i] * numbers[i];
        sum += squares[i];
    }
    const uint32_t mine[2] = {(uint32_t)sum, (uint32_t)(sum >> 32)};
    kmx_result(2 * core, mine, 2);
    __atomic_fetch_add(&total, sum, __ATOMIC_RELAXED);
    kmx_barrier();

    if (core == 0) {
        kmx_flush(1);
        const uint64_t where = (uint64_t)numbers;
        const uint32_t out[4] = {(uint32_t)total, (uint32_t)(total >> 32), (uint32_t)where,
                                 (uint32_t)(where >> 32)};
        kmx_result(8, out, 4);
    }
    return 0;
}
