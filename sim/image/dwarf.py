"""Source lines from the ELF's DWARF line table: which file and line a pc belongs to.

Read once per image, when first asked (a fault, a finding), never on the fast path.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.elffile import ELFFile


@dataclass(frozen=True)
class SourceLine:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


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
                program = dwarf.line_program_for_CU(unit)
                if program is None:
                    continue
                files = self._file_names(program, unit)
                for entry in program.get_entries():
                    state = entry.state
                    if state is None:
                        continue
                    if state.end_sequence:
                        rows.append((state.address, None))
                    elif state.line:
                        rows.append((state.address, SourceLine(files.get(state.file, "?"), state.line)))
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
