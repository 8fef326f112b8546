/* unit.c: the vector unit's state and its dispatch: vsetvli, vsetivli and vsetvl, the
 * vector CSRs, and vector_run, which isa.c calls for every vector instruction: a load or
 * store goes to memory.c; an OP-V one to its row of ops.def (the table below, expanded
 * from it), with its operands decoded once (Op); one of SiFive's in custom-2 (0x5b) to its
 * SF_FLOAT row, the same way. */
#include "vector.h"

/* CSR numbers */
#define CSR_VSTART 0x008
#define CSR_VXSAT 0x009
#define CSR_VXRM 0x00A
#define CSR_VCSR 0x00F
#define CSR_VL 0xC20
#define CSR_VTYPE 0xC21
#define CSR_VLENB 0xC22

static int legal_vtype(uint64_t vtype) {
    int vsew = (int)((vtype >> 3) & 7), vlmul = (int)(vtype & 7);
    if (vsew > 3 || vlmul == 4 || (vtype >> 8) != 0)
        return 0;
    if (vlmul >= 5 && sew_bits(vtype) > (64 >> (8 - vlmul))) /* SEW <= LMUL * ELEN */
        return 0;
    return 1;
}

/* vsetvl*: the new vl (and vtype), as RVV 1.0 says; vl = min(AVL, VLMAX). */
static uint64_t vset(Hart *h, uint64_t vtype, uint64_t avl, int avl_is_x0, int rd_is_x0) {
    VectorUnit *v = unit(h);
    v->vstart = 0;
    if (!legal_vtype(vtype)) {
        v->vtype = VILL;
        v->vl = 0;
        return 0;
    }
    uint64_t max = vlmax(vtype);
    uint64_t vl = !avl_is_x0 ? (avl < max ? avl : max) : !rd_is_x0 ? max : (v->vl < max ? v->vl : max);
    v->vtype = vtype;
    v->vl = vl;
    return vl;
}

/* -- CSRs ---------------------------------------------------------------------------- */

int is_vector_csr(uint32_t csr) {
    return csr == CSR_VSTART || csr == CSR_VXSAT || csr == CSR_VXRM || csr == CSR_VCSR || csr == CSR_VL ||
           csr == CSR_VTYPE || csr == CSR_VLENB;
}

static int vector_csr(Hart *h, const Decoded *d) {
    VectorUnit *v = unit(h);
    uint32_t insn = d->insn, csr = insn >> 20, f3 = bits(insn, 14, 12);
    int immediate = f3 >= 5;
    uint64_t source = immediate ? d->rs1 : X(h, d->rs1, 0);
    int writes = (f3 & 3) == 1 || d->rs1 != 0; /* csrrw(i) always; csrrs/c(i) when rs1/uimm is not 0 */
    uint64_t old;
    switch (csr) {
    case CSR_VSTART: old = v->vstart; break;
    case CSR_VXSAT: old = v->vxsat; break;
    case CSR_VXRM: old = v->vxrm; break;
    case CSR_VCSR: old = v->vxrm << 1 | v->vxsat; break;
    case CSR_VL: old = v->vl; break;
    case CSR_VTYPE: old = v->vtype; break;
    default: old = VLENB; break;
    }
    if (writes && (csr == CSR_VL || csr == CSR_VTYPE || csr == CSR_VLENB))
        return NOT_HERE; /* read-only: an illegal instruction */
    if (writes) {
        uint64_t value = (f3 & 3) == 1 ? source : (f3 & 3) == 2 ? old | source : old & ~source;
        switch (csr) {
        case CSR_VSTART: v->vstart = value & (VLEN - 1); break;
        case CSR_VXSAT: v->vxsat = value & 1; break;
        case CSR_VXRM: v->vxrm = value & 3; break;
        case CSR_VCSR: v->vxsat = value & 1; v->vxrm = (value >> 1) & 3; break;
        }
    }
    set_x(h, d->rd, old, 0);
    return RAN;
}

