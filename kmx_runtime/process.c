/* The C library's start on every core: the thread is a process of the C library (musl,
 * as the ziglang package builds it for the card), and its cores are that process's
 * threads.
 *
 * This file is compiled against musl's own internal headers (sim/build/thread.py), as a
 * part of musl is: it does for the cores what musl's __libc_start_main does for a
 * process's first thread and pthread_create for each further one, without the clone
 * system call (the simulator starts every core itself).
 *
 * Core 0 runs __init_libc (the environment and aux vector the simulator wrote at the top
 * of its stack, the thread-local storage, core 0's thread pointer) and the constructors,
 * makes stdout unbuffered (so that each core's printf reaches the console as it happens,
 * under its own core's name, as kmx_print does) and, when the thread has several cores,
 * turns the C library's locks on (stdio's and the rest). Then it lets the other cores go
 * on: each makes its own thread control block and thread-local storage on its own stack
 * (musl's __copy_tls) and joins the list of threads. Then every core runs kmx_main. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pthread_impl.h"
#include "stdio_impl.h"
#include "libc.h"
#include "atomic.h"
#include "syscall.h"
#include "kmx.h"

/* (musl's own, not in its internal headers) */
hidden void __tl_lock(void);
hidden void __tl_unlock(void);
extern hidden void* __pthread_tsd_main[];

int kmx_main(int core);

static volatile int kmx__library_ready;
static pthread_t kmx__first; /* core 0's thread */

static void kmx__lock_file(FILE* f) {
    if (f && f->lock < 0) f->lock = 0;
}

/* Core 0: what __libc_start_main does before main. */
static void kmx__start_library(char** envp, int cores) {
    __init_libc(envp, "kmx_main");
    setvbuf(stdout, 0, _IONBF, 0); /* (before the constructors, which may print) */
    __libc_start_init();
    kmx__first = __pthread_self();
    if (cores > 1) {
        /* What pthread_create does when a process makes its first thread. */
        for (FILE* f = *__ofl_lock(); f; f = f->next) kmx__lock_file(f); /* (a constructor's) */
        __ofl_unlock();
        kmx__lock_file(__stdin_used);
        kmx__lock_file(__stdout_used);
        kmx__lock_file(__stderr_used);
        kmx__first->tsd = (void**)__pthread_tsd_main;
        libc.threaded = 1;
        libc.threads_minus_1 = cores - 1;
        libc.need_locks = 1;
    }
    a_store(&kmx__library_ready, 1);
}

/* Cores 1..3: a thread of the process, as pthread_create makes one, on the core's own
 * stack: MEMORY holds libc.tls_size bytes for the control block and the thread-local
 * storage, then the thread-specific data. */
static void kmx__join_library(unsigned char* memory) {
    pthread_t self = __copy_tls(memory);
    self->self = self;
    self->tsd = (void**)(memory + libc.tls_size);
    self->locale = &libc.global_locale;
    self->detach_state = DT_JOINABLE;
    self->robust_list.head = &self->robust_list.head;
    self->canary = kmx__first->canary;
    self->sysinfo = kmx__first->sysinfo;
    self->tid = __syscall(SYS_gettid);
    __set_thread_area(TP_ADJ(self));
    __tl_lock();
    self->next = kmx__first->next;
    self->prev = kmx__first;
    self->next->prev = self;
    self->prev->next = self;
    __tl_unlock();
}

/* kmx_main begins with the vector unit as after reset: vtype illegal (vill) and vl 0, so
 * that a vector instruction before the thread's first vsetvli is a fault that says so,
 * whatever vector code the C library's start ran (its memset and memcpy are, in the
 * X280's build of it: KMX_LIBRARY_VECTORS, from sim/build/thread.py). */
static inline void kmx__reset_vector_unit(void) {
#if KMX_LIBRARY_VECTORS
    __asm__ volatile("vsetvl zero, zero, %0" : : "r"(1ull << 63));
#endif
}

/* Entered from start.S with the core's number, the start of what the simulator wrote at
 * the top of its stack (argc, argv, envp, the aux vector, as Linux does) and how many
 * cores run the thread. Returns kmx_main's value. */
hidden int kmx__start_core(int core, uintptr_t* start, int cores) {
    char** envp = (char**)(start + 1 + start[0] + 1);
    if (core == 0) {
        kmx__start_library(envp, cores);
    } else {
        while (!a_cas(&kmx__library_ready, 1, 1)) __syscall(SYS_sched_yield);
        unsigned char* memory = __builtin_alloca(libc.tls_size + __pthread_tsd_size);
        memset(memory, 0, libc.tls_size + __pthread_tsd_size);
        kmx__join_library(memory);
    }
    /* Every core enters kmx_main at once, as if the library's start took no time: which
     * core gets there first is the schedule's, not the start's. */
    if (cores > 1) kmx_barrier();
    kmx__reset_vector_unit();
    return kmx_main(core);
}

/* A failed assert is a fault of the core (km.ThreadFault), which names the expression and
 * the source line; musl's own would print to stderr and abort. */
_Noreturn void __assert_fail(const char* expression, const char* file, int line, const char* function) {
    (void)function; /* (the fault's backtrace names it) */
    kmx__call(KMX_CALL_ASSERT, (uint64_t)expression, (uint64_t)file, (uint64_t)line);
    for (;;) {
    }
}

/* The C library's Linux start code (rcrt1, linked by the compiler for any static program)
 * calls main; a thread's cores start at kmx__start instead, so nothing calls this. It is
 * weak: a thread may have a main of its own, which is an ordinary function. */
weak int main(void) {
    kmx__call(KMX_CALL_ASSERT, (uint64_t)"main is not a thread's entry point: kmx_main is",
              (uint64_t)__FILE__, __LINE__);
    return 1;
}
