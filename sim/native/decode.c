/* decode.c: the scalar instructions decoded from their table (scalar.def): which row an
 * instruction is, so which of the interpreter's operations runs it (isa.c, run_one; OP_* in
 * hart.h), and its operands; a compressed instruction is expanded first into the 32-bit
 * one it stands for. The interpreter decodes an instruction once and keeps it (isa.c,
 * fetch), so none of this is on its fast path.
 */
#include "hart.h"

/* scalar.def's FORMAT */
enum { FORMAT_R, FORMAT_R4, FORMAT_I, FORMAT_S, FORMAT_B, FORMAT_U, FORMAT_J, FORMAT_A, FORMAT_V };

/* scalar.def's OP of an instruction the interpreter does not run */
#define OP_ENGINE OP_UNKNOWN
#define OP_LACKS OP_UNKNOWN

/* The rows, numbered in scalar.def's order. */
enum {
    ROW_NONE = -1,
#define ROW(name, mask, match, format, op, access, extension) ROW_##name,
#include "scalar_rows.h"
    ROW_COUNT
};

/* scalar.def's ACCESS, as Row.access holds it: the size in bytes, and what the access
 * does (hart.h's ACCESS_LOADS, ACCESS_STORES) */
#define LOAD_S(n) (ACCESS_LOADS | (n))
#define LOAD_U(n) (ACCESS_LOADS | (n))
#define LOAD(n) (ACCESS_LOADS | (n))
#define STORE(n) (ACCESS_STORES | (n))
#define AMO(n) (ACCESS_LOADS | ACCESS_STORES | (n))
#define NONE 0

typedef struct {
    uint32_t mask, match;
    uint16_t op;
    uint8_t format;
    uint16_t access;
} Row;

static const Row rows[ROW_COUNT] = {
#define ROW(name, mask, match, format, op, access, extension) {mask, match, OP_##op, FORMAT_##format, access},
#include "scalar_rows.h"
};

/* The row of the 32-bit instruction INSN (ROW_NONE: none): its major opcode's rows, first
 * match (scalar.def's rows are disjoint, or the inner one first). */
static int row_of(uint32_t insn) {
    switch (insn & 0x7F) {
    default: /* (each MAJOR ends the rows before it) */
#define MAJOR(opcode) break; case opcode:
#define ROW(name, mask, match, format, op, access, extension) if ((insn & (mask)) == (match)) return ROW_##name;
#include "scalar_rows.h"
    }
    return ROW_NONE;
}

static int64_t immediate(uint32_t insn, int format) {
    switch (format) {
    case FORMAT_U: return (int64_t)(int32_t)(insn & 0xFFFFF000u);
    case FORMAT_J:
        return sext((bits(insn, 31, 31) << 20) | (bits(insn, 19, 12) << 12) | (bits(insn, 20, 20) << 11) |
                    (bits(insn, 30, 21) << 1), 21);
    case FORMAT_B:
        return sext((bits(insn, 31, 31) << 12) | (bits(insn, 7, 7) << 11) | (bits(insn, 30, 25) << 5) |
                    (bits(insn, 11, 8) << 1), 13);
    case FORMAT_S: return sext((bits(insn, 31, 25) << 5) | bits(insn, 11, 7), 12);
    default: return sext(insn >> 20, 12); /* I (and the rest, whose immediate no one reads) */
    }
}

void decode(Decoded *d, uint32_t insn, int length) {
    int row = row_of(insn);
    int op = row == ROW_NONE ? OP_UNKNOWN : rows[row].op;
    if (op == OP_VCSR && !is_vector_csr(insn >> 20))
        op = OP_UNKNOWN; /* (a CSR of the engine's) */
    d->insn = insn;
    d->length = (uint8_t)length;
    d->op = (uint16_t)op;
    d->own = d->op > OP_OWN;
    d->rd = (uint8_t)bits(insn, 11, 7);
    d->rs1 = (uint8_t)bits(insn, 19, 15);
    d->rs2 = (uint8_t)bits(insn, 24, 20);
    d->rs3 = (uint8_t)(insn >> 27);
    d->rm = (uint8_t)bits(insn, 14, 12);
    d->imm = immediate(insn, row == ROW_NONE ? FORMAT_I : rows[row].format);
}

/* The memory INSN (32 bits; a compressed one expanded) accesses, as the registers X hold
 * them now: ACCESS_VECTOR for a vector load or store (its elements are the unit's), else
 * its size in bytes, *ADDRESS and in *KIND whether it loads (ACCESS_LOADS), stores
 * (ACCESS_STORES) or both (an AMO); 0 for an instruction that accesses no memory. */
int memory_access(uint32_t insn, const uint64_t x[32], uint64_t *address, int *kind) {
    int row = row_of(insn);
    if (row == ROW_NONE)
        return 0;
    if (rows[row].op == OP_VLOAD || rows[row].op == OP_VSTORE)
        return ACCESS_VECTOR;
    if (!rows[row].access)
        return 0;
    int64_t offset = rows[row].format == FORMAT_A ? 0 : immediate(insn, rows[row].format);
    *address = x[bits(insn, 19, 15)] + (uint64_t)offset;
    *kind = rows[row].access & (ACCESS_LOADS | ACCESS_STORES);
    return rows[row].access & 0xFF;
}

