/* An X280 thread that doubles the numbers Python put in a region, 128 at a time on the
 * vector unit, writes them into another region, and adds them up. */
#include <riscv_vector.h>

#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    uint64_t bytes;
    const float* numbers = (const float*)kmx_region(0, &bytes);
    float* doubled = (float*)kmx_region(1, 0);
    if (numbers == 0 || doubled == 0) {
        return 1;
    }
    size_t count = bytes / 4;
    kmx_invalidate(0);
    vfloat32m1_t sum = __riscv_vfmv_s_f_f32m1(0.0f, 1);
    uint32_t passes = 0, last = 0;
    for (size_t i = 0, vl; i < count; i += vl, passes++) {
        vl = __riscv_vsetvl_e32m8(count - i);
        vfloat32m8_t x = __riscv_vle32_v_f32m8(numbers + i, vl);
        vfloat32m8_t twice = __riscv_vfmul_vf_f32m8(x, 2.0f, vl);
        __riscv_vse32_v_f32m8(doubled + i, twice, vl);
        sum = __riscv_vfredusum_vs_f32m8_f32m1(twice, sum, vl);
        last = (uint32_t)vl;
    }
    kmx_flush(1);
    float total = __riscv_vfmv_f_s_f32m1_f32(sum);
    uint32_t out[3] = {passes, last, (uint32_t)total};
    kmx_result(0, out, 3);
    return 0;
}
