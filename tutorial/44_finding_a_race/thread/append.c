/* Two cores append 20 entries each to one shared log: a read of the length, a store of
 * the entry, a store of the new length. Another core's turn can come between the read
 * and the last store. */
#include "kmx.h"

static volatile uint32_t length;

int kmx_main(int core) {
    uint32_t* log = (uint32_t*)kmx_region(0, 0);
    for (uint32_t i = 0; i < 20; i++) {
        uint32_t slot = length;
        log[slot] = 100 * core + i;
        length = slot + 1;
    }
    kmx_barrier();
    if (core == 0) {
        uint32_t n = length;
        kmx_result(0, &n, 1);
        kmx_flush(0);
    }
    return 0;
}
