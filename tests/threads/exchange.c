/* One frame through DRAM with a Tensix stand-in (tests/noc): wait until the stand-in's
   flag (flags byte 0) is 1, read "data", write each word doubled into "out", raise the
   thread's flag (flags byte 64), then wait until the stand-in's flag is 2 (it has read
   the results) before returning. Word 0: invalidate "data" before reading it; word 1:
   flush "out" before raising the flag. Result word 0: the spins of the first wait. */
#include "kmx.h"

static uint32_t wait_for(volatile uint32_t* flag, uint32_t value) {
    uint32_t spins = 0;
    do {
        kmx_invalidate(1);
        spins++;
    } while (*flag != value);
    return spins;
}

int kmx_main(int core) {
    (void)core;
    uint64_t data_bytes, flags_bytes, out_bytes;
    const volatile uint32_t* data = (const volatile uint32_t*)kmx_region(0, &data_bytes);
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(1, &flags_bytes);
    uint32_t* out = (uint32_t*)kmx_region(2, &out_bytes);
    kmx_invalidate(0);
    uint32_t first = data[0]; /* (the data's first line in the cache before the stand-in writes) */
    uint32_t spins = wait_for(&flags[0], 1);
    if (kmx_word(0))
        kmx_invalidate(0);
    for (uint64_t i = 0; i < data_bytes / 4; i++)
        out[i] = 2 * data[i];
    if (kmx_word(1))
        kmx_flush(2);
    flags[16] = 1;
    kmx_flush(1);
    wait_for(&flags[0], 2);
    uint32_t said[2] = {spins, first};
    kmx_result(0, said, 2);
    return 0;
}
