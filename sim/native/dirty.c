/* dirty.c: the lines of VIEW (COUNT lines of 64 bytes) that differ from CLEAN (0: zeros):
 * their numbers, plus FIRST, go to OUT. Returns how many. One pass, no temporaries: a
 * flush of a big region reads it once at memory speed (sim/cache/model.py, _dirty_in). */
#include "hooks.h"

int64_t dirty_lines(const uint64_t *view, const uint64_t *clean, uint64_t count, int64_t first, int64_t *out) {
    int64_t found = 0;
    for (uint64_t line = 0; line < count; line++) {
        const uint64_t *v = view + line * 8;
        uint64_t differs = 0;
        if (clean) {
            const uint64_t *c = clean + line * 8;
            for (int word = 0; word < 8; word++)
                differs |= v[word] ^ c[word];
        } else {
            for (int word = 0; word < 8; word++)
                differs |= v[word];
        }
        if (differs)
            out[found++] = first + (int64_t)line;
    }
    return found;
}
