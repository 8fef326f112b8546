/* The vector differential test's thread for the simulator: cases in region 0, states to
 * region 1; the code runs from the thread's own static data, after fence.i. */
#include "kmx.h"
#include "case_v.h"

static uint32_t code[V_CODE_WORDS] __attribute__((aligned(64)));
static VState state;

int kmx_main(int core) {
    (void)core;
    uint64_t in_bytes, out_bytes;
    const VCase *cases = (const VCase *)kmx_region(0, &in_bytes);
    VState *states = (VState *)kmx_region(1, &out_bytes);
    kmx_invalidate(0);
    uint64_t n = in_bytes / sizeof(VCase);
    for (uint64_t i = 0; i < n; i++) {
        __builtin_memcpy(&state, &cases[i].state, sizeof state);
        __builtin_memcpy(code, cases[i].code, sizeof code);
        __asm__ volatile("fence.i" ::: "memory");
        vs_run_v(&state, code);
        __builtin_memcpy(&states[i], &state, sizeof state);
    }
    kmx_flush(1);
    return 0;
}
