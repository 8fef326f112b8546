/* popcount: the set bits of a region of uint64 (Zbb's cpop in the card's build). */
#include "kernels.h"

BENCH_KERNEL uint64_t popcount(const uint64_t* words, uint64_t count) {
    uint64_t bits = 0;
    for (uint64_t i = 0; i < count; i++) {
        bits += (uint64_t)__builtin_popcountll(words[i]);
    }
    return bits;
}

void popcount_fill(uint64_t* words, uint64_t count) {
    uint64_t state = 7;
    for (uint64_t i = 0; i < count; i++) {
        words[i] = lcg_next(&state);
    }
}
