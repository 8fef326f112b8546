/* timing.c: the X280's time (km.Session(timing="x280"); docs/timing.md says the model, its
 * parameters and their sources). A core's clock is the cycle its last instruction issued
 * in, as an in-order, dual-issue pipeline with a scoreboard would issue it:
 *
 * - the scalar core: two pipes, A (memory, the integer ALU, the vector unit's door) and B
 *   (the integer ALU, branches, multiply and divide, floating point); at most ISSUE_WIDTH
 *   instructions a cycle, one a pipe, in order; an instruction waits for its operands
 *   (each register is ready at its producer's issue plus its latency) and for a divider
 *   that is not pipelined; a branch the predictor got wrong costs BRANCH_PENALTY;
 * - memory: the tile's L1D, L2 and L3 (tile.c, tags only: the timing's own copy, fed by
 *   every access the model times); a miss adds the level's cycles to the load's latency,
 *   and the L1D has one line fill at a time, so the next access waits for it; the
 *   uncached alias, flushes and invalidates come through the door for time (latency.c);
 * - the vector unit: an instruction issues on pipe A into the command queue, which hands
 *   one a cycle in order to its sequencer (arithmetic, load, store); a sequencer is busy
 *   for the instruction's beats (2 x LMUL, DLEN 256 over VLEN 512) or its elements, and
 *   its result is ready its latency later.
 *
 * The interpreter (isa.c) runs a timed thread's code and calls timing_step after each
 * instruction, with its operands and where it went: every branch's outcome and every
 * access's address are known. The few blocks it cannot run (floating point in F and D, a
 * CSR, an ecall) run in the engine, and timing_block times them from their encodings,
 * each access an L1D hit (docs/timing.md, "What the model does not know").
 *
 * Every cycle the clock moves is counted once in WENT_*, so that they sum to the clock.
 */
#include "hart.h"

#define PARAM(t, name) ((t)->param[TP_##name])
enum { PIPE_A = 1, PIPE_B = 2, PIPE_ANY = 3 };
enum { /* an instruction's class */
    TC_ALU, TC_LOAD, TC_STORE, TC_FLOAD, TC_FSTORE, TC_MUL, TC_DIV, TC_DIVW, TC_BRANCH, TC_JAL, TC_JALR,
    TC_FP, TC_FP_MOVE, TC_FP_CONVERT, TC_FP_DIV, TC_AMO, TC_CSR, TC_FENCE, TC_CALL, TC_VECTOR, TC_VSET,
    TC_VLOAD, TC_VSTORE
};
#define NONE 0xff
typedef struct {
    uint8_t cls, pipe, rd, rs[3];
    uint8_t format; /* floating point: 0 single, 1 double, 2 half */
} Shape;

uint64_t timing_size(void) { return sizeof(Timing); }

static inline uint32_t field(uint32_t insn, int hi, int lo) { return (insn >> lo) & ((1u << (hi - lo + 1)) - 1); }
#define X_(n) ((uint8_t)(n) ? (uint8_t)(n) : NONE) /* x0 is never waited for nor written */
#define F_(n) ((uint8_t)(32 + (n)))

