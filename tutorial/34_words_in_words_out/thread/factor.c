/* An X280 thread that takes 64-bit numbers, two argument words each, and hands back the
 * largest prime factor of each, two result words each. */
#include "kmx.h"

static uint64_t largest_prime_factor(uint64_t n) {
    uint64_t largest = 1;
    for (uint64_t d = 2; d * d <= n; d++) {
        while (n % d == 0) {
            largest = d;
            n /= d;
        }
    }
    return n > 1 ? n : largest;
}

int kmx_main(int core) {
    (void)core;
    const uint64_t count = kmx_word_count();
    for (uint64_t i = 0; i < count; i += 2) {
        const uint64_t low = kmx_word(i);
        const uint64_t high = kmx_word(i + 1);
        const uint64_t factor = largest_prime_factor(high << 32 | low);
        const uint32_t out[2] = {(uint32_t)factor, (uint32_t)(factor >> 32)};
        kmx_result(i, out, 2);
    }
    return 0;
}
