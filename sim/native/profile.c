/* profile.c: the profile of a core's run (sim/observe/profile.py), when it is asked for: how often
 * each basic block ran (each instruction of it once per run, so the counts by source line
 * are exact), and a shadow call stack that gives the call tree: each block's instructions
 * go to the tree's node of the calls that led to it. count_block (turns.c) calls
 * profile_block at the start of every block; the interpreter (isa.c) profile_pc for each
 * instruction it runs, and leaves calls and returns to the engine. Off, it costs a test
 * of one flag a block. The tables are Python's (numpy), fixed in size: what does not fit
 * is counted in `dropped`. */
#include "hooks.h"

enum { OTHER = 0, CALL = 1, RETURN = 2, JUMP = 3 };

static int is_link(uint32_t reg) { return reg == 1 || reg == 5; }

/* What the instruction BITS does to the call stack. */
static int kind_of(uint32_t bits) {
    if ((bits & 3) != 3) { /* compressed */
        uint32_t quadrant = bits & 3, funct3 = (bits >> 13) & 7;
        if (quadrant == 1 && funct3 == 5)
            return JUMP; /* c.j */
        if (quadrant == 2 && funct3 == 4 && ((bits >> 2) & 31) == 0 && ((bits >> 7) & 31) != 0) {
            uint32_t rs1 = (bits >> 7) & 31;
            if ((bits >> 12) & 1)
                return CALL; /* c.jalr */
            return is_link(rs1) ? RETURN : JUMP; /* c.jr */
        }
        return OTHER;
    }
    uint32_t opcode = bits & 0x7F, rd = (bits >> 7) & 31, rs1 = (bits >> 15) & 31;
    if (opcode == 0x6F)
        return is_link(rd) ? CALL : JUMP;
    if (opcode == 0x67 && ((bits >> 12) & 7) == 0) {
        if (is_link(rd))
            return CALL;
        return is_link(rs1) && rd == 0 ? RETURN : JUMP;
    }
    return OTHER;
}

/* The kind of the last instruction of the block at ADDRESS of SIZE bytes. */
static int block_kind(Core *core, uint64_t address, uint32_t size) {
    Span *span = find_span(core, address);
    if (!span || size == 0)
        return OTHER;
    const uint8_t *code = span->host + (address - span->base);
    uint32_t offset = 0, last = 0;
    while (offset < size) {
        last = offset;
        offset += (code[offset] & 3) == 3 ? 4 : 2;
    }
    uint32_t bits = code[last] | (uint32_t)code[last + 1] << 8;
    if ((bits & 3) == 3 && last + 4 <= size)
        bits |= (uint32_t)code[last + 2] << 16 | (uint32_t)code[last + 3] << 24;
    return kind_of(bits);
}

static int is_function(const Profile *p, uint64_t address) {
    return sorted_find(p->functions, p->function_count, address) >= 0;
}

int profile_is_function(const Core *core, uint64_t address) { return is_function(&core->profile, address); }

static uint64_t mix(uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return key;
}

/* The node for a call of FUNCTION from node PARENT (made the first time). */
static uint64_t node_for(Profile *p, uint64_t parent, uint64_t function) {
    uint64_t mask = (uint64_t)p->node_capacity * 2 - 1;
    for (uint64_t slot = mix(parent * 0x9E3779B97F4A7C15ull ^ function) & mask;; slot = (slot + 1) & mask) {
        int64_t id = p->node_index[slot] - 1;
        if (id < 0) {
            if (p->nodes >= p->node_capacity) {
                p->dropped++;
                return parent; /* (the tree is full: the callee's instructions stay with its caller) */
            }
            id = p->nodes++;
            p->node_parent[id] = parent;
            p->node_function[id] = function;
            p->node_index[slot] = id + 1;
            return (uint64_t)id;
        }
        if (p->node_parent[id] == parent && p->node_function[id] == function)
            return (uint64_t)id;
    }
}

static uint64_t top(const Profile *p) { return p->depth ? p->stack_node[p->depth - 1] : 0; }

/* A return to ADDRESS that no frame's return address is (longjmp goes back to where
 * setjmp returned, a frame popped long ago): the stack unwinds to the innermost frame of
 * the function that holds ADDRESS, if one is on it. */
static void unwind_to(Profile *p, uint64_t address) {
    int64_t at = sorted_floor(p->functions, p->function_count, address);
    if (at < 0)
        return;
    uint64_t function = p->functions[at];
    for (int64_t d = p->depth - 1; d >= 0; d--)
        if (p->node_function[p->stack_node[d]] == function) {
            p->depth = d + 1;
            return;
        }
    if (p->node_function[0] == function) /* (the root's own function) */
        p->depth = 0;
}

/* The block at ADDRESS was entered after one whose last instruction was of KIND, ending
 * at END: the call stack follows. */
