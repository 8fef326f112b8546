/* vector_fast.h: the vector unit's fast paths, included by vector.h, tried by vector_run
 * before the general code. Each does exactly what the general code does for the cases it
 * takes (the differential tests against QEMU run through both), and leaves every other
 * case to it by returning NOT_HERE with nothing changed, or with vstart at the element
 * the general code goes on from:
 *
 * - unit-stride loads and stores (vle<eew>.v, vse<eew>.v): a page of elements at a time,
 *   copied between the register file and the host memory that the engine's TLB (and so
 *   the fill hook, the cache model and the checker) gave for that page; an element
 *   across a page boundary, and a page the memory refuses, go to the general code, which
 *   takes them an element at a time;
 * - the commonest integer arithmetic, unmasked (vadd, vsub, vrsub, the logic, the shifts,
 *   min and max, vmv.v, vmul and the multiply-adds): one typed loop per element width.
 */

/* The typed loop of BODY over elements [vstart, vl) of width T, D the destination, A
 * vs2's element, B vs1's (or the scalar), C the destination's old element. */
#define FAST_LOOP(T, BODY)                                                                   \
    do {                                                                                     \
        T *dst = (T *)v->reg[vd];                                                            \
        const T *src2 = (const T *)v->reg[vs2];                                              \
        const T *src1 = (const T *)v->reg[vs1];                                              \
        T scalar_ = (T)scalar;                                                               \
        for (uint64_t i = v->vstart; i < v->vl; i++) {                                       \
            T a = src2[i], b = vector_operand ? src1[i] : scalar_, c = dst[i];               \
            (void)a; (void)b; (void)c;                                                       \
            dst[i] = (T)(BODY);                                                              \
        }                                                                                    \
    } while (0)

#define FAST_ALL_WIDTHS(BODY8, BODY16, BODY32, BODY64)                                      \
    switch (sew) {                                                                           \
    case 8: FAST_LOOP(uint8_t, BODY8); break;                                                \
    case 16: FAST_LOOP(uint16_t, BODY16); break;                                             \
    case 32: FAST_LOOP(uint32_t, BODY32); break;                                             \
    default: FAST_LOOP(uint64_t, BODY64); break;                                             \
    }

/* Signed views of a, b for min and max */
#define S8(x) ((int8_t)(x))
#define S16(x) ((int16_t)(x))
#define S32(x) ((int32_t)(x))
#define S64(x) ((int64_t)(x))

static int fast_unit_stride(Hart *h, VectorUnit *v, const Decoded *d, int store) {
    uint32_t insn = d->insn;
    int vm = (int)bits(insn, 25, 25), width = (int)bits(insn, 14, 12), vd = d->rd;
    if (bits(insn, 31, 26) != 0 || bits(insn, 24, 20) != 0 || (v->vtype & VILL)) /* nf, mew, mop, lumop */
        return NOT_HERE;
    int eew = memory_eew(width);
    int sew = sew_bits(v->vtype), lmul = lmul_eighths(v->vtype);
    if ((lmul * eew) % sew || !group_regs(vd, lmul * eew / sew) || (!vm && vd == 0))
        return NOT_HERE; /* (v0 as data and as the mask: reserved, the general code refuses it) */
    uint64_t bytes = (uint64_t)eew / 8, base = X(h, d->rs1, 0);
    uint8_t *reg = v->reg[vd];
    uint64_t i = v->vstart;
    while (i < v->vl) {
        uint64_t address = base + i * bytes, in_page = PAGE - (address & (PAGE - 1));
        if (in_page < bytes) /* an element across two pages: the general code's */
            break;
        uint64_t n = in_page / bytes;
        if (n > v->vl - i)
            n = v->vl - i;
        if (!vm) { /* a page no active element falls in is not touched at all */
            uint64_t k = 0;
            while (k < n && !mask_bit(v, 0, i + k))
                k++;
            if (k == n) {
                i += n;
                continue;
            }
        }
        uint8_t *p = host_of(h, address, store);
        if (!p || p == WATCHED) /* refused: the general code faults, naming the element; */
            break;              /* watched: it goes an element at a time (watch.c) */
        if (vm) {
            if (store)
                __builtin_memcpy(p, reg + i * bytes, n * bytes);
            else
                __builtin_memcpy(reg + i * bytes, p, n * bytes);
        } else {
            for (uint64_t k = 0; k < n; k++) {
                if (!mask_bit(v, 0, i + k))
                    continue;
                if (store)
                    __builtin_memcpy(p + k * bytes, reg + (i + k) * bytes, bytes);
                else
                    __builtin_memcpy(reg + (i + k) * bytes, p + k * bytes, bytes);
            }
        }
        i += n;
    }
    if (i < v->vl) {
        v->vstart = i;
        return NOT_HERE;
    }
    v->vstart = 0;
    return RAN;
}

