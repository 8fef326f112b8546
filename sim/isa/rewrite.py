"""Zba and the simple Zbb instructions, rewritten by the loader into RV64GC the engine runs.

The engine lacks Zba and Zbb. Run in C from the interrupt hook (sim/native/isa.c), each
costs a trap, about 35 ns: a loop with one `sh1add` in it (clang puts them in address
arithmetic: `3 * x` is `sh1add x, x, x`) ran 3 times slower than its RV64GC build, and
interpreting the loop in C was still 3 times slower, since the engine's translated code
runs an instruction in about a nanosecond. So the loader rewrites, in the placed copy of
the thread's code only, each such instruction it finds into a jump to a *stub*: a few
RV64GC instructions that compute the same result and jump back. The stubs live in the
image's stub area (`kmx__stubs` in kmx_runtime/kmx.ld, right after the code, so within a
jump's reach of it).

- What is rewritten: all of Zba; of Zbb `andn`, `orn`, `xnor`, `min`, `max`, `minu`,
  `maxu`, `sext.b`, `sext.h`, `zext.h` and the rotates. `clz`, `ctz`, `cpop`, `orc.b`
  and `rev8` would take long stubs and stay in C, as does Zfh.
- Most stubs need no register but the instruction's own. The rest borrow one or two of
  t2-t6 (ones the instruction does not name), kept while the stub runs in the core's
  scratch page, the address space's last, which `sd t6, -8(x0)` reaches with no base
  register (sim.layout, STUB_SCRATCH): so a stub needs no valid sp (the official tests
  use sp as a plain register) and writes none of the program's memory.
- The cycle model counts the jump as the instruction it replaces and the stub's
  instructions as none (sim/native/turns.c, isa.c), so `kmx_cycles`, the counters and the
  turns are exactly as if the instruction ran; the explainer shows a pc in a stub as the
  instruction's own line.
- What a thread sees of its own code, read as data, is what the compiler wrote: the jumps
  and the stubs are the engine's alone (sim.image.original, sim/native/code.c), so a
  function copied elsewhere runs there after fence.i. Code the thread writes at run time
  is not rewritten (it runs in C).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

BORROWED = (31, 30, 29, 28, 7)  # t6 t5 t4 t3 t2: the stubs borrow from these, in this order
JAL_RANGE = 1 << 20  # a jal reaches +-1 MiB
STUBS_SYMBOL, STUBS_END_SYMBOL = "kmx__stubs", "kmx__stubs_end"


# -- encoding RV64I ----------------------------------------------------------------------------

def _r(funct7: int, rs2: int, rs1: int, funct3: int, rd: int, opcode: int) -> int:
    return funct7 << 25 | rs2 << 20 | rs1 << 15 | funct3 << 12 | rd << 7 | opcode


def _i(imm: int, rs1: int, funct3: int, rd: int, opcode: int) -> int:
    return (imm & 0xFFF) << 20 | rs1 << 15 | funct3 << 12 | rd << 7 | opcode


def _s(imm: int, rs2: int, rs1: int, funct3: int, opcode: int = 0x23) -> int:
    imm &= 0xFFF
    return (imm >> 5) << 25 | rs2 << 20 | rs1 << 15 | funct3 << 12 | (imm & 0x1F) << 7 | opcode


def _b(offset: int, rs2: int, rs1: int, funct3: int) -> int:
    o = offset & 0x1FFF
    return ((o >> 12) & 1) << 31 | ((o >> 5) & 0x3F) << 25 | rs2 << 20 | rs1 << 15 | funct3 << 12 | \
        ((o >> 1) & 0xF) << 8 | ((o >> 11) & 1) << 7 | 0x63


def jal(offset: int, rd: int = 0) -> int:
    o = offset & 0x1FFFFF
    return ((o >> 20) & 1) << 31 | ((o >> 1) & 0x3FF) << 21 | ((o >> 11) & 1) << 20 | ((o >> 12) & 0xFF) << 12 | rd << 7 | 0x6F


def add(rd, a, b): return _r(0, b, a, 0, rd, 0x33)
def sub(rd, a, b): return _r(0x20, b, a, 0, rd, 0x33)
def and_(rd, a, b): return _r(0, b, a, 7, rd, 0x33)
def or_(rd, a, b): return _r(0, b, a, 6, rd, 0x33)
def xor(rd, a, b): return _r(0, b, a, 4, rd, 0x33)
def sll(rd, a, b): return _r(0, b, a, 1, rd, 0x33)
def srl(rd, a, b): return _r(0, b, a, 5, rd, 0x33)
def sllw(rd, a, b): return _r(0, b, a, 1, rd, 0x3B)
def srlw(rd, a, b): return _r(0, b, a, 5, rd, 0x3B)
def addi(rd, a, imm): return _i(imm, a, 0, rd, 0x13)
def addiw(rd, a, imm): return _i(imm, a, 0, rd, 0x1B)
def xori(rd, a, imm): return _i(imm, a, 4, rd, 0x13)
def slli(rd, a, k): return _i(k, a, 1, rd, 0x13)
def srli(rd, a, k): return _i(k, a, 5, rd, 0x13)
def srai(rd, a, k): return _i(0x400 | k, a, 5, rd, 0x13)
def slliw(rd, a, k): return _i(k, a, 1, rd, 0x1B)
def srliw(rd, a, k): return _i(k, a, 5, rd, 0x1B)
def sd(rs2, base, imm): return _s(imm, rs2, base, 3)
def ld(rd, base, imm): return _i(imm, base, 3, rd, 0x03)


NOP = addi(0, 0, 0)
BLT, BGE, BLTU, BGEU = 4, 5, 6, 7


# -- what each instruction becomes ---------------------------------------------------------------

def _fields(insn: int) -> tuple[int, int, int, int, int, int]:
    return insn & 0x7F, (insn >> 7) & 31, (insn >> 12) & 7, (insn >> 15) & 31, (insn >> 20) & 31, insn >> 25


def _borrowing(body, rd: int, *sources: int, count: int = 1) -> list[int]:
    """BODY(temporaries...) with COUNT registers of BORROWED that the instruction does not
    name (it names at most three), kept meanwhile in the core's scratch page at the end of
    the address space, which x0 reaches (sim.layout, STUB_SCRATCH): no register the
    program may hold anything in, sp included, is touched."""
    named = {rd, *sources}
    free = [t for t in BORROWED if t not in named][:count]
    spill = [sd(t, 0, -8 * (i + 1)) for i, t in enumerate(free)]
    fill = [ld(t, 0, -8 * (i + 1)) for i, t in enumerate(free)]
    return [*spill, *body(*free), *fill]


def _choose(rd: int, rs1: int, rs2: int, keep_rs1_if: tuple[int, int, int]) -> list[int]:
    """rd = rs1 when the branch KEEP_RS1_IF = (funct3, a, b) is taken, else rs2."""
    funct3, a, b = keep_rs1_if
    if rd == rs1:
        return [_b(8, b, a, funct3), addi(rd, rs2, 0)]
    if rd == rs2:  # keep rs2 unless the branch would be taken: the opposite branch skips
        return [_b(8, b, a, funct3 ^ 1), addi(rd, rs1, 0)]
    return [addi(rd, rs1, 0), _b(8, b, a, funct3), addi(rd, rs2, 0)]


def _rotate(shifts, rd: int, rs1: int, rs2: int) -> list[int]:
    """rd = (rs1 FIRST n) | (rs1 SECOND (-n)), n = rs2: a rotate by a register (a shift by
    -n shifts by the width less n, and by 0 when n is 0)."""
    if rd == 0:
        return []
    first, second = shifts
    return _borrowing(lambda a, b: [first(a, rs1, rs2), sub(b, 0, rs2), second(b, rs1, b), or_(rd, a, b)],
                      rd, rs1, rs2, count=2)


def stub_body(insn: int) -> list[int] | None:  # noqa: C901 (one case an instruction)
    """The RV64I instructions that compute what INSN (a Zba or simple Zbb instruction)
    does, without the jump back; [] when it changes nothing (rd is x0); None when INSN
    is not one the loader rewrites."""
    opcode, rd, funct3, rs1, rs2, funct7 = _fields(insn)
    shamt6 = (insn >> 20) & 63
    if opcode == 0x33:
        if funct7 == 0x10 and funct3 in (2, 4, 6):  # sh1add sh2add sh3add: rd = rs2 + (rs1 << k)
            k = funct3 // 2
            if rd == 0:
                return []
            if rd != rs2:
                return [slli(rd, rs1, k), add(rd, rd, rs2)]
            if rd != rs1:
                return [add(rd, rd, rs1)] * (1 << k)
            return _borrowing(lambda t: [slli(t, rs1, k), add(rd, rd, t)], rd, rs1, rs2)
        if funct7 == 0x20 and funct3 == 7:  # andn
            if rd == 0:
                return []
            if rd == rs1 == rs2:
                return [addi(rd, 0, 0)]
            if rd == rs1:
                return [or_(rd, rd, rs2), xor(rd, rd, rs2)]
            return [xori(rd, rs2, -1), and_(rd, rd, rs1)]
        if funct7 == 0x20 and funct3 == 6:  # orn
            if rd == 0:
                return []
            if rd == rs1 == rs2:
                return [addi(rd, 0, -1)]
            if rd == rs1:
                return [xori(rd, rd, -1), and_(rd, rd, rs2), xori(rd, rd, -1)]
            return [xori(rd, rs2, -1), or_(rd, rd, rs1)]
        if funct7 == 0x20 and funct3 == 4:  # xnor
            return [] if rd == 0 else [xor(rd, rs1, rs2), xori(rd, rd, -1)]
        if funct7 == 0x05 and funct3 in (4, 5, 6, 7):  # min minu max maxu
            if rd == 0:
                return []
            branch = {4: (BLT, rs1, rs2), 5: (BLTU, rs1, rs2), 6: (BLT, rs2, rs1), 7: (BLTU, rs2, rs1)}[funct3]
            return _choose(rd, rs1, rs2, branch)
        if funct7 == 0x30 and funct3 in (1, 5):  # rol ror
            return _rotate((sll, srl) if funct3 == 1 else (srl, sll), rd, rs1, rs2)
        return None
    if opcode == 0x3B:
        if (funct7, funct3) in ((0x04, 0), (0x10, 2), (0x10, 4), (0x10, 6)):
            # add.uw (funct7 4, funct3 0), sh1add.uw sh2add.uw sh3add.uw: rd = rs2 + (zext32(rs1) << k)
            k = funct3 // 2
            if rd == 0:
                return []
            if rd != rs2:
                return [slli(rd, rs1, 32), srli(rd, rd, 32 - k), add(rd, rd, rs2)]
            return _borrowing(lambda t: [slli(t, rs1, 32), srli(t, t, 32 - k), add(rd, rd, t)], rd, rs1, rs2)
        if funct7 == 0x04 and funct3 == 4 and rs2 == 0:  # zext.h
            return [] if rd == 0 else [slli(rd, rs1, 48), srli(rd, rd, 48)]
        if funct7 == 0x30 and funct3 in (1, 5):  # rolw rorw
            return _rotate((sllw, srlw) if funct3 == 1 else (srlw, sllw), rd, rs1, rs2)
        return None
    if opcode == 0x13:
        imm12 = insn >> 20
        if funct3 == 1 and imm12 in (0x604, 0x605):  # sext.b sext.h
            bits = 56 if imm12 == 0x604 else 48
            return [] if rd == 0 else [slli(rd, rs1, bits), srai(rd, rd, bits)]
        if funct3 == 5 and imm12 >> 6 == 0x18:  # rori
            if rd == 0:
                return []
            if shamt6 == 0:
                return [addi(rd, rs1, 0)]
            return _borrowing(lambda t: [srli(t, rs1, shamt6), slli(rd, rs1, 64 - shamt6), or_(rd, rd, t)], rd, rs1)
        return None
    if opcode == 0x1B:
        if funct3 == 1 and (insn >> 26) == 0x02:  # slli.uw
            if rd == 0:
                return []
            if shamt6 >= 32:
                return [slli(rd, rs1, shamt6)]
            return [slli(rd, rs1, 32), srli(rd, rd, 32 - shamt6)]
        if funct3 == 5 and funct7 == 0x30:  # roriw
            k = rs2  # shamt, 5 bits
            if rd == 0:
                return []
            if k == 0:
                return [addiw(rd, rs1, 0)]
            return _borrowing(lambda t: [srliw(t, rs1, k), slliw(rd, rs1, 32 - k), or_(rd, rd, t)], rd, rs1)
        return None
    return None


@dataclass(frozen=True)
class Stubs:
    """The rewrites of one image: each site's new instruction, and the stub area's bytes."""

    start: int  # the stub area's offset in the image
    end: int
    sites: dict[int, int]  # offset of a rewritten instruction -> the jal (or nop) in its place
    code: bytes  # the stubs, placed at START
    where: tuple[tuple[int, int, int], ...]  # (stub start, stub end, site): the site a stub stands for

    def site_of(self, offset: int) -> int:
        """The offset of the instruction a stub's OFFSET stands for (OFFSET elsewhere)."""
        if self.start <= offset < self.end:
            for low, high, site in self.where:
                if low <= offset < high:
                    return site
        return offset


NO_STUBS = Stubs(0, 0, {}, b"", ())


def rewrite(found: dict[int, int], start: int, end: int) -> Stubs:
    """Stubs for FOUND (offset -> instruction, the candidates of the code's sweep) in the
    stub area [START, END): as many as fit, each within a jal's reach of its site."""
    sites, code, where = {}, bytearray(), []
    at = start
    for site, insn in sorted(found.items()):
        body = stub_body(insn)
        if body is None:
            continue
        if not body:
            sites[site] = NOP
            continue
        size = 4 * (len(body) + 1)
        if at + size > end or abs(at - site) >= JAL_RANGE or abs(site + 4 - (at + size - 4)) >= JAL_RANGE:
            continue  # (it stays in C)
        back = jal(site + 4 - (at + size - 4))
        code += struct.pack(f"<{len(body) + 1}I", *body, back)
        sites[site] = jal(at - site)
        where.append((at, at + size, site))
        at += size
    return Stubs(start, at, sites, bytes(code), tuple(where))


def candidate(insn: int) -> bool:
    """INSN (32 bits) may be one the loader rewrites (a cheap test for the code's sweep)."""
    return (insn & 0x7F) in (0x33, 0x3B, 0x13, 0x1B) and stub_body(insn) is not None
