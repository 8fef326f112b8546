/* What the kernels share, outside the timed part: the random source and the checksum. */
#include "kernels.h"

uint64_t lcg_next(uint64_t* state) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state;
}

uint64_t checksum32(const uint32_t* words, uint64_t count) {
    uint64_t hash = 14695981039346656037ull;
    for (uint64_t i = 0; i < count; i++) {
        hash = (hash ^ words[i]) * 1099511628211ull;
    }
    return hash;
}

uint64_t float_bits(float value) {
    uint32_t bits;
    __builtin_memcpy(&bits, &value, 4);
    return bits;
}
