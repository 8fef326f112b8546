/* An X280 thread that counts the primes below a limit in steps, and hands Python its
 * progress after each step. */
#include "kmx.h"

static int is_prime(uint32_t n) {
    if (n < 2) {
        return 0;
    }
    for (uint32_t d = 2; d * d <= n; d++) {
        if (n % d == 0) {
            return 0;
        }
    }
    return 1;
}

int kmx_main(int core) {
    (void)core;
    const uint32_t limit = kmx_word(0);
    const uint32_t steps = kmx_word(1);
    kmx_print("counting primes below %u in %u steps\n", limit, steps);
    uint32_t primes = 0;
    for (uint32_t step = 1; step <= steps; step++) {
        const uint32_t from = limit / steps * (step - 1);
        const uint32_t below = limit / steps * step;
        for (uint32_t n = from; n < below; n++) {
            primes += is_prime(n);
        }
        const uint32_t progress[3] = {step, below, primes};
        kmx_result(0, progress, 3);
        kmx_submit();
    }
    return 0;
}