static int fast_arithmetic(Hart *h, VectorUnit *v, const Decoded *d, int funct3) {
    uint32_t insn = d->insn;
    int funct6 = (int)(insn >> 26), vs2 = d->rs2, vs1 = d->rs1, vd = d->rd;
    if (!bits(insn, 25, 25) || (v->vtype & VILL)) /* masked: the general code's */
        return NOT_HERE;
    int sew = sew_bits(v->vtype), lmul = lmul_eighths(v->vtype);
    int vector_operand = funct3 == OPIVV || funct3 == OPMVV;
    uint64_t scalar = funct3 == OPIVX || funct3 == OPMVX ? X(h, vs1, 0)
                    : funct3 == OPIVI ? (uint64_t)sext_bits(vs1, 5) : 0;
    if (!group_regs(vd, lmul) || (!group_regs(vs2, lmul) && !(funct6 == 0x17 && vs2 == 0)) ||
        (vector_operand && !group_regs(vs1, lmul)))
        return NOT_HERE;
    unsigned m = (unsigned)sew - 1; /* (shift amounts) */
    if (funct3 == OPIVV || funct3 == OPIVX || funct3 == OPIVI) {
        if (!legal_integer(funct3, funct6))
            return NOT_HERE;
        if (funct3 == OPIVI && (funct6 == 0x25 || funct6 == 0x28 || funct6 == 0x29))
            scalar = (uint64_t)vs1; /* (shifts take the immediate unsigned) */
        switch (funct6) {
        case 0x00: FAST_ALL_WIDTHS(a + b, a + b, a + b, a + b); break;
        case 0x02: FAST_ALL_WIDTHS(a - b, a - b, a - b, a - b); break;
        case 0x03: FAST_ALL_WIDTHS(b - a, b - a, b - a, b - a); break;
        case 0x04: FAST_ALL_WIDTHS(a < b ? a : b, a < b ? a : b, a < b ? a : b, a < b ? a : b); break;
        case 0x05: FAST_ALL_WIDTHS(S8(a) < S8(b) ? a : b, S16(a) < S16(b) ? a : b, S32(a) < S32(b) ? a : b,
                                   S64(a) < S64(b) ? a : b); break;
        case 0x06: FAST_ALL_WIDTHS(a > b ? a : b, a > b ? a : b, a > b ? a : b, a > b ? a : b); break;
        case 0x07: FAST_ALL_WIDTHS(S8(a) > S8(b) ? a : b, S16(a) > S16(b) ? a : b, S32(a) > S32(b) ? a : b,
                                   S64(a) > S64(b) ? a : b); break;
        case 0x09: FAST_ALL_WIDTHS(a & b, a & b, a & b, a & b); break;
        case 0x0A: FAST_ALL_WIDTHS(a | b, a | b, a | b, a | b); break;
        case 0x0B: FAST_ALL_WIDTHS(a ^ b, a ^ b, a ^ b, a ^ b); break;
        case 0x17: /* vmv.v.v, vmv.v.x, vmv.v.i (unmasked vmerge: vs2 is 0) */
            if (vs2 != 0)
                return NOT_HERE;
            FAST_ALL_WIDTHS(b, b, b, b);
            break;
        case 0x25: FAST_ALL_WIDTHS(a << (b & m), a << (b & m), a << (b & m), a << (b & m)); break;
        case 0x28: FAST_ALL_WIDTHS(a >> (b & m), a >> (b & m), a >> (b & m), a >> (b & m)); break;
        case 0x29: FAST_ALL_WIDTHS(S8(a) >> (b & m), S16(a) >> (b & m), S32(a) >> (b & m), S64(a) >> (b & m)); break;
        default: return NOT_HERE;
        }
    } else { /* OPMVV, OPMVX */
        switch (funct6) {
        /* (products in 64 bits below SEW 64: a uint16_t's promote to int, which could overflow) */
#define U(x) ((uint64_t)(x))
        case 0x25: FAST_ALL_WIDTHS(U(a) * b, U(a) * b, U(a) * b, a * b); break;                         /* vmul */
        case 0x2D: FAST_ALL_WIDTHS(U(b) * a + c, U(b) * a + c, U(b) * a + c, b * a + c); break;         /* vmacc */
        case 0x2F: FAST_ALL_WIDTHS(c - U(b) * a, c - U(b) * a, c - U(b) * a, c - b * a); break;         /* vnmsac */
        case 0x29: FAST_ALL_WIDTHS(U(b) * c + a, U(b) * c + a, U(b) * c + a, b * c + a); break;         /* vmadd */
        case 0x2B: FAST_ALL_WIDTHS(a - U(b) * c, a - U(b) * c, a - U(b) * c, a - b * c); break;         /* vnmsub */
#undef U
        default: return NOT_HERE;
        }
    }
    v->vstart = 0;
    return RAN;
}

/* RAN, or NOT_HERE for the general code (vector.h's). */
static int vector_fast(Hart *h, const Decoded *d) {
    VectorUnit *v = unit(h);
    uint32_t insn = d->insn, opcode = insn & 0x7F, funct3 = bits(insn, 14, 12);
    if (opcode == 0x07 || opcode == 0x27)
        return fast_unit_stride(h, v, d, opcode == 0x27);
    if (opcode == 0x57 && funct3 != OPFVV && funct3 != OPFVF && funct3 != OPCFG)
        return fast_arithmetic(h, v, d, (int)funct3);
    return NOT_HERE;
}
