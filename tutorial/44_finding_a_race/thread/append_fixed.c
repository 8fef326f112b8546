/* The same log, with each slot claimed by an atomic add: no two cores get the same one. */
#include "kmx.h"

static uint32_t length;

int kmx_main(int core) {
    uint32_t* log = (uint32_t*)kmx_region(0, 0);
    for (uint32_t i = 0; i < 20; i++) {
        uint32_t slot = __atomic_fetch_add(&length, 1, __ATOMIC_RELAXED);
        log[slot] = 100 * core + i;
    }
    kmx_barrier();
    if (core == 0) {
        uint32_t n = __atomic_load_n(&length, __ATOMIC_RELAXED);
        kmx_result(0, &n, 1);
        kmx_flush(0);
    }
    return 0;
}
