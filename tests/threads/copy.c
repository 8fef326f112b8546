/* Copies region 0 into region 1, byte for byte; result word 0 is the byte count. */
#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    uint64_t in_bytes, out_bytes;
    const uint8_t* in = (const uint8_t*)kmx_region(0, &in_bytes);
    uint8_t* out = (uint8_t*)kmx_region(1, &out_bytes);
    if (in == 0 || out == 0 || in_bytes != out_bytes) return 1;
    kmx_invalidate(0);
    for (uint64_t i = 0; i < in_bytes; i++) out[i] = in[i];
    kmx_flush(1);
    uint32_t count = (uint32_t)in_bytes;
    kmx_result(0, &count, 1);
    return 0;
}
