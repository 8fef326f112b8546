/* The differential test's thread for the simulator: cases in region 0, states to region 1.
 * The code runs from the thread's own static data (the image), after fence.i. */
#include "kmx.h"
#include "case.h"

static uint32_t code[CODE_WORDS] __attribute__((aligned(64)));

int kmx_main(int core) {
    (void)core;
    uint64_t in_bytes, out_bytes;
    const Case *cases = (const Case *)kmx_region(0, &in_bytes);
    State *states = (State *)kmx_region(1, &out_bytes);
    kmx_invalidate(0);
    uint64_t n = in_bytes / sizeof(Case);
    for (uint64_t i = 0; i < n; i++) {
        State s;
        __builtin_memcpy(s.x, cases[i].x, sizeof s.x);
        __builtin_memcpy(s.f, cases[i].f, sizeof s.f);
        s.fcsr = cases[i].fcsr;
        __builtin_memcpy(code, cases[i].code, sizeof code);
        __asm__ volatile("fence.i" ::: "memory");
        vs_run(&s, code);
        states[i] = s;
    }
    kmx_flush(1);
    return 0;
}