/* What INSN (32 bits; a compressed one expanded) is to the pipeline. */
static Shape shape_of(uint32_t insn) {
    Shape s = {TC_ALU, PIPE_ANY, NONE, {NONE, NONE, NONE}, 0};
    uint32_t rd = field(insn, 11, 7), rs1 = field(insn, 19, 15), rs2 = field(insn, 24, 20), rs3 = field(insn, 31, 27);
    uint32_t f3 = field(insn, 14, 12), f7 = field(insn, 31, 25);
    switch (insn & 0x7f) {
    case 0x37: case 0x17: s.rd = X_(rd); break;
    case 0x6f: s.cls = TC_JAL; s.pipe = PIPE_B; s.rd = X_(rd); break;
    case 0x67: s.cls = TC_JALR; s.pipe = PIPE_B; s.rd = X_(rd); s.rs[0] = X_(rs1); break;
    case 0x63: s.cls = TC_BRANCH; s.pipe = PIPE_B; s.rs[0] = X_(rs1); s.rs[1] = X_(rs2); break;
    case 0x03: s.cls = TC_LOAD; s.pipe = PIPE_A; s.rd = X_(rd); s.rs[0] = X_(rs1); break;
    case 0x23: s.cls = TC_STORE; s.pipe = PIPE_A; s.rs[0] = X_(rs1); s.rs[1] = X_(rs2); break;
    case 0x13: case 0x1b: s.rd = X_(rd); s.rs[0] = X_(rs1); break;
    case 0x33: case 0x3b:
        s.rd = X_(rd); s.rs[0] = X_(rs1); s.rs[1] = X_(rs2);
        if (f7 == 1) {
            s.pipe = PIPE_B;
            s.cls = f3 < 4 ? TC_MUL : (insn & 0x7f) == 0x3b ? TC_DIVW : TC_DIV;
        }
        break;
    case 0x07: case 0x27: {
        int store = (insn & 0x7f) == 0x27;
        if (f3 >= 1 && f3 <= 4) { /* flh, flw, fld (and fsh, fsw, fsd) */
            s.cls = store ? TC_FSTORE : TC_FLOAD; s.pipe = PIPE_A; s.rs[0] = X_(rs1);
            if (store) s.rs[1] = F_(rs2); else s.rd = F_(rd);
        } else {
            s.cls = store ? TC_VSTORE : TC_VLOAD; s.pipe = PIPE_A; s.rs[0] = X_(rs1);
            if (field(insn, 27, 26) == 2) s.rs[1] = X_(rs2); /* a stride */
        }
        break;
    }
    case 0x2f: s.cls = TC_AMO; s.pipe = PIPE_A; s.rd = X_(rd); s.rs[0] = X_(rs1); s.rs[1] = X_(rs2); break;
    case 0x43: case 0x47: case 0x4b: case 0x4f: {
        uint32_t fmt = field(insn, 26, 25);
        s.cls = TC_FP; s.pipe = PIPE_B; s.format = (uint8_t)(fmt == 2 ? 2 : fmt & 1);
        s.rd = F_(rd); s.rs[0] = F_(rs1); s.rs[1] = F_(rs2); s.rs[2] = F_(rs3);
        break;
    }
    case 0x53: {
        uint32_t f5 = field(insn, 31, 27), fmt = field(insn, 26, 25);
        s.pipe = PIPE_B; s.format = (uint8_t)(fmt == 2 ? 2 : fmt & 1);
        s.rd = F_(rd); s.rs[0] = F_(rs1); s.rs[1] = F_(rs2);
        switch (f5) {
        case 0: case 1: case 2: s.cls = TC_FP; break;
        case 3: s.cls = TC_FP_DIV; break;
        case 0x0b: s.cls = TC_FP_DIV; s.rs[1] = NONE; break;
        case 4: case 5: s.cls = TC_FP_MOVE; break;
        case 0x08: s.cls = TC_FP_CONVERT; s.rs[1] = NONE; break;
        case 0x14: s.cls = TC_FP_CONVERT; s.rd = X_(rd); break;
        case 0x18: case 0x1c: s.cls = TC_FP_CONVERT; s.rd = X_(rd); s.rs[1] = NONE; break;
        case 0x1a: case 0x1e: s.cls = TC_FP_CONVERT; s.rs[0] = X_(rs1); s.rs[1] = NONE; break;
        default: s.cls = TC_FP_CONVERT; break;
        }
        break;
    }
    case 0x57:
        s.pipe = PIPE_A;
        if (f3 == 7) {
            s.cls = TC_VSET; s.rd = X_(rd);
            if (field(insn, 31, 30) != 3) s.rs[0] = X_(rs1); /* (vsetivli: an immediate) */
            if (field(insn, 31, 31) && !field(insn, 30, 30)) s.rs[1] = X_(rs2);
        } else {
            s.cls = TC_VECTOR;
            if (f3 == 4 || f3 == 6) s.rs[0] = X_(rs1); /* .vx */
            if (f3 == 5) s.rs[0] = F_(rs1);            /* .vf */
            if ((f3 == 2 && field(insn, 31, 26) == 0x10) ) s.rd = X_(rd); /* vmv.x.s, vcpop, vfirst */
            if ((f3 == 1 && field(insn, 31, 26) == 0x10) ) s.rd = F_(rd); /* vfmv.f.s */
        }
        break;
    case 0x73:
        s.pipe = PIPE_A;
        if (f3 == 0) {
            s.cls = TC_CALL;
        } else {
            s.cls = TC_CSR; s.rd = X_(rd);
            if (f3 < 4) s.rs[0] = X_(rs1);
        }
        break;
    case 0x0f: s.cls = TC_FENCE; s.pipe = PIPE_A; break;
    default: break;
    }
    return s;
}

/* -- the scalar pipeline ------------------------------------------------------------------ */

static inline void went(Timing *t, int why, uint64_t cycles) { t->went[why] += cycles; }

/* Issue an instruction of SHAPE: the cycle it issues in (the clock moves there). */
static uint64_t issue(Timing *t, const Shape *s) {
    uint64_t at = t->now;
    int pipe = s->pipe;
    /* (an ALU op goes to either pipe, so it pairs with anything; two of pipe A, or of B, do not) */
    int room = t->slots < PARAM(t, issue_width) && !(pipe != PIPE_ANY && (t->pipes & (uint32_t)pipe));
    if (!room) { /* the next cycle */
        at++;
        went(t, WENT_ISSUE, 1);
    }
    uint64_t ready = at;
    int why = WENT_DEPENDENCY;
    int store = s->cls == TC_STORE || s->cls == TC_FSTORE;
    for (int i = 0; i < 3; i++) {
        uint8_t r = s->rs[i];
        if (r == NONE)
            continue;
        uint64_t need = t->ready[r]; /* (a store's data is read late in the pipeline) */
        if (store && i == 1)
            need = need > PARAM(t, store_data_late) ? need - PARAM(t, store_data_late) : 0;
        if (need > ready) {
            ready = need;
            why = t->why[r];
        }
    }
    if (ready > at) {
        went(t, why, ready - at);
        at = ready;
    }
    if (at != t->now) {
        t->now = at;
        t->slots = 0;
        t->pipes = 0;
    }
    t->slots++;
    if (pipe != PIPE_ANY)
        t->pipes |= (uint32_t)pipe;
    t->instructions++;
    return at;
}

/* The clock waits until UNTIL (a unit busy, the memory's fill, a mispredicted branch's
 * refetch), counted as WHY. */
static inline void wait_until(Timing *t, uint64_t until, int why) {
    if (until > t->now) {
        went(t, why, until - t->now);
        t->now = until;
        t->slots = 0;
        t->pipes = 0;
    }
}

static inline void produce(Timing *t, uint8_t rd, uint64_t ready, int why) {
    if (rd != NONE) {
        t->ready[rd] = ready;
        t->why[rd] = (uint8_t)why;
    }
}

static int log2_of(uint64_t v) { return v ? 63 - __builtin_clzll(v) : 0; }

