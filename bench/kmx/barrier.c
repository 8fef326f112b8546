/* bench/kmx.py: word 0 rounds of kmx_barrier on each of the cluster's cores (every core
   calls it once a round), between two submits of core 0's, so that Python times the
   barriers alone. */
#include "kmx.h"

int kmx_main(int core) {
    uint32_t rounds = kmx_word(0);
    kmx_barrier();
    if (core == 0)
        kmx_submit();
    for (uint32_t i = 0; i < rounds; i++)
        kmx_barrier();
    if (core == 0) {
        kmx_submit();
        kmx_result(0, &rounds, 1);
    }
    return 0;
}
