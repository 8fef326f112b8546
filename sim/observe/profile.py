"""The profile of a thread's run (km.Session(profile=True)): exact instruction counts by
source line and by function, the call tree, and the cache's events by source line.

The counting is native (sim/native/profile.c): the block hook counts how often each basic
block ran, and a shadow call stack gives each block's instructions to the node of the call
tree that ran it. Here, after the run, a block's count goes to each of its instructions'
source lines (DWARF) and functions (the symbol table): the sum over the lines is every
instruction the core ran, as kmx_cycles counts them.

What the tree follows: a jal or jalr that links ra (or t0) is a call, a jalr to ra (t0)
that links nothing a return (to the frame with that return address: a longjmp returns
past several), and a jump to a function's first instruction a tail call (the callee takes
its caller's place). The C library has no source lines here (sim.image.dwarf skips its
rows): its instructions count under its function's name.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import numpy as np

from ..._records import CacheEvents, CoreProfile, FunctionCount, LineCount
from ..isa import decode, vector
from ..layout import LINE
from ..memory.address_space import MemoryAccessError
from .observers import Observer, Thread

if TYPE_CHECKING:
    from ..hart.explain import Explainer
    from ..hart.core import Core

BLOCKS = 1 << 16  # blocks a core can count (half of the table: it is open-addressed)
PCS = 1 << 16  # instructions the interpreter (sim/native/isa.c) ran, by pc
NODES = 1 << 14  # nodes of the call tree
DEPTH = 1 << 14  # calls deep the shadow stack follows (deeper ones count with their caller, and in `dropped`)


class Tables:
    """The native profile's tables for one core (Python's memory, sim/native/profile.c's to fill)."""

    def __init__(self, core: "Core", functions: np.ndarray) -> None:
        self.block_keys = np.zeros(BLOCKS * 2, np.uint64)
        self.block_runs = np.zeros(BLOCKS * 2, np.uint64)
        self.block_kinds = np.zeros(BLOCKS * 2, np.uint8)
        self.pc_keys = np.zeros(PCS * 2, np.uint64)
        self.pc_runs = np.zeros(PCS * 2, np.uint64)
        self.node_parent = np.zeros(NODES, np.uint64)
        self.node_function = np.zeros(NODES, np.uint64)
        self.node_self = np.zeros(NODES, np.uint64)
        self.node_entered = np.zeros(NODES, np.uint64)
        self.node_index = np.zeros(NODES * 2, np.int64)
        self.stack_node = np.zeros(DEPTH, np.uint64)
        self.stack_return = np.zeros(DEPTH, np.uint64)
        self.cache_keys = np.zeros(PCS, np.uint64)
        self.cache_runs = np.zeros(PCS, np.uint64)
        self.functions = functions
        native = core.native.profile
        self.timed = core.timing is not None
        if self.timed:  # (the timing model's cycles of each block and instruction: profile.c, charge)
            self.block_cycles = np.zeros(BLOCKS * 2, np.uint64)
            self.pc_cycles = np.zeros(PCS * 2, np.uint64)
            native.block_cycles = self.block_cycles.ctypes.data_as(type(native.block_cycles))
            native.pc_cycles = self.pc_cycles.ctypes.data_as(type(native.pc_cycles))
            native.last_slot = -1
            self.node_cycles = np.zeros(NODES, np.uint64)  # (and of each call tree node)
            native.node_cycles = self.node_cycles.ctypes.data_as(type(native.node_cycles))
            native.last_node = 0
        for name in ("block_keys", "block_runs", "block_kinds", "pc_keys", "pc_runs", "node_parent", "node_function",
                     "node_self", "node_entered", "node_index", "stack_node", "stack_return", "functions",
                     "cache_keys", "cache_runs"):
            array = getattr(self, name)
            setattr(native, name, array.ctypes.data_as(type(getattr(native, name))))
        native.block_capacity, native.pc_capacity = BLOCKS * 2, PCS * 2
        native.node_capacity, native.stack_capacity = NODES, DEPTH
        native.cache_capacity = PCS
        native.function_count = len(functions)
        native.on = 1
        self._native = native
        self._core = core

    def counts(self, explainer: "Explainer") -> CoreProfile:
        """The core's counts, by source line, function and call stack."""
        native, image, base = self._native, explainer.image, explainer.image_base
        # each function's code: from its symbol to its end (an assembly label's, with no
        # size, to the next symbol)
        named = sorted((start, size, name) for start, size, name in image.symbols if image.in_code(start))
        starts = np.array([start for start, _, _ in named], dtype=np.int64)
        ends = [max(start + size, named[i + 1][0] if i + 1 < len(named) and not size else start + size)
                for i, (start, size, _) in enumerate(named)]

        def function_of(pc: int) -> tuple[str, int]:
            at = int(np.searchsorted(starts, pc - base, side="right")) - 1
            if at >= 0 and pc - base < max(ends[at], named[at][0] + 1):
                return named[at][2], base + named[at][0]
            return f"{pc:#x}", pc

        runs: dict[int, int] = defaultdict(int)  # pc -> times it ran
        cycles: dict[int, float] = defaultdict(float)  # pc -> the timing model's cycles at it
        used = self.block_keys != 0
        block_cycles = self.block_cycles[used].tolist() if self.timed else [0] * int(used.sum())
        for key, times, took in zip(self.block_keys[used].tolist(), self.block_runs[used].tolist(), block_cycles):
            address, size = key & ((1 << 48) - 1), key >> 48
            if image.stubs.start <= address - base < image.stubs.end:
                continue  # a stub's instructions count as none (the jump to it counted)
            code = explainer.memory.peek(address, size)
            offset, pcs = 0, []
            while offset < size:
                runs[address + offset] += times
                pcs.append(address + offset)
                offset += 4 if code[offset] & 3 == 3 else 2
            for pc in pcs:  # (a block the engine ran: its cycles, split among its instructions)
                cycles[pc] += took / len(pcs)
        used = self.pc_keys != 0
        pc_cycles = self.pc_cycles[used].tolist() if self.timed else [0] * int(used.sum())
        for pc, times, took in zip(self.pc_keys[used].tolist(), self.pc_runs[used].tolist(), pc_cycles):
            runs[pc] += times
            cycles[pc] += took
        own_taken: dict[int, int] = defaultdict(int)  # node -> instructions counted that never ran
        for first, end, node in self._core.uncounted:  # (sim.hart.core.uncount_rest)
            code = explainer.memory.peek(first, end - first)
            offset = 0
            while offset < len(code):
                runs[first + offset] -= 1
                own_taken[node] += 1
                offset += 4 if code[offset] & 3 == 3 else 2

        lines: dict[tuple, int] = defaultdict(int)  # (file, line), or (None, 0, function) -> instructions
        line_cycles: dict[tuple, float] = defaultdict(float)  # -> cycles (timed)
        where: dict[tuple, tuple[str | None, int, str]] = {}  # -> (file, line, function)
        first_line: dict[str, tuple[str | None, int]] = {}  # a function -> its first line (file, line; 0: unknown)
        own: dict[str, int] = defaultdict(int)  # instructions in it
        own_cycles: dict[str, float] = defaultdict(float)  # timed: the cycles at its instructions, as the lines'
        inclusive: dict[str, int] = defaultdict(int)  # in it and in what it called
        calls: dict[str, int] = defaultdict(int)
        for pc, times in runs.items():
            if times <= 0:
                continue
            name, entry = function_of(pc)
            source = explainer.source_line(pc)
            key = (source.file, source.line) if source else (None, 0, name)
            if key not in where:
                where[key] = (source.file if source else None, source.line if source else 0, name)
            lines[key] += times
            line_cycles[key] += cycles.get(pc, 0.0)
            if name not in first_line:
                start = explainer.source_line(entry)
                first_line[name] = (start.file if start else None, start.line if start else 0)
            own[name] += times
            own_cycles[name] += cycles.get(pc, 0.0)

        # the call tree: each node's own instructions, its callers' names, inclusive counts
        nodes = int(native.nodes)
        parent = self.node_parent[:nodes].tolist()
        names = [function_of(int(address))[0] for address in self.node_function[:nodes].tolist()]
        node_own = self.node_self[:nodes].tolist()
        for node, taken in own_taken.items():
            if node < nodes:
                node_own[node] -= taken
        entered = self.node_entered[:nodes].tolist()
        node_inclusive = list(node_own)
        node_cycles = self.node_cycles[:nodes].tolist() if self.timed else [0] * nodes
        node_inclusive_cycles = list(node_cycles)
        for n in range(nodes - 1, 0, -1):  # (a node comes after its parent)
            node_inclusive[parent[n]] += node_inclusive[n]
            node_inclusive_cycles[parent[n]] += node_inclusive_cycles[n]
        stacks, stack_cycles = [], []
        inclusive_cycles: dict[str, int] = defaultdict(int)  # timed: the cycles in it and in what it called
        paths: list[tuple[str, ...]] = []
        for n in range(nodes):
            path = (paths[parent[n]] if n else ()) + (names[n],)
            paths.append(path)
            if node_own[n]:
                stacks.append((path, node_own[n]))
            if node_cycles[n]:
                stack_cycles.append((path, node_cycles[n]))
            first_line.setdefault(names[n], (None, 0))
            calls[names[n]] += entered[n]
            if names[n] not in path[:-1]:  # (a recursive call is inside its first one's count)
                inclusive[names[n]] += node_inclusive[n]
                inclusive_cycles[names[n]] += node_inclusive_cycles[n]
        core = self._core
        line_rows = [LineCount(*where[key], count, round(line_cycles[key])) for key, count in lines.items()]
        function_rows = [FunctionCount(name, file, line, own[name], inclusive[name], calls[name],
                                       round(own_cycles[name]), inclusive_cycles[name])
                         for name, (file, line) in first_line.items()]
        order = (lambda c: -c.cycles) if self.timed else (lambda c: -c.instructions)
        function_order = ((lambda f: (-f.own_cycles, -f.inclusive_cycles)) if self.timed else
                          (lambda f: (-f.own, -f.inclusive)))
        return CoreProfile(core.context.cluster, core.number, core.cycles,
                           tuple(sorted(line_rows, key=order)),
                           tuple(sorted(function_rows, key=function_order)), tuple(stacks),
                           int(native.dropped), core.timing.cycles if self.timed else 0, tuple(stack_cycles))


