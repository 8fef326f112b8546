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

from . import scalar

BORROWED = (31, 30, 29, 28, 7)  # t6 t5 t4 t3 t2: the stubs borrow from these, in this order
JAL_RANGE = 1 << 20  # a jal reaches +-1 MiB
STUBS_SYMBOL, STUBS_END_SYMBOL = "kmx__stubs", "kmx__stubs_end"


# -- encoding RV64I (from the table of the scalar instructions, sim/native/scalar.def) -----------

def jal(offset: int, rd: int = 0) -> int:
    return scalar.encode("jal", rd=rd, imm=offset)


def _r(name: str):
    return lambda rd, a, b: scalar.encode(name, rd=rd, rs1=a, rs2=b)


def _i(name: str):
    return lambda rd, a, imm: scalar.encode(name, rd=rd, rs1=a, imm=imm)


add, sub, and_, or_, xor = _r("add"), _r("sub"), _r("and"), _r("or"), _r("xor")
sll, srl, sllw, srlw = _r("sll"), _r("srl"), _r("sllw"), _r("srlw")
addi, addiw, xori = _i("addi"), _i("addiw"), _i("xori")
slli, srli, srai, slliw, srliw = _i("slli"), _i("srli"), _i("srai"), _i("slliw"), _i("srliw")
ld = _i("ld")


def sd(rs2: int, base: int, imm: int) -> int:
    return scalar.encode("sd", rs1=base, rs2=rs2, imm=imm)


def _branch(name: str, offset: int, rs1: int, rs2: int) -> int:
    return scalar.encode(name, rs1=rs1, rs2=rs2, imm=offset)


NOP = addi(0, 0, 0)
OPPOSITE = {"blt": "bge", "bltu": "bgeu"}  # the branch taken when the other is not


# -- what each instruction becomes ---------------------------------------------------------------

REWRITTEN = frozenset({  # the instructions rewritten (scalar.def's names): all of Zba, and the simple Zbb ones
    "sh1add", "sh2add", "sh3add", "add.uw", "sh1add.uw", "sh2add.uw", "sh3add.uw", "slli.uw",
    "andn", "orn", "xnor", "min", "minu", "max", "maxu", "sext.b", "sext.h", "zext.h",
    "rol", "ror", "rori", "rolw", "rorw", "roriw",
})


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


def _choose(rd: int, rs1: int, rs2: int, keep_rs1_if: tuple[str, int, int]) -> list[int]:
    """rd = rs1 when the branch KEEP_RS1_IF = (branch, a, b) is taken, else rs2."""
    branch, a, b = keep_rs1_if
    if rd == rs1:
        return [_branch(branch, 8, a, b), addi(rd, rs2, 0)]
    if rd == rs2:  # keep rs2 unless the branch would be taken: the opposite branch skips
        return [_branch(OPPOSITE[branch], 8, a, b), addi(rd, rs1, 0)]
    return [addi(rd, rs1, 0), _branch(branch, 8, a, b), addi(rd, rs2, 0)]


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
    row = scalar.find(insn)
    if row is None or row.name not in REWRITTEN:
        return None
    name, rd, rs1, rs2 = row.name, (insn >> 7) & 31, (insn >> 15) & 31, (insn >> 20) & 31
    if rd == 0:
        return []
    if name in ("sh1add", "sh2add", "sh3add"):  # rd = rs2 + (rs1 << k)
        k = int(name[2])
        if rd != rs2:
            return [slli(rd, rs1, k), add(rd, rd, rs2)]
        if rd != rs1:
            return [add(rd, rd, rs1)] * (1 << k)
        return _borrowing(lambda t: [slli(t, rs1, k), add(rd, rd, t)], rd, rs1, rs2)
    if name == "andn":
        if rd == rs1 == rs2:
            return [addi(rd, 0, 0)]
        if rd == rs1:
            return [or_(rd, rd, rs2), xor(rd, rd, rs2)]
        return [xori(rd, rs2, -1), and_(rd, rd, rs1)]
    if name == "orn":
        if rd == rs1 == rs2:
            return [addi(rd, 0, -1)]
        if rd == rs1:
            return [xori(rd, rd, -1), and_(rd, rd, rs2), xori(rd, rd, -1)]
        return [xori(rd, rs2, -1), or_(rd, rd, rs1)]
    if name == "xnor":
        return [xor(rd, rs1, rs2), xori(rd, rd, -1)]
    if name in ("min", "minu", "max", "maxu"):
        branch = "bltu" if name.endswith("u") else "blt"
        return _choose(rd, rs1, rs2, (branch, rs1, rs2) if name.startswith("min") else (branch, rs2, rs1))
    if name in ("rol", "ror"):
        return _rotate((sll, srl) if name == "rol" else (srl, sll), rd, rs1, rs2)
    if name in ("add.uw", "sh1add.uw", "sh2add.uw", "sh3add.uw"):  # rd = rs2 + (zext32(rs1) << k)
        k = 0 if name == "add.uw" else int(name[2])
        if rd != rs2:
            return [slli(rd, rs1, 32), srli(rd, rd, 32 - k), add(rd, rd, rs2)]
        return _borrowing(lambda t: [slli(t, rs1, 32), srli(t, t, 32 - k), add(rd, rd, t)], rd, rs1, rs2)
    if name == "zext.h":
        return [slli(rd, rs1, 48), srli(rd, rd, 48)]
    if name in ("rolw", "rorw"):
        return _rotate((sllw, srlw) if name == "rolw" else (srlw, sllw), rd, rs1, rs2)
    if name in ("sext.b", "sext.h"):
        bits = 56 if name == "sext.b" else 48
        return [slli(rd, rs1, bits), srai(rd, rd, bits)]
    shamt = (insn >> 20) & (31 if name == "roriw" else 63)
    if name == "rori":
        if shamt == 0:
            return [addi(rd, rs1, 0)]
        return _borrowing(lambda t: [srli(t, rs1, shamt), slli(rd, rs1, 64 - shamt), or_(rd, rd, t)], rd, rs1)
    if name == "slli.uw":
        if shamt >= 32:
            return [slli(rd, rs1, shamt)]
        return [slli(rd, rs1, 32), srli(rd, rd, 32 - shamt)]
    # roriw
    if shamt == 0:
        return [addiw(rd, rs1, 0)]
    return _borrowing(lambda t: [srliw(t, rs1, shamt), slliw(rd, rs1, 32 - shamt), or_(rd, rd, t)], rd, rs1)


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
    if (insn & 0x7F) not in (0x33, 0x3B, 0x13, 0x1B):
        return False
    row = scalar.find(insn)
    return row is not None and row.name in REWRITTEN
