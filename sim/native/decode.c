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

typedef struct {
    uint32_t mask, match;
    uint16_t op;
    uint8_t format;
} Row;

static const Row rows[ROW_COUNT] = {
#define ROW(name, mask, match, format, op, access, extension) {mask, match, OP_##op, FORMAT_##format},
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

/* ==== TEMPORARY: the old decoder, for the one-off comparison ==== */
static int64_t old_sext(uint64_t value, int bits) { return (int64_t)(value << (64 - bits)) >> (64 - bits); }
/* A compressed instruction as the 32-bit one it stands for (0: none the interpreter runs). */
static uint32_t old_expand(uint16_t c) {
    uint32_t q = c & 3, f3 = c >> 13;
    uint32_t rdp = 8 + bits(c, 4, 2), rs1p = 8 + bits(c, 9, 7), rd = bits(c, 11, 7), rs2 = bits(c, 6, 2);
#define I_TYPE(imm, rs1, f3_, rd_, opc) ((((uint32_t)(imm) & 0xFFF) << 20) | ((rs1) << 15) | ((f3_) << 12) | ((rd_) << 7) | (opc))
#define S_TYPE(imm, rs2_, rs1, f3_, opc) (((((uint32_t)(imm) >> 5) & 0x7F) << 25) | ((rs2_) << 20) | ((rs1) << 15) | ((f3_) << 12) | (((uint32_t)(imm) & 0x1F) << 7) | (opc))
#define R_TYPE(f7, rs2_, rs1, f3_, rd_, opc) (((f7) << 25) | ((rs2_) << 20) | ((rs1) << 15) | ((f3_) << 12) | ((rd_) << 7) | (opc))
    if (q == 0) {
        uint32_t ld = (bits(c, 12, 10) << 3) | (bits(c, 6, 5) << 6);
        uint32_t lw = (bits(c, 12, 10) << 3) | (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 6);
        switch (f3) {
        case 0: { /* c.addi4spn */
            uint32_t imm = (bits(c, 12, 11) << 4) | (bits(c, 10, 7) << 6) | (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 3);
            return imm ? I_TYPE(imm, 2, 0, rdp, 0x13) : 0;
        }
        case 1: return I_TYPE(ld, rs1p, 3, rdp, 0x07); /* c.fld */
        case 2: return I_TYPE(lw, rs1p, 2, rdp, 0x03); /* c.lw */
        case 3: return I_TYPE(ld, rs1p, 3, rdp, 0x03); /* c.ld */
        case 5: return S_TYPE(ld, rdp, rs1p, 3, 0x27); /* c.fsd */
        case 6: return S_TYPE(lw, rdp, rs1p, 2, 0x23); /* c.sw */
        case 7: return S_TYPE(ld, rdp, rs1p, 3, 0x23); /* c.sd */
        }
        return 0;
    }
    if (q == 1) {
        int32_t imm6 = (int32_t)old_sext((bits(c, 12, 12) << 5) | bits(c, 6, 2), 6);
        switch (f3) {
        case 0: return I_TYPE(imm6, rd, 0, rd, 0x13); /* c.addi, c.nop */
        case 1: return rd ? I_TYPE(imm6, rd, 0, rd, 0x1B) : 0; /* c.addiw */
        case 2: return I_TYPE(imm6, 0, 0, rd, 0x13); /* c.li */
        case 3:
            if (rd == 2) { /* c.addi16sp */
                int32_t imm = (int32_t)old_sext((bits(c, 12, 12) << 9) | (bits(c, 6, 6) << 4) | (bits(c, 5, 5) << 6) |
                                            (bits(c, 4, 3) << 7) | (bits(c, 2, 2) << 5), 10);
                return imm ? I_TYPE(imm, 2, 0, 2, 0x13) : 0;
            }
            if (imm6 == 0)
                return 0;
            return ((uint32_t)imm6 << 12 & 0xFFFFF000u) | (rd << 7) | 0x37; /* c.lui */
        case 4: {
            uint32_t shamt = (bits(c, 12, 12) << 5) | bits(c, 6, 2);
            switch (bits(c, 11, 10)) {
            case 0: return I_TYPE(shamt, rs1p, 5, rs1p, 0x13); /* c.srli */
            case 1: return I_TYPE(0x400 | shamt, rs1p, 5, rs1p, 0x13); /* c.srai */
            case 2: return I_TYPE(imm6, rs1p, 7, rs1p, 0x13); /* c.andi */
            }
            uint32_t r2 = 8 + bits(c, 4, 2);
            switch ((bits(c, 12, 12) << 2) | bits(c, 6, 5)) {
            case 0: return R_TYPE(0x20, r2, rs1p, 0, rs1p, 0x33); /* c.sub */
            case 1: return R_TYPE(0, r2, rs1p, 4, rs1p, 0x33); /* c.xor */
            case 2: return R_TYPE(0, r2, rs1p, 6, rs1p, 0x33); /* c.or */
            case 3: return R_TYPE(0, r2, rs1p, 7, rs1p, 0x33); /* c.and */
            case 4: return R_TYPE(0x20, r2, rs1p, 0, rs1p, 0x3B); /* c.subw */
            case 5: return R_TYPE(0, r2, rs1p, 0, rs1p, 0x3B); /* c.addw */
            }
            return 0;
        }
        case 5: { /* c.j */
            uint32_t imm = (bits(c, 12, 12) << 11) | (bits(c, 11, 11) << 4) | (bits(c, 10, 9) << 8) | (bits(c, 8, 8) << 10) |
                           (bits(c, 7, 7) << 6) | (bits(c, 6, 6) << 7) | (bits(c, 5, 3) << 1) | (bits(c, 2, 2) << 5);
            uint32_t i = (uint32_t)old_sext(imm, 12);
            return (bits(i, 20, 20) << 31) | (bits(i, 10, 1) << 21) | (bits(i, 11, 11) << 20) | (bits(i, 19, 12) << 12) | 0x6F;
        }
        case 6: case 7: { /* c.beqz, c.bnez */
            uint32_t imm = (bits(c, 12, 12) << 8) | (bits(c, 11, 10) << 3) | (bits(c, 6, 5) << 6) | (bits(c, 4, 3) << 1) |
                           (bits(c, 2, 2) << 5);
            uint32_t i = (uint32_t)old_sext(imm, 9);
            return (bits(i, 12, 12) << 31) | (bits(i, 10, 5) << 25) | (0 << 20) | (rs1p << 15) | ((f3 - 6) << 12) |
                   (bits(i, 4, 1) << 8) | (bits(i, 11, 11) << 7) | 0x63;
        }
        }
        return 0;
    }
    if (q == 2) {
        switch (f3) {
        case 0: { /* c.slli */
            uint32_t shamt = (bits(c, 12, 12) << 5) | bits(c, 6, 2);
            return rd ? I_TYPE(shamt, rd, 1, rd, 0x13) : 0;
        }
        case 1: { /* c.fldsp */
            uint32_t off = (bits(c, 12, 12) << 5) | (bits(c, 6, 5) << 3) | (bits(c, 4, 2) << 6);
            return I_TYPE(off, 2, 3, rd, 0x07);
        }
        case 2: { /* c.lwsp */
            uint32_t off = (bits(c, 12, 12) << 5) | (bits(c, 6, 4) << 2) | (bits(c, 3, 2) << 6);
            return rd ? I_TYPE(off, 2, 2, rd, 0x03) : 0;
        }
        case 3: { /* c.ldsp */
            uint32_t off = (bits(c, 12, 12) << 5) | (bits(c, 6, 5) << 3) | (bits(c, 4, 2) << 6);
            return rd ? I_TYPE(off, 2, 3, rd, 0x03) : 0;
        }
        case 4:
            if (!bits(c, 12, 12)) {
                if (rs2 == 0)
                    return rd ? I_TYPE(0, rd, 0, 0, 0x67) : 0; /* c.jr */
                return R_TYPE(0, rs2, 0, 0, rd, 0x33); /* c.mv */
            }
            if (rs2 == 0)
                return rd ? I_TYPE(0, rd, 0, 1, 0x67) : 0; /* c.jalr (c.ebreak: not here) */
            return R_TYPE(0, rs2, rd, 0, rd, 0x33); /* c.add */
        case 5: { /* c.fsdsp */
            uint32_t off = (bits(c, 12, 10) << 3) | (bits(c, 9, 7) << 6);
            return S_TYPE(off, rs2, 2, 3, 0x27);
        }
        case 6: { /* c.swsp */
            uint32_t off = (bits(c, 12, 9) << 2) | (bits(c, 8, 7) << 6);
            return S_TYPE(off, rs2, 2, 2, 0x23);
        }
        case 7: { /* c.sdsp */
            uint32_t off = (bits(c, 12, 10) << 3) | (bits(c, 9, 7) << 6);
            return S_TYPE(off, rs2, 2, 3, 0x23);
        }
        }
    }
    return 0;
}


static int old_decode_op(uint32_t insn) {
    uint32_t opcode = insn & 0x7F, f3 = bits(insn, 14, 12), f7 = insn >> 25, rs2 = bits(insn, 24, 20);
    uint32_t imm12 = insn >> 20;
    switch (opcode) {
    case 0x37: return OP_LUI;
    case 0x17: return OP_AUIPC;
    case 0x6F: return OP_JAL;
    case 0x67: return f3 == 0 ? OP_JALR : 0;
    case 0x63: {
        static const int ops[8] = {OP_BEQ, OP_BNE, 0, 0, OP_BLT, OP_BGE, OP_BLTU, OP_BGEU};
        return ops[f3];
    }
    case 0x03: {
        static const int ops[8] = {OP_LB, OP_LH, OP_LW, OP_LD, OP_LBU, OP_LHU, OP_LWU, 0};
        return ops[f3];
    }
    case 0x23: {
        static const int ops[8] = {OP_SB, OP_SH, OP_SW, OP_SD, 0, 0, 0, 0};
        return ops[f3];
    }
    case 0x07: return f3 == 1 ? OP_FLH : f3 == 2 ? OP_FLW : f3 == 3 ? OP_FLD : (f3 == 0 || f3 >= 5) ? OP_VLOAD : 0;
    case 0x27: return f3 == 1 ? OP_FSH : f3 == 2 ? OP_FSW : f3 == 3 ? OP_FSD : (f3 == 0 || f3 >= 5) ? OP_VSTORE : 0;
    case 0x57: return OP_VECTOR;
    case 0x5B: return f3 == 5 ? OP_VECTOR : 0; /* custom-2: SiFive's Xsfvfnrclipxfqf (OPFVF) */
    case 0x2F: { /* funct5: add 0, swap 1, (lr 2, sc 3), xor 4, or 8, and 12, min 16, max 20, minu 24, maxu 28 */
        uint32_t f5 = insn >> 27;
        if (f5 == 6 || f5 == 7) /* lr's and sc's stand-ins: funct5 + 4 (sim/isa/stand_in.py) */
            return f3 == 2 ? (f5 == 6 ? OP_LR_W : OP_SC_W) : f3 == 3 ? (f5 == 6 ? OP_LR_D : OP_SC_D) : 0;
        if (f5 == 2 || f5 == 3 || (f5 > 1 && (f5 & 3)))
            return 0;
        return f3 == 2 ? OP_AMO_W : f3 == 3 ? OP_AMO_D : 0;
    }
    case 0x73: return (f3 & 3) && is_vector_csr(insn >> 20) ? OP_VCSR : 0;
    case 0x13:
        switch (f3) {
        case 0: return OP_ADDI;
        case 2: return OP_SLTI;
        case 3: return OP_SLTIU;
        case 4: return OP_XORI;
        case 6: return OP_ORI;
        case 7: return OP_ANDI;
        case 1:
            if ((imm12 >> 6) == 0) return OP_SLLI;
            switch (imm12) {
            case 0x600: return OP_CLZ;
            case 0x601: return OP_CTZ;
            case 0x602: return OP_CPOP;
            case 0x604: return OP_SEXT_B;
            case 0x605: return OP_SEXT_H;
            }
            return 0;
        case 5:
            if ((imm12 >> 6) == 0) return OP_SRLI;
            if ((imm12 >> 6) == 0x10) return OP_SRAI;
            if ((imm12 >> 6) == 0x18) return OP_RORI;
            if (imm12 == 0x287) return OP_ORC_B;
            if (imm12 == 0x6B8) return OP_REV8;
            return 0;
        }
        return 0;
    case 0x1B:
        switch (f3) {
        case 0: return OP_ADDIW;
        case 1:
            if (f7 == 0) return OP_SLLIW;
            if ((imm12 >> 6) == 0x02) return OP_SLLI_UW;
            if (imm12 == 0x600) return OP_CLZW;
            if (imm12 == 0x601) return OP_CTZW;
            if (imm12 == 0x602) return OP_CPOPW;
            return 0;
        case 5:
            if (f7 == 0) return OP_SRLIW;
            if (f7 == 0x20) return OP_SRAIW;
            if (f7 == 0x30) return OP_RORIW;
            return 0;
        }
        return 0;
    case 0x33:
        switch (f7) {
        case 0x00: {
            static const int ops[8] = {OP_ADD, OP_SLL, OP_SLT, OP_SLTU, OP_XOR, OP_SRL, OP_OR, OP_AND};
            return ops[f3];
        }
        case 0x20:
            switch (f3) {
            case 0: return OP_SUB;
            case 5: return OP_SRA;
            case 4: return OP_XNOR;
            case 6: return OP_ORN;
            case 7: return OP_ANDN;
            }
            return 0;
        case 0x01: {
            static const int ops[8] = {OP_MUL, OP_MULH, OP_MULHSU, OP_MULHU, OP_DIV, OP_DIVU, OP_REM, OP_REMU};
            return ops[f3];
        }
        case 0x10: return f3 == 2 ? OP_SH1ADD : f3 == 4 ? OP_SH2ADD : f3 == 6 ? OP_SH3ADD : 0;
        case 0x05: return f3 == 4 ? OP_MIN : f3 == 5 ? OP_MINU : f3 == 6 ? OP_MAX : f3 == 7 ? OP_MAXU : 0;
        case 0x30: return f3 == 1 ? OP_ROL : f3 == 5 ? OP_ROR : 0;
        }
        return 0;
    case 0x3B:
        switch (f7) {
        case 0x00: return f3 == 0 ? OP_ADDW : f3 == 1 ? OP_SLLW : f3 == 5 ? OP_SRLW : 0;
        case 0x20: return f3 == 0 ? OP_SUBW : f3 == 5 ? OP_SRAW : 0;
        case 0x01: {
            static const int ops[8] = {OP_MULW, 0, 0, 0, OP_DIVW, OP_DIVUW, OP_REMW, OP_REMUW};
            return ops[f3];
        }
        case 0x04: return f3 == 0 ? OP_ADD_UW : (f3 == 4 && rs2 == 0) ? OP_ZEXT_H : 0;
        case 0x10: return f3 == 2 ? OP_SH1ADD_UW : f3 == 4 ? OP_SH2ADD_UW : f3 == 6 ? OP_SH3ADD_UW : 0;
        case 0x30: return f3 == 1 ? OP_ROLW : f3 == 5 ? OP_RORW : 0;
        }
        return 0;
    case 0x53:
        switch (f7) {
        case 0x02: return OP_FADD_H;
        case 0x06: return OP_FSUB_H;
        case 0x0A: return OP_FMUL_H;
        case 0x0E: return OP_FDIV_H;
        case 0x2E: return rs2 == 0 ? OP_FSQRT_H : 0;
        case 0x12: return f3 == 0 ? OP_FSGNJ_H : f3 == 1 ? OP_FSGNJN_H : f3 == 2 ? OP_FSGNJX_H : 0;
        case 0x16: return f3 == 0 ? OP_FMIN_H : f3 == 1 ? OP_FMAX_H : 0;
        case 0x20: return rs2 == 2 ? OP_FCVT_S_H : 0;
        case 0x21: return rs2 == 2 ? OP_FCVT_D_H : 0;
        case 0x22: return rs2 == 0 ? OP_FCVT_H_S : rs2 == 1 ? OP_FCVT_H_D : 0;
        case 0x52: return f3 == 2 ? OP_FEQ_H : f3 == 1 ? OP_FLT_H : f3 == 0 ? OP_FLE_H : 0;
        case 0x72: return rs2 != 0 ? 0 : f3 == 0 ? OP_FMV_X_H : f3 == 1 ? OP_FCLASS_H : 0;
        case 0x7A: return rs2 == 0 && f3 == 0 ? OP_FMV_H_X : 0;
        case 0x62: return rs2 == 0 ? OP_FCVT_W_H : rs2 == 1 ? OP_FCVT_WU_H : rs2 == 2 ? OP_FCVT_L_H : rs2 == 3 ? OP_FCVT_LU_H : 0;
        case 0x6A: return rs2 == 0 ? OP_FCVT_H_W : rs2 == 1 ? OP_FCVT_H_WU : rs2 == 2 ? OP_FCVT_H_L : rs2 == 3 ? OP_FCVT_H_LU : 0;
        }
        return 0;
    case 0x43: return bits(insn, 26, 25) == 2 ? OP_FMADD_H : 0;
    case 0x47: return bits(insn, 26, 25) == 2 ? OP_FMSUB_H : 0;
    case 0x4B: return bits(insn, 26, 25) == 2 ? OP_FNMSUB_H : 0;
    case 0x4F: return bits(insn, 26, 25) == 2 ? OP_FNMADD_H : 0;
    }
    return 0;
}

static void old_decode(Decoded *d, uint32_t insn, int length) {
    d->insn = insn;
    d->length = (uint8_t)length;
    d->op = (uint16_t)old_decode_op(insn);
    d->own = d->op > OP_OWN;
    d->rd = (uint8_t)bits(insn, 11, 7);
    d->rs1 = (uint8_t)bits(insn, 19, 15);
    d->rs2 = (uint8_t)bits(insn, 24, 20);
    d->rs3 = (uint8_t)(insn >> 27);
    d->rm = (uint8_t)bits(insn, 14, 12);
    uint32_t opcode = insn & 0x7F;
    switch (opcode) {
    case 0x37: case 0x17: d->imm = (int64_t)(int32_t)(insn & 0xFFFFF000u); break;
    case 0x6F:
        d->imm = old_sext((bits(insn, 31, 31) << 20) | (bits(insn, 19, 12) << 12) | (bits(insn, 20, 20) << 11) |
                      (bits(insn, 30, 21) << 1), 21);
        break;
    case 0x63:
        d->imm = old_sext((bits(insn, 31, 31) << 12) | (bits(insn, 7, 7) << 11) | (bits(insn, 30, 25) << 5) |
                      (bits(insn, 11, 8) << 1), 13);
        break;
    case 0x23: case 0x27: d->imm = old_sext((bits(insn, 31, 25) << 5) | bits(insn, 11, 7), 12); break;
    default: d->imm = old_sext(insn >> 20, 12); break;
    }
}

/* Compares the old decoder with the table's over the 32-bit words FIRST .. FIRST + COUNT - 1
 * (the compressed ones among them: their low 16 bits). Returns the mismatches; the first in
 * *WHERE. */
uint64_t isa_decode_compare(uint64_t first, uint64_t count, uint64_t *where) {
    uint64_t bad = 0;
    for (uint64_t n = first; n < first + count; n++) {
        uint32_t word = (uint32_t)n;
        Decoded a, b;
        if ((word & 3) != 3) {
            uint16_t c = (uint16_t)word;
            uint32_t x = old_expand(c), y = expand(c);
            old_decode(&a, x, 2);
            if (!x) a.op = OP_UNKNOWN;
            decode(&b, y, 2);
            if (c == 0x9002 && !x && y == 0x00100073 && b.op == OP_UNKNOWN)
                continue; /* c.ebreak: an ebreak now, which the engine runs as before */
            if (x != y) { if (!bad++) *where = n; continue; }
        } else {
            old_decode(&a, word, 4);
            decode(&b, word, 4);
        }
        int vector = a.op == OP_VLOAD || a.op == OP_VSTORE || a.op == OP_VECTOR;
        if (a.op != b.op || a.own != b.own || (a.op != OP_UNKNOWN && !vector && a.imm != b.imm) || a.rd != b.rd ||
            a.rs1 != b.rs1 || a.rs2 != b.rs2 || a.rs3 != b.rs3 || a.rm != b.rm || a.length != b.length) {
            if (!bad++)
                *where = n;
        }
    }
    return bad;
}
