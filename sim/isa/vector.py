"""The vector unit's words, for messages: vtype as RVV's assembly writes it, the names of
the vector loads and stores, and the table of OP-V operations the unit itself is built
from (sim/native/vector/ops.def, read as text: the one place that names them), SiFive's
in the custom-2 major opcode among them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

OPS = Path(__file__).resolve().parent.parent / "native" / "vector" / "ops.def"
OP_V, CUSTOM_2 = 0x57, 0x5B  # the major opcodes of ops.def's rows: RVV's, and SiFive's (its SF_ shapes)
# The funct3 of each family of ops.def's shapes, by the letter its forms column uses
_FAMILY_FORMS = {
    "OPI": {"V": 0, "X": 4, "I": 3, "U": 3},
    "OPM": {"V": 2, "X": 6},
    "OPF": {"V": 1, "F": 5},
}


@dataclass(frozen=True)
class Operation:
    """A row of ops.def: an OP-V operation, or (VS1 set) one instruction of a funct6 whose
    instructions the vs1 field chooses."""

    shape: str  # INT, FIXED, INT_CMP, NARROW, MUL_REDUCE, FLOAT, ..., SF_FLOAT (ops.def says each)
    funct6: int
    name: str  # its mnemonic's stem: "vadd", "vwaddu.w"; whole for a unary one ("vzext.vf2") and SiFive's
    funct3s: frozenset[int]  # the funct3 it has
    vs1: int | None = None
    opcode: int = OP_V  # its major opcode: OP-V, or custom-2 for SiFive's (SF_FLOAT)


def _family(shape: str) -> str:
    shape = shape.removeprefix("SF_")
    return "OPM" if shape.startswith("MUL") else "OPF" if shape.startswith("FLOAT") else "OPI"


@cache
def operations() -> tuple[Operation, ...]:
    """ops.def's rows."""
    text = re.sub(r"/\*.*?\*/", " ", OPS.read_text(), flags=re.S)
    rows = []
    for shape, f6, rest in re.findall(r"^([A-Z_]+)\((0x[0-9A-Fa-f]+),\s*(.*)\)\s*$", text, flags=re.M):
        columns = [part.strip() for part in rest.split(",")]
        family = _FAMILY_FORMS[_family(shape)]
        if shape.endswith("_UNARY"):
            rows.append(Operation(shape, int(f6, 16), columns[1].replace("_", "."), frozenset({family["V"]}),
                                  int(columns[0])))
        else:
            rows.append(Operation(shape, int(f6, 16), columns[0].replace("_", "."),
                                  frozenset(family[letter] for letter in columns[1]),
                                  opcode=CUSTOM_2 if shape.startswith("SF_") else OP_V))
    return tuple(rows)

VILL = 1 << 63
_LMUL = {0: "m1", 1: "m2", 2: "m4", 3: "m8", 5: "mf8", 6: "mf4", 7: "mf2"}
_WIDTH = {0: 8, 5: 16, 6: 32, 7: 64}  # a vector load's or store's width field: its EEW


def vtype_text(vtype: int) -> str:
    """VTYPE as vsetvli's operands say it ("e32, m8, ta, ma"), or that it is illegal."""
    if vtype & VILL:
        return "illegal (vill: no vsetvli yet, or the last asked for an element width and group the X280 lacks)"
    vsew, vlmul = (vtype >> 3) & 7, vtype & 7
    if vsew > 3 or vlmul == 4:
        return f"{vtype:#x}"
    tail = "ta" if vtype >> 6 & 1 else "tu"
    mask = "ma" if vtype >> 7 & 1 else "mu"
    return f"e{8 << vsew}, {_LMUL[vlmul]}, {tail}, {mask}"


def is_float(insn: int) -> bool:
    """Whether INSN is a vector floating-point instruction (OPFVV, OPFVF; SiFive's OPFVF
    ones in custom-2 too)."""
    return insn & 0x7F in (OP_V, CUSTOM_2) and (insn >> 12) & 7 in (1, 5)


def is_memory(insn: int) -> bool:
    """Whether INSN is a vector load or store."""
    return insn & 3 == 3 and insn & 0x7F in (0x07, 0x27) and (insn >> 12) & 7 in _WIDTH


def memory_name(insn: int) -> str:
    """The mnemonic of the vector load or store INSN ("vle32.v", "vlse8.v", "vsoxei16.v")."""
    store = insn & 0x7F == 0x27
    eew = _WIDTH[(insn >> 12) & 7]
    nf, mop, lumop = (insn >> 29) + 1, (insn >> 26) & 3, (insn >> 20) & 31
    letter = "s" if store else "l"
    segments = f"seg{nf}" if nf > 1 else ""
    if mop == 0 and lumop == 8:
        return f"vs{nf}r.v" if store else f"vl{nf}re{eew}.v"
    if mop == 0 and lumop == 11:
        return "vsm.v" if store else "vlm.v"
    if mop == 0:
        return f"v{letter}{segments}e{eew}{'ff' if lumop == 16 else ''}.v"
    if mop == 2:
        return f"v{letter}s{segments}e{eew}.v"
    return f"v{letter}{'u' if mop == 1 else 'o'}x{segments}ei{eew}.v"


def memory_span(insn: int, x, vl: int, vlenb: int) -> tuple[int, int] | None:
    """[start, start + size) of the bytes the vector load or store INSN reaches with VL
    elements (X(n): register n), or None when its elements go anywhere (indexed). (For a
    debugger's watchpoint: a byte outside it is never touched.)"""
    eew = _WIDTH[(insn >> 12) & 7] // 8
    nf, mop, lumop = (insn >> 29) + 1, (insn >> 26) & 3, (insn >> 20) & 31
    base = x((insn >> 15) & 31)
    if mop == 0 and lumop == 8:  # whole registers
        return base, nf * vlenb
    if mop == 0 and lumop == 11:  # a mask: a bit an element
        return base, -(-vl // 8)
    if mop == 0:
        return base, vl * eew * nf
    if mop == 2:
        stride = x((insn >> 20) & 31)
        stride -= (1 << 64) if stride >> 63 else 0
        last = base + (vl - 1) * stride if vl else base
        low = min(base, last)
        return low, max(base, last) - low + eew * nf
    return None
