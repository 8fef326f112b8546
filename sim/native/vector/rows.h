/* rows.h: ops.def's rows, expanded by the shapes the includer defined; a shape it did not
 * define expands to nothing. Include it where the rows are wanted (it may be included
 * again: it undefines every shape after). */
#ifndef INT
#define INT(f6, name, forms, body)
#endif
#ifndef FIXED
#define FIXED(f6, name, forms, body)
#endif
#ifndef INT_CMP
#define INT_CMP(f6, name, forms, body)
#endif
#ifndef NARROW
#define NARROW(f6, name, forms, body)
#endif
#ifndef INT_OTHER
#define INT_OTHER(f6, name, forms, run)
#endif
#ifndef MUL
#define MUL(f6, name, forms, body)
#endif
#ifndef MUL_FIXED
#define MUL_FIXED(f6, name, forms, body)
#endif
#ifndef MUL_REDUCE
#define MUL_REDUCE(f6, name, forms, body)
#endif
#ifndef MUL_MASK
#define MUL_MASK(f6, name, forms, body)
#endif
#ifndef MUL_WIDEN
#define MUL_WIDEN(f6, name, forms, wide_vs2, body)
#endif
#ifndef MUL_OTHER
#define MUL_OTHER(f6, name, forms, run)
#endif
#ifndef MUL_UNARY
#define MUL_UNARY(f6, vs1, name, run)
#endif
#ifndef FLOAT
#define FLOAT(f6, name, forms, exact, soft, host)
#endif
#ifndef FLOAT_CMP
#define FLOAT_CMP(f6, name, forms, body)
#endif
#ifndef FLOAT_REDUCE
#define FLOAT_REDUCE(f6, name, forms, exact)
#endif
#ifndef FLOAT_WIDEN
#define FLOAT_WIDEN(f6, name, forms, wide_vs2, single)
#endif
#ifndef FLOAT_OTHER
#define FLOAT_OTHER(f6, name, forms, exact, run)
#endif
#ifndef FLOAT_UNARY
#define FLOAT_UNARY(f6, vs1, name, exact, run)
#endif
#ifndef SF_FLOAT
#define SF_FLOAT(f6, name, forms, exact, run)
#endif
#include "ops.def"
#undef INT
#undef FIXED
#undef INT_CMP
#undef NARROW
#undef INT_OTHER
#undef MUL
#undef MUL_FIXED
#undef MUL_REDUCE
#undef MUL_MASK
#undef MUL_WIDEN
#undef MUL_OTHER
#undef MUL_UNARY
#undef FLOAT
#undef FLOAT_CMP
#undef FLOAT_REDUCE
#undef FLOAT_WIDEN
#undef FLOAT_OTHER
#undef FLOAT_UNARY
#undef SF_FLOAT
