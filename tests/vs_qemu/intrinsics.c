/* RVV intrinsics of every class of instruction, on data from one LCG, each class's results
 * written to its own CLASS_BYTES of OUT: built as a komorebi thread (thread_intrinsics.c)
 * and as a Linux program for qemu-riscv64 (main_intrinsics.c), the two outputs compared by
 * tests/test_vs_qemu_intrinsics.py. The binary16 class (Zvfh) needs what QEMU 7.2 lacks:
 * it is built only with WITH_ZVFH (the simulator's build), and checked against numpy. */
#include <riscv_vector.h>
#include <stddef.h>
#include <stdint.h>

#include "intrinsics.h"

static uint64_t state = 0x1234567887654321ull;

static uint64_t next(void) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
}

static void fill_u8(uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)next();
}

/* Floats of few significant bits, small and large, and some special ones. */
static void fill_f32(float *p, size_t n) {
    static const uint32_t special[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                                       0x00000001, 0x007fffff, 0x00800000, 0x7f7fffff, 0x3f800000};
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next();
        uint32_t bits;
        if (r % 16 == 0) {
            bits = special[(r >> 4) % 10];
        } else {
            bits = (uint32_t)(((r >> 8) & 1) << 31 | (uint32_t)(120 + (r >> 9) % 16) << 23 | ((uint32_t)(r >> 20) & 0x7fffff));
        }
        __builtin_memcpy(&p[i], &bits, 4);
    }
}

#define N 100 /* elements: not a multiple of any VLMAX, so every loop has a short pass */

/* Copy SIZE bytes of FROM to OUT at *AT, and move *AT on. */
static void put(uint8_t *out, size_t *at, const void *from, size_t size) {
    __builtin_memcpy(out + *at, from, size);
    *at += size;
}

static void integer_class(uint8_t *out) {
    int32_t a[N], b[N], r[N * 4];
    fill_u8((uint8_t *)a, sizeof a);
    fill_u8((uint8_t *)b, sizeof b);
    for (size_t i = 0, vl; i < N; i += vl) {
        vl = __riscv_vsetvl_e32m2(N - i);
        vint32m2_t x = __riscv_vle32_v_i32m2(a + i, vl), y = __riscv_vle32_v_i32m2(b + i, vl);
        __riscv_vse32_v_i32m2(r + i, __riscv_vadd_vv_i32m2(__riscv_vmul_vv_i32m2(x, y, vl), x, vl), vl);
        __riscv_vse32_v_i32m2(r + N + i, __riscv_vmulh_vv_i32m2(x, y, vl), vl);
        __riscv_vse32_v_i32m2(r + 2 * N + i, __riscv_vdiv_vv_i32m2(x, __riscv_vor_vx_i32m2(y, 1, vl), vl), vl);
        __riscv_vse32_v_i32m2(r + 3 * N + i, __riscv_vmacc_vx_i32m2(__riscv_vsra_vx_i32m2(x, 3, vl), 7, y, vl), vl);
    }
    size_t at = 0;
    put(out, &at, r, sizeof r);
}

static void widening_class(uint8_t *out) {
    int16_t a[N], b[N];
    int32_t w[N];
    int8_t n8[N];
    uint64_t z[N];
    fill_u8((uint8_t *)a, sizeof a);
    fill_u8((uint8_t *)b, sizeof b);
    for (size_t i = 0, vl; i < N; i += vl) {
        vl = __riscv_vsetvl_e16m1(N - i);
        vint16m1_t x = __riscv_vle16_v_i16m1(a + i, vl), y = __riscv_vle16_v_i16m1(b + i, vl);
        vint32m2_t p = __riscv_vwmul_vv_i32m2(x, y, vl);
        p = __riscv_vwadd_wv_i32m2(p, x, vl);
        __riscv_vse32_v_i32m2(w + i, p, vl);
        __riscv_vse8_v_i8mf2(n8 + i, __riscv_vnsra_wx_i8mf2(x, 4, vl), vl);
    }
    for (size_t i = 0, vl; i < N; i += vl) {
        vl = __riscv_vsetvl_e64m4(N - i);
        vuint16m1_t x = __riscv_vle16_v_u16m1((const uint16_t *)a + i, vl);
        __riscv_vse64_v_u64m4(z + i, __riscv_vzext_vf4_u64m4(x, vl), vl);
    }
    size_t at = 0;
    put(out, &at, w, sizeof w);
    put(out, &at, n8, sizeof n8);
    put(out, &at, z, sizeof z);
}

