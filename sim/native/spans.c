/* spans.c: which span of a core's address space an address is in (hooks.h). */
#include "hooks.h"

Span *find_span(Core *core, uint64_t address) {
    int64_t lo = 0, hi = core->table.count - 1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        Span *span = &core->table.spans[mid];
        if (address < span->base)
            hi = mid - 1;
        else if (address >= span->end)
            lo = mid + 1;
        else
            return span;
    }
    return 0;
}
