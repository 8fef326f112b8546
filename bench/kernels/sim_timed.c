/* sim_driver.inc as it is: the build bench/vs_qemu.py times (no kmx_cycles, full speed). */
#include "sim_driver.inc"