static void fixed_point_class(uint8_t *out) {
    int16_t a[N], b[N], r[N * 4];
    int8_t c[N];
    fill_u8((uint8_t *)a, sizeof a);
    fill_u8((uint8_t *)b, sizeof b);
    for (size_t i = 0, vl; i < N; i += vl) {
        vl = __riscv_vsetvl_e16m1(N - i);
        vint16m1_t x = __riscv_vle16_v_i16m1(a + i, vl), y = __riscv_vle16_v_i16m1(b + i, vl);
        __riscv_vse16_v_i16m1(r + i, __riscv_vsadd_vv_i16m1(x, y, vl), vl);
        __riscv_vse16_v_i16m1(r + N + i, __riscv_vaadd_vv_i16m1(x, y, __RISCV_VXRM_RNU, vl), vl);
        __riscv_vse16_v_i16m1(r + 2 * N + i, __riscv_vsmul_vv_i16m1(x, y, __RISCV_VXRM_RNE, vl), vl);
        __riscv_vse16_v_i16m1(r + 3 * N + i, __riscv_vssra_vx_i16m1(x, 3, __RISCV_VXRM_ROD, vl), vl);
        __riscv_vse8_v_i8mf2(c + i, __riscv_vnclip_wx_i8mf2(x, 2, __RISCV_VXRM_RDN, vl), vl);
    }
    size_t at = 0;
    put(out, &at, r, sizeof r);
    put(out, &at, c, sizeof c);
}

static void mask_class(uint8_t *out) {
    int32_t a[N], b[N], r[N];
    uint32_t counts[8] = {0};
    fill_u8((uint8_t *)a, sizeof a);
    fill_u8((uint8_t *)b, sizeof b);
    size_t pass = 0;
    for (size_t i = 0, vl; i < N; i += vl, pass++) {
        vl = __riscv_vsetvl_e32m1(N - i);
        vint32m1_t x = __riscv_vle32_v_i32m1(a + i, vl), y = __riscv_vle32_v_i32m1(b + i, vl);
        vbool32_t lt = __riscv_vmslt_vv_i32m1_b32(x, y, vl), odd = __riscv_vmsne_vx_i32m1_b32(__riscv_vand_vx_i32m1(x, 1, vl), 0, vl);
        vbool32_t both = __riscv_vmand_mm_b32(lt, odd, vl);
        counts[pass % 8] += (uint32_t)__riscv_vcpop_m_b32(both, vl) + 100u * (uint32_t)(__riscv_vfirst_m_b32(lt, vl) + 1);
        vuint32m1_t iota = __riscv_viota_m_u32m1(both, vl);
        vint32m1_t merged = __riscv_vmerge_vvm_i32m1(y, x, lt, vl);
        merged = __riscv_vadd_vv_i32m1_m(__riscv_vmsbf_m_b32(odd, vl), merged, __riscv_vreinterpret_v_u32m1_i32m1(iota), vl);
        __riscv_vse32_v_i32m1(r + i, merged, vl);
    }
    size_t at = 0;
    put(out, &at, r, sizeof r);
    put(out, &at, counts, sizeof counts);
}

static void reduction_class(uint8_t *out) {
    int32_t a[N];
    int64_t r[6] = {0};
    fill_u8((uint8_t *)a, sizeof a);
    vint32m1_t sum = __riscv_vmv_s_x_i32m1(0, 1), max = __riscv_vmv_s_x_i32m1(INT32_MIN, 1);
    vint64m1_t wide = __riscv_vmv_s_x_i64m1(0, 1);
    vuint32m1_t xr = __riscv_vmv_s_x_u32m1(0, 1);
    for (size_t i = 0, vl; i < N; i += vl) {
        vl = __riscv_vsetvl_e32m4(N - i);
        vint32m4_t x = __riscv_vle32_v_i32m4(a + i, vl);
        sum = __riscv_vredsum_vs_i32m4_i32m1(x, sum, vl);
        max = __riscv_vredmax_vs_i32m4_i32m1(x, max, vl);
        wide = __riscv_vwredsum_vs_i32m4_i64m1(x, wide, vl);
        xr = __riscv_vredxor_vs_u32m4_u32m1(__riscv_vreinterpret_v_i32m4_u32m4(x), xr, vl);
    }
    r[0] = __riscv_vmv_x_s_i32m1_i32(sum);
    r[1] = __riscv_vmv_x_s_i32m1_i32(max);
    r[2] = __riscv_vmv_x_s_i64m1_i64(wide);
    r[3] = __riscv_vmv_x_s_u32m1_u32(xr);
    size_t at = 0;
    put(out, &at, r, sizeof r);
}

