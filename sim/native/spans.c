/* spans.c: which span of a core's address space an address is in, and a search of a sorted array (hooks.h). */
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

int64_t sorted_find(const uint64_t *values, int64_t count, uint64_t key) {
    int64_t low = 0, high = count;
    while (low < high) {
        int64_t middle = (low + high) / 2;
        if (values[middle] < key)
            low = middle + 1;
        else
            high = middle;
    }
    return low < count && values[low] == key ? low : -1;
}
