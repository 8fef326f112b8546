/* tile.c: the tile's caches at the card's size (km.Session(cache="card-size")): which lines
 * each level holds, so that every access to a region is a hit or a miss at each level, and
 * a line the L3 evicts leaves the tile (watch.c writes it back if it is dirty).
 *
 * The sizes are tt-isa-documentation's (BlackholeA0/L2CPUTile/Caches.md), 64-byte lines:
 * per hart an L1D of 32 KiB, 4 ways (128 sets), and an L2 of 128 KiB, 8 ways (256 sets);
 * one L3 for the tile, 2 MiB, 16 ways (2048 sets), as tt-metal's tools/l2cpu configures
 * it (CCACHE0_WAYENABLE = 15). Each level holds all of the one below it (inclusive): a line
 * the L2 evicts leaves its hart's L1, one the L3 evicts leaves every hart. A store takes
 * the line from the other harts' L1 and L2 (the tile's coherence: their next access misses
 * there). The documents do not say how a set chooses what to evict: here a victim is an
 * empty way if there is one, else a way drawn from a xorshift64 generator the session
 * seeds, so that a run is the same every time and another seed is another history.
 *
 * Only the regions' accesses are modelled (the image, the stacks and the heap do not take
 * room here, as on a card they would). A line is its address over 64 plus one (0: empty).
 */
#include "hooks.h"

static uint64_t next_random(Tile *t) {
    uint64_t x = t->random;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return t->random = x;
}

static int find(const uint64_t *ways, int n, uint64_t tag) {
    for (int i = 0; i < n; i++)
        if (ways[i] == tag)
            return i;
    return -1;
}

static int victim(Tile *t, const uint64_t *ways, int n) {
    for (int i = 0; i < n; i++)
        if (!ways[i])
            return i;
    return (int)(next_random(t) % (uint64_t)n);
}

static void drop(uint64_t *ways, int n, uint64_t tag) {
    int i = find(ways, n, tag);
    if (i >= 0)
        ways[i] = 0;
}

/* The line TAG leaves hart HART's L1 and L2 (L2: 1) or its L1 only. */
static void leave_hart(Tile *t, int hart, uint64_t tag, int l2) {
    uint64_t line = tag - 1;
    drop(t->l1[hart][line % TILE_L1_SETS], TILE_L1_WAYS, tag);
    if (l2)
        drop(t->l2[hart][line % TILE_L2_SETS], TILE_L2_WAYS, tag);
}

/* HART reads (WRITE: writes) LINE (an address over 64). Returns where it was: 1, 2 or 3
 * for the level that held it, 0 for DRAM; t->evicted is the line the L3 evicted for it
 * (plus one; 0: none). */
int tile_access(Tile *t, int hart, uint64_t line, int write) {
    uint64_t tag = line + 1;
    t->evicted = 0;
    t->harts_seen |= 1ull << hart;
    if (write && (t->harts_seen & ~(1ull << hart))) /* (a hart that never accessed one holds none) */
        for (int h = 0; h < TILE_HARTS; h++)
            if (h != hart && (t->harts_seen >> h & 1))
                leave_hart(t, h, tag, 1);
    uint64_t *l1 = t->l1[hart][line % TILE_L1_SETS];
    if (find(l1, TILE_L1_WAYS, tag) >= 0)
        return 1;
    uint64_t *l2 = t->l2[hart][line % TILE_L2_SETS];
    int level = 2;
    if (find(l2, TILE_L2_WAYS, tag) < 0) {
        uint64_t *l3 = t->l3[line % TILE_L3_SETS];
        level = 3;
        if (find(l3, TILE_L3_WAYS, tag) < 0) {
            level = 0;
            int v = victim(t, l3, TILE_L3_WAYS);
            if (l3[v]) { /* it leaves the tile */
                for (int h = 0; h < TILE_HARTS; h++)
                    if (t->harts_seen >> h & 1)
                        leave_hart(t, h, l3[v], 1);
                t->evicted = l3[v];
            }
            l3[v] = tag;
        }
        int v = victim(t, l2, TILE_L2_WAYS);
        if (l2[v])
            leave_hart(t, hart, l2[v], 0); /* (still in the L3) */
        l2[v] = tag;
    }
    l1[victim(t, l1, TILE_L1_WAYS)] = tag;
    return level;
}

/* LINE leaves every level (a line flush through CCACHE0_FLUSH64), or hart HART's L1 and L2
 * only (PL2CACHE0_CFLUSH64: it stays in the L3). */
void tile_remove(Tile *t, uint64_t line, int hart) {
    uint64_t tag = line + 1;
    if (hart >= 0) {
        leave_hart(t, hart, tag, 1);
        return;
    }
    for (int h = 0; h < TILE_HARTS; h++)
        leave_hart(t, h, tag, 1);
    drop(t->l3[line % TILE_L3_SETS], TILE_L3_WAYS, tag);
}

/* Lines [FIRST, END) leave every level (kmx_invalidate of a region). */
void tile_remove_range(Tile *t, uint64_t first, uint64_t end) {
    uint64_t *all[3] = {&t->l1[0][0][0], &t->l2[0][0][0], &t->l3[0][0]};
    uint64_t counts[3] = {sizeof t->l1 / 8, sizeof t->l2 / 8, sizeof t->l3 / 8};
    for (int level = 0; level < 3; level++)
        for (uint64_t i = 0; i < counts[level]; i++) {
            uint64_t tag = all[level][i];
            if (tag && tag - 1 >= first && tag - 1 < end)
                all[level][i] = 0;
        }
}

uint64_t tile_size(void) { return sizeof(Tile); }