/* A divide's latency: the U74's, 2 + log2(dividend) - log2(divisor), one more for each
 * negative input (bounded: DIV_MIN to DIV_MAX); W: the 32-bit form. */
static uint64_t divide_cycles(const Timing *t, uint64_t a, uint64_t b, int word, int is_signed) {
    if (word) { /* (the low 32 bits, sign- or zero-extended as the operation reads them) */
        a = is_signed ? (uint64_t)(int64_t)(int32_t)a : (uint32_t)a;
        b = is_signed ? (uint64_t)(int64_t)(int32_t)b : (uint32_t)b;
    }
    int negatives = 0;
    if (is_signed) {
        if ((int64_t)a < 0) { a = -a; negatives++; }
        if ((int64_t)b < 0) { b = -b; negatives++; }
    }
    int64_t cycles = (int64_t)PARAM(t, div_base) + log2_of(a) - log2_of(b) + negatives;
    if (cycles < (int64_t)PARAM(t, div_min)) cycles = PARAM(t, div_min);
    if (cycles > (int64_t)PARAM(t, div_max)) cycles = PARAM(t, div_max);
    return (uint64_t)cycles;
}

static uint64_t fp_latency(const Timing *t, int format) {
    return format == 2 ? PARAM(t, fp_half) : format == 1 ? PARAM(t, fp_double) : PARAM(t, fp_single);
}

/* -- memory ------------------------------------------------------------------------------- */

/* The cycles a miss at LEVEL adds (tile_access's answer: 1 L1, 2 L2, 3 L3, 0 DRAM). */
static uint64_t miss_cycles(const Timing *t, int level, int vector) {
    switch (level) {
    case 1: return vector ? PARAM(t, vector_l1_line) : 0;
    case 2: return vector ? PARAM(t, vector_l2_line) : PARAM(t, l2_hit);
    case 3: return vector ? PARAM(t, vector_l3_line) : PARAM(t, l3_hit);
    default: return vector ? PARAM(t, vector_dram_line) : PARAM(t, dram_line);
    }
}
static const int level_went[4] = {WENT_DRAM, WENT_DEPENDENCY, WENT_L2, WENT_L3};

/* The line at ADDRESS through the tile: its level (1 L1, 2 L2, 3 L3, 0 DRAM). */
static int look_up(Timing *t, uint64_t address, int store) {
    int level = tile_access(&t->shared->tile, (int)t->hart, address / 64, store);
    t->misses[level]++;
    return level;
}

/* A scalar access of [address, end) issued at AT: when its data is there, and as what a
 * wait for it counts. The L1D fills one line at a time: the access waits for the last. */
static uint64_t scalar_access(Timing *t, uint64_t at, uint64_t address, uint64_t end, int store, int *why) {
    *why = WENT_LOAD_USE;
    if (t->memory_free > at) {
        wait_until(t, t->memory_free, t->memory_why);
        at = t->now;
    }
    uint64_t extra = 0;
    int worst = 1;
    for (uint64_t line = address / 64; line <= (end - 1) / 64; line++) {
        int level = look_up(t, line * 64, store);
        uint64_t cycles = miss_cycles(t, level, 0);
        if (cycles > extra) {
            extra = cycles;
            worst = level;
        }
    }
    if (extra) {
        t->memory_free = at + extra;
        t->memory_why = (uint8_t)level_went[worst];
        *why = level_went[worst];
    }
    t->loads++;
    return extra;
}

/* -- the vector unit ---------------------------------------------------------------------- */

static uint64_t beats(const Timing *t, uint64_t vtype, int widen) {
    int lmul = (int)(vtype & 7); /* 0..3: 1, 2, 4, 8; 5..7: 1/8, 1/4, 1/2 */
    uint64_t per_register = PARAM(t, vlen) / PARAM(t, dlen);
    if (lmul >= 4)
        return widen ? per_register / 2 + 1 : 1;
    return (per_register << lmul) << widen;
}

static uint64_t sew_of(uint64_t vtype) { return 8u << ((vtype >> 3) & 7); }

/* The vector instruction INSN leaves the command queue for sequencer SEQ: when it starts
 * there (the queue hands one a cycle, in order; it waits for the sequencer and its
 * operands VS). The scalar side waits only when the queue is full. */
static uint64_t dispatch(Timing *t, uint64_t at, int seq, const uint8_t *vs, int count, uint64_t *done, int *why) {
    uint64_t depth = PARAM(t, vector_queue);
    if (depth > TIMING_QUEUE_MAX)
        depth = TIMING_QUEUE_MAX;
    if (t->queued >= depth) { /* full: wait for the one DEPTH before to leave */
        uint64_t left = t->queue[(t->queued - depth) % TIMING_QUEUE_MAX];
        if (left > at) { /* (held up by the sequencer furthest behind: what keeps it busy) */
            int late = 0;
            for (int q = 1; q < 3; q++)
                if (t->sequencer_free[q] > t->sequencer_free[late])
                    late = q;
            wait_until(t, left, t->sequencer_why[late]);
            at = t->now;
        }
    }
    /* it leaves the queue in order, one a cycle, once its sequencer has begun the last it took */
    uint64_t leaves = at + 1 > t->queue_last + 1 ? at + 1 : t->queue_last + 1;
    if (t->sequencer_begun[seq] > leaves)
        leaves = t->sequencer_begun[seq];
    uint64_t start = leaves > t->vset_ready ? leaves : t->vset_ready;
    if (t->sequencer_free[seq] > start)
        start = t->sequencer_free[seq];
    *done = 0; /* (chained: it begins once its sources' first results are there, and ends after theirs) */
    for (int i = 0; i < count; i++) {
        if (vs[i] >= 32)
            continue;
        if (t->vready[vs[i]] > start)
            start = t->vready[vs[i]];
        if (t->vdone[vs[i]] + 1 > *done) {
            *done = t->vdone[vs[i]] + 1;
            *why = t->vwhy[vs[i]];
        }
    }
    t->queue_last = leaves;
    t->sequencer_begun[seq] = start;
    t->queue[t->queued % TIMING_QUEUE_MAX] = t->queue_last;
    t->queued++;
    t->vector_ops++;
    return start;
}

