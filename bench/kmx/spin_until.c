/* bench/kmx.py: the thread spins on a flag the way a thread waits for the Tensix side
   (kmx_invalidate, then a load) until flags word 0 is not 0, which a Tensix stand-in
   writes after its --steps noc reads. Its spins are its result. */
#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(0, 0);
    uint32_t spins = 0;
    kmx_submit();
    do {
        kmx_invalidate(0);
        spins++;
    } while (flags[0] == 0);
    kmx_result(0, &spins, 1);
    return 0;
}
