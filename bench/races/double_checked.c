/* Double-checked initialisation without an atomic: the first core to see `ready` clear
   builds a table and sets `ready`; the others use the table. The check and the set are
   not one step, so two cores can both build it, and the builder sets `ready` before the
   table is complete: a core that sees it set can read a half-built table. */
#include "kmx.h"

#define N 64
static volatile uint32_t table[N];
static volatile uint32_t ready, builds;

static void init_once(void) {
    if (!ready) {
        builds = builds + 1;
        ready = 1; /* set last, with a release store, and claimed with an atomic: not here */
        for (int i = 0; i < N; i++)
            table[i] = 2 * i + 1;
    }
}

int kmx_main(int core) {
    init_once();
    uint32_t sum = 0;
    for (int i = 0; i < N; i++)
        sum += table[i];
    kmx_result(1 + core, &sum, 1);
    kmx_barrier();
    if (core == 0) {
        uint32_t b = builds;
        kmx_result(0, &b, 1);
    }
    return 0;
}
