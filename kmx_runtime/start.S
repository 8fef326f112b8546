/* Start code: the simulator enters here on each core with a0 = the core's number, a1 = what
 * it wrote at the top of the core's stack (argc, argv, envp and the aux vector, as Linux
 * does), a2 = how many cores run the thread, and sp = just below that. kmx__start_core
 * (process.c) starts the C library and returns kmx_main's value, the core's code.
 * The simulator runs each core until it reaches kmx__halt, where the exit call goes on. */
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
    j kmx__halt
    .size kmx__start, . - kmx__start

    /* Where a run ends: the engine's `until`. On a page of its own (kmx.ld), with no other
     * code: Unicorn drops the translations at `until` as each run starts, and searches
     * that page's translations to do it, which costs every run as much as the page holds. */
    .section .kmx.halt, "ax"
    .globl kmx__halt
kmx__halt:
    j kmx__halt

    /* A linker that is told the entry is _start finds it here, unless the C library's
     * own Linux start code (which never runs) has one. */
    .weak _start
    .set _start, kmx__start
