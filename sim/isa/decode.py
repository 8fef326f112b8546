"""Just enough RISC-V decoding to explain a fault: instruction lengths, the address a load
or store meant (the engine's TLB-fill hook only sees the page), the extensions the X280
lacks, and the names of vector instructions (for the ones the vector unit refuses). The
scalar instructions come from their table (sim.isa.scalar: sim/native/scalar.def), the
vector ones from the vector unit's (sim.isa.vector: sim/native/vector/ops.def)."""

from __future__ import annotations

from functools import cache
from typing import Callable

from . import scalar, vector


def length(low_halfword: int) -> int:
    """2 for a compressed instruction, 4 otherwise (RV64GC has no longer ones)."""
    return 4 if low_halfword & 3 == 3 else 2


def _bits(insn: int, hi: int, lo: int) -> int:
    return (insn >> lo) & ((1 << (hi - lo + 1)) - 1)


def _scalar(insn: int) -> tuple[int, scalar.Row] | None:
    """(the 32-bit instruction, its row of scalar.def) of INSN, a compressed one expanded."""
    if insn & 3 != 3:
        insn = scalar.expand(insn & 0xFFFF)
        if insn is None:
            return None
    row = scalar.find(insn)
    return None if row is None else (insn, row)


def effective_address(insn: int, register: Callable[[int], int]) -> int | None:
    """The address that the scalar load, store or atomic INSN accesses, with REGISTER(n)
    giving x<n>; None for any other instruction."""
    found = _scalar(insn)
    if found is None or found[1].access is None:
        return None
    insn, row = found
    offset = 0 if row.format == "A" else scalar.immediate(insn, row.format)
    return (register(_bits(insn, 19, 15)) + offset) & (2**64 - 1)


def memory_access(insn: int) -> tuple[bool | None, int] | None:
    """(is it a store, its size in bytes) of the scalar load, store or atomic INSN (an AMO
    both reads and writes: None); None for any other instruction."""
    found = _scalar(insn)
    if found is None or found[1].access is None:
        return None
    return found[1].access.store, found[1].access.size


def ends_block(insn: int) -> bool:
    """INSN is a branch, a jump or a system instruction: the engine's translated block ends
    with it."""
    if insn & 3 != 3:
        insn = scalar.expand(insn & 0xFFFF) or 0
    return insn & 0x7F in (0x63, 0x67, 0x6F, 0x73)


# -- instructions the X280 lacks ------------------------------------------------------------
# (the scalar ones are scalar.def's rows; the vector ones are here, since the vector unit's
# table holds only what the unit runs)

_LACKING_OP_V = {  # OP-V (0x57): (funct3, funct6) -> ... (with the vector unit's OPIVV 0, OPFVV 1,
    # OPMVV 2, OPIVI 3, OPIVX 4, OPFVF 5; the unary ones of OPMVV's funct6 0x12 by vs1 below)
    (1, 0x3B): ("Zvfbfwma", "vfwmaccbf16.vv"), (5, 0x3B): ("Zvfbfwma", "vfwmaccbf16.vf"),
    (0, 0x01): ("Zvkb", "vandn.vv"), (4, 0x01): ("Zvkb", "vandn.vx"),
    (0, 0x14): ("Zvkb", "vror.vv"), (4, 0x14): ("Zvkb", "vror.vx"), (3, 0x14): ("Zvkb", "vror.vi"),
    (3, 0x15): ("Zvkb", "vror.vi"), (0, 0x15): ("Zvkb", "vrol.vv"), (4, 0x15): ("Zvkb", "vrol.vx"),
    (0, 0x35): ("Zvbb", "vwsll.vv"), (4, 0x35): ("Zvbb", "vwsll.vx"), (3, 0x35): ("Zvbb", "vwsll.vi"),
}
_LACKING_VXUNARY0 = {8: ("Zvkb", "vbrev8.v"), 9: ("Zvkb", "vrev8.v"), 10: ("Zvbb", "vbrev.v"),
                     12: ("Zvbb", "vclz.v"), 13: ("Zvbb", "vctz.v"), 14: ("Zvbb", "vcpop.v")}
EXTENSIONS = {
    "V": "the vector unit",
    "Zbs": "single-bit instructions",
    "Zbc": "carry-less multiplication",
    "Zbkb": "bit manipulation for cryptography",
    "Zicond": "conditional zero",
    "Zicbom": "cache-block management",
    "Zicboz": "cache-block zero",
    "Zfa": "additional floating point",
    "Zfbfmin": "scalar BF16 conversions",
    "Zvfbfwma": "vector BF16 widening multiply-add",
    "Zvkb": "vector bit manipulation for cryptography",
    "Zvbb": "vector basic bit manipulation",
    "Q": "quad precision",
    "Zcb": "more compressed instructions",
    "SiFive cache": "SiFive's L1 cache instructions",
}


def lacking(insn: int) -> tuple[str, str] | None:
    """(extension, instruction) for INSN when it belongs to an extension the X280 lacks (the
    card traps on it: Zbs, Zbc, Zicond, Zicbom, Zfa, Zfbfmin, Zvfbfwma, Zvkb, Zvbb, ...), or
    to V ("V" and the vector instruction's name, Zvfbfmin's and SiFive's Xsfvfnrclipxfqf's
    among them: the unit runs every one it does not refuse, so one that reaches Python was
    refused); None when it is none known. The scalar ones are scalar.def's rows the X280
    LACKS (and its compressed ones that stand for none)."""
    if insn & 3 != 3:
        row = scalar.find_compressed(insn & 0xFFFF)
        return (row.extension, row.name) if row is not None and row.to is None else None
    funct3 = _bits(insn, 14, 12)
    if insn & 0x7F == 0x57:
        if funct3 == 2 and insn >> 26 == 0x12 and _bits(insn, 19, 15) in _LACKING_VXUNARY0:
            return _LACKING_VXUNARY0[_bits(insn, 19, 15)]
        if (funct3, insn >> 26) in _LACKING_OP_V:
            return _LACKING_OP_V[funct3, insn >> 26]
    name = vector_name(insn)
    if name is not None:
        return "V", name
    row = scalar.find(insn)
    return (row.extension, row.name) if row is not None and row.op == scalar.LACKS else None