static int vset_instruction(Hart *h, const Decoded *d) {
    uint32_t insn = d->insn;
    uint64_t vl;
    if (!(insn >> 31)) /* vsetvli */
        vl = vset(h, bits(insn, 30, 20), X(h, d->rs1, 0), d->rs1 == 0, d->rd == 0);
    else if (bits(insn, 31, 30) == 3) /* vsetivli */
        vl = vset(h, bits(insn, 29, 20), d->rs1, 0, d->rd == 0);
    else if (bits(insn, 31, 25) == 0x40) /* vsetvl */
        vl = vset(h, X(h, d->rs2, 0), X(h, d->rs1, 0), d->rs1 == 0, d->rd == 0);
    else
        return NOT_HERE;
    set_x(h, d->rd, vl, 0);
    return RAN;
}

/* -- the dispatch -------------------------------------------------------------------------- */

/* An OP-V instruction's row: the function that runs it, whether its .vi immediate is
 * unsigned, and (OPF) whether it runs while frm is reserved (ops.def's EXACT). */
typedef struct {
    Handler run;
    uint8_t unsigned_immediate, exact;
} Row;

#define EXACT 1
#define ROUNDS 0
#define ROW(funct3, f6, run, u, e) [funct3][f6] = {run, u, e},
#define ROWS_I_V(f6, run) ROW(OPIVV, f6, run, 0, 0)
#define ROWS_I_X(f6, run) ROW(OPIVX, f6, run, 0, 0)
#define ROWS_I_U(f6, run) ROW(OPIVI, f6, run, 1, 0)
#define ROWS_I_VX(f6, run) ROWS_I_V(f6, run) ROWS_I_X(f6, run)
#define ROWS_I_XI(f6, run) ROWS_I_X(f6, run) ROW(OPIVI, f6, run, 0, 0)
#define ROWS_I_XU(f6, run) ROWS_I_X(f6, run) ROWS_I_U(f6, run)
#define ROWS_I_VXI(f6, run) ROWS_I_V(f6, run) ROWS_I_XI(f6, run)
#define ROWS_I_VXU(f6, run) ROWS_I_V(f6, run) ROWS_I_XU(f6, run)
#define ROWS_M_V(f6, run) ROW(OPMVV, f6, run, 0, 0)
#define ROWS_M_X(f6, run) ROW(OPMVX, f6, run, 0, 0)
#define ROWS_M_VX(f6, run) ROWS_M_V(f6, run) ROWS_M_X(f6, run)
#define ROWS_F_V(f6, run, e) ROW(OPFVV, f6, run, 0, e)
#define ROWS_F_F(f6, run, e) ROW(OPFVF, f6, run, 0, e)
#define ROWS_F_VF(f6, run, e) ROWS_F_V(f6, run, e) ROWS_F_F(f6, run, e)

static const Row rows[8][64] = {
#define INT(f6, name, forms, body) ROWS_I_##forms(f6, op_##name)
#define FIXED(f6, name, forms, body) ROWS_I_##forms(f6, op_##name)
#define INT_CMP(f6, name, forms, body) ROWS_I_##forms(f6, op_##name)
#define NARROW(f6, name, forms, body) ROWS_I_##forms(f6, op_##name)
#define INT_OTHER(f6, name, forms, run) ROWS_I_##forms(f6, run)
#define MUL(f6, name, forms, body) ROWS_M_##forms(f6, op_##name)
#define MUL_FIXED(f6, name, forms, body) ROWS_M_##forms(f6, op_##name)
#define MUL_REDUCE(f6, name, forms, body) ROWS_M_##forms(f6, op_##name)
#define MUL_MASK(f6, name, forms, body) ROWS_M_##forms(f6, vector_mask_logic)
#define MUL_WIDEN(f6, name, forms, wide_vs2, body) ROWS_M_##forms(f6, vector_widening)
#define MUL_OTHER(f6, name, forms, run) ROWS_M_##forms(f6, run)
#define FLOAT(f6, name, forms, exact, soft, host) ROWS_F_##forms(f6, vector_float_arith, exact)
#define FLOAT_CMP(f6, name, forms, body) ROWS_F_##forms(f6, vector_float_compare, EXACT)
#define FLOAT_REDUCE(f6, name, forms, exact) ROWS_F_##forms(f6, vector_float_reduce, exact)
#define FLOAT_WIDEN(f6, name, forms, wide_vs2, single) ROWS_F_##forms(f6, vector_float_widen, ROUNDS)
#define FLOAT_OTHER(f6, name, forms, exact, run) ROWS_F_##forms(f6, run, exact)
#include "rows.h"
};

