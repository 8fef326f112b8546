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

/* The index of the last of VALUES (sorted) at most KEY, or -1. */
int64_t sorted_floor(const uint64_t *values, int64_t count, uint64_t key) {
    int64_t low = 0, high = count; /* the first above KEY is in [low, high] */
    while (low < high) {
        int64_t middle = (low + high) / 2;
        if (values[middle] <= key)
            low = middle + 1;
        else
            high = middle;
    }
    return low - 1;
}

int64_t sorted_find(const uint64_t *values, int64_t count, uint64_t key) {
    int64_t at = sorted_floor(values, count, key);
    return at >= 0 && values[at] == key ? at : -1;
}
