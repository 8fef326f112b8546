/* code.c: the thread's code as data. The loader changes the engine's copy of the code (a
 * Zba or Zbb instruction becomes a jump to a stub, a fence.i or a counter's read becomes
 * an instruction the engine traps on: sim/isa/rewrite.py, stand_in.py), so that the engine
 * runs it fast and as the X280 would. A thread that reads its own code (a checksum, a
 * copy of a function to run elsewhere after fence.i) must see what the compiler wrote:
 * a copied jump to a stub jumps nowhere. So a load of a changed page's bytes reads them
 * as written (fill.c maps such a page at its watch alias for loads and stores, reserve.c's
 * span device calls here; the interpreter too), and a store writes both copies: the
 * engine's takes the thread's bytes, and an instruction the loader changed that the store
 * touches goes back to what the thread's memory holds, which then runs as it is (in C, or
 * as the engine's, after the thread's fence.i: a Zba or Zbb instruction in C; a fence.i,
 * a counter's read, an lr or an sc written there is the engine's own, as in code the thread
 * writes elsewhere at run time). The stub area is the loader's: a store there is kept for
 * the thread's loads, and the stubs run on. */
#include "hooks.h"

int original_changed(const Original *o, uint64_t address) {
    return o && address >= o->base && address < o->end && o->changed[(address - o->base) / PAGE];
}

void original_read(const Original *o, uint64_t address, uint64_t size, uint8_t *out) {
    __builtin_memcpy(out, o->bytes + (address - o->base), size);
}

void original_write(Original *o, uint64_t address, uint64_t size, const uint8_t *in) {
    uint64_t end = address + size;
    __builtin_memcpy(o->bytes + (address - o->base), in, size);
    for (uint64_t at = address; at < end; at++) /* (the stub area's bytes stay the stubs) */
        if (at < o->stubs || at >= o->stubs_end)
            o->image[at - o->base] = in[at - address];
    /* each changed instruction the store touches: as the thread's memory holds it now */
    int64_t i = o->slot_count ? sorted_floor(o->slots, o->slot_count, end - 1) : -1;
    for (; i >= 0 && o->slots[i] + 4 > address; i--)
        __builtin_memcpy(o->image + (o->slots[i] - o->base), o->bytes + (o->slots[i] - o->base), 4);
}
