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


# -- instructions the X280 lacks ------------------------------------------------------------

_LACKING_OP = {  # OP (0x33): (funct7, funct3) -> (extension, instruction)
    (0x14, 1): ("Zbs", "bset"), (0x24, 1): ("Zbs", "bclr"), (0x34, 1): ("Zbs", "binv"),
    (0x24, 5): ("Zbs", "bext"), (0x05, 1): ("Zbc", "clmul"), (0x05, 3): ("Zbc", "clmulh"),
    (0x05, 2): ("Zbc", "clmulr"), (0x04, 4): ("Zbkb", "pack"), (0x04, 7): ("Zbkb", "packh"),
    (0x07, 5): ("Zicond", "czero.eqz"), (0x07, 7): ("Zicond", "czero.nez"),
}
_LACKING_OP_IMM = {  # OP-IMM (0x13): (imm[11:6], funct3) -> ...
    (0x0A, 1): ("Zbs", "bseti"), (0x12, 1): ("Zbs", "bclri"), (0x1A, 1): ("Zbs", "binvi"),
    (0x12, 5): ("Zbs", "bexti"),
}
EXTENSIONS = {
    "V": "the vector unit, which the simulator runs only in part so far",
    "Zbs": "single-bit instructions",
    "Zbc": "carry-less multiplication",
    "Zbkb": "bit manipulation for cryptography",
    "Zicond": "conditional zero",
    "Zicbom": "cache-block management",
    "Zicboz": "cache-block zero",
    "Zfa": "additional floating point",
    "Q": "quad precision",
    "Zcb": "more compressed instructions",
    "SiFive cache": "SiFive's L1 cache instructions",
}


def lacking(insn: int) -> tuple[str, str] | None:
    """(extension, instruction) for INSN when it belongs to an extension the simulated
    X280 does not run (the card's lacks all of them but V); None when it is none known."""
    if insn & 3 != 3:
        quadrant, funct3 = insn & 3, _bits(insn, 15, 13)
        if quadrant == 0 and funct3 == 4:
            return "Zcb", "c.lbu, c.lh, c.sb or c.sh"
        if quadrant == 1 and funct3 == 4 and _bits(insn, 12, 10) == 7 and _bits(insn, 6, 5) == 3:
            return "Zcb", "c.zext, c.sext, c.not or c.mul"
        return None
    opcode, funct3, funct7 = insn & 0x7F, _bits(insn, 14, 12), insn >> 25
    if opcode == 0x57:
        return "V", "an instruction of the vector unit"
    if opcode in (0x07, 0x27) and funct3 in (0, 5, 6, 7):
        return "V", "a vector load or store"
    if opcode == 0x33:
        return _LACKING_OP.get((funct7, funct3))
    if opcode == 0x13:
        if funct3 == 5 and insn >> 20 == 0x687:
            return "Zbkb", "brev8"
        return _LACKING_OP_IMM.get((insn >> 26, funct3))
    if opcode == 0x3B and funct7 == 0x04 and funct3 == 4:
        return "Zbkb", "packw"
    if opcode == 0x0F and funct3 == 2:
        which = insn >> 20
        return ("Zicboz", "cbo.zero") if which == 4 else ("Zicbom", {0: "cbo.inval", 1: "cbo.clean", 2: "cbo.flush"}.get(which, "cbo.*"))
    if opcode == 0x73 and funct7 == 0x7E and funct3 == 0:
        return "SiFive cache", "cflush.d.l1 or cdiscard.d.l1 (the card's X280 traps on them too)"
    if opcode == 0x53:
        if funct7 & 3 == 3:
            return "Q", "a quad-precision instruction"
        if funct7 in (0x14, 0x15, 0x16) and funct3 in (2, 3):
            return "Zfa", "fminm or fmaxm"
        if funct7 in (0x78, 0x79, 0x7A) and _bits(insn, 24, 20) == 1:
            return "Zfa", "fli"
        if funct7 in (0x20, 0x21, 0x22) and _bits(insn, 24, 20) in (4, 5):
            return "Zfa", "fround or froundnx"
        if funct7 in (0x50, 0x51, 0x52) and funct3 in (4, 5):
            return "Zfa", "fleq or fltq"
    if opcode in (0x07, 0x27) and funct3 == 4:
        return "Q", "flq or fsq"
    return None