/* An OP-V instruction's occupancy and latency, from its funct3, funct6, the vtype and vl. */
static void vector_costs(const Timing *t, uint32_t insn, uint64_t vtype, uint64_t vl, uint64_t *busy, uint64_t *latency,
                         uint64_t *dest) {
    uint32_t f3 = field(insn, 14, 12), f6 = field(insn, 31, 26);
    uint64_t b = beats(t, vtype, 0), sew = sew_of(vtype);
    uint64_t lat = PARAM(t, v_alu_latency);
    int lmul = (int)(vtype & 7);
    uint64_t lmul_x8 = lmul >= 4 ? (8u >> (8 - lmul)) : 8u << lmul; /* LMUL times 8 */
    uint64_t reduction = 2 * (lmul_x8 / 8 ? lmul_x8 / 8 : 1) +
                         PARAM(t, v_reduction_step) * (4 + (uint64_t)log2_of(PARAM(t, dlen) / sew));
    uint64_t group = lmul_x8 / 8 ? lmul_x8 / 8 : 1, one = 1;
    *dest = group; /* (a reduction, a mask or a scalar result writes one register; a widening op two groups) */
    if ((f3 == 0 || f3 == 3 || f3 == 4) && ((f6 >= 0x18 && f6 <= 0x1f) || f6 == 0x30 || f6 == 0x31 ||
                                           (f6 >= 0x10 && f6 <= 0x13 && (f6 & 1))))
        *dest = one;
    if ((f3 == 2 || f3 == 6) && (f6 <= 0x07 || f6 == 0x10 || (f6 >= 0x18 && f6 <= 0x1f) || f6 == 0x14))
        *dest = one;
    if ((f3 == 1 || f3 == 5) && (f6 == 0x01 || f6 == 0x03 || f6 == 0x05 || f6 == 0x07 || f6 == 0x10 ||
                                 (f6 >= 0x18 && f6 <= 0x1f) || f6 == 0x31 || f6 == 0x33))
        *dest = one;
    if (f6 >= 0x30 && *dest == group && !(f3 == 0 || f3 == 3 || f3 == 4))
        *dest = group * 2 > 8 ? 8 : group * 2;
    if (f3 == 0 || f3 == 3 || f3 == 4) { /* OPIV* */
        if (f6 >= 0x18 && f6 <= 0x1f) lat += PARAM(t, v_compare_extra);
        else if ((f6 >= 0x20 && f6 <= 0x23) || (f6 >= 0x26 && f6 <= 0x27) || (f6 >= 0x2a && f6 <= 0x2f)) lat = PARAM(t, v_wide_latency);
        else if (f6 == 0x30 || f6 == 0x31) { b = reduction; lat = 0; }
        else if (f6 == 0x0c || f6 == 0x0e) { b = vl > b ? vl : b; } /* vrgather: an element a cycle */
        else if (f6 == 0x17) lat = PARAM(t, v_move_latency);
    } else if (f3 == 2 || f3 == 6) { /* OPMV* */
        if (f6 <= 0x07) { b = reduction; lat = 0; }
        else if (f6 <= 0x0f) lat = PARAM(t, v_wide_latency);
        else if (f6 == 0x17) { b = vl > b ? vl : b; } /* vcompress */
        else if (f6 >= 0x20 && f6 <= 0x23) {
            uint64_t factor = sew == 8 ? PARAM(t, v_div_factor_8) : sew == 16 ? PARAM(t, v_div_factor_16)
                            : sew == 32 ? PARAM(t, v_div_factor_32) : PARAM(t, v_div_factor_64);
            b = factor * (PARAM(t, vlen) / sew * lmul_x8 / 8 / 4 ? PARAM(t, vlen) / sew * lmul_x8 / 8 / 4 : 1);
        } else if (f6 >= 0x28) { lat = f6 >= 0x30 ? PARAM(t, v_wide_latency) : PARAM(t, v_alu_latency); if (f6 >= 0x30) b *= 2; }
        else if (f6 == 0x10 || f6 == 0x14) lat = PARAM(t, v_move_latency);
    } else { /* OPFV* */
        lat = PARAM(t, v_fp_latency);
        if (f6 == 0x01 || f6 == 0x05 || f6 == 0x07 || f6 == 0x31) { b = reduction; lat = 0; }
        else if (f6 == 0x03 || f6 == 0x33) { b = PARAM(t, v_ordered_per_element) * (vl ? vl : 1); lat = 0; }
        else if (f6 == 0x04 || f6 == 0x06 || (f6 >= 0x08 && f6 <= 0x0a) || f6 == 0x0e || f6 == 0x0f ||
                 f6 == 0x10 || f6 == 0x17) lat = PARAM(t, v_move_latency);
        else if (f6 == 0x20 || f6 == 0x21 || (f6 == 0x13 && field(insn, 19, 15) == 0)) {
            uint64_t factor = sew == 16 ? PARAM(t, v_div_factor_16) : sew == 32 ? PARAM(t, v_div_factor_32)
                            : PARAM(t, v_div_factor_64);
            b = factor * (PARAM(t, vlen) / sew * lmul_x8 / 8 / 4 ? PARAM(t, vlen) / sew * lmul_x8 / 8 / 4 : 1);
        } else if (f6 >= 0x30) b *= 2;
    }
    *busy = b;
    *latency = lat;
}

