/* sizes.c: the sizes of the structs of hooks.h, for sim/native/hooks.py to check its
 * mirrors against. */
#include "hooks.h"

uint64_t struct_size(int which) {
    switch (which) {
    case 0: return sizeof(CachedRegion);
    case 1: return sizeof(Span);
    case 2: return sizeof(Core);
    case 3: return sizeof(Tile);
    case 4: return sizeof(Group);
    case 5: return sizeof(AgentWait);
    case 6: return sizeof(Calls);
    case 7: return sizeof(CacheEvent);
    case 8: return sizeof(TimingTile);
    default: return 0;
    }
}
