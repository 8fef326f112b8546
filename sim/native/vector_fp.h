/* vector_fp.h: the vector unit's floating point (OPFVV, OPFVF), included by vector.h.
 * (Being built: issue 14, step 2.) */

static int vector_float(Hart *h, const Decoded *d, int funct3) {
    (void)h; (void)d; (void)funct3;
    return NOT_HERE;
}
