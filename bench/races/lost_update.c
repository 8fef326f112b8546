/* A lost update: each core adds 1 to a shared counter word 0 times, with a load, an add
   and a store that another core's turn can split. Core 0 reports the counter. */
#include "kmx.h"

static volatile uint32_t counter;

int kmx_main(int core) {
    uint32_t n = kmx_word(0);
    for (uint32_t i = 0; i < n; i++)
        counter = counter + 1;
    kmx_barrier();
    if (core == 0) {
        uint32_t total = counter;
        kmx_result(0, &total, 1);
    }
    return 0;
}
