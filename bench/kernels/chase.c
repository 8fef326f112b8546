/* chase: dependent loads at random places, one after the other. */
#include "kernels.h"

#define CHASE_SEED 0x6b6f6d6f72656269ull /* "komorebi" */

/* Sattolo's shuffle of the identity: a permutation that is one cycle through every
 * index, so the walk never settles into a short loop. */
void chase_fill(uint32_t* next, uint64_t count) {
    uint64_t state = CHASE_SEED;
    for (uint64_t i = 0; i < count; i++) {
        next[i] = (uint32_t)i;
    }
    for (uint64_t i = count - 1; i > 0; i--) {
        uint64_t j = (lcg_next(&state) >> 33) % i; /* 0 <= j < i */
        uint32_t t = next[i];
        next[i] = next[j];
        next[j] = t;
    }
}

BENCH_KERNEL uint64_t chase(const uint32_t* next, uint64_t steps) {
    uint32_t at = 0;
    for (uint64_t i = 0; i < steps; i++) {
        at = next[at];
    }
    return at;
}