/* A vector load's or store's lines, through the tile: the cycles they keep the sequencer. */
static uint64_t vector_lines(Timing *t, uint64_t first, uint64_t last, int store, int *why) {
    uint64_t cycles = 0, worst = 0;
    *why = WENT_VECTOR;
    for (uint64_t line = first / 64; line <= last / 64; line++) {
        int level = look_up(t, line * 64, store);
        uint64_t c = miss_cycles(t, level, 1);
        /* (a store of the whole line needs none of its old bytes: no fill from below the L2) */
        if (store && line * 64 >= first && line * 64 + 63 <= last && c > PARAM(t, vector_l2_line)) {
            c = PARAM(t, vector_l2_line);
            level = 2;
        }
        cycles += c;
        if (c > worst && level != 1) {
            worst = c;
            *why = level_went[level];
        }
    }
    return cycles;
}

/* The cycles an uncached line keeps a vector load busy: the tile lets at most
 * UNCACHED_READERS harts read the uncached alias at a time, and a third crowds it. */
static uint64_t uncached_line_cycles(Timing *t) {
    TimingTile *tile = t->shared;
    uint64_t now = t->now, window = PARAM(t, uncached_window);
    int me = (int)t->hart;
    /* (a hart's reads are one stretch while no gap of WINDOW parts them; two harts read at
     * once when their stretches overlap, give or take WINDOW: the cores' turns interleave
     * their clocks only so finely) */
    if (!tile->uncached_at[me] || now > tile->uncached_at[me] - 1 + window)
        tile->uncached_from[me] = now + 1;
    tile->uncached_at[me] = now + 1;
    uint64_t readers = 0;
    for (int h = 0; h < TILE_HARTS; h++) {
        uint64_t from = tile->uncached_from[h], last = tile->uncached_at[h];
        if (last && from - 1 <= now + window && now <= last - 1 + window)
            readers++;
    }
    return readers <= 1 ? PARAM(t, uncached_line_one)
         : readers <= PARAM(t, uncached_readers) ? PARAM(t, uncached_line_two) : PARAM(t, uncached_line_crowded);
}

/* A vector load or store D (its base A, its stride B) issued at AT: its sequencer is busy
 * for its beats or its elements, or for its lines where memory is slower than that. */
static void vector_access(Timing *t, const Decoded *d, const VectorUnit *v, uint64_t base, uint64_t stride, uint64_t at,
                          uint64_t uncached_lines) {
    uint32_t insn = d->insn;
    int store = (insn & 0x7f) == 0x27;
    uint32_t width = field(insn, 14, 12), mop = field(insn, 27, 26), lumop = field(insn, 24, 20);
    uint64_t eew = width == 0 ? 1 : width == 5 ? 2 : width == 6 ? 4 : 8, nf = field(insn, 31, 29) + 1;
    uint64_t vl = v->vl, vd = field(insn, 11, 7);
    uint64_t b = beats(t, v->vtype, 0), busy, latency, line_cycles = 0;
    int why = WENT_VECTOR, seq = store ? 2 : 1;
    if (uncached_lines) { /* the uncached alias: no cache looked up */
        line_cycles = uncached_lines * uncached_line_cycles(t);
        why = WENT_UNCACHED;
    }
    if (mop == 0) { /* unit-stride */
        uint64_t bytes = lumop == 8 ? nf * PARAM(t, vlen) / 8 : lumop == 11 ? (vl + 7) / 8 : vl * eew * nf;
        if (bytes && !uncached_lines)
            line_cycles = vector_lines(t, base, base + bytes - 1, store, &why);
        uint64_t own = bytes * 8 / PARAM(t, dlen);
        busy = own > b ? own : b;
        latency = store ? PARAM(t, v_store_latency) : PARAM(t, v_load_latency);
    } else { /* strided (2) or indexed (1, 3): an element a cycle */
        uint32_t vs2 = field(insn, 24, 20);
        uint64_t index_bytes = eew; /* (an indexed access's EEW is its index's; its data's is SEW) */
        uint64_t data_bytes = sew_of(v->vtype) / 8;
        for (uint64_t i = 0; i < vl && !uncached_lines; i++) {
            uint64_t address = base + i * stride, size = eew * nf;
            if (mop != 2) {
                uint64_t offset = 0;
                if (vs2 * 64 + (i + 1) * index_bytes <= sizeof v->reg)
                    __builtin_memcpy(&offset, &v->reg[0][0] + vs2 * 64 + i * index_bytes, index_bytes);
                address = base + offset;
                size = data_bytes * nf;
            }
            int w = WENT_VECTOR;
            uint64_t c = vector_lines(t, address, address + size - 1, store, &w);
            line_cycles += c;
            if (c)
                why = w;
        }
        busy = vl * nf > b ? vl * nf : b;
        latency = PARAM(t, v_element_latency);
    }
    if (line_cycles > busy) /* the memory, not the datapath, keeps the sequencer */
        busy = line_cycles;
    else
        why = WENT_VECTOR;
    uint8_t vs[2] = {(uint8_t)(store ? vd : 0xff), (uint8_t)(mop == 1 || mop == 3 ? field(insn, 24, 20) : 0xff)};
    t->sequencer_why[seq] = (uint8_t)why;
    int chained = WENT_VECTOR;
    uint64_t done, start = dispatch(t, at, seq, vs, 2, &done, &chained);
    uint64_t end = start + busy > done ? start + busy : done;
    if (done > start + busy) /* (its source's memory, not its own, sets its end) */
        why = chained;
    t->sequencer_free[seq] = end;
    t->sequencer_why[seq] = (uint8_t)why;
    if (!store) {
        int lmul = (int)(v->vtype & 7);
        uint64_t group = lmul >= 4 ? 1 : 1u << lmul;
        uint64_t first = line_cycles > busy / 2 && line_cycles ? start + line_cycles / (busy / b ? busy / b : 1) : start;
        for (uint64_t r = 0; r < nf * group && vd + r < 32; r++) {
            t->vready[vd + r] = first + latency;
            t->vdone[vd + r] = end + latency;
            t->vwhy[vd + r] = (uint8_t)why;
        }
    }
}