def function_starts(explainer: "Explainer") -> np.ndarray:
    """The address of every function's first instruction, sorted (for the tail calls)."""
    base = explainer.image_base
    return np.array(sorted({base + start for start, size, _ in explainer.image.symbols
                            if explainer.image.in_code(start)}), dtype=np.uint64)


def _access_at(explainer: "Explainer", pc: int, store: bool) -> int:
    """The first load or store (STORE) from PC on in its block: the access the fill hook
    saw at PC (the engine's pc there is its block's start). Unlike sim/native/events.c's walk,
    which has the registers and finds the access by its address, this one runs after the run,
    and takes the block's first access of the kind."""
    at = pc
    for _ in range(64):
        try:
            bits = explainer.instruction(at)
        except MemoryAccessError:
            break
        if vector.is_memory(bits) and (bits & 0x7F == 0x27) == store:
            return at  # (a vector load or store)
        access = decode.memory_access(bits)
        if access is not None and access[0] in (store, None):
            return at
        if decode.ends_block(bits):
            break
        at += 2 if bits & 3 != 3 else 4
    return pc


class ThreadProfile(Observer):
    """The profile of one cluster's thread: its cores' tables (sim/native/profile.c) and
    the bytes each line's kmx_flush wrote back (a listener of the thread's probe points,
    sim.observe.observers: its flushes, and its release, when it counts up)."""

    def __init__(self, cores, explainer: "Explainer") -> None:
        starts = function_starts(explainer)
        self.tables = [Tables(core, starts) for core in cores]
        self.bytes_flushed: dict[tuple, int] = defaultdict(int)  # (file, line) -> bytes written back
        self.result: tuple[list[CoreProfile], list[CacheEvents]] | None = None  # (once released)

    def flushed(self, core: "Core", region, lines: int) -> None:
        """CORE's kmx_flush wrote LINES lines back."""
        frame = core.users_frame(core.call_pc())
        source = frame.source if frame is not None else None
        self.bytes_flushed[(source.file, source.line) if source else (None, 0)] += lines * LINE

    def released(self, cluster: Thread) -> None:
        """Count it all up (once the thread has ended, before its memory goes)."""
        if self.result is not None or not cluster.cores:
            return
        explainer = cluster.explainer
        cores = [table.counts(explainer) for table in self.tables]
        filled: dict[tuple, int] = defaultdict(int)  # (file, line), or (None, 0) -> pages
        written: dict[tuple, int] = defaultdict(int)
        flushed = self.bytes_flushed
        found: dict[tuple, int] = defaultdict(int)
        for table in self.tables:
            used = table.cache_keys != 0
            for key, times in zip(table.cache_keys[used].tolist(), table.cache_runs[used].tolist()):
                pc, first_write = key >> 1, bool(key & 1)
                source = explainer.source_line(_access_at(explainer, pc, first_write))
                (written if first_write else filled)[(source.file, source.line) if source else (None, 0)] += times
        for finding in cluster.checker.findings:
            found[(finding.file, finding.line) if finding.file else (None, 0)] += 1
        keys = sorted({*filled, *written, *flushed, *found}, key=lambda k: (k[0] is None, k[0] or "", k[1]))
        self.result = (cores, [CacheEvents(cluster.number, file, line, filled[(file, line)], written[(file, line)],
                                           flushed[(file, line)], found[(file, line)]) for file, line in keys])
