/* Never ends. */
#include "kmx.h"

int kmx_main(int core) {
    volatile uint64_t spins = 0;
    for (;;) spins++;
    return core;
}