# -- the vector unit's instructions, by name ------------------------------------------------
# (from the unit's own table, sim/native/vector/ops.def: sim.isa.vector.operations)


@cache
def _operations() -> tuple[dict[tuple[int, int], vector.Operation], dict[tuple[int, int, int], str],
                           dict[tuple[int, int], str]]:
    """ops.def's OP-V rows by (funct3, funct6), the unary ones' names by (funct3, funct6,
    vs1), and SiFive's custom-2 ones' names by (funct3, funct6)."""
    rows, unary, sifive = {}, {}, {}
    for op in vector.operations():
        for funct3 in op.funct3s:
            if op.opcode == vector.CUSTOM_2:
                sifive[funct3, op.funct6] = op.name
            elif op.vs1 is None:
                rows[funct3, op.funct6] = op
            else:
                unary[funct3, op.funct6, op.vs1] = op.name
    return rows, unary, sifive


def vector_name(insn: int) -> str | None:
    """The mnemonic of INSN when it is a vector instruction (OP-V, a vector load or store,
    or one of SiFive's in custom-2 that the X280 has): "vfadd.vv", "vle32.v",
    "vluxseg2ei16.v", "sf.vfnrclip.x.f.qf"; "an encoding RVV 1.0 reserves" for one of
    theirs that no instruction has; None for an instruction that is not a vector one."""
    opcode, funct3 = insn & 0x7F, _bits(insn, 14, 12)
    if insn & 3 == 3 and vector.is_memory(insn):
        return _vector_memory_name(insn, opcode == 0x27, 8 if funct3 == 0 else 8 << (funct3 - 4))
    if opcode == vector.CUSTOM_2:
        return _operations()[2].get((funct3, insn >> 26))
    if opcode != 0x57:
        return None
    reserved = "an OP-V encoding RVV 1.0 reserves"
    if funct3 == 7:
        if insn >> 31 == 0:
            return "vsetvli"
        if insn >> 30 == 3:
            return "vsetivli"
        return "vsetvl" if insn >> 25 == 0x40 else reserved
    funct6, vm, vs2, vs1 = insn >> 26, _bits(insn, 25, 25), _bits(insn, 24, 20), _bits(insn, 19, 15)
    kind = {0: "v", 4: "x", 3: "i", 2: "v", 6: "x", 1: "v", 5: "f"}[funct3]
    rows, unary, _ = _operations()
    if (funct3, funct6, vs1) in unary:
        return unary[funct3, funct6, vs1]
    op = rows.get((funct3, funct6))
    if op is None:
        return reserved
    name = op.name
    if funct6 == 0x27 and funct3 == 3:  # vmv<nr>r.v
        return f"vmv{vs1 + 1}r.v" if vs1 in (0, 1, 3, 7) else reserved
    if op.shape in ("INT_OTHER", "MUL_OTHER", "FLOAT_OTHER"):
        if funct6 == 0x17 and funct3 in (0, 3, 4):
            return f"vmv.v.{kind}" if vm else f"vmerge.v{kind}m"
        if funct6 == 0x17 and funct3 == 5:
            return "vfmv.v.f" if vm else "vfmerge.vfm"
        if funct6 in (0x10, 0x12) and funct3 in (0, 3, 4):  # vadc, vsbc: masked only
            return f"{name}.v{kind}m" if not vm else reserved
        if funct6 in (0x11, 0x13) and funct3 in (0, 3, 4):  # vmadc, vmsbc: with or without the carry
            return f"{name}.v{kind}m" if not vm else f"{name}.v{kind}"
        if funct6 == 0x10:  # vmv.s.x, vfmv.s.f
            return name if vs2 == 0 else reserved
        if funct6 == 0x17:
            return "vcompress.vm"
    if op.shape == "NARROW":
        return f"{name}.w{kind}"
    if op.shape in ("MUL_REDUCE", "FLOAT_REDUCE") or (op.shape == "INT_OTHER" and funct6 in (0x30, 0x31)):
        return f"{name}.vs"
    if op.shape == "MUL_MASK":
        return f"{name}.mm"
    if name.endswith(".w"):
        return f"{name[:-2]}.w{kind}"
    return f"{name}.v{kind}"


def _vector_memory_name(insn: int, store: bool, eew: int) -> str:
    nf, mew, mop, vm, lumop = insn >> 29, _bits(insn, 28, 28), _bits(insn, 27, 26), _bits(insn, 25, 25), _bits(insn, 24, 20)
    reserved = "a vector load or store encoding RVV 1.0 reserves"
    if mew:  # (an EEW past 64)
        return reserved
    if mop == 0 and (lumop not in (0, 8, 11, 16) or (lumop == 16 and store)):
        return reserved
    if mop == 0 and lumop == 8 and (nf not in (0, 1, 3, 7) or not vm):  # whole registers: 1, 2, 4 or 8
        return reserved
    if mop == 0 and lumop == 11 and (eew != 8 or nf or not vm):  # a mask
        return reserved
    return vector.memory_name(insn)
