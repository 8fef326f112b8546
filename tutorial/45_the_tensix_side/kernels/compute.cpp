// The compute kernel of lesson 45: empty. On a card, the Tensix side of the exchange is
// kernels like these; in the simulator the agent in program.py plays it.
void kernel_main() {}