static void vector_arith(Timing *t, const Decoded *d, const VectorUnit *v, uint64_t at, const Shape *s) {
    uint32_t insn = d->insn;
    uint64_t busy, latency, dest;
    vector_costs(t, insn, v->vtype, v->vl, &busy, &latency, &dest);
    uint8_t vs[3] = {(uint8_t)field(insn, 24, 20), 0xff, 0xff};
    uint32_t f3 = field(insn, 14, 12);
    if (f3 == 0 || f3 == 1 || f3 == 2)
        vs[1] = (uint8_t)field(insn, 19, 15);
    if (!field(insn, 25, 25))
        vs[2] = 0; /* masked: v0 */
    int why = WENT_VECTOR;
    uint64_t done, start = dispatch(t, at, 0, vs, 3, &done, &why);
    uint64_t end = start + busy > done ? start + busy : done;
    if (done <= start + busy)
        why = WENT_VECTOR;
    t->sequencer_free[0] = end;
    t->sequencer_why[0] = (uint8_t)why;
    uint64_t vd = field(insn, 11, 7);
    for (uint64_t r = 0; s->rd == NONE && r < dest && vd + r < 32; r++) {
        t->vready[vd + r] = start + latency;
        t->vdone[vd + r] = end + latency;
        t->vwhy[vd + r] = (uint8_t)why;
    }
    if (s->rd != NONE) /* a scalar result: the scalar side waits for the whole of it */
        produce(t, s->rd, end + latency, why);
}

/* -- branches ----------------------------------------------------------------------------- */

static inline uint32_t bht_index(const Timing *t, uint64_t pc) {
    return (uint32_t)((pc >> 1) & (PARAM(t, bht_entries) - 1));
}
static inline uint32_t btb_index(const Timing *t, uint64_t pc) {
    return (uint32_t)((pc >> 1) % PARAM(t, btb_entries));
}

/* The branch or jump of SHAPE at PC went to NEXT (the instruction after it: FALL): whether
 * the front end had guessed it, and it learns. */
static void resolve(Timing *t, const Shape *s, uint32_t insn, uint64_t pc, uint64_t fall, uint64_t next) {
    int right = 1;
    if (s->cls == TC_BRANCH) {
        uint8_t *counter = &t->bht[bht_index(t, pc)];
        int taken = next != fall, guess = *counter >= 2;
        if (taken && *counter < 3) (*counter)++;
        if (!taken && *counter > 0) (*counter)--;
        right = guess == taken;
        if (right && taken) { /* the target, from the BTB */
            uint32_t i = btb_index(t, pc);
            right = t->btb_pc[i] == pc && t->btb_target[i] == next;
        }
        if (taken) {
            uint32_t i = btb_index(t, pc);
            t->btb_pc[i] = pc;
            t->btb_target[i] = next;
        }
        t->branches++;
    } else if (s->cls == TC_JAL) {
        if (s->rd == 1 || s->rd == 5) { /* a call: its return address goes on the stack */
            t->ras[t->ras_top % PARAM(t, ras_entries)] = fall;
            t->ras_top++;
        }
        return; /* (its target is in the instruction) */
    } else { /* jalr */
        uint32_t rs1 = field(insn, 19, 15), rd = field(insn, 11, 7);
        if ((rs1 == 1 || rs1 == 5) && rd != rs1 && rd == 0) { /* a return */
            uint64_t guess = 0;
            if (t->ras_top) {
                t->ras_top--;
                guess = t->ras[t->ras_top % PARAM(t, ras_entries)];
            }
            right = guess == next;
        } else {
            uint32_t i = btb_index(t, pc);
            right = t->btb_pc[i] == pc && t->btb_target[i] == next;
            t->btb_pc[i] = pc;
            t->btb_target[i] = next;
            if (rd == 1 || rd == 5) {
                t->ras[t->ras_top % PARAM(t, ras_entries)] = fall;
                t->ras_top++;
            }
        }
        t->branches++;
    }
    if (!right) {
        t->mispredicts++;
        wait_until(t, t->now + PARAM(t, branch_penalty), WENT_BRANCH);
    } else if (next != fall && PARAM(t, taken_bubble)) {
        wait_until(t, t->now + PARAM(t, taken_bubble), WENT_BRANCH);
    }
}

/* -- one instruction ---------------------------------------------------------------------- */

/* Time SHAPE (the instruction INSN at PC, LENGTH bytes), which went on at NEXT (0: not
 * known). ADDRESS/END: a scalar access's bytes (END 0: none, or not known: an L1D hit). */
