/* sched.c: whose turn it is (group_choose), and the turn loop (group_run): a host
 * thread's cores take turns here, in C, with no Python between two turns, until one
 * needs it. sim/machine/schedule.py is the Python side: it makes the Group, and PCT's choices
 * are its own.
 *
 * The choice is the plan's (hooks.h, PLAN_*): a replay's next turn first (a turn of a core
 * not ready is passed over); then a core alone runs with no limit; then a random core,
 * drawn as CPython's random.choice draws (_randbelow over the Mersenne Twister, whose
 * state Python seeded), for a log-uniform length (turn_length); else the next ready core
 * after the last one, for QUANTUM. Every choice is recorded.
 *
 * Tensix stand-ins (sim/noc/agent.py) take part as cores do, by index (Group.agents): a
 * stand-in's turn is one step, which Python runs (LOOP_AGENT). One that waits in noc.wait
 * is ready once DRAM holds what it waits for, which the loop asks before each choice;
 * while any has not returned, a lone core's turns have a length, so that it is asked.
 *
 * A turn in the loop: the core's engine runs from its pc with the turn's budget (turns.c
 * stops it before the block that would overrun the turn), and the interpreter runs the
 * turn's last instructions (isa.c, isa_finish_turn). The turn is the loop's when it ends
 * so, or at a call answered in C that ends it (calls.c: a kmx_barrier, which takes the
 * core out of Group.ready, or puts the cores it releases back, as Python's runnable cores
 * would be); anything else hands it to Python, which finishes it as its own turns end
 * (sim/hart/core.py): an exception Python takes (a kmx call, a system call, a fault), an
 * engine's error, a refused access, the TLB to grow, a fence.i, the cache's registers,
 * the rest of a turn the interpreter cannot run, a stop from outside. Python then chooses
 * the ready cores again and calls the loop anew.
 *
 * As each turn ends, a new lr reservation of the core's is announced to the other cores
 * (reserve.c), so that a store of theirs to its line before its sc is seen. */
#include "hooks.h"

#define MT_M 397
#define SHORT_TURN 8 /* a turn of at most this many instructions tries the interpreter before the engine */

