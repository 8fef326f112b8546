/* vs_run_v(state, code): as run.S's vs_run, with the vector unit: v0-v31, vl, vtype and
 * vcsr in, and out. While the code runs s1 holds the state, s2 the code, s3 the state's
 * block of memory (the base of the vector loads and stores) and s4 a stride of 8.
 * VState: x at 0, f at 256, fcsr at 512, vl at 520, vtype at 528, v at 536, memory at 2584.
 * The word at 512 is fcsr (8 bits) with vcsr (vxsat, vxrm) above it, from bit 8. */
    .text
    .option arch, +v
    .globl vs_run_v
    .p2align 2
vs_run_v:
    addi sp, sp, -48
    sd ra, 0(sp)
    sd s1, 8(sp)
    sd s2, 16(sp)
    sd s3, 24(sp)
    sd s4, 32(sp)
    mv s1, a0
    mv s2, a1
    addi s3, s1, 2047
    addi s3, s3, 537        /* 2584 */
    li s4, 8
    addi t0, s1, 536
    vl8r.v v0, (t0)
    addi t0, t0, 512
    vl8r.v v8, (t0)
    addi t0, t0, 512
    vl8r.v v16, (t0)
    addi t0, t0, 512
    vl8r.v v24, (t0)
    ld t0, 520(s1)
    ld t1, 528(s1)
    vsetvl x0, t0, t1
    .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    fld f\n, (256 + 8 * \n)(s1)
    .endr
    ld t0, 512(s1)
    fscsr t0
    srli t0, t0, 8
    csrw vcsr, t0
    .irp n, 5,6,7,10,11,12,13,14,15,16,17,28,29,30,31
    ld x\n, (8 * \n)(s1)
    .endr
    jalr ra, 0(s2)
    .irp n, 5,6,7,10,11,12,13,14,15,16,17,28,29,30,31
    sd x\n, (8 * \n)(s1)
    .endr
    .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    fsd f\n, (256 + 8 * \n)(s1)
    .endr
    frcsr t0
    csrr t1, vcsr
    slli t1, t1, 8
    or t0, t0, t1
    sd t0, 512(s1)
    csrr t0, vl
    sd t0, 520(s1)
    csrr t0, vtype
    sd t0, 528(s1)
    addi t0, s1, 536
    vs8r.v v0, (t0)
    addi t0, t0, 512
    vs8r.v v8, (t0)
    addi t0, t0, 512
    vs8r.v v16, (t0)
    addi t0, t0, 512
    vs8r.v v24, (t0)
    ld ra, 0(sp)
    ld s1, 8(sp)
    ld s2, 16(sp)
    ld s3, 24(sp)
    ld s4, 32(sp)
    addi sp, sp, 48
    ret