static void step(Timing *t, const Shape *s, uint32_t insn, uint64_t pc, uint32_t length, uint64_t next,
                 uint64_t address, uint64_t end, uint64_t a, uint64_t b, int operands) {
    uint64_t at, uncached = t->uncached;
    t->uncached = t->uncached_lines = t->uncached_line = 0;
    if (uncached) /* its accesses went through the uncached alias: past the caches */
        end = 0;
    switch (s->cls) {
    case TC_DIV: case TC_DIVW: {
        at = issue(t, s);
        if (t->divider_free > at) {
            wait_until(t, t->divider_free, WENT_DIVIDE);
            at = t->now;
        }
        int word = s->cls == TC_DIVW, is_signed = !(field(insn, 12, 12)); /* div, rem: funct3 4, 6 */
        uint64_t cycles = operands ? divide_cycles(t, a, b, word, is_signed)
                                   : word ? PARAM(t, div_unknown_32) : PARAM(t, div_unknown_64);
        t->divider_free = at + cycles;
        produce(t, s->rd, at + cycles, WENT_DIVIDE);
        return;
    }
    case TC_FP_DIV: {
        at = issue(t, s);
        if (t->fp_divider_free > at) {
            wait_until(t, t->fp_divider_free, WENT_DIVIDE);
            at = t->now;
        }
        uint64_t cycles = s->format == 2 ? PARAM(t, fp_div_half) : s->format == 1 ? PARAM(t, fp_div_double)
                                                                                 : PARAM(t, fp_div_single);
        t->fp_divider_free = at + cycles;
        produce(t, s->rd, at + cycles, WENT_DIVIDE);
        return;
    }
    case TC_LOAD: case TC_FLOAD: case TC_AMO: {
        at = issue(t, s);
        int why = WENT_LOAD_USE;
        uint64_t extra = end ? scalar_access(t, at, address, end, s->cls == TC_AMO, &why) : 0;
        if (uncached) { /* a round trip, one at a time */
            if (t->memory_free > t->now)
                wait_until(t, t->memory_free, t->memory_why);
            extra = uncached * PARAM(t, uncached_scalar);
            why = WENT_UNCACHED;
            t->memory_free = t->now + extra;
            t->memory_why = WENT_UNCACHED;
        }
        at = t->now;
        uint64_t latency = s->cls == TC_AMO ? PARAM(t, amo_latency) : PARAM(t, load_latency);
        produce(t, s->rd, at + latency + extra, why);
        return;
    }
    case TC_STORE: case TC_FSTORE: { /* a store waits for no line: its miss fills behind it */
        at = issue(t, s);
        if (end)
            for (uint64_t line = address / 64; line <= (end - 1) / 64; line++)
                look_up(t, line * 64, 1);
        if (uncached) { /* the uncached alias takes one store at a time */
            if (t->memory_free > t->now)
                wait_until(t, t->memory_free, t->memory_why);
            t->memory_free = t->now + uncached * PARAM(t, uncached_line_one);
            t->memory_why = WENT_UNCACHED;
        }
        return;
    }
    case TC_CSR: at = issue(t, s); produce(t, s->rd, at + PARAM(t, csr_latency), WENT_DEPENDENCY); return;
    case TC_FENCE: at = issue(t, s); wait_until(t, at + PARAM(t, fence_cycles), WENT_ISSUE); return;
    case TC_CALL: at = issue(t, s); return; /* (the call's own cost: timing_call) */
    case TC_MUL: at = issue(t, s); produce(t, s->rd, at + PARAM(t, mul_latency), WENT_DEPENDENCY); return;
    case TC_FP: at = issue(t, s); produce(t, s->rd, at + fp_latency(t, s->format), WENT_DEPENDENCY); return;
    case TC_FP_MOVE: at = issue(t, s); produce(t, s->rd, at + PARAM(t, fp_move), WENT_DEPENDENCY); return;
    case TC_FP_CONVERT: at = issue(t, s); produce(t, s->rd, at + PARAM(t, fp_convert), WENT_DEPENDENCY); return;
    case TC_BRANCH: case TC_JAL: case TC_JALR:
        at = issue(t, s);
        produce(t, s->rd, at + PARAM(t, alu_latency), WENT_DEPENDENCY);
        if (next)
            resolve(t, s, insn, pc, pc + length, next);
        return;
    default:
        at = issue(t, s);
        produce(t, s->rd, at + PARAM(t, alu_latency), WENT_DEPENDENCY);
        return;
    }
}

/* The engine's last block ended in a branch or jump whose outcome the next pc, PC, says. */
static void settle(Timing *t, uint64_t pc) {
    if (!t->pending_pc)
        return;
    Shape s = shape_of(t->pending_insn);
    resolve(t, &s, t->pending_insn, t->pending_pc, t->pending_next, pc);
    t->pending_pc = 0;
}

/* The interpreter ran D (isa.c), which went on at NEXT; A and B were its rs1 and rs2 before. */
static void timing_step_of(Timing *t, Hart *h, const Decoded *d, uint64_t next, uint64_t a, uint64_t b);

void timing_step(Hart *h, const Decoded *d, uint64_t next, uint64_t a, uint64_t b) {
    Timing *t = h->core->timing;
    uint64_t before = t->now;
    timing_step_of(t, h, d, next, a, b);
    t->last_cost = t->now - before;
}

