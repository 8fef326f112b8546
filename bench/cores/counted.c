/* work.inc, with each core reporting its instruction count (kmx_cycles). */
#define COUNT_INSTRUCTIONS 1
#include "work.inc"