/* SiFive's instructions in custom-2 (0x5b), encoded as OP-V ones: ops.def's SF_FLOAT rows. */
static const Row sifive_rows[8][64] = {
#define SF_FLOAT(f6, name, forms, exact, run) ROWS_F_##forms(f6, run, exact)
#include "rows.h"
};

/* The row of a funct6 whose instructions vs1 chooses (MUL_UNARY, FLOAT_UNARY), if any. */
static const Row *unary_row(int funct3, int funct6, int vs1) {
    switch (funct3 << 11 | funct6 << 5 | vs1) {
#define MUL_UNARY(f6, vs1_, name, run) case OPMVV << 11 | (f6) << 5 | (vs1_): { static const Row row = {run, 0, 0}; return &row; }
#define FLOAT_UNARY(f6, vs1_, name, exact, run) case OPFVV << 11 | (f6) << 5 | (vs1_): { static const Row row = {run, 0, exact}; return &row; }
#include "rows.h"
    }
    return 0;
}

/* An OP-V arithmetic instruction (FUNCT3 not OPCFG), or SiFive's one in custom-2 encoded as
 * one (SIFIVE): its row's function, on its operands. */
static int arithmetic(Hart *h, const Decoded *d, int funct3, int sifive) {
    VectorUnit *v = unit(h);
    uint32_t insn = d->insn;
    int funct6 = (int)(insn >> 26), vs1 = d->rs1;
    const Row *row = !sifive && (funct3 == OPMVV || funct3 == OPFVV) ? unary_row(funct3, funct6, vs1) : 0;
    if (!row)
        row = sifive ? &sifive_rows[funct3][funct6] : &rows[funct3][funct6];
    if (!row->run) /* (an encoding no row has: reserved) */
        return NOT_HERE;
    if ((v->vtype & VILL) && row->run != vector_whole_move)
        return NOT_HERE;
    Op o;
    o.h = h;
    o.v = v;
    o.funct3 = funct3;
    o.funct6 = funct6;
    o.vm = (int)bits(insn, 25, 25);
    o.vd = d->rd;
    o.vs2 = d->rs2;
    o.vs1 = vs1;
    o.vv = funct3 == OPIVV || funct3 == OPMVV || funct3 == OPFVV;
    o.sew = sew_bits(v->vtype);
    o.bytes = o.sew / 8;
    o.lmul = lmul_eighths(v->vtype);
    o.x = funct3 == OPIVX || funct3 == OPMVX ? X(h, vs1, 0)
        : funct3 == OPIVI ? (row->unsigned_immediate ? (uint64_t)vs1 : (uint64_t)sext_bits((uint64_t)vs1, 5)) : 0;
    o.scalar = o.x & width_mask(o.sew);
    o.rm = RM_RNE;
    if (funct3 == OPFVV || funct3 == OPFVF) {
        o.rm = rounding(h, RM_DYN);
        if (o.rm < 0) { /* frm holds a reserved rounding mode: an instruction that rounds is illegal */
            if (!row->exact)
                return NOT_HERE;
            o.rm = RM_RNE;
        }
    }
    return row->run(&o);
}

/* A vector instruction (OP-V, a vector load or store, a vector CSR, SiFive's in custom-2):
 * RAN, NOT_HERE or REFUSED, as isa.c's run_one. */
int vector_run(Hart *h, const Decoded *d) {
    uint32_t insn = d->insn, opcode = insn & 0x7F, funct3 = bits(insn, 14, 12);
    int done;
    if (opcode == 0x73)
        return vector_csr(h, d);
    if (opcode == 0x07 || opcode == 0x27)
        done = vector_memory(h, d, opcode == 0x27);
    else if (opcode == 0x5B)
        done = funct3 == OPCFG ? NOT_HERE : arithmetic(h, d, (int)funct3, 1);
    else if (funct3 == OPCFG)
        done = vset_instruction(h, d);
    else
        done = arithmetic(h, d, (int)funct3, 0);
    if (done == RAN) /* every vector instruction that completes leaves vstart 0 (RVV 1.0 3.7) */
        unit(h)->vstart = 0;
    return done;
}
