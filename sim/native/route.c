/* route.c: what an address of a core's map is, for both ways a core reaches memory: the
 * engine's TLB fill (fill.c, fill_page: a virtual address, which the map translates as
 * itself but for the stubs' scratch page) and the interpreter's host lookup (isa.c,
 * host_miss: the address the engine's TLB translated it to). One function decides, for
 * either:
 *
 *   ROUTE_SCRATCH   the stubs' scratch page (sim/isa/rewrite.py): data only
 *   ROUTE_DEVICE    the cache's registers (watch.c): data only, every access to watch.c
 *   ROUTE_UNCACHED  the uncached alias (sim/layout.py) of a span: of a region's, a device
 *                   whose accesses go to watch.c; of another span, that memory uncached
 *   ROUTE_WATCHED   a watched page, mapped again at its address plus WATCH_ALIAS (only
 *                   the engine's TLB gives such an address; fill_page refuses it)
 *   ROUTE_SPAN      an image, stack or region span, at its own address
 *   ROUTE_NONE      nothing the core has: refused
 *
 * route.span is the span the address belongs to and route.cached the address in that
 * span's own (cached) window, for the kinds that have one.
 */
#include "hooks.h"

Route route(Core *core, uint64_t address, uint64_t scratch) {
    Route r = {ROUTE_NONE, 0, address};
    if ((address & ~(uint64_t)(PAGE - 1)) == scratch && core->table.scratch_physical) {
        r.kind = ROUTE_SCRATCH;
        return r;
    }
    if (device_holds(address)) {
        r.kind = ROUTE_DEVICE;
        return r;
    }
    if (address >= WATCH_ALIAS) {
        r.cached = address - WATCH_ALIAS;
        r.kind = ROUTE_WATCHED;
    } else if (address >= UNCACHED_LOW && address < UNCACHED_HIGH) {
        r.cached = address + UNCACHED_OFFSET;
        r.kind = ROUTE_UNCACHED;
    } else {
        r.kind = ROUTE_SPAN;
    }
    r.span = find_span(core, r.cached);
    if (!r.span)
        r.kind = ROUTE_NONE;
    return r;
}
