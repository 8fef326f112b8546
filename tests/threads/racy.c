/* Each core adds 1 to a shared counter N times (word 0), without an atomic: a
   read-modify-write that another core's turn can split. Word 1 chooses the atomic way
   instead. Core 0 reports the counter after a barrier, and each core's cycles. */
#include "kmx.h"

static volatile uint64_t counter;
static uint64_t cas_counter;

int kmx_main(int core) {
    uint32_t n = kmx_word(0);
    int atomic = kmx_word(1);
    uint64_t start = kmx_cycles();
    for (uint32_t i = 0; i < n; i++) {
        if (atomic) {  /* compare-and-swap: lr/sc on RV64A */
            uint64_t seen = __atomic_load_n(&cas_counter, __ATOMIC_RELAXED);
            while (!__atomic_compare_exchange_n(&cas_counter, &seen, seen + 1, 1,
                                                __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            }
        } else {
            counter = counter + 1;
        }
    }
    uint32_t spent = (uint32_t)(kmx_cycles() - start);
    kmx_result(4 + core, &spent, 1);
    kmx_barrier();
    if (core == 0) {
        uint64_t total = atomic ? cas_counter : counter;
        uint32_t out[2] = {(uint32_t)total, (uint32_t)(total >> 32)};
        kmx_result(0, out, 2);
    }
    return 0;
}
