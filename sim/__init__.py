"""The simulated machine: a Blackhole card's X280 clusters, their caches and DRAM banks.

Installed as `komorebi.sim` (the repository keeps it at the top, beside the API).

    card.py        the card: banks, clusters, the host threads that run them
    cluster.py     one cluster running one thread: layout, cores, the thread's calls
    schedule.py    which core runs next, and for how long
    layout.py      the address map and the machine's constants
    hart/          one X280 hart: the core, the engine under it (Unicorn), its faults
    isa/           the X280's instruction set: the compile target, the loader's stubs and
                   stand-ins, decoding for messages
    cache/         the cluster's write-back cache (model.py) and the coherence checker
    memory/        a cluster's address space, the DRAM banks, host memory (host.py)
    kmx/           the kmx calls: the trap table, kmx_print, what a thread hands Python
    image/         the thread's ELF (elf.py) and its DWARF line table (dwarf.py)
    native/        the hooks in C on the fast path, and their build for the host
    build/         building: the build cache, the compiler's run, what a compile read,
                   the card's C library (built with the package, libc.py)
"""
