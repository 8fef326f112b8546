// The compute kernel of lesson 46: empty. The lesson's work is the X280 thread's; the
// simulator runs no Tensix code.
void kernel_main() {}