static void follow(Profile *p, uint64_t address) {
    switch (p->last_kind) {
    case CALL:
        if (p->depth < p->stack_capacity) {
            uint64_t node = node_for(p, top(p), address);
            p->stack_node[p->depth] = node;
            p->stack_return[p->depth] = p->last_end;
            p->depth++;
            p->node_entered[node]++;
        } else {
            p->lost++; /* (deeper than the shadow stack: its instructions count with its caller) */
            p->dropped++;
        }
        break;
    case RETURN:
        if (p->lost) {
            p->lost--;
            break;
        }
        for (int64_t d = p->depth - 1; d >= 0; d--) /* (an exception's unwinding returns past several) */
            if (p->stack_return[d] == address) {
                p->depth = d;
                return;
            }
        unwind_to(p, address); /* a return to a frame no call is known to lead to: longjmp's */
        break;
    case JUMP: /* a tail call: the callee takes the caller's place */
        if (p->depth && p->node_function[top(p)] != address && is_function(p, address)) {
            uint64_t parent = p->depth > 1 ? p->stack_node[p->depth - 2] : 0;
            uint64_t node = node_for(p, parent, address);
            p->stack_node[p->depth - 1] = node;
            p->node_entered[node]++;
        }
        break;
    }
}

/* The core goes on at ADDRESS after the last block (or instruction) the profile saw: the
 * call stack follows (the root, for the core's first). */
void profile_enter(Core *core, uint64_t address) {
    Profile *p = &core->profile;
    if (p->nodes == 0) { /* the root: the core's first block */
        p->nodes = 1;
        p->node_parent[0] = 0;
        p->node_function[0] = address;
        p->node_entered[0] = 1;
    } else {
        follow(p, address);
    }
}

/* Timed: the cycles since the profile's last charge, less the last instruction's or
 * block's own (LAST_COST, which goes to SLOT), went to the one charged before it (a kmx
 * call's, a barrier's wait, made while it ran). The call tree's nodes are charged the
 * same way (the node on top of the stack now, and the one that was): a slot a full table
 * had no room for (-1) loses its line's cycles, not its function's. */
static void charge(Core *core, int64_t slot, int block) {
    Profile *p = &core->profile;
    Timing *t = core->timing;
    if (!t || !p->pc_cycles)
        return;
    uint64_t since = t->now - p->last_now, own = t->last_cost <= since ? t->last_cost : since;
    if (p->last_slot >= 0)
        (p->last_block ? p->block_cycles : p->pc_cycles)[p->last_slot] += since - own;
    if (slot >= 0)
        (block ? p->block_cycles : p->pc_cycles)[slot] += own;
    int64_t node = top(p);
    p->node_cycles[p->last_node] += since - own;
    p->node_cycles[node] += own;
    p->last_now = t->now;
    p->last_slot = slot;
    p->last_block = block;
    p->last_node = node;
}

void profile_block(Core *core, uint64_t address, uint32_t size, uint64_t count) {
    Profile *p = &core->profile;
    profile_enter(core, address);
    uint64_t key = address ^ ((uint64_t)size << 48), mask = (uint64_t)p->block_capacity - 1;
    uint64_t slot = mix(key) & mask;
    for (int64_t probes = 0;; slot = (slot + 1) & mask, probes++) {
        if (p->block_keys[slot] == key)
            break;
        if (p->block_keys[slot] == 0 || probes >= p->block_capacity) {
            if (p->block_keys[slot] != 0 || p->blocks * 2 >= p->block_capacity) {
                p->dropped++;
                p->last_kind = block_kind(core, address, size);
                p->last_end = address + size;
                p->node_self[top(p)] += count;
                charge(core, -1, 1);
                return;
            }
            p->block_keys[slot] = key;
            p->block_kinds[slot] = (uint8_t)block_kind(core, address, size);
            p->blocks++;
            break;
        }
    }
    p->block_runs[slot]++;
    charge(core, (int64_t)slot, 1);
    p->node_self[top(p)] += count;
    p->last_kind = p->block_kinds[slot];
    p->last_end = address + size;
}

void profile_pc(Core *core, uint64_t pc) {
    Profile *p = &core->profile;
    uint64_t mask = (uint64_t)p->pc_capacity - 1;
    uint64_t slot = mix(pc) & mask;
    for (;; slot = (slot + 1) & mask) {
        if (p->pc_keys[slot] == pc)
            break;
        if (p->pc_keys[slot] == 0) {
            if (p->pcs * 2 >= p->pc_capacity) {
                p->dropped++;
                p->node_self[top(p)]++;
                charge(core, -1, 0);
                return;
            }
            p->pc_keys[slot] = pc;
            p->pcs++;
            break;
        }
    }
    p->pc_runs[slot]++;
    charge(core, (int64_t)slot, 0);
    p->node_self[top(p)]++;
    p->last_kind = OTHER; /* (the interpreter stops before calls and returns) */
}

/* A cache event at the engine's pc (the start of the block making the access, or the
 * instruction before it: sim/observe/profile.py finds the access): KIND 0 a page filled, 1 a page
 * first written since it was clean. */
void profile_cache(Core *core, void *uc, int kind) {
    Profile *p = &core->profile;
    uint64_t pc = 0;
    core->engine.reg_read(uc, (int)core->engine.reg_pc, &pc);
    uint64_t key = pc << 1 | (uint64_t)kind, mask = (uint64_t)p->cache_capacity - 1;
    for (uint64_t slot = mix(key) & mask;; slot = (slot + 1) & mask) {
        if (p->cache_keys[slot] == key) {
            p->cache_runs[slot]++;
            return;
        }
        if (p->cache_keys[slot] == 0) {
            if (p->caches * 2 >= p->cache_capacity) {
                p->dropped++;
                return;
            }
            p->cache_keys[slot] = key;
            p->cache_runs[slot] = 1;
            p->caches++;
            return;
        }
    }
}
