/* kmx_print: the thread gathers its arguments; Python formats them. On RV64 every variadic
 * argument travels as one 64-bit slot (ints sign-extended), so the thread needs only to
 * count the conversions in the format and take that many slots. */
#include <stdarg.h>
#include "kmx.h"

#define KMX_PRINT_MAX_ARGS 16

void kmx_print(const char* fmt, ...) {
    uint64_t args[KMX_PRINT_MAX_ARGS];
    uint64_t count = 0;
    va_list ap;
    va_start(ap, fmt);
    for (const char* p = fmt; *p; p++) {
        if (*p != '%') continue;
        p++;
        if (*p == '%') continue;
        if (*p == 0) break;
        if (count < KMX_PRINT_MAX_ARGS) args[count++] = va_arg(ap, uint64_t);
    }
    va_end(ap);
    kmx__call(KMX_CALL_PRINT, (uint64_t)fmt, (uint64_t)args, count);
}
