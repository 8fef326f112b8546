/* A thread built with another compiler (KMX_CC) links this in place of the C library
 * (which comes with the default compiler, kmx_runtime/process.c): the start of each core,
 * and the little of libc that compilers call on their own, struct copies and loops that
 * the optimiser turns into memcpy/memset/memmove/memcmp. `no_builtin` keeps the optimiser from
 * turning these loops back into calls to themselves. */
#include <stddef.h>
#include <stdint.h>

#define KMX_LIBC __attribute__((no_builtin, used))

int kmx_main(int core);

/* Entered from start.S; no C library to start. */
int kmx__start_core(int core, void* start, int cores) {
    (void)start;
    (void)cores;
    return kmx_main(core);
}

KMX_LIBC void* memcpy(void* restrict dst, const void* restrict src, size_t n) {
    unsigned char* d = dst;
    const unsigned char* s = src;
    if ((((uintptr_t)d | (uintptr_t)s) & 7) == 0) {
        for (; n >= 8; n -= 8, d += 8, s += 8) *(uint64_t*)d = *(const uint64_t*)s;
    }
    while (n--) *d++ = *s++;
    return dst;
}

KMX_LIBC void* memmove(void* dst, const void* src, size_t n) {
    unsigned char* d = dst;
    const unsigned char* s = src;
    if (d == s || n == 0) return dst;
    if (d < s || d >= s + n) return memcpy(dst, src, n);
    while (n--) d[n] = s[n];
    return dst;
}

KMX_LIBC void* memset(void* dst, int c, size_t n) {
    unsigned char* d = dst;
    while (n--) *d++ = (unsigned char)c;
    return dst;
}

KMX_LIBC int memcmp(const void* a, const void* b, size_t n) {
    const unsigned char* x = a;
    const unsigned char* y = b;
    for (; n; n--, x++, y++) {
        if (*x != *y) return *x < *y ? -1 : 1;
    }
    return 0;
}

KMX_LIBC size_t strlen(const char* s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}
