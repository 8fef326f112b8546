/* scalar_rows.h: scalar.def's rows, expanded by the kinds the includer defined; a kind it
 * did not define expands to nothing. Include it where the rows are wanted (it may be
 * included again: it undefines every kind after). */
#ifndef MAJOR
#define MAJOR(opcode)
#endif
#ifndef ROW
#define ROW(name, mask, match, format, op, access, extension)
#endif
#ifndef IMMEDIATE
#define IMMEDIATE(name, sign, b12, b11, b10, b9, b8, b7, b6, b5, b4, b3, b2)
#endif
#ifndef COMPRESSED
#define COMPRESSED(name, mask, match, to, rd, rs1, rs2, immediate, when, extension)
#endif
#include "scalar.def"
#undef MAJOR
#undef ROW
#undef IMMEDIATE
#undef COMPRESSED
