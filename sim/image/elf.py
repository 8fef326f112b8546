"""The ELF loader: a thread's compiled image, read with pyelftools, placed at any base.

Threads are linked position-independent from 0 (kmx_runtime/kmx.ld), so the same ELF runs
on every cluster: the loader copies the PT_LOAD segments' bytes to the cluster's share
(memory that starts as zeros, so `.bss` costs nothing until the thread touches it) and
applies the R_RISCV_RELATIVE relocations for that base.

It also finds, in the code, the few instructions the engine would run unlike the X280
(sim.isa.stand_in): `fence.i`, which the engine takes as a no-op, reads of the cycle and
instruction counters, which the engine answers with the host's clock, and lr/sc. Each
is replaced, in the placed copy only, by an instruction the engine traps on, so that the
simulator can do what the X280 does. And it rewrites the Zba and simple Zbb instructions
into RV64GC stubs (sim.isa.rewrite), in the placed copy only too.
"""

from __future__ import annotations

import functools
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
from elftools.common.exceptions import ELFError
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from ..isa import rewrite, stand_in
from ..layout import PAGE, align_up

R_RISCV_NONE = 0
R_RISCV_RELATIVE = 3
HALT_SYMBOL = "kmx__halt"
# Where each core starts (kmx_runtime/start.S): by name, as the ELF's own entry is the C
# library's Linux start code when zig links it.
ENTRY_SYMBOL = "kmx__start"
CYCLES_SYMBOL = "kmx_cycles"  # present only when the thread calls it (kmx.h: static)
CLOCK_SYMBOL = "__clock_gettime"  # the C library's clocks count the core's cycles too


class ImageError(Exception):
    """An ELF the simulator cannot run, with the reason."""


@dataclass(frozen=True)
class ThreadImage:
    """What a thread's ELF puts in memory, relative to the base it is loaded at."""

    path: Path
    size: int  # bytes from the first to past the last, .bss included, whole pages
    segments: tuple[tuple[int, bytes], ...] = field(repr=False)  # (offset, the file's bytes)
    entry: int
    halt: int  # kmx__halt: where a core that returned from kmx_main stops
    relocations: tuple[tuple[int, int], ...]  # (offset, addend): *(base+offset) = base+addend
    code: tuple[tuple[int, int], ...] = ()  # [start, end) of each executable section
    traps: dict[int, stand_in.Trapped] = field(default_factory=dict, repr=False)  # offset -> what
    symbols: tuple[tuple[int, int, str], ...] = field(default=(), repr=False)  # (start, size, name)
    calls_cycles: bool = False  # the thread calls kmx_cycles (or reads the C library's clocks)
    program_headers: bytes = field(default=b"", repr=False)  # the ELF's, for the aux vector (sim.kmx.linux)
    stubs: rewrite.Stubs = field(default=rewrite.NO_STUBS, repr=False)  # Zba, Zbb in RV64GC

    @property
    def uses_cycles(self) -> bool:
        """The thread reads its cycle count (kmx_cycles, or a counter CSR): its cores
        count instructions."""
        return self.calls_cycles or any(t.counter is not None for t in self.traps.values())

    def place(self, memory: np.ndarray, base: int) -> None:
        """Copy the image into MEMORY (zeros, which will sit at BASE), relocate it, and
        make the loader's changes to its code (`changes`)."""
        self.place_as_written(memory, base)
        for offset, trapped in self.traps.items():
            memory[offset : offset + 4] = np.frombuffer(struct.pack("<I", trapped.replacement), dtype=np.uint8)
        stubs = self.stubs
        for offset, insn in stubs.sites.items():
            memory[offset : offset + 4] = np.frombuffer(struct.pack("<I", insn), dtype=np.uint8)
        if stubs.code:
            memory[stubs.start : stubs.start + len(stubs.code)] = np.frombuffer(stubs.code, dtype=np.uint8)

    def place_as_written(self, memory: np.ndarray, base: int, start: int = 0) -> None:
        """Copy bytes [START, START + MEMORY's size) of the image, relocated for BASE, into
        MEMORY (zeros): as the compiler and linker wrote them, with none of the loader's changes."""
        end = start + memory.size
        for offset, data in self.segments:
            low, high = max(offset, start), min(offset + len(data), end)
            if low < high:
                memory[low - start : high - start] = np.frombuffer(data[low - offset : high - offset], dtype=np.uint8)
        for offset, addend in self.relocations:
            if start <= offset and offset + 8 <= end:
                memory[offset - start : offset - start + 8] = np.frombuffer(struct.pack("<Q", base + addend), np.uint8)

    def changes(self) -> tuple[list[int], tuple[int, int]]:
        """What `place` changes in the code: the offsets of the instructions it changes (4
        bytes each: the stand-ins' traps, the rewritten Zba and Zbb), sorted, and the stubs'
        [start, end)."""
        stubs = self.stubs
        return sorted({*self.traps, *stubs.sites}), (stubs.start, stubs.start + len(stubs.code))

    def in_code(self, offset: int) -> bool:
        return any(start <= offset < end for start, end in self.code)

    def symbol_at(self, offset: int) -> tuple[str, int] | None:
        """(name, offset into it) of the symbol that holds OFFSET, when one does."""
        for start, size, name in self.symbols:
            if start <= offset < start + max(size, 1):
                return name, offset - start
        return None


def load_image(path: Path, rewrites: bool = True) -> ThreadImage:
    """Read a thread's ELF. Raises ImageError when it is not one the simulator runs. An
    image is read once a process: the build cache names an ELF by its contents. REWRITES
    False: no rewrites (sim.isa.rewrite), every Zba and Zbb instruction then runs in C (to
    compare the two: sim.machine.config)."""
    stat = os.stat(path)
    return _load(Path(path), stat.st_size, stat.st_mtime_ns, rewrites)


