"""Source lines from the ELF's DWARF line table: which file and line a pc belongs to.

Read once per image, when first asked (a fault, a finding), never on the fast path.
"""

from __future__ import annotations

import bisect
import functools
import os
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.elffile import ELFFile


DEAD_BELOW = 0x1000  # where the image's code starts (kmx_runtime/kmx.ld)


@dataclass(frozen=True)
class SourceLine:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@functools.lru_cache(maxsize=32)
def _line_table(path: Path, _size: int, _mtime: int) -> "LineTable":
    return LineTable(path)


def line_table(path: Path) -> "LineTable":
    """The line table of the ELF at PATH, read once a process (the build cache names an
    ELF by its contents)."""
    stat = os.stat(path)
    return _line_table(Path(path), stat.st_size, stat.st_mtime_ns)


def _c_library_unit(unit) -> bool:
    """UNIT was compiled from the C library's sources (musl's, zig's own), which the
    ziglang package holds: reading its rows would cost more than all the rest."""
    name = unit.get_top_DIE().attributes.get("DW_AT_name")
    if name is None:
        return False
    text = name.value.decode(errors="replace") if isinstance(name.value, bytes) else str(name.value)
    if text.endswith(".zig") or "/ziglang/" in text or text in ("zigc", "compiler_rt"):
        return True
    directory = unit.get_top_DIE().attributes.get("DW_AT_comp_dir")
    folder = directory.value.decode(errors="replace") if directory and isinstance(directory.value, bytes) else ""
    return "/ziglang/lib" in os.path.join(folder, text)


class LineTable:
    """Maps an image offset (a pc minus the image's base) to the source line it came from."""

    def __init__(self, path: Path) -> None:
        self._addresses: list[int] = []
        self._lines: list[SourceLine | None] = []
        rows: list[tuple[int, SourceLine | None]] = []
        with open(path, "rb") as f:
            elf = ELFFile(f)
            if not elf.has_dwarf_info():
                return
            dwarf = elf.get_dwarf_info()
            for unit in dwarf.iter_CUs():
                if _c_library_unit(unit):
                    continue  # (its lines are not the user's: its frames go by name)
                program = dwarf.line_program_for_CU(unit)
                if program is None:
                    continue
                files = self._file_names(program, unit)
                sequence: list[tuple[int, SourceLine | None]] = []
                for entry in program.get_entries():
                    state = entry.state
                    if state is None:
                        continue
                    if state.end_sequence:
                        sequence.append((state.address, None))
                        # A sequence at address 0 is a function the linker removed: the
                        # image's code starts a page in (kmx_runtime/kmx.ld).
                        if sequence[0][0] >= DEAD_BELOW:
                            rows.extend(sequence)
                        sequence = []
                    elif state.line:
                        sequence.append((state.address, SourceLine(files.get(state.file, "?"), state.line)))
        rows.sort(key=lambda row: row[0])
        self._addresses = [address for address, _ in rows]
        self._lines = [line for _, line in rows]

    @staticmethod
    def _file_names(program, unit) -> dict[int, str]:
        header = program.header
        version = header["version"]
        directories = [d.decode() if isinstance(d, bytes) else d for d in header["include_directory"]]
        comp_dir = unit.get_top_DIE().attributes.get("DW_AT_comp_dir")
        comp_dir = comp_dir.value.decode() if comp_dir else ""
        if version < 5:
            directories = [comp_dir] + directories
        names = {}
        for number, entry in enumerate(header["file_entry"], start=0 if version >= 5 else 1):
            name = entry.name.decode() if isinstance(entry.name, bytes) else entry.name
            directory = directories[entry.dir_index] if entry.dir_index < len(directories) else ""
            names[number] = os.path.normpath(os.path.join(comp_dir, directory, name))
        return names

    def lookup(self, offset: int) -> SourceLine | None:
        """The source line of the instruction at OFFSET, or None when there is none."""
        i = bisect.bisect_right(self._addresses, offset) - 1
        if i < 0:
            return None
        return self._lines[i]
