"""The simulated machine: a Blackhole card's X280 clusters, their caches and DRAM banks.

    card.py     the card: banks, clusters, the loop that runs the cores
    cluster.py  one cluster running one thread: layout, cores, the thread's calls
    core.py     one X280 hart: a Unicorn engine, its TLB-fill and trap hooks
    cache.py    the cluster's write-back cache, holding data
    dram.py     the DRAM banks
    memory.py   a cluster's address space: spans, and Python's way into them
    traps.py    the trap table: ecall number -> kmx call
    loader.py   the ELF loader
    debuginfo.py  DWARF line tables
    layout.py   the address map and the machine's constants
"""
