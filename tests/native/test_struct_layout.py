"""Every struct C and Python share (hooks.h, and hooks.py's ctypes copies) has the same
fields at the same offsets in both: clang's own record layouts of hooks.h (its
-fdump-record-layouts, through the zig the hooks are built with), field by field, against
ctypes'. (sizes.c checks only each struct's size: two fields of one type swapped would
pass it.)"""

from __future__ import annotations

import ctypes
import re
import subprocess

from komorebi.sim.build import toolchain
from komorebi.sim.native import hooks


# hooks.py's names that are not hooks.h's (the rest are the same)
C_NAMES = {"RegionState": "CachedRegion", "SpanEntry": "Span", "CoreState": "Core", "GroupState": "Group",
           "CallsState": "Calls", "TimingHead": "Timing"}
# hooks.py's mirrors of a struct's first fields only (the rest is C's own): those fields are checked
HEADS = {"Timing"}


def _shared_structs() -> dict[str, type]:
    return {name: value for name, value in vars(hooks).items()
            if isinstance(value, type) and issubclass(value, ctypes.Structure) and value is not ctypes.Structure
            and value.__module__ == hooks.__name__}


def _c_layouts(names, tmp_path) -> dict[str, dict[str, int]]:
    """{struct: {field: offset}} of the top-level fields of each of NAMES, as clang lays them out."""
    source = tmp_path / "layout.c"
    source.write_text('#include "hooks.h"\n' + "".join(f"{name} layout_{name};\n" for name in names))
    done = subprocess.run([*toolchain.zig(), "cc", "-target", "native", "-c", "-Xclang", "-fdump-record-layouts",
                           "-w", "-I", str(hooks.FOLDER), str(source), "-o", str(tmp_path / "layout.o")],
                          capture_output=True, text=True, env=toolchain.environment(), timeout=600)
    assert done.returncode == 0, done.stderr
    layouts: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for line in done.stdout.splitlines():
        match = re.match(r"\s*(\d+) \| (\s*)(.*)$", line)
        if line.startswith("*** Dumping AST Record Layout"):
            current = None
        elif match and current is None:  # the record's own line: "0 | Name" (or "struct Name")
            current = layouts.setdefault(match.group(3).split()[-1], {})
        elif match and current is not None and len(match.group(2)) == 2:  # a field of the record itself
            current[match.group(3).split()[-1]] = int(match.group(1))
    return layouts


def test_every_shared_struct_has_cs_fields_at_cs_offsets(tmp_path):
    structs = {C_NAMES.get(name, name): struct for name, struct in _shared_structs().items()}
    assert {"Core", "Turn", "Group", "CachedRegion", "Span", "IsaState", "Tile"} <= set(structs), sorted(structs)
    c = _c_layouts(sorted(structs), tmp_path)
    differ = {}
    for name, struct in structs.items():
        ours = {field[0]: getattr(struct, field[0]).offset for field in struct._fields_}
        theirs = c.get(name)
        if name in HEADS and theirs is not None:
            theirs = {field: offset for field, offset in theirs.items() if field in ours}
        if theirs != ours:
            differ[name] = {"C": c.get(name), "ctypes": ours}
    assert not differ, differ
    assert sum(len(fields) for fields in c.values()) > 150  # (the dump was read: every field of 15 structs)
