/* turns.c: count_block, the engine's block hook: the cycle model and the turns' lengths,
 * a basic block at a time. The engine calls it at the start of each block, before the
 * block runs. Each instruction is one cycle (timed, the cycles are timing.c's: the block
 * goes to the interpreter, isa_run_block, or is timed from its encodings). A turn of exact length (several cores ready,
 * sim/machine/schedule.py) takes whole blocks while they fit; at the first that would overrun it,
 * the run stops before the block (the engine runs no block whose hook asked it to stop),
 * and sim/hart/core.py runs the few instructions left up to an `until` address. Unicorn's
 * own instruction count (emu_start's count) would call a hook at every instruction
 * instead. Hooked only in threads that count (kmx_cycles, a counter CSR, several cores). */
#include "hooks.h"

/* The instructions in the block at ADDRESS of SIZE bytes, remembered by address and size
 * (a fence.i empties the memory: sim/native/hooks.py, forget_blocks). */
static uint64_t instructions(Core *core, uint64_t address, uint32_t size) {
    Turn *turn = &core->turn;
    uint64_t key = address ^ ((uint64_t)size << 48);
    uint64_t slot = (address >> 1) & (BLOCK_CACHE - 1);
    if (turn->block_keys[slot] == key)
        return turn->block_counts[slot];
    if (address >= turn->uncounted_start && address < turn->uncounted_end)
        return 0; /* a stub of the loader's: the jump to it counted as its instruction */
    Span *span = find_span(core, address);
    if (!span)
        return 0;
    const uint8_t *code = span->host + (address - span->base);
    uint64_t count = 0;
    for (uint32_t offset = 0; offset < size; count++)
        offset += (code[offset] & 3) == 3 ? 4 : 2;
    turn->block_keys[slot] = key;
    turn->block_counts[slot] = (uint32_t)count;
    return count;
}

int at_breakpoint(const Turn *turn, uint64_t pc) {
    for (int64_t i = 0; i < turn->breakpoint_count; i++)
        if (turn->breakpoints[i] == pc)
            return 1;
    return 0;
}

/* The first of a debugger's breakpoints in the block at ADDRESS of SIZE bytes: the run
 * stops before the block (sim/hart/core.py runs it up to the breakpoint), 0: none. */
static uint64_t first_breakpoint(const Turn *turn, uint64_t address, uint32_t size) {
    uint64_t first = 0;
    for (int64_t i = 0; i < turn->breakpoint_count; i++) {
        uint64_t at = turn->breakpoints[i];
        if (at >= address && at < address + size && (!first || at < first))
            first = at;
    }
    return first;
}

void count_block(void *uc, uint64_t address, uint32_t size, Core *core) {
    Turn *turn = &core->turn;
    if (core->tlb.grow || core->device.retranslate || turn->stop_asked) {
        /* the fill hook (fill.c, maybe_grow), the watch (watch.c) or Python, from outside,
         * asked for a stop: before this block, which then has not begun (Unicorn calls the
         * hook before it checks for a stop asked from outside: a block whose hook counted
         * it, then stopped there, would count and not run) */
        core->engine.emu_stop(uc);
        return;
    }
    if (turn->breakpoint_count) {
        uint64_t at = first_breakpoint(turn, address, size);
        if (at) {
            turn->breakpoint_hit = at;
            turn->block_address = address;
            turn->block_size = size;
            core->engine.emu_stop(uc);
            return;
        }
    }
    if (core->timing) { /* timed: the interpreter runs the block, or the model times the engine's */
        timing_drain(core);
        if (core->isa.interpret && isa_run_block(uc, core, address, size))
            return;
    }
    turn->current_address = address;
    turn->current_size = size;
    uint64_t count = instructions(core, address, size);
    if (turn->budget_on) {
        if (count > turn->remaining) {
            turn->partial = 1;
            turn->block_address = address;
            turn->block_size = size;
            core->engine.emu_stop(uc);
            return;
        }
        turn->remaining -= count;
    }
    turn->cycles += count;
    if (core->timing)
        timing_block(core, address, size);
    if (core->profile.on)
        profile_block(core, address, size, count);
}
