/* work.inc as it is: no cycle counting, full speed. */
#include "work.inc"
