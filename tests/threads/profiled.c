/* A thread for the profile's tests (tests/observe/test_profile.py): a vector loop (the
 * interpreter's), a recursive function, a call through a pointer, the C library's memcpy,
 * a Zba instruction the loader rewrites (3 * x), and a flush. */
#include <string.h>

#include "kmx.h"

static int __attribute__((noinline)) fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static uint32_t __attribute__((noinline)) triple_all(uint32_t *out, const uint32_t *in, uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        out[i] = 3 * in[i];
    return out[n - 1];
}

static int __attribute__((noinline)) twice(int x) { return 2 * x; }
int (*volatile through)(int) = twice;

int kmx_main(int core) {
    uint64_t bytes;
    uint32_t *data = (uint32_t *)kmx_region(0, &bytes);
    kmx_invalidate(0);
    uint32_t copy[64];
    memcpy(copy, data, sizeof copy);
    uint32_t last = triple_all(data, copy, 64);
    int f = fib(10 + core);
    int t = through(f);
    kmx_flush(0);
    uint32_t out[3] = {last, (uint32_t)f, (uint32_t)t};
    kmx_result(0, out, 3);
    return 0;
}