/* -- the compressed instructions ------------------------------------------------------------ */

enum { FIELD_R11_7, FIELD_R6_2, FIELD_R9_7, FIELD_R4_2, FIELD_X0, FIELD_X1, FIELD_X2 };
enum { ALWAYS = 0, NONZERO_IMM = 1, NONZERO_R11_7 = 2, NONZERO_R6_2 = 4, NOT_X2_R11_7 = 8 };
#define SIGNED 1
#define UNSIGNED 0

typedef struct {
    int8_t bit[11]; /* the immediate's bit that the instruction's bit 12 - i holds (-1: none) */
    uint8_t sign;
} Layout;

enum {
#define IMMEDIATE(name, sign, b12, b11, b10, b9, b8, b7, b6, b5, b4, b3, b2) IMM_##name,
#include "scalar_rows.h"
};

static const Layout layouts[] = {
#define IMMEDIATE(name, sign, b12, b11, b10, b9, b8, b7, b6, b5, b4, b3, b2) {{b12, b11, b10, b9, b8, b7, b6, b5, b4, b3, b2}, sign},
#include "scalar_rows.h"
};

static int64_t compressed_immediate(uint16_t c, const Layout *layout) {
    uint64_t value = 0;
    int top = -1;
    for (int i = 0; i < 11; i++) {
        int to = layout->bit[i];
        if (to < 0)
            continue;
        value |= (uint64_t)((c >> (12 - i)) & 1) << to;
        top = to > top ? to : top;
    }
    return layout->sign && top >= 0 ? sext(value, top + 1) : (int64_t)value;
}

static uint32_t register_of(uint16_t c, int field) {
    switch (field) {
    case FIELD_R11_7: return bits(c, 11, 7);
    case FIELD_R6_2: return bits(c, 6, 2);
    case FIELD_R9_7: return 8 + bits(c, 9, 7);
    case FIELD_R4_2: return 8 + bits(c, 4, 2);
    case FIELD_X1: return 1;
    case FIELD_X2: return 2;
    }
    return 0;
}

/* Row TO's instruction with these operands. */
static uint32_t encode(int to, uint32_t rd, uint32_t rs1, uint32_t rs2, int64_t imm) {
    uint32_t i = (uint32_t)imm, out = rows[to].match | rd << 7 | rs1 << 15 | rs2 << 20;
    switch (rows[to].format) {
    case FORMAT_I: return out | (i & 0xFFF) << 20;
    case FORMAT_S: return out | (i >> 5 & 0x7F) << 25 | (i & 0x1F) << 7;
    case FORMAT_B: return out | (i >> 12 & 1) << 31 | (i >> 5 & 0x3F) << 25 | (i >> 1 & 0xF) << 8 | (i >> 11 & 1) << 7;
    case FORMAT_U: return out | (i & 0xFFFFF000u);
    case FORMAT_J: return out | (i >> 20 & 1) << 31 | (i >> 1 & 0x3FF) << 21 | (i >> 11 & 1) << 20 | (i >> 12 & 0xFF) << 12;
    }
    return out; /* (R: no immediate) */
}

/* The instruction a compressed row makes of C, or 0 when its WHEN does not hold. */
static uint32_t expanded(uint16_t c, int to, int rd, int rs1, int rs2, int layout, int when) {
    int64_t imm = compressed_immediate(c, &layouts[layout]);
    if (to == ROW_NONE || ((when & NONZERO_IMM) && imm == 0) || ((when & NONZERO_R11_7) && bits(c, 11, 7) == 0) ||
        ((when & NONZERO_R6_2) && bits(c, 6, 2) == 0) || ((when & NOT_X2_R11_7) && bits(c, 11, 7) == 2))
        return 0;
    return encode(to, register_of(c, rd), register_of(c, rs1), register_of(c, rs2), imm);
}

uint32_t expand(uint16_t c) {
    uint32_t insn;
#define COMPRESSED(name, mask, match, to, rd, rs1, rs2, immediate, when, extension)                         \
    if ((c & (mask)) == (match) &&                                                                           \
        (insn = expanded(c, ROW_##to, FIELD_##rd, FIELD_##rs1, FIELD_##rs2, IMM_##immediate, when)) != 0) \
        return insn;
#include "scalar_rows.h"
    return 0;
}

/* For the tests (tests/isa/test_scalar_table.py): what the decoder makes of WORD, a 32-bit
 * instruction, or a compressed one in its low 16 bits: OUT = {its row (scalar.def's order;
 * -1: none), op, own, imm, the 32-bit instruction (a compressed one's expansion; 0: none)}.
 * Returns the count of rows. */
int64_t isa_decode_word(uint32_t word, int64_t out[5]) {
    int compressed = (word & 3) != 3;
    uint32_t insn = compressed ? expand((uint16_t)word) : word;
    Decoded d;
    decode(&d, insn, compressed ? 2 : 4);
    out[0] = row_of(insn);
    out[1] = d.op;
    out[2] = d.own;
    out[3] = d.imm;
    out[4] = insn;
    return ROW_COUNT;
}
