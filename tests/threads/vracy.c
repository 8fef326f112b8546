/* Each core adds its number plus 1 to every word of a shared array, N times (word 0),
   through the vector unit, without an atomic: a vector load, add and store that another
   core's turn can split, so the sums depend on where the turns end. Core 0 reports a
   checksum of the array after a barrier, and each core its cycles. */
#include <riscv_vector.h>
#include "kmx.h"

#define WORDS 256
static uint32_t shared[WORDS];

int kmx_main(int core) {
    uint32_t n = kmx_word(0);
    uint64_t start = kmx_cycles();
    for (uint32_t round = 0; round < n; round++) {
        for (size_t i = 0, vl; i < WORDS; i += vl) {
            vl = __riscv_vsetvl_e32m1(WORDS - i);
            vuint32m1_t v = __riscv_vle32_v_u32m1(&shared[i], vl);
            __riscv_vse32_v_u32m1(&shared[i], __riscv_vadd_vx_u32m1(v, (uint32_t)core + 1, vl), vl);
        }
    }
    uint32_t spent = (uint32_t)(kmx_cycles() - start);
    kmx_result(4 + core, &spent, 1);
    kmx_barrier();
    if (core == 0) {
        uint32_t sum = 0;
        for (int i = 0; i < WORDS; i++)
            sum = sum * 31 + shared[i];
        kmx_result(0, &sum, 1);
    }
    return 0;
}