static void timing_step_of(Timing *t, Hart *h, const Decoded *d, uint64_t next, uint64_t a, uint64_t b) {
    if (__builtin_expect(t->pending_pc != 0, 0))
        settle(t, d->pc);
    Shape s = shape_of(d->insn);
    if (s.cls == TC_VLOAD || s.cls == TC_VSTORE) {
        uint64_t at = issue(t, &s), lines = t->uncached ? (t->uncached_lines ? t->uncached_lines : 1) : 0;
        t->uncached = t->uncached_lines = t->uncached_line = 0;
        vector_access(t, d, &h->scratch->vector, a, b, at, lines);
        return;
    }
    if (s.cls == TC_VECTOR) {
        uint64_t at = issue(t, &s);
        vector_arith(t, d, &h->scratch->vector, at, &s);
        return;
    }
    if (s.cls == TC_VSET) { /* vl to the scalar side at once (min(AVL, VLMAX)); vtype and vl to the unit later */
        uint64_t at = issue(t, &s);
        produce(t, s.rd, at + PARAM(t, alu_latency), WENT_DEPENDENCY);
        t->vset_ready = at + PARAM(t, vsetvl_latency);
        return;
    }
    uint64_t address = 0, end = 0;
    if (s.cls == TC_LOAD || s.cls == TC_STORE || s.cls == TC_FLOAD || s.cls == TC_FSTORE || s.cls == TC_AMO) {
        uint32_t f3 = field(d->insn, 14, 12) & 3;
        address = s.cls == TC_AMO ? a : a + (uint64_t)d->imm;
        end = address + (1u << f3);
    }
    step(t, &s, d->insn, d->pc, d->length, next, address, end, a, b, 1);
}

/* The engine's last block's uncached accesses (it does not say which instruction made
 * them): each a scalar round trip, before the next block (turns.c), engine's or not. */
void timing_drain(Core *core) {
    Timing *t = core->timing;
    if (t->uncached) {
        wait_until(t, t->now + t->uncached * PARAM(t, uncached_scalar), WENT_UNCACHED);
        t->uncached = t->uncached_lines = t->uncached_line = 0;
    }
}

/* The engine is about to run the block at ADDRESS, SIZE bytes (turns.c): time its
 * instructions from their encodings (each access an L1D hit: the engine does not say
 * where its accesses go). A branch or jump at its end is settled by the next block. */
void timing_block(Core *core, uint64_t address, uint32_t size) {
    Timing *t = core->timing;
    uint64_t before = t->now;
    t->last_cost = 0;
    settle(t, address);
    timing_drain(core);
    Span *span = find_span(core, address);
    if (!span)
        return;
    const uint8_t *code = span->host + (address - span->base);
    t->engine_blocks++;
    for (uint32_t offset = 0; offset < size;) {
        uint32_t insn;
        uint32_t length = (code[offset] & 3) == 3 ? 4 : 2;
        if (length == 4) {
            __builtin_memcpy(&insn, code + offset, 4);
        } else {
            uint16_t c;
            __builtin_memcpy(&c, code + offset, 2);
            insn = expand(c);
        }
        Decoded decoded;
        decode(&decoded, insn, (int)length);
        if (decoded.op > OP_OWN) /* the engine traps there: isa_trap's interpreter times it, and what follows */
            break;
        Shape s = shape_of(insn);
        uint64_t pc = address + offset;
        offset += length;
        t->engine_instructions++;
        if ((s.cls == TC_BRANCH || s.cls == TC_JALR || s.cls == TC_JAL) && offset >= size) {
            step(t, &s, insn, pc, length, 0, 0, 0, 0, 0, 0);
            t->pending_pc = pc;
            t->pending_next = pc + length;
            t->pending_insn = insn;
        } else {
            step(t, &s, insn, pc, length, s.cls == TC_JAL ? pc : 0, 0, 0, 0, 0, 0); /* (a call's return address to the stack) */
        }
    }
    t->last_cost = t->now - before;
}

/* What an access through the door for time (latency.c) took, as the timing model counts
 * it: a flush's or an invalidate's lines. (The cached levels are the model's own; an
 * uncached access is timing_uncached's.) */
void timing_took(Core *core, int level, uint64_t lines) {
    Timing *t = core->timing;
    if (level == LEVEL_FLUSH || level == LEVEL_INVALIDATE) {
        uint64_t per = level == LEVEL_FLUSH ? PARAM(t, flush_line) : PARAM(t, invalidate_line);
        wait_until(t, t->now + per * lines, WENT_FLUSH);
    }
}

/* CORE's access at ADDRESS went through the uncached alias (watch.c): counted for the
 * instruction running, which timing_step then times (a vector access by its lines). */
void timing_uncached(Core *core, uint64_t address) {
    Timing *t = core->timing;
    t->uncached++;
    if (address / 64 + 1 != t->uncached_line) {
        t->uncached_line = address / 64 + 1;
        t->uncached_lines++;
    }
}

/* A kmx call NUMBER (kmx.h's KMX_CALL_*): what it costs the core. */
void timing_call(Core *core, uint64_t number) {
    Timing *t = core->timing;
    (void)number;
    wait_until(t, t->now + PARAM(t, call_cycles), WENT_CALLS);
}

/* Region bytes [ADDRESS, +SIZE) left the tile (an invalidate): the next access misses. */
void timing_invalidated(Timing *t, uint64_t address, uint64_t size) {
    if (size)
        tile_remove_range(&t->shared->tile, address / 64, (address + size + 63) / 64);
}

/* The core waited (blocked in a kmx_barrier) until another's clock said UNTIL. */
void timing_waited(Timing *t, uint64_t until) { wait_until(t, until, WENT_CALLS); }

/* The head Python mirrors (sim/native/hooks.py, TimingHead): its size, to check. */
uint64_t timing_head_size(void) { return __builtin_offsetof(Timing, slots); }