/* The next 32 bits of CPython's Mersenne Twister (Modules/_randommodule.c, genrand_uint32). */
static uint32_t mt_next(Group *g) {
    uint32_t *mt = g->mt, y;
    static const uint32_t mag01[2] = {0x0u, 0x9908b0dfu};
    if (g->mt_index >= MT_N) {
        int k;
        for (k = 0; k < MT_N - MT_M; k++) {
            y = (mt[k] & 0x80000000u) | (mt[k + 1] & 0x7fffffffu);
            mt[k] = mt[k + MT_M] ^ (y >> 1) ^ mag01[y & 1u];
        }
        for (; k < MT_N - 1; k++) {
            y = (mt[k] & 0x80000000u) | (mt[k + 1] & 0x7fffffffu);
            mt[k] = mt[k + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 1u];
        }
        y = (mt[MT_N - 1] & 0x80000000u) | (mt[0] & 0x7fffffffu);
        mt[MT_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ mag01[y & 1u];
        g->mt_index = 0;
    }
    y = mt[g->mt_index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* A number below N, as CPython's _randbelow_with_getrandbits draws it (N < 2**32). */
static uint64_t below(Group *g, uint64_t n) {
    int k = 64 - __builtin_clzll(n); /* n.bit_length() */
    uint64_t r;
    do
        r = mt_next(g) >> (32 - k);
    while (r >= n);
    return r;
}

/* A random turn's length, 1 to 2 x QUANTUM - 1 instructions, log-uniform: as many turns
 * of 1 to 10 instructions as of 10 to 100, and so on, so that a seed's turns split a
 * read-modify-write of a few instructions as often as they run long (docs/simulator.md,
 * "The default turns"). U is CPython's random() of the next two draws. */
static uint64_t turn_length(Group *g) {
    uint64_t a = mt_next(g) >> 5, b = mt_next(g) >> 6;
    double u = ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
    uint64_t n = (uint64_t)__builtin_exp(u * __builtin_log((double)(2 * g->quantum)));
    return n < 1 ? 1 : n >= 2 * g->quantum ? 2 * g->quantum - 1 : n;
}

static int64_t chosen(Group *g, int64_t core, uint64_t count, uint64_t *out) {
    if (g->record_length < g->record_capacity) {
        g->record[2 * g->record_length] = core;
        g->record[2 * g->record_length + 1] = (int64_t)count;
        g->record_length++;
    }
    g->last = core;
    *out = count;
    return core;
}

/* Timed (timing.c): the ready one whose clock is furthest behind (the lowest index of
 * equals) runs, for its turn's length (QUANTUM, or a random one under a seed) or fewer: as
 * many instructions as its last turn's cycles an instruction say it takes to pass the
 * next clock by QUANTUM cycles. So the clocks stay within about a quantum of cycles of
 * each other, however slow an instruction is: three harts crowding the uncached alias
 * (hundreds of cycles a load) read it at once, as on the card, not a turn each. */
static int64_t by_clock(Group *g, uint64_t ready, uint64_t *count) {
    int64_t core = -1;
    uint64_t least = 0, next = UINT64_MAX;
    for (uint64_t left = ready; left; left &= left - 1) {
        int i = __builtin_ctzll(left);
        uint64_t clock = g->clocks[i] ? *g->clocks[i] : 0;
        if ((g->agents >> i & 1) && g->agent_costs && !(g->agent_wake && g->agent_wake[i]))
            clock += g->agent_costs[i]; /* (a stand-in's write or read is done, and seen, when its cost has passed) */
        if (core < 0 || clock < least) {
            if (core >= 0)
                next = least;
            core = i;
            least = clock;
        } else if (clock < next) {
            next = clock;
        }
    }
    if (g->agents >> core & 1) /* a stand-in's step (its clock: agent_clock) */
        return chosen(g, core, 1, count);
    uint64_t length = g->strategy == PLAN_RANDOM ? turn_length(g) : g->quantum;
    Timing *t = g->clocks[core] ? (Timing *)((const char *)g->clocks[core] - __builtin_offsetof(Timing, now)) : 0;
    if (t && (next != UINT64_MAX || g->agents_live)) {
        uint64_t ran = t->instructions - t->mark_instructions, took = t->now - t->mark_now;
        /* cycles (a lone core while stand-ins live: a quantum of cycles, so that a stand-in
         * its write wakes runs within about that) */
        uint64_t room = (next != UINT64_MAX ? next - least : 0) + g->quantum;
        /* (no history yet: 16 cycles an instruction, the most the chip was seen to take on
         * its own code, so that a first turn of cache misses does not run far past the rest) */
        double share = ran && took ? (double)room * (double)ran / (double)took : (double)room / 16.0; /* (no overflow) */
        uint64_t fit = share >= (double)length ? length : (uint64_t)share;
        if (fit < 1)
            fit = 1;
        if (fit < length)
            length = fit;
        t->mark_instructions = t->instructions;
        t->mark_now = t->now;
    }
    return chosen(g, core, length, count);
}

/* Timed: the stand-in AGENT's step moves its own clock on by the step's cost (its noc
 * call's: agent_costs, which Python sets for each call as the stand-in makes it). A step
 * that waits (noc.wait, or the start) first catches up with its cluster's cores (agent_wake
 * names its cluster's participants): with the least clock of those READY, what it waited
 * for having been done no earlier than the slowest of them now is (the model's choice: the
 * moment of the write it waited for is not recorded); with none ready (they returned, or
 * wait themselves), with the latest of their clocks. */
static void agent_clock(Group *g, int64_t agent, uint64_t ready) {
    uint64_t *clock = (uint64_t *)g->clocks[agent];
    if (!clock)
        return;
    uint64_t cores = g->agent_wake ? g->agent_wake[agent] & ~g->agents : 0;
    if (cores) {
        uint64_t running = cores & ready, least = UINT64_MAX, latest = 0;
        for (uint64_t left = running ? running : cores; left; left &= left - 1) {
            int i = __builtin_ctzll(left);
            uint64_t other = g->clocks[i] ? *g->clocks[i] : 0;
            least = other < least ? other : least;
            latest = other > latest ? other : latest;
        }
        uint64_t to = running ? least : latest;
        if (to > *clock)
            *clock = to;
    }
    if (g->agent_costs)
        *clock += g->agent_costs[agent];
}

static int64_t choose(Group *g, uint64_t ready, uint64_t *count);

/* The core to run of READY (a bit a core; never none) and its instructions into COUNT (0:
 * no limit); recorded. The record must have room (the loop returns LOOP_FULL first). */
int64_t group_choose(Group *g, uint64_t ready, uint64_t *count) {
    int64_t core = choose(g, ready, count);
    if (g->clocks && (g->agents >> core & 1))
        agent_clock(g, core, ready);
    return core;
}

static int64_t choose(Group *g, uint64_t ready, uint64_t *count) {
    while (g->script_at < g->script_length) {
        int64_t core = g->script[2 * g->script_at], n = g->script[2 * g->script_at + 1];
        g->script_at++;
        if (core >= 0 && (ready >> core & 1))
            return chosen(g, core, (uint64_t)n, count);
    }
    int ready_count = __builtin_popcountll(ready);
    if (g->clocks && (ready_count > 1 || (g->agents_live && !(g->agents & ready)))) /* timed: by the clocks */
        return by_clock(g, ready, count);
    if (ready_count == 1 && (g->agents >> __builtin_ctzll(ready) & 1))
        return chosen(g, __builtin_ctzll(ready), 1, count);
    if (ready_count == 1 && !g->agents_live) /* (a stand-in that waits may be answered: no turn without end) */
        return chosen(g, __builtin_ctzll(ready), 0, count);
    if (g->strategy == PLAN_RANDOM) {
        uint64_t pick = below(g, (uint64_t)ready_count), left = ready;
        for (uint64_t i = 0; i < pick; i++)
            left &= left - 1;
        int64_t core = __builtin_ctzll(left);
        return chosen(g, core, (g->agents >> core & 1) ? 1 : turn_length(g), count);
    }
    uint64_t later = g->last + 1 < 64 ? ready & (~0ull << (g->last + 1)) : 0;
    int64_t core = __builtin_ctzll(later ? later : ready);
    return chosen(g, core, (g->agents >> core & 1) ? 1 : g->quantum, count);
}

/* The stand-ins whose noc.wait DRAM now answers (a bit an index). */
uint64_t group_waits_met(const Group *g) {
    uint64_t met = 0, waiting = g->agents & ~g->ready;
    while (waiting) {
        int i = __builtin_ctzll(waiting);
        waiting &= waiting - 1;
        const AgentWait *w = &g->waits[i];
        if (w->region && noc_holds(w->region, w->offset, w->size, w->value))
            met |= 1ull << i;
    }
    return met;
}

static int64_t run_turns(Group *g);

/* Whether CORE's turn so far left Python something to do: a call Python answered (PYTHON:
 * the core's count of them as the turn began), a refused access, the TLB to grow, a region
 * watched whole, the cache's registers. (calls.c asks it too: a call that ends the turn
 * there ends it only where the loop would end it.) */
int turn_left_python(const Core *core, uint64_t python) {
    return core->isa.python_calls != python || core->refused.access || core->tlb.grow || core->device.retranslate ||
           core->device.fault_size || core->device.low_at;
}

/* Run the group's turns while they need no Python (see the top). Returns LOOP_STOPPED
 * (Python asked, between turns), LOOP_FULL (the record is full, between turns),
 * LOOP_IDLE (no core is ready), LOOP_TURN (Python finishes the turn of turn_core) or
 * LOOP_AGENT (turn_core is a Tensix stand-in, whose step is Python's: sim/noc/agent.py). */
int64_t group_run(Group *g) {
    int64_t why = run_turns(g);
    g->running = -1;
    return why;
}

/* The turn just ended in the loop, and a stop was asked during it that no block hook saw
 * (the interpreter ran its accesses: it does not look at the flag): the cache model's
 * event asks Python to hear it now (events.c, stop_soon), as Python does between turns
 * (sim/machine/card.py). Whether the loop goes back to Python for it. */
static int heard_between_turns(Turn *turn) {
    if (!turn->stop_asked)
        return 0;
    turn->stop_asked = 0;
    return 1;
}

static int64_t run_turns(Group *g) {
    for (;;) {
        if (g->stop) { /* (consumed here: a stop asked while Python ran is not lost) */
            g->stop = 0;
            return LOOP_STOPPED;
        }
        uint64_t ready = g->ready | (g->waits ? group_waits_met(g) : 0);
        if (!ready)
            return LOOP_IDLE;
        if (g->record_length >= g->record_capacity)
            return LOOP_FULL;
        uint64_t count;
        int64_t i = group_choose(g, ready, &count);
        if (g->agents >> i & 1) { /* a stand-in's step: Python's */
            g->turn_core = i;
            g->turn_count = 1;
            return LOOP_AGENT;
        }
        Core *core = g->cores[i];
        g->running = i;
        void *uc = core->engine.uc;
        Turn *turn = &core->turn;
        uint64_t python = core->isa.python_calls, before = turn->cycles;
        g->turn_python = python;
        g->ended = 0;
        core->refused.access = core->refused.watch = 0;
        turn->budget_on = count > 0;
        turn->remaining = count;
        turn->partial = 0;
        if (count && count <= SHORT_TURN && core->isa.interpret) { /* the interpreter first: no engine run for a few instructions */
            core->isa.reg_write(uc, (int)core->engine.reg_pc, &g->pcs[i]);
            isa_finish_turn(uc, core);
            core->engine.reg_read(uc, (int)core->engine.reg_pc, &g->pcs[i]);
            if (!turn->remaining && !turn_left_python(core, python)) {
                turn->budget_on = 0;
                g->instructions += turn->cycles - before;
                reservation_turn_ended(core);
                if (heard_between_turns(turn))
                    return LOOP_STOPPED;
                continue;
            }
            core->refused.access = core->refused.watch = 0; /* (the engine meets a refusal again) */
        }
        /* (no `until`: a core never reaches the start code's halt, since its exit call ends
         * its last run first; and Unicorn drops the translations at an `until` as each run
         * starts, which costs a search of that page's) */
        int error = core->engine.emu_start(uc, g->pcs[i], 0, 0, 0);
        core->engine.reg_read(uc, (int)core->engine.reg_pc, &g->pcs[i]);
        /* (the turn ends in the loop: the block hook stopped before the block that would
         * overrun it (partial), or the interpreter, run from a trap in the engine (an
         * instruction the engine lacks: the vector unit), ran it to its last instruction,
         * or a call answered in C ended it (ended: calls.c's kmx_barrier)) */
        int clean = !error && !turn_left_python(core, python) &&
                    (turn->partial || (count && !turn->remaining) || g->ended) && !turn->breakpoint_hit;
        if (clean && turn->remaining && !g->ended) {
            turn->partial = 0;
            clean = isa_finish_turn(uc, core) == 0 && !turn_left_python(core, python);
            core->engine.reg_read(uc, (int)core->engine.reg_pc, &g->pcs[i]);
            turn->partial = !clean; /* (what is left of the turn, for Python: sim/hart/core.py) */
        }
        if (!clean) {
            g->turn_core = i;
            g->turn_count = (int64_t)count;
            g->turn_error = error;
            g->turn_cycles = before;
            return LOOP_TURN;
        }
        turn->partial = 0;
        turn->budget_on = 0;
        g->instructions += turn->cycles - before;
        reservation_turn_ended(core); /* (a turn Python finishes is told there: sim/hart/core.py) */
        if (heard_between_turns(turn))
            return LOOP_STOPPED;
    }
}
