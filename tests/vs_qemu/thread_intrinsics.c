/* tests/vs_qemu/intrinsics.c as a komorebi thread: the results into region 0. */
#include "kmx.h"
#include "intrinsics.h"

int kmx_main(int core) {
    (void)core;
    uint64_t bytes;
    uint8_t *out = (uint8_t *)kmx_region(0, &bytes);
    if (out == 0 || bytes < CLASSES * CLASS_BYTES)
        return 1;
    intrinsics(out);
    kmx_flush(0);
    return 0;
}
