/* kmx_cache.h: the X280 tile's cache registers, as firmware outside komorebi uses them.
 *
 * kmx_flush(id) and kmx_invalidate(id) keep a whole region in step with DRAM in one call;
 * use them. Code written for the card's X280s outside komorebi (Tenstorrent's L2CPU
 * firmware, tt-metal's tools/l2cpu) flushes a line at a time through memory-mapped
 * registers instead. This header names them as tt-isa-documentation does
 * (BlackholeA0/L2CPUTile/Caches.md), so that such code runs here as on the card.
 *
 *   CCACHE0_FLUSH64    a 64-bit store of a physical address flushes that line from the
 *                      tile's caches (L1, L2 and L3): written back to DRAM if dirty, then
 *                      dropped, so the next access reads DRAM. A flush of a clean line is
 *                      how firmware invalidates it.
 *   CCACHE0_FLUSH32    the same, a 32-bit store of the address shifted right by 4: so
 *                      it reaches only 36-bit physical addresses, not the cached window
 *                      of DRAM at 0x4000_3000_0000 (a 64-bit thread uses FLUSH64).
 *   PL2CACHE0_CFLUSH64 (hart H) flushes a line from H's own L2 to the L3: the line is still
 *                      in the tile's cache, so DRAM does not change.
 *   PL2CACHE0_FLUSHCOUNT (hart H) the L2 flushes still pending: 0 in the simulator.
 *
 * A thread's addresses are physical ones (regions are in the cached window of the
 * cluster's DRAM, 0x4000_3000_0000 on), so a region's pointer is what the registers take.
 * Any other access to these register blocks is a fault that names the register, and so
 * is a line flush of an address that is no memory of the thread's (it says what it named). The
 * cflush.d.l1 and cdiscard.d.l1 instructions are illegal, as measured on a P300 (they are
 * M-mode instructions): use the registers.
 */
#ifndef KMX_CACHE_H
#define KMX_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define KMX_CACHE_LINE 64

#define CCACHE0_BASE 0x02010000ull
#define CCACHE0_FLUSH64 (CCACHE0_BASE + 0x200)
#define CCACHE0_FLUSH32 (CCACHE0_BASE + 0x240)
#define PL2CACHE0_BASE(hart) (0x10104000ull + (uint64_t)(hart) * 0x4000)
#define PL2CACHE0_CFLUSH64(hart) (PL2CACHE0_BASE(hart) + 0x200)
#define PL2CACHE0_FLUSHCOUNT(hart) (PL2CACHE0_BASE(hart) + 0x208)

/* (Functions with frames of their own, as kmx.h's calls: a finding or a fault in one names
 * the caller's line.) */
#define KMX_CACHE_API static __attribute__((noinline, unused))

/* Flush the line holding ADDRESS from the tile's caches, as freedom-metal's
 * sifive_ccache0_flush does: the fences order it after the loads and stores before it and
 * before those after it. */
KMX_CACHE_API void kmx_cache_flush_line(const volatile void *address) {
    __asm__ volatile("fence rw, io" ::: "memory");
    *(volatile uint64_t *)CCACHE0_FLUSH64 = (uint64_t)(uintptr_t)address;
    __asm__ volatile("fence io, rw" ::: "memory");
}

/* Flush every line of [START, START + BYTES) from the tile's caches. */
KMX_CACHE_API void kmx_cache_flush_range(const volatile void *start, size_t bytes) {
    uintptr_t line = (uintptr_t)start & ~(uintptr_t)(KMX_CACHE_LINE - 1);
    uintptr_t end = (uintptr_t)start + bytes;
    __asm__ volatile("fence rw, io" ::: "memory");
    for (; line < end; line += KMX_CACHE_LINE)
        *(volatile uint64_t *)CCACHE0_FLUSH64 = (uint64_t)line;
    __asm__ volatile("fence io, rw" ::: "memory");
}

#endif
