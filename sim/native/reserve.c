/* reserve.c: lr and sc, across turns. The engine's own lr/sc keep a reservation of one
 * address and, at the sc, compare the memory's value with what the lr read: a store by
 * another core between the two of the same value (A-B-A: 99, then 5 back) went unseen, and
 * the sc succeeded. The A extension: "The SC must fail if a store to the reservation set
 * from another hart can be observed to occur between the LR and SC."
 *
 * So lr and sc run here (the loader puts a stand-in the engine traps on in their place:
 * sim/isa/stand_in.py; isa.c runs it), and a core's reservation is ours: the line, 64
 * bytes (the reservation set; the card's documents do not say its size, and a cache-based
 * core keeps it per line), that its last lr read. Another participant can store only at a
 * turn's switch: as each turn ends, a core that holds a new reservation makes the other
 * cores' accesses to its page come through the fill hook again, which maps the page at
 * its watch alias for them (a device: watch.c for a region's page, span_device_* below for
 * the image's, a stack's or the heap's), and a store there that touches the line clears
 * the reservation. So does a Tensix stand-in's noc.write and another core's uncached store
 * to the line (reservations_stored, BY -1 or the storing core). A turn switch alone clears
 * nothing, nor does the holder's own store; its sc clears it, as any sc does. A reservation
 * the holder has run LIFETIME instructions past is dropped as its turn ends: one that an lr
 * left behind (a failed compare-and-swap jumps past its sc) would keep the other cores'
 * accesses to its page watched for ever. The A extension promises an sc success only to a
 * constrained lr/sc loop (16 instructions at most, lr to sc), and lets an implementation
 * drop a reservation for any other reason; this one keeps it long enough for an lr, a wait
 * of a few turns for another core, and the sc.
 *
 * The same device serves the pages of code the loader changed (code.c): a load there reads
 * the code as the compiler wrote it, a store writes it so. */
#include "hooks.h"

#define LIFETIME 65536 /* the holder's instructions a reservation lasts at most (a choice: see the top) */

/* CORE's lr of ADDRESS: the line is its reservation now. */
void reserve(Core *core, uint64_t address) {
    core->reserved = address / LINE + 1;
    core->reserved_at = core->turn.cycles;
}

/* CORE's sc of ADDRESS: whether its reservation holds that line; either way, it is gone. */
int reservation_held(Core *core, uint64_t address) {
    int held = core->reserved && core->reserved == address / LINE + 1;
    core->reserved = 0;
    return held;
}

/* CORE's turn ended: a reservation the other cores' TLBs do not know of yet makes their
 * accesses to its page come through the fill hook again, to be watched there; one they
 * knew of and that is gone lets them map the page plainly again. */
void reservation_turn_ended(Core *core) {
    if (core->reserved && core->turn.cycles - core->reserved_at >= LIFETIME)
        core->reserved = 0;
    if (core->reserved == core->announced)
        return;
    core->announced = core->reserved;
    Reservations *r = core->reservations;
    if (!r)
        return;
    for (int i = 0; i < RESERVING_CORES; i++) {
        Core *other = r->cores[i];
        if (other && other != core) {
            other->engine.ctl(other->engine.uc, UC_CTL_TLB_FLUSH_WRITE);
            other->isa.page_generation++; /* (its interpreter's pages too) */
        }
    }
}

/* Whether another core than CORE holds a reservation on a line of PAGE (an address). */
int reserved_elsewhere(const Core *core, uint64_t page) {
    const Reservations *r = core->reservations;
    if (!r)
        return 0;
    for (int i = 0; i < RESERVING_CORES; i++) {
        const Core *other = r->cores[i];
        if (other && other != core && other->reserved && (other->reserved - 1) * LINE / PAGE == page / PAGE)
            return 1;
    }
    return 0;
}

/* SIZE bytes at ADDRESS (a cached-window address) were written by core BY (-1: past the
 * cores, a stand-in's noc.write): every other core's reservation of a line they touch ends
 * (and its TLBs' knowledge of it: a new one is announced again). */
void reservations_stored(Reservations *r, int64_t by, uint64_t address, uint64_t size) {
    if (!r || !size)
        return;
    uint64_t first = address / LINE + 1, last = (address + size - 1) / LINE + 1;
    for (int i = 0; i < RESERVING_CORES; i++) {
        Core *holder = r->cores[i];
        if (i == by || !holder || !holder->reserved || holder->reserved < first || holder->reserved > last)
            continue;
        holder->reserved = holder->announced = 0;
    }
}

/* -- an image's, a stack's or the heap's page while another core holds a reservation on it -- */

/* (and the loader's changed pages of code, read and written as the thread wrote them: code.c) */

uint64_t span_load(Core *core, uint8_t *host, uint64_t base, uint64_t offset, unsigned size) {
    uint64_t value = 0;
    if (size > 8)
        size = 8;
    if (original_changed(core->original, base + offset))
        original_read(core->original, base + offset, size, (uint8_t *)&value);
    else
        __builtin_memcpy(&value, host + offset, size);
    return value;
}

void span_store(Core *core, uint8_t *host, uint64_t base, uint64_t offset, unsigned size, uint64_t value) {
    if (size > 8)
        size = 8;
    reservations_stored(core->reservations, core->engine.core, base + offset, size);
    if (original_changed(core->original, base + offset))
        original_write(core->original, base + offset, size, (const uint8_t *)&value);
    else
        __builtin_memcpy(host + offset, &value, size);
}

uint64_t span_device_read(void *uc, uint64_t offset, unsigned size, void *data) {
    (void)uc;
    SpanWatch *w = (SpanWatch *)data;
    return span_load(w->core, w->host, w->base, offset, size);
}

void span_device_write(void *uc, uint64_t offset, unsigned size, uint64_t value, void *data) {
    (void)uc;
    SpanWatch *w = (SpanWatch *)data;
    span_store(w->core, w->host, w->base, offset, size, value);
}