static void permutation_class(uint8_t *out) {
    uint32_t a[64], r[64 * 6];
    uint16_t index[64];
    fill_u8((uint8_t *)a, sizeof a);
    for (int i = 0; i < 64; i++) index[i] = (uint16_t)((a[i] >> 7) % 80); /* some past VLMAX */
    size_t vl = __riscv_vsetvl_e32m4(64);
    vuint32m4_t x = __riscv_vle32_v_u32m4(a, vl);
    __riscv_vse32_v_u32m4(r, __riscv_vslideup_vx_u32m4(x, x, 5, vl), vl);
    __riscv_vse32_v_u32m4(r + 64, __riscv_vslidedown_vx_u32m4(x, 9, vl), vl);
    __riscv_vse32_v_u32m4(r + 128, __riscv_vslide1up_vx_u32m4(x, 77, vl), vl);
    __riscv_vse32_v_u32m4(r + 192, __riscv_vrgatherei16_vv_u32m4(x, __riscv_vle16_v_u16m2(index, vl), vl), vl);
    vbool8_t odd = __riscv_vmsne_vx_u32m4_b8(__riscv_vand_vx_u32m4(x, 1, vl), 0, vl);
    __riscv_vse32_v_u32m4(r + 256, __riscv_vcompress_vm_u32m4(x, odd, vl), vl);
    __riscv_vse32_v_u32m4(r + 320, __riscv_vrgather_vx_u32m4(x, 3, vl), vl);
    size_t at = 0;
    put(out, &at, r, sizeof r);
}

static void memory_class(uint8_t *out) {
    uint32_t a[N * 3], r[N * 4];
    uint8_t seg[N * 3];
    uint32_t offsets[N];
    fill_u8((uint8_t *)a, sizeof a);
    for (int i = 0; i < N; i++) offsets[i] = (uint32_t)(((a[i] >> 5) % N) * 4);
    __builtin_memset(r, 0, sizeof r);
    for (size_t i = 0, vl; i < N; i += vl) {
        vl = __riscv_vsetvl_e32m1(N - i);
        vuint32m1_t s = __riscv_vlse32_v_u32m1(a + 3 * i, 12, vl);                 /* strided */
        vuint32m1_t g = __riscv_vluxei32_v_u32m1(a, __riscv_vle32_v_u32m1(offsets + i, vl), vl); /* indexed */
        __riscv_vsoxei32_v_u32m1(r, __riscv_vle32_v_u32m1(offsets + i, vl), __riscv_vadd_vv_u32m1(s, g, vl), vl);
        vuint32m1x3_t three = __riscv_vlseg3e32_v_u32m1x3(a + 3 * i, vl);          /* segments */
        __riscv_vsseg3e32_v_u32m1x3(r + N + 3 * i, three, vl);
    }
    for (size_t i = 0, vl; i < N; i += vl) {
        vl = __riscv_vsetvl_e8m1(N - i);
        vuint8m1x2_t two = __riscv_vlseg2e8_v_u8m1x2((const uint8_t *)a + 2 * i, vl);
        __riscv_vse8_v_u8m1(seg + i, __riscv_vadd_vv_u8m1(__riscv_vget_v_u8m1x2_u8m1(two, 0),
                                                         __riscv_vget_v_u8m1x2_u8m1(two, 1), vl), vl);
    }
    size_t at = 0;
    put(out, &at, r, sizeof r);
    put(out, &at, seg, sizeof seg);
}

