/* Four cores each scale their quarter of "numbers" into "scaled" through a helper, then
 * meet at a barrier. One of them forgets its flush: docs/debugging.md finds it. */
#include "kmx.h"

uint32_t *scaled; /* the output region, where gdb can see it */

uint32_t __attribute__((noinline)) scale(uint32_t value, uint32_t factor) {
    uint32_t result = value * factor;
    return result + 1;
}

int kmx_main(int core) {
    uint64_t in_bytes, out_bytes;
    const uint32_t *numbers = (const uint32_t *)kmx_region(0, &in_bytes);
    scaled = (uint32_t *)kmx_region(1, &out_bytes);
    uint64_t quarter = in_bytes / 4 / 4;
    kmx_invalidate(0);
    for (uint64_t i = core * quarter; i < (core + 1) * quarter; i++)
        scaled[i] = scale(numbers[i], 3);
    if (core != 3)
        kmx_flush(1); /* core 3 forgets */
    kmx_barrier();
    uint32_t done = (uint32_t)quarter;
    kmx_result(core, &done, 1);
    return 0;
}
