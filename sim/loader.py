"""The ELF loader: a thread's compiled image, read with pyelftools, placed at any base.

Threads are linked position-independent from 0 (kmx_runtime/kmx.ld), so the same ELF runs
on every cluster: the loader copies the PT_LOAD segments to the cluster's share and applies
the R_RISCV_RELATIVE relocations for that base.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from sim.layout import PAGE, align_up

R_RISCV_NONE = 0
R_RISCV_RELATIVE = 3
HALT_SYMBOL = "kmx__halt"
CYCLES_SYMBOL = "kmx_cycles"  # present only when the thread calls it (kmx.h: static)


class ImageError(Exception):
    """An ELF the simulator cannot run, with the reason."""


@dataclass(frozen=True)
class ThreadImage:
    """What a thread's ELF puts in memory, relative to the base it is loaded at."""

    path: Path
    data: bytes = field(repr=False)  # the whole image, .bss included, PAGE-aligned in size
    entry: int
    halt: int  # kmx__halt: where a core that returned from kmx_main stops
    relocations: tuple[tuple[int, int], ...]  # (offset, addend): *(base+offset) = base+addend
    uses_cycles: bool = False  # the thread calls kmx_cycles: its cores count instructions

    @property
    def size(self) -> int:
        return len(self.data)

    def place(self, memory: np.ndarray, base: int) -> None:
        """Copy the image into MEMORY (which will sit at BASE) and relocate it."""
        memory[: self.size] = np.frombuffer(self.data, dtype=np.uint8)
        for offset, addend in self.relocations:
            memory[offset : offset + 8] = np.frombuffer(
                struct.pack("<Q", base + addend), dtype=np.uint8
            )


def load_image(path: Path) -> ThreadImage:
    """Read a thread's ELF. Raises ImageError when it is not one the simulator runs."""
    with open(path, "rb") as f:
        elf = ELFFile(f)
        if elf["e_machine"] != "EM_RISCV" or elf.elfclass != 64:
            raise ImageError(f"{path} is not a 64-bit RISC-V ELF ({elf['e_machine']})")
        if elf["e_type"] != "ET_DYN":
            raise ImageError(
                f"{path} is linked at a fixed address ({elf['e_type']}); link threads "
                "position-independent (-fPIE with kmx_runtime/kmx.ld)"
            )
        segments = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        if not segments:
            raise ImageError(f"{path} has nothing to load")
        end = max(s["p_vaddr"] + s["p_memsz"] for s in segments)
        data = bytearray(align_up(end, PAGE))
        for s in segments:
            body = s.data()
            data[s["p_vaddr"] : s["p_vaddr"] + len(body)] = body
        relocations = []
        for section in elf.iter_sections():
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
        symbols = elf.get_section_by_name(".symtab")
        halt = symbols.get_symbol_by_name(HALT_SYMBOL) if symbols else None
        if not halt:
            raise ImageError(f"{path} has no {HALT_SYMBOL}: link it with kmx_runtime/start.S")
        return ThreadImage(
            Path(path),
            bytes(data),
            elf["e_entry"],
            halt[0]["st_value"],
            tuple(relocations),
            uses_cycles=bool(symbols.get_symbol_by_name(CYCLES_SYMBOL)),
        )