@functools.lru_cache(maxsize=64)
def _load(path: Path, _size: int, _mtime: int, rewrites: bool) -> ThreadImage:
    try:
        with open(path, "rb") as f:
            return _read(path, ELFFile(f), rewrites)
    except (ELFError, struct.error, ValueError, IndexError) as error:
        raise ImageError(f"{path} is not an ELF the simulator can read ({error})") from None


def _program_headers(elf: ELFFile) -> bytes:
    """The ELF's program header table, as the file holds it (the C library reads it at
    start, through the aux vector, to find the thread-local storage)."""
    start, size = elf["e_phoff"], elf["e_phnum"] * elf["e_phentsize"]
    elf.stream.seek(start)
    return elf.stream.read(size)


def _read(path: Path, elf: ELFFile, rewrites: bool) -> ThreadImage:
    if elf["e_machine"] != "EM_RISCV" or elf.elfclass != 64:
        raise ImageError(f"{path} is not a 64-bit RISC-V ELF ({elf['e_machine']})")
    if elf["e_type"] != "ET_DYN":
        raise ImageError(
            f"{path} is linked at a fixed address ({elf['e_type']}); link threads "
            "position-independent (-fPIE with kmx_runtime/kmx.ld)"
        )
    loads = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
    if not loads:
        raise ImageError(f"{path} has nothing to load")
    end = max(s["p_vaddr"] + s["p_memsz"] for s in loads)
    segments = tuple((s["p_vaddr"], s.data()) for s in loads if s["p_filesz"])
    relocations = []
    code = []
    traps: dict[int, stand_in.Trapped] = {}
    symbols = _symbols(elf)
    by_name = {s.name: s.value for s in symbols if s.name in (rewrite.STUBS_SYMBOL, rewrite.STUBS_END_SYMBOL)}
    area = (by_name.get(rewrite.STUBS_SYMBOL), by_name.get(rewrite.STUBS_END_SYMBOL))
    rewritable: dict[int, int] = {}
    for index, section in enumerate(elf.iter_sections()):
        if section["sh_flags"] & SH_FLAGS.SHF_EXECINSTR and section["sh_type"] == "SHT_PROGBITS":
            start = section["sh_addr"]
            code.append((start, start + section["sh_size"]))
            skip = _data_in_code(symbols, index) + ([area] if None not in area else [])
            traps.update(stand_in.find_trapped(section.data(), start, skip, rewritable))
        if section["sh_type"] not in ("SHT_RELA", "SHT_REL"):
            continue
        if not section["sh_flags"] & SH_FLAGS.SHF_ALLOC:
            continue
        for reloc in section.iter_relocations():
            kind = reloc["r_info_type"]
            if kind == R_RISCV_NONE:
                continue
            if kind != R_RISCV_RELATIVE or not reloc.is_RELA():
                raise ImageError(
                    f"{path}: relocation type {kind} at {reloc['r_offset']:#x} is not "
                    "supported; only R_RISCV_RELATIVE (static position-independent code)"
                )
            relocations.append((reloc["r_offset"], reloc["r_addend"]))
    halt = next((s for s in symbols if s.name == HALT_SYMBOL), None)
    if halt is None:
        raise ImageError(f"{path} has no {HALT_SYMBOL}: link it with kmx_runtime/start.S")
    start = next((s for s in symbols if s.name == ENTRY_SYMBOL), None)
    named = tuple(sorted((s.value, s.size, s.name) for s in symbols if s.name and s.kind in (STT_OBJECT, STT_FUNC)))
    return ThreadImage(
        Path(path),
        align_up(end, PAGE),
        segments,
        elf["e_entry"] if start is None else start.value,
        halt.value,
        tuple(relocations),
        tuple(code),
        traps,
        named,
        calls_cycles=any(s.name in (CYCLES_SYMBOL, CLOCK_SYMBOL) for s in symbols),
        program_headers=_program_headers(elf),
        stubs=rewrite.rewrite(rewritable, *area) if None not in area and rewrites else rewrite.NO_STUBS,
    )


class Symbol(NamedTuple):
    name: str
    value: int
    size: int
    kind: int  # STT_*
    section: int  # its section's index


STT_OBJECT, STT_FUNC = 1, 2
_ELF64_SYM = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"), ("value", "<u8"), ("size", "<u8")])


def _symbols(elf: ELFFile) -> list[Symbol]:
    """The symbol table, read in one go (pyelftools parses a symbol at a time, which
    costs more than everything else of a load)."""
    table = elf.get_section_by_name(".symtab")
    if table is None:
        return []
    rows = np.frombuffer(table.data(), dtype=_ELF64_SYM)
    names = elf.get_section(table["sh_link"]).data()
    out = []
    for row in rows.tolist():
        start = row[0]
        name = names[start : names.index(b"\0", start)].decode(errors="replace")
        out.append(Symbol(name, row[4], row[5], row[1] & 0xF, row[3]))
    return out


def _data_in_code(symbols: list[Symbol], section: int) -> list[tuple[int, int]]:
    """[from, to) of the data the assembler put among the instructions of SECTION (its
    index): from each `$d` mapping symbol to the next mapping symbol, and each object."""
    own = [s for s in symbols if s.section == section]
    marks = sorted((s.value, s.name[1]) for s in own if s.name[:2] in ("$d", "$x"))
    spans = [(at, marks[i + 1][0] if i + 1 < len(marks) else 1 << 64) for i, (at, kind) in enumerate(marks) if kind == "d"]
    spans += [(s.value, s.value + s.size) for s in own if s.kind == STT_OBJECT]
    return spans
