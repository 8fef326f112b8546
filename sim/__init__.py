"""The simulated machine: a Blackhole card's X280 clusters, their caches and DRAM banks.

Installed as `komorebi.sim` (the repository keeps it at the top, beside the API).

    machine/       the machine that runs threads: the card (card.py), a cluster running
                   one thread (cluster.py), whose turn it is (schedule.py)
    observe/       who watches a thread run: the probe points (observers.py), the cache's
                   story, the trace's timeline, the profile
    layout.py      the address map and the machine's numbers, which every part reads
    hart/          one X280 hart: the core, the engine under it (Unicorn), its faults and
                   their words (explain.py: source lines, frames, what an address is)
    isa/           the X280's instruction set: the compile target, the loader's stubs and
                   stand-ins, decoding for messages
    cache/         the cluster's write-back cache (model.py) and the coherence checker
    memory/        a cluster's address space, the DRAM banks, host memory (host.py)
    kmx/           the kmx calls: the trap table, kmx_print, what a thread hands Python
    image/         the thread's ELF (elf.py) and its DWARF line table (dwarf.py)
    debug/         gdb: the remote protocol, the stub, and the turns' control
    native/        the hooks in C on the fast path, and their build for the host
    build/         building: the build cache, the compiler's run, what a compile read,
                   the card's C library (built with the package, libc.py)

Each part imports only the parts below it (docs/simulator.md, "The layers"; checked by
tests/test_layers.py); what crosses to komorebi's API is komorebi._records' plain data.
"""
