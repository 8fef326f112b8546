/* sim_driver.inc counting the instructions of the timed part with kmx_cycles. */
#define COUNT_INSTRUCTIONS 1
#include "sim_driver.inc"
