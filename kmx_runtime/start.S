/* Start code: the simulator enters here on each core with a0 = the core's number and
 * sp = the top of that core's stack. kmx_main's return value is the core's code.
 * The simulator runs each core until it reaches kmx__halt, right after the exit call. */
#include "kmx.h"

    .section .text.start, "ax"
    .globl _start
    .type _start, @function
_start:
    li ra, 0              /* a backtrace ends here */
    li s0, 0
    call kmx_main
    li a7, KMX_CALL_EXIT
    ecall
    .globl kmx__halt
kmx__halt:
    j kmx__halt
    .size _start, . - _start
