/* bench/noc.py: word 0 kmx calls (kmx_cycles: a round trip to the simulator's Python and
   back), between two submits, so that Python times the calls alone. */
#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    uint32_t calls = kmx_word(0);
    uint64_t sum = 0;
    kmx_submit();
    for (uint32_t i = 0; i < calls; i++)
        sum += kmx_cycles();
    kmx_submit();
    uint32_t low = (uint32_t)sum;
    kmx_result(0, &low, 1);
    return 0;
}