static void float_class(uint8_t *out) {
    float a[N], b[N], r[N * 6];
    uint32_t flags;
    fill_f32(a, N);
    fill_f32(b, N);
    __asm__ volatile("csrw fflags, zero");
    for (size_t i = 0, vl; i < N; i += vl) {
        vl = __riscv_vsetvl_e32m2(N - i);
        vfloat32m2_t x = __riscv_vle32_v_f32m2(a + i, vl), y = __riscv_vle32_v_f32m2(b + i, vl);
        __riscv_vse32_v_f32m2(r + i, __riscv_vfmacc_vv_f32m2(x, x, y, vl), vl);
        __riscv_vse32_v_f32m2(r + N + i, __riscv_vfdiv_vv_f32m2(x, y, vl), vl);
        __riscv_vse32_v_f32m2(r + 2 * N + i, __riscv_vfsqrt_v_f32m2(__riscv_vfabs_v_f32m2(x, vl), vl), vl);
        __riscv_vse32_v_f32m2(r + 3 * N + i, __riscv_vfmin_vv_f32m2(x, y, vl), vl);
        __riscv_vse32_v_f32m2(r + 4 * N + i, __riscv_vfadd_vv_f32m2_rm(x, y, __RISCV_FRM_RUP, vl), vl);
        __riscv_vse32_v_f32m2(r + 5 * N + i, __riscv_vfrec7_v_f32m2(x, vl), vl);
    }
    __asm__ volatile("frflags %0" : "=r"(flags));
    size_t at = 0;
    put(out, &at, r, sizeof r);
    put(out, &at, &flags, sizeof flags);
}

static void conversion_class(uint8_t *out) {
    float a[N];
    int32_t i32[N];
    double d[N];
    int16_t i16[N];
    uint32_t flags;
    fill_f32(a, N);
    __asm__ volatile("csrw fflags, zero");
    for (size_t i = 0, vl; i < N; i += vl) {
        vl = __riscv_vsetvl_e32m1(N - i);
        vfloat32m1_t x = __riscv_vle32_v_f32m1(a + i, vl);
        __riscv_vse32_v_i32m1(i32 + i, __riscv_vfcvt_x_f_v_i32m1(__riscv_vfmul_vf_f32m1(x, 1000.0f, vl), vl), vl);
        __riscv_vse64_v_f64m2(d + i, __riscv_vfwcvt_f_f_v_f64m2(x, vl), vl);
        __riscv_vse16_v_i16mf2(i16 + i, __riscv_vfncvt_x_f_w_i16mf2_rm(x, __RISCV_FRM_RDN, vl), vl);
    }
    __asm__ volatile("frflags %0" : "=r"(flags));
    size_t at = 0;
    put(out, &at, i32, sizeof i32);
    put(out, &at, i16, sizeof i16);
    put(out, &at, d, sizeof d);
    put(out, &at, &flags, sizeof flags);
}

#ifdef WITH_ZVFH
/* Zvfh: binary16 arithmetic and the conversions clang emits for _Float16 loops. */
static void half_class(uint8_t *out) {
    _Float16 a[N], b[N], r[N * 2];
    float wide[N];
    fill_u8((uint8_t *)a, sizeof a);
    fill_u8((uint8_t *)b, sizeof b);
    for (int i = 0; i < N; i++) { /* no NaNs or infinities: numpy checks this one */
        uint16_t x, y;
        __builtin_memcpy(&x, &a[i], 2);
        __builtin_memcpy(&y, &b[i], 2);
        x &= 0xBBFF;
        y &= 0xBBFF;
        __builtin_memcpy(&a[i], &x, 2);
        __builtin_memcpy(&b[i], &y, 2);
    }
    for (size_t i = 0, vl; i < N; i += vl) {
        vl = __riscv_vsetvl_e16m1(N - i);
        vfloat16m1_t x = __riscv_vle16_v_f16m1(a + i, vl), y = __riscv_vle16_v_f16m1(b + i, vl);
        __riscv_vse16_v_f16m1(r + i, __riscv_vfadd_vv_f16m1(x, y, vl), vl);
        __riscv_vse16_v_f16m1(r + N + i, __riscv_vfmul_vv_f16m1(x, y, vl), vl);
        __riscv_vse32_v_f32m2(wide + i, __riscv_vfwcvt_f_f_v_f32m2(x, vl), vl);
    }
    size_t at = 0;
    put(out, &at, a, sizeof a);
    put(out, &at, b, sizeof b);
    put(out, &at, r, sizeof r);
    put(out, &at, wide, sizeof wide);
}
#endif

void intrinsics(uint8_t *out) {
    void (*const classes[])(uint8_t *) = {integer_class, widening_class, fixed_point_class, mask_class,
                                          reduction_class, permutation_class, memory_class, float_class,
                                          conversion_class,
#ifdef WITH_ZVFH
                                          half_class,
#endif
    };
    for (size_t c = 0; c < sizeof classes / sizeof classes[0]; c++)
        classes[c](out + c * CLASS_BYTES);
}
