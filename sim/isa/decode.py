"""Just enough RISC-V decoding to explain a fault: instruction lengths, and the address a
load or store meant (the engine's TLB-fill hook only sees the page)."""

from __future__ import annotations

from typing import Callable


def length(low_halfword: int) -> int:
    """2 for a compressed instruction, 4 otherwise (RV64GC has no longer ones)."""
    return 4 if low_halfword & 3 == 3 else 2


def _sext(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def _bits(insn: int, hi: int, lo: int) -> int:
    return (insn >> lo) & ((1 << (hi - lo + 1)) - 1)


def effective_address(insn: int, register: Callable[[int], int]) -> int | None:
    """The address that the load, store or atomic INSN accesses, with REGISTER(n) giving
    x<n>; None for any other instruction."""
    if insn & 3 == 3:
        opcode = insn & 0x7F
        rs1 = register(_bits(insn, 19, 15))
        if opcode in (0x03, 0x07):  # loads, FP loads
            return (rs1 + _sext(insn >> 20, 12)) & (2**64 - 1)
        if opcode in (0x23, 0x27):  # stores, FP stores
            imm = (_bits(insn, 31, 25) << 5) | _bits(insn, 11, 7)
            return (rs1 + _sext(imm, 12)) & (2**64 - 1)
        if opcode == 0x2F:  # AMOs, lr, sc
            return rs1
        return None
    quadrant, funct3 = insn & 3, _bits(insn, 15, 13)
    if quadrant == 0 and funct3 in (1, 2, 3, 5, 6, 7):  # c.fld c.lw c.ld c.fsd c.sw c.sd
        base = register(8 + _bits(insn, 9, 7))
        if funct3 in (2, 6):  # word: uimm[5:3]=12:10, [2]=6, [6]=5
            offset = (_bits(insn, 12, 10) << 3) | (_bits(insn, 6, 6) << 2) | (_bits(insn, 5, 5) << 6)
        else:  # double: uimm[5:3]=12:10, [7:6]=6:5
            offset = (_bits(insn, 12, 10) << 3) | (_bits(insn, 6, 5) << 6)
        return base + offset
    if quadrant == 2 and funct3 in (1, 2, 3, 5, 6, 7):  # stack-pointer relative
        sp = register(2)
        if funct3 == 2:  # c.lwsp
            offset = (_bits(insn, 12, 12) << 5) | (_bits(insn, 6, 4) << 2) | (_bits(insn, 3, 2) << 6)
        elif funct3 in (1, 3):  # c.fldsp c.ldsp
            offset = (_bits(insn, 12, 12) << 5) | (_bits(insn, 6, 5) << 3) | (_bits(insn, 4, 2) << 6)
        elif funct3 == 6:  # c.swsp
            offset = (_bits(insn, 12, 9) << 2) | (_bits(insn, 8, 7) << 6)
        else:  # c.fsdsp c.sdsp
            offset = (_bits(insn, 12, 10) << 3) | (_bits(insn, 9, 7) << 6)
        return sp + offset
    return None
