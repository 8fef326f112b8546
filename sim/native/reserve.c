/* reserve.c: lr/sc across turns. The engine keeps a core's reservation (the address its
 * last lr read) in its own state and checks only that address at sc, then the value: so a
 * store by another core between the two, of the same value (A-B-A), went unseen, and the
 * sc succeeded. The A extension: "The SC must fail if a store to the reservation set from
 * another hart can be observed to occur between the LR and SC."
 *
 * Between a core's lr and its sc, another participant can store only at a turn's switch.
 * So as each turn ends, the core's reservation is read from its engine (a context save:
 * the engine keeps it nowhere else we can read) and kept here, a line (the reservation
 * set, 64 bytes). While a core holds one, every other core reaches the page of that line
 * an access at a time (fill.c maps it at its watch alias, a device: watch.c for a region's
 * page, span_device_* below for the image's, a stack's or the heap's), and a store there
 * that touches the line clears the reservation in the holder's engine. So does a Tensix
 * stand-in's noc.write and an uncached store to the line (reservations_stored, BY -1 or
 * the storing core). A turn switch alone clears nothing.
 *
 * The same device serves the pages of code the loader changed (code.c): a load there reads
 * the code as the compiler wrote it, a store writes it so. */
#include "hooks.h"

#define NO_RESERVATION (~0ull)

static uint64_t *reservation_in(const Core *core) {
    return (uint64_t *)(core->engine.context + core->engine.load_res_at);
}

/* CORE's turn ended: keep the line its lr reserved. A new one makes every other core's
 * accesses to its page come through the fill hook again, to be watched there. */
void reservation_turn_ended(Core *core) {
    Reservations *r = core->reservations;
    if (!r || !core->engine.context)
        return;
    void *uc = core->engine.uc;
    core->engine.context_save(uc, core->engine.context);
    uint64_t held = *reservation_in(core), line = held == NO_RESERVATION ? 0 : held / LINE + 1;
    int64_t me = core->engine.core;
    if (r->lines[me] == line)
        return;
    r->lines[me] = line;
    if (!line)
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
    for (int i = 0; i < RESERVING_CORES; i++)
        if (r->lines[i] && i != core->engine.core && (r->lines[i] - 1) * LINE / PAGE == page / PAGE)
            return 1;
    return 0;
}

/* SIZE bytes at ADDRESS (a cached-window address) were written by core BY (-1: past the
 * cores, a stand-in's noc.write): every other core's reservation of a line they touch is
 * cleared in its engine, which is not running (the cores of a cluster take turns). */
void reservations_stored(Reservations *r, int64_t by, uint64_t address, uint64_t size) {
    if (!r || !size)
        return;
    uint64_t first = address / LINE + 1, last = (address + size - 1) / LINE + 1;
    for (int i = 0; i < RESERVING_CORES; i++) {
        Core *holder = r->cores[i];
        if (i == by || !r->lines[i] || r->lines[i] < first || r->lines[i] > last || !holder || !holder->engine.context)
            continue;
        void *uc = holder->engine.uc;
        holder->engine.context_save(uc, holder->engine.context);
        *reservation_in(holder) = NO_RESERVATION;
        holder->engine.context_restore(uc, holder->engine.context);
        r->lines[i] = 0;
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
