/* Start code: the simulator enters here on each core with a0 = the core's number, a1 = what
 * it wrote at the top of the core's stack (argc, argv, envp and the aux vector, as Linux
 * does), a2 = how many cores run the thread, and sp = just below that. kmx__start_core
 * (process.c) starts the C library and returns kmx_main's value, the core's code.
 * The simulator runs each core until it reaches kmx__halt, right after the exit call. */
#include "kmx.h"

    .section .text.start, "ax"
    .globl kmx__start
    .type kmx__start, @function
kmx__start:
    li ra, 0              /* a backtrace ends here */
    li s0, 0
    call kmx__start_core
    li a7, KMX_CALL_EXIT
    ecall
    .globl kmx__halt
kmx__halt:
    j kmx__halt
    .size kmx__start, . - kmx__start

    /* A linker that is told the entry is _start finds it here, unless the C library's
     * own Linux start code (which never runs) has one. */
    .weak _start
    .set _start, kmx__start
