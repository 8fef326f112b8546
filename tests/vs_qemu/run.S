/* vs_run(state, code): run CODE (a function: it ends with ret) on the registers in STATE,
 * and store them back. The same routine runs under qemu-riscv64 (main.c) and in the
 * simulator (thread.c), so both start from the same registers and fcsr.
 *
 * State: x[32] at 0 (only t0-t2, a0-a7, t3-t6 are loaded and stored: the code may use
 * those), f[32] at 256, fcsr at 512. s1 holds the state and s2 the code while it runs. */
    .text
    .globl vs_run
    .p2align 2
vs_run:
    addi sp, sp, -32
    sd ra, 0(sp)
    sd s1, 8(sp)
    sd s2, 16(sp)
    mv s1, a0
    mv s2, a1
    .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    fld f\n, (256 + 8 * \n)(s1)
    .endr
    ld t0, 512(s1)
    fscsr t0
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
    sd t0, 512(s1)
    ld ra, 0(sp)
    ld s1, 8(sp)
    ld s2, 16(sp)
    addi sp, sp, 32
    ret
