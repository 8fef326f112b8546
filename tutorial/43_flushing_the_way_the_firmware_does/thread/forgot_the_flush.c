/* 4 MiB of output and no flush: only what the L3 evicts reaches DRAM. */
#include "kmx.h"

int kmx_main(int core) {
    if (core != 0)
        return 0;
    uint64_t bytes;
    uint32_t* out = (uint32_t*)kmx_region(0, &bytes);
    kmx_invalidate(0);
    for (uint64_t i = 0; i < bytes / 4; i++)
        out[i] = 3 * (uint32_t)i;
    return 0;
}
