/* What C++ code needs of its runtime beyond the C library, for a thread: operator new and
 * delete over malloc and free, the guards of function-local statics (safe for all the
 * thread's cores) and the pure virtual call. C++ threads are compiled without exceptions
 * and without RTTI (sim/build/thread.py), so no more of a C++ runtime is linked; see
 * docs/c-library.md. Written in C, with the Itanium ABI's names. */
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "kmx.h"

static void* kmx__new(size_t size) {
    void* p = malloc(size ? size : 1);
    if (!p) /* (std::bad_alloc, with no exceptions to throw it) */
        kmx__call(KMX_CALL_ASSERT, (uint64_t)"operator new: the thread's heap is used up", (uint64_t)__FILE__,
                  __LINE__);
    return p;
}

static void* kmx__new_aligned(size_t size, size_t alignment) {
    void* p = aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
    if (!p)
        kmx__call(KMX_CALL_ASSERT, (uint64_t)"operator new: the thread's heap is used up", (uint64_t)__FILE__,
                  __LINE__);
    return p;
}

void* _Znwm(size_t size) { return kmx__new(size); }                                /* new */
void* _Znam(size_t size) { return kmx__new(size); }                                /* new[] */
void* _ZnwmRKSt9nothrow_t(size_t size, const void* t) { (void)t; return malloc(size ? size : 1); }
void* _ZnamRKSt9nothrow_t(size_t size, const void* t) { (void)t; return malloc(size ? size : 1); }
void* _ZnwmSt11align_val_t(size_t size, size_t a) { return kmx__new_aligned(size, a); }
void* _ZnamSt11align_val_t(size_t size, size_t a) { return kmx__new_aligned(size, a); }
void _ZdlPv(void* p) { free(p); }                                                  /* delete */
void _ZdaPv(void* p) { free(p); }                                                  /* delete[] */
void _ZdlPvm(void* p, size_t size) { (void)size; free(p); }
void _ZdaPvm(void* p, size_t size) { (void)size; free(p); }
void _ZdlPvSt11align_val_t(void* p, size_t a) { (void)a; free(p); }
void _ZdaPvSt11align_val_t(void* p, size_t a) { (void)a; free(p); }
void _ZdlPvmSt11align_val_t(void* p, size_t size, size_t a) { (void)size; (void)a; free(p); }
void _ZdaPvmSt11align_val_t(void* p, size_t size, size_t a) { (void)size; (void)a; free(p); }
void _ZdlPvRKSt9nothrow_t(void* p, const void* t) { (void)t; free(p); }
void _ZdaPvRKSt9nothrow_t(void* p, const void* t) { (void)t; free(p); }

/* A function-local static's guard: byte 0 says it is made, byte 1 that a core makes it
 * now (the others wait, giving their turns). */
int __cxa_guard_acquire(uint64_t* guard) {
    uint8_t* bytes = (uint8_t*)guard;
    for (;;) {
        if (__atomic_load_n(&bytes[0], __ATOMIC_ACQUIRE)) return 0;
        uint8_t idle = 0;
        if (__atomic_compare_exchange_n(&bytes[1], &idle, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            if (__atomic_load_n(&bytes[0], __ATOMIC_ACQUIRE)) { /* made while we looked */
                __atomic_store_n(&bytes[1], 0, __ATOMIC_RELEASE);
                return 0;
            }
            return 1;
        }
        sched_yield();
    }
}

void __cxa_guard_release(uint64_t* guard) {
    uint8_t* bytes = (uint8_t*)guard;
    __atomic_store_n(&bytes[0], 1, __ATOMIC_RELEASE);
    __atomic_store_n(&bytes[1], 0, __ATOMIC_RELEASE);
}

void __cxa_guard_abort(uint64_t* guard) { __atomic_store_n(&((uint8_t*)guard)[1], 0, __ATOMIC_RELEASE); }

void __cxa_pure_virtual(void) {
    kmx__call(KMX_CALL_ASSERT, (uint64_t)"a pure virtual function was called", (uint64_t)__FILE__, __LINE__);
    for (;;) {
    }
}
