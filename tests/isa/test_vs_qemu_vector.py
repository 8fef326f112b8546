"""The vector unit's integer side and its loads and stores (sim/native/vector/: integer.c,
fixed.c, permute.c, mask.c and memory.c) against qemu-riscv64 (QEMU 7.2, `-cpu
rv64,v=true,vlen=512,elen=64,vext_spec=v1.0`), instruction for instruction.

Hypothesis writes programs: a vsetvli or vsetivli of random SEW, LMUL (fractional too,
and illegal ones), policies and AVL, then integer instructions (single-width, widening,
narrowing, fixed point under a vxrm the program sets, add-with-carry, the extensions, the
reductions, permutations and mask instructions) and loads and stores (unit-stride,
strided, fault-only-first and indexed, with segments, on a block of memory; an indexed
one's offsets are first shifted below 4096), each in an encoding RVV 1.0 allows: register
groups aligned to their EMUL, overlapping only as section 5.2 lets them, v0 not both the
mask and an operand. Register contents and x values lean to the edges (0, 1, the signed
and unsigned extremes), where saturation and rounding show. Both machines run the programs
through tests/vs_qemu/run_v.S; every x, f and v register, vl, vtype, fcsr, vcsr (vxrm and
vxsat) and the memory must agree. Tail and masked-off elements: both leave them
undisturbed (QEMU's default for the agnostic policies, and the simulator's choice).
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import qemu

HERE = qemu.HERE
QEMU = qemu.QEMU
QEMU_CPU = "rv64,v=true,vlen=512,elen=64,vext_spec=v1.0,zba=true,zbb=true,Zfh=true"
ZIG_CPU = "-mcpu=generic_rv64+a+c+d+f+m+v+zba+zbb+zfh+zicsr+zifencei"
pytestmark = [qemu.needed, pytest.mark.slow]  # (slow: CI runs it, .ci/run)

CODE_WORDS, MEMORY = 24, 4608
STATE = struct.Struct(f"<32Q32QQQQ2048s{MEMORY}s")
CASE = struct.Struct(f"<{STATE.size}s{CODE_WORDS}I")
X_USED = (5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 28, 29, 30, 31)
BASE, STRIDE = 19, 20  # s3: the memory block; s4: a stride of 8 (run_v.S)
RET = 0x0000_8067
OPIVV, OPMVV, OPIVI, OPIVX, OPMVX = 0, 2, 3, 4, 6

INTEGER = {  # funct6: which of .vv .vx .vi it has
    0x00: "vxi", 0x02: "vx", 0x03: "xi", 0x04: "vx", 0x05: "vx", 0x06: "vx", 0x07: "vx", 0x09: "vxi",
    0x0A: "vxi", 0x0B: "vxi", 0x25: "vxi", 0x28: "vxi", 0x29: "vxi",
}
COMPARES = {0x18: "vxi", 0x19: "vxi", 0x1A: "vx", 0x1B: "vx", 0x1C: "vxi", 0x1D: "vxi", 0x1E: "xi", 0x1F: "xi"}
MULTIPLY = [0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x29, 0x2B, 0x2D, 0x2F]


@pytest.fixture(scope="module")
def qemu_program(tmp_path_factory) -> Path:
    return qemu.build(tmp_path_factory.mktemp("vs_qemu") / "vs_v.elf", [HERE / "main_v.c", HERE / "run_v.S"], ZIG_CPU)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("kernels")


def op_v(funct6, vm, vs2, vs1, funct3, vd):
    return funct6 << 26 | vm << 25 | vs2 << 20 | vs1 << 15 | funct3 << 12 | vd << 7 | 0x57


def memory_op(store, vd, width, mop=0, lumop=0, vm=1, nf=0, rs1=BASE):
    return nf << 29 | mop << 26 | vm << 25 | lumop << 20 | rs1 << 15 | width << 12 | vd << 7 | (0x27 if store else 0x07)


WIDTH = {8: 0, 16: 5, 32: 6, 64: 7}
WIDTH_VSEW = {8: 0, 16: 1, 32: 2, 64: 3}


def overlap(a: int, a_regs: int, b: int, b_regs: int) -> bool:
    return a < b + b_regs and b < a + a_regs


def wider_ok(vd: int, dest_regs: int, vs: int, source_emul8: int) -> bool:
    """RVV 1.0, 5.2: a wider destination may overlap a source of EMUL >= 1 only at its top."""
    source_regs = max(1, source_emul8 // 8)
    return not overlap(vd, dest_regs, vs, source_regs) or (source_emul8 >= 8 and vs == vd + dest_regs - source_regs)


def narrower_ok(vd: int, dest_regs: int, vs: int, source_regs: int) -> bool:
    """RVV 1.0, 5.2: a narrower destination may overlap a source only at its bottom."""
    return not overlap(vd, dest_regs, vs, source_regs) or vd == vs


def csrwi(csr: int, imm: int, rd: int = 0) -> int:
    return csr << 20 | imm << 15 | 5 << 12 | rd << 7 | 0x73


def vsetvli_keep(vtype: int) -> int:  # vsetvli x0, x0, vtype: vl kept (VLMAX is the same)
    return vtype << 20 | 7 << 12 | 0x57


def vlmul_of(emul8: int) -> int:
    return {1: 5, 2: 6, 4: 7, 8: 0, 16: 1, 32: 2, 64: 3}[emul8]


CSR_VXSAT, CSR_VXRM = 0x009, 0x00A
FIXED = {0x20: "vxi", 0x21: "vxi", 0x22: "vx", 0x23: "vx", 0x27: "vx", 0x2A: "vxi", 0x2B: "vxi"}  # OPIV*
AVERAGING = [0x08, 0x09, 0x0A, 0x0B]  # OPMV*: vaaddu, vaadd, vasubu, vasub
WIDENING = [0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x3A, 0x3B, 0x3C, 0x3D, 0x3E, 0x3F]
NARROWING = [0x2C, 0x2D, 0x2E, 0x2F]  # vnsrl, vnsra, vnclipu, vnclip (.wv .wx .wi)
CARRY = {0x10: "vxi", 0x11: "vxi", 0x12: "vx", 0x13: "vx"}  # vadc, vmadc, vsbc, vmsbc
EXTEND = {2: 8, 3: 8, 4: 4, 5: 4, 6: 2, 7: 2}  # vs1 field: the factor (vzext and vsext)
KINDS = ["int", "int", "compare", "merge", "move", "multiply", "reduce", "scalar", "mask", "count", "id", "unit",
         "strided", "whole", "maskmem", "ff", "slide", "slide1", "gather", "wholemove",
         "fixed", "fixed", "averaging", "vxrm", "carry", "widen", "widen", "narrow", "narrow", "extend", "wreduce",
         "compress", "gather16", "iota", "setfirst", "segment", "segment", "indexed", "indexed"]


CSR_VSTART = 0x008


@st.composite
def program(draw) -> list[int]:
    vsew = draw(st.integers(0, 3))
    vlmul = draw(st.sampled_from([0, 1, 2, 3, 5, 6, 7]))
    vtype = draw(st.integers(0, 3)) << 6 | vsew << 3 | vlmul
    sew = 8 << vsew
    lmul8 = 8 << vlmul if vlmul < 4 else 8 >> (8 - vlmul)
    legal = not (vlmul >= 5 and sew > (64 >> (8 - vlmul)))
    if draw(st.booleans()):
        words = [7 << 12 | 0x57 | draw(st.sampled_from(X_USED)) << 7 | draw(st.sampled_from(X_USED)) << 15 | vtype << 20]
    else:
        words = [3 << 30 | vtype << 20 | draw(st.integers(0, 31)) << 15 | 7 << 12 | draw(st.sampled_from(X_USED)) << 7 | 0x57]
    if not legal:
        return words
    regs = max(1, lmul8 // 8)
    wide_regs = max(1, lmul8 // 4)
    groups = list(range(0, 32, regs))
    group = st.sampled_from(groups)
    unmasked_group = st.sampled_from(groups[1:])  # (not v0: masked destinations, and sources beside the mask)
    any_reg = st.integers(0, 31)
    x = st.sampled_from(X_USED)

    def pick(choices):
        return draw(st.sampled_from(choices)) if choices else None

    started = []  # (where, vstart, kind) of instructions given a nonzero vstart before them
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(KINDS))
        if started and started[-1][0] == len(words):  # (the last iteration added nothing)
            started.pop()
        if draw(st.integers(0, 5)) == 0:
            started.append((len(words), draw(st.integers(1, 31)), kind))
        vm = draw(st.integers(0, 1))
        source = group if vm else unmasked_group  # a source of data elements (5.2: v0 is read as the mask)
        some_reg = any_reg if vm else st.integers(1, 31)
        if kind in ("int", "compare"):
            table = INTEGER if kind == "int" else COMPARES
            funct6 = draw(st.sampled_from(sorted(table)))
            form = draw(st.sampled_from(table[funct6]))
            funct3 = {"v": OPIVV, "x": OPIVX, "i": OPIVI}[form]
            vs2 = draw(source)
            vs1 = draw(source) if form == "v" else draw(x) if form == "x" else draw(st.integers(0, 31))
            if kind == "int":
                vd = draw(group if vm else unmasked_group)
            else:  # a mask destination apart from the sources' groups
                taken = set(range(vs2, vs2 + regs)) | (set(range(vs1, vs1 + regs)) if form == "v" else set())
                choices = [r for r in range(32) if r not in taken]
                vd = draw(st.sampled_from(choices))
            words.append(op_v(funct6, vm, vs2, vs1, funct3, vd))
        elif kind == "merge":
            form = draw(st.sampled_from("vxi"))
            funct3 = {"v": OPIVV, "x": OPIVX, "i": OPIVI}[form]
            vs1 = draw(unmasked_group) if form == "v" else draw(x) if form == "x" else draw(st.integers(0, 31))
            words.append(op_v(0x17, 0, draw(unmasked_group), vs1, funct3, draw(unmasked_group)))
        elif kind == "move":
            form = draw(st.sampled_from("vxi"))
            funct3 = {"v": OPIVV, "x": OPIVX, "i": OPIVI}[form]
            vs1 = draw(group) if form == "v" else draw(x) if form == "x" else draw(st.integers(0, 31))
            words.append(op_v(0x17, 1, 0, vs1, funct3, draw(group)))
        elif kind == "multiply":
            funct3 = draw(st.sampled_from([OPMVV, OPMVX]))
            vs1 = draw(source) if funct3 == OPMVV else draw(x)
            words.append(op_v(draw(st.sampled_from(MULTIPLY)), vm, draw(source), vs1, funct3,
                              draw(group if vm else unmasked_group)))
        elif kind == "reduce":
            words.append(op_v(draw(st.integers(0, 7)), vm, draw(source), draw(some_reg), OPMVV, draw(any_reg)))
        elif kind == "scalar":
            if draw(st.booleans()):
                words.append(op_v(0x10, 1, draw(any_reg), 0, OPMVV, draw(x)))  # vmv.x.s
            else:
                words.append(op_v(0x10, 1, 0, draw(x), OPMVX, draw(any_reg)))  # vmv.s.x
        elif kind == "mask":
            words.append(op_v(draw(st.integers(0x18, 0x1F)), 1, draw(any_reg), draw(any_reg), OPMVV, draw(any_reg)))
        elif kind == "count":
            words.append(op_v(0x10, vm, draw(any_reg), draw(st.sampled_from([0x10, 0x11])), OPMVV, draw(x)))
        elif kind == "id":
            words.append(op_v(0x14, vm, 0, 0x11, OPMVV, draw(group if vm else unmasked_group)))
        elif kind in ("unit", "strided", "ff"):
            store = kind != "ff" and draw(st.booleans())
            mop = 2 if kind == "strided" else 0
            words.append(memory_op(store, draw(group if vm else unmasked_group), WIDTH[sew], mop=mop,
                                   lumop=STRIDE if mop == 2 else 16 if kind == "ff" else 0, vm=vm))
        elif kind in ("slide", "slide1", "gather"):
            vs2 = draw(source)
            apart = [r for r in groups if not overlap(r, regs, vs2, regs) and (vm or r != 0)]
            if kind == "slide1":
                funct6, funct3, vs1 = draw(st.sampled_from([0x0E, 0x0F])), OPMVX, draw(x)
            elif kind == "slide":
                funct6 = draw(st.sampled_from([0x0E, 0x0F]))
                funct3 = draw(st.sampled_from([OPIVX, OPIVI]))
                vs1 = draw(x) if funct3 == OPIVX else draw(st.integers(0, 31))
            else:
                funct6, funct3 = 0x0C, draw(st.sampled_from([OPIVV, OPIVX, OPIVI]))
                vs1 = draw(source) if funct3 == OPIVV else draw(x) if funct3 == OPIVX else draw(st.integers(0, 31))
                if funct3 == OPIVV:
                    apart = [r for r in apart if not overlap(r, regs, vs1, regs)]
            if not apart:
                continue
            words.append(op_v(funct6, vm, vs2, vs1, funct3, draw(st.sampled_from(apart))))
        elif kind == "wholemove":
            count = draw(st.sampled_from([1, 2, 4, 8]))
            aligned = st.sampled_from(list(range(0, 32, count)))
            words.append(op_v(0x27, 1, draw(aligned), count - 1, OPIVI, draw(aligned)))
        elif kind == "whole":
            count = draw(st.sampled_from([1, 2, 4, 8]))
            store = draw(st.booleans())
            reg = draw(st.sampled_from(list(range(0, 32, count))))
            words.append(memory_op(store, reg, 0 if store else draw(st.sampled_from([0, 5, 6, 7])), lumop=8, nf=count - 1))
        elif kind == "maskmem":  # vlm.v, vsm.v
            words.append(memory_op(draw(st.booleans()), draw(any_reg), 0, lumop=11))
        elif kind == "vxrm":  # csrwi vxrm (or csrrwi into an x register), sometimes vxsat cleared
            if draw(st.booleans()):
                words.append(csrwi(CSR_VXRM, draw(st.integers(0, 3)), draw(st.sampled_from([0, *X_USED]))))
            else:
                words.append(csrwi(CSR_VXSAT, 0, draw(st.sampled_from([0, *X_USED]))))
        elif kind in ("fixed", "averaging"):
            if kind == "fixed":
                funct6 = draw(st.sampled_from(sorted(FIXED)))
                form = draw(st.sampled_from(FIXED[funct6]))
                funct3 = {"v": OPIVV, "x": OPIVX, "i": OPIVI}[form]
            else:
                funct6, form = draw(st.sampled_from(AVERAGING)), draw(st.sampled_from("vx"))
                funct3 = OPMVV if form == "v" else OPMVX
            vs1 = draw(source) if form == "v" else draw(x) if form == "x" else draw(st.integers(0, 31))
            words.append(op_v(funct6, vm, draw(source), vs1, funct3, draw(group if vm else unmasked_group)))
        elif kind == "carry":
            funct6 = draw(st.sampled_from(sorted(CARRY)))
            form = draw(st.sampled_from(CARRY[funct6]))
            funct3 = {"v": OPIVV, "x": OPIVX, "i": OPIVI}[form]
            vm = draw(st.integers(0, 1)) if funct6 & 1 else 0  # (vadc and vsbc take v0's carry always)
            source = group if vm else unmasked_group
            vs2 = draw(source)
            vs1 = draw(source) if form == "v" else draw(x) if form == "x" else draw(st.integers(0, 31))
            if funct6 & 1:  # a mask out: over a source only at its bottom
                vd = pick([r for r in range(32)
                           if narrower_ok(r, 1, vs2, regs) and (form != "v" or narrower_ok(r, 1, vs1, regs))])
            else:
                vd = draw(unmasked_group)
            words.append(op_v(funct6, vm, vs2, vs1, funct3, vd))
        elif kind == "widen":
            if sew > 32 or lmul8 > 32:
                continue
            funct6 = draw(st.sampled_from(WIDENING))
            form = "x" if funct6 == 0x3E else draw(st.sampled_from("vx"))
            wide_vs2, muladd = 0x34 <= funct6 <= 0x37, funct6 >= 0x3C
            vd = draw(st.sampled_from([r for r in range(0, 32, wide_regs) if vm or r]))
            if wide_vs2:
                vs2 = draw(st.sampled_from([r for r in range(0, 32, wide_regs) if vm or r]))
            else:
                vs2 = pick([r for r in groups if (vm or r) and wider_ok(vd, wide_regs, r, lmul8)
                            and not (muladd and overlap(vd, wide_regs, r, regs))])
            vs1 = draw(x)
            if form == "v":
                vs1 = pick([r for r in groups if (vm or r) and wider_ok(vd, wide_regs, r, lmul8)
                            and not (muladd and overlap(vd, wide_regs, r, regs))
                            and not (wide_vs2 and overlap(vs2, wide_regs, r, regs))])
            if vs2 is None or vs1 is None:
                continue
            words.append(op_v(funct6, vm, vs2, vs1, OPMVV if form == "v" else OPMVX, vd))
        elif kind == "narrow":
            if sew > 32 or lmul8 > 32:
                continue
            funct6, form = draw(st.sampled_from(NARROWING)), draw(st.sampled_from("vxi"))
            vs2 = draw(st.sampled_from([r for r in range(0, 32, wide_regs) if vm or r]))
            vd = draw(st.sampled_from([r for r in groups if (vm or r) and narrower_ok(r, regs, vs2, wide_regs)]))
            if form == "v":
                vs1 = pick([r for r in groups if (vm or r) and not overlap(vs2, wide_regs, r, regs)])
            else:
                vs1 = draw(x) if form == "x" else draw(st.integers(0, 31))
            if vs1 is None:
                continue
            words.append(op_v(funct6, vm, vs2, vs1, {"v": OPIVV, "x": OPIVX, "i": OPIVI}[form], vd))
        elif kind == "extend":
            which = draw(st.sampled_from(sorted(EXTEND)))
            factor = EXTEND[which]
            if sew // factor < 8 or lmul8 < factor:
                continue
            source_regs = max(1, lmul8 // factor // 8)
            vs2 = draw(st.sampled_from([r for r in range(0, 32, source_regs) if vm or r]))
            vd = pick([r for r in groups if (vm or r) and wider_ok(r, regs, vs2, lmul8 // factor)])
            if vd is None:
                continue
            words.append(op_v(0x12, vm, vs2, which, OPMVV, vd))
        elif kind == "wreduce":
            if sew > 32:
                continue
            vs2 = draw(source)
            vs1 = draw(st.sampled_from([r for r in range(32) if (vm or r) and not overlap(r, 1, vs2, regs)]))
            words.append(op_v(draw(st.sampled_from([0x30, 0x31])), vm, vs2, vs1, OPIVV, draw(any_reg)))
        elif kind == "compress":
            vs2 = draw(group)
            vd = pick([r for r in groups if not overlap(r, regs, vs2, regs)])
            vs1 = pick([r for r in range(32) if not overlap(r, 1, vd, regs) and not overlap(r, 1, vs2, regs)])
            if vd is None or vs1 is None:
                continue
            words.append(op_v(0x17, 1, vs2, vs1, OPMVV, vd))
        elif kind == "gather16":
            index8 = lmul8 * 16 // sew
            if not 1 <= index8 <= 64:
                continue
            index_regs = max(1, index8 // 8)
            vs2 = draw(source)
            vs1 = pick([r for r in range(0, 32, index_regs) if (vm or r)
                        and (sew == 16 or not overlap(r, index_regs, vs2, regs))])
            if vs1 is None:
                continue
            vd = pick([r for r in groups if (vm or r) and not overlap(r, regs, vs2, regs)
                       and not overlap(r, regs, vs1, index_regs)])
            if vd is None:
                continue
            words.append(op_v(0x0E, vm, vs2, vs1, OPIVV, vd))
        elif kind == "iota":
            vd = draw(group if vm else unmasked_group)
            vs2 = draw(st.sampled_from([r for r in range(32) if not overlap(r, 1, vd, regs)]))
            words.append(op_v(0x14, vm, vs2, 0x10, OPMVV, vd))
        elif kind == "setfirst":  # vmsbf, vmsof, vmsif
            vd = draw(st.integers(0 if vm else 1, 31))
            vs2 = draw(st.sampled_from([r for r in range(32) if r != vd]))
            words.append(op_v(0x14, vm, vs2, draw(st.sampled_from([1, 2, 3])), OPMVV, vd))
        elif kind == "segment":  # unit-stride, strided (s4 or x0) and fault-only-first, nf fields of any EEW
            eew = draw(st.sampled_from([8, 16, 32, 64]))
            emul8 = lmul8 * eew // sew
            if not 1 <= emul8 <= 64:
                continue
            field_regs = max(1, emul8 // 8)
            fields = draw(st.integers(1, 8 // field_regs))
            how = draw(st.sampled_from(["unit", "strided", "ff"]))
            store = how != "ff" and draw(st.booleans())
            vd = draw(st.sampled_from([r for r in range(0, 33 - fields * field_regs, field_regs) if vm or r]))
            mop = 2 if how == "strided" else 0
            lumop = draw(st.sampled_from([STRIDE, 0])) if mop == 2 else 16 if how == "ff" else 0
            words.append(memory_op(store, vd, WIDTH[eew], mop=mop, lumop=lumop, vm=vm, nf=fields - 1))
        elif kind == "indexed":  # the offsets first cut below 4096 (in a vtype of their EEW, vl kept)
            eew = draw(st.sampled_from([8, 16, 32, 64]))
            index8 = lmul8 * eew // sew
            if not 1 <= index8 <= 64:
                continue
            index_regs = max(1, index8 // 8)
            fields = draw(st.integers(1, 8 // regs))
            store = draw(st.booleans())
            vs2 = draw(st.sampled_from([r for r in range(0, 32, index_regs) if vm or r]))

            def fits(vd):
                for f in range(fields):
                    field = vd + f * regs
                    if not overlap(field, regs, vs2, index_regs):
                        continue
                    if store and eew != sew or not store and fields > 1:
                        return False
                    if not store and not (eew == sew or (narrower_ok(field, regs, vs2, index_regs) if eew > sew
                                                         else wider_ok(field, regs, vs2, index8))):
                        return False
                return True

            vd = pick([r for r in range(0, 33 - fields * regs, regs) if (vm or r) and fits(r)])
            if vd is None:
                continue
            if eew > 8:
                words.append(vsetvli_keep(vtype & 0xC0 | WIDTH_VSEW[eew] << 3 | vlmul_of(index8)))
                for shift in ([eew - 12] if eew < 64 else [31, 21]):
                    words.append(op_v(0x28, 1, vs2, shift, OPIVI, vs2))  # vsrl.vi
                words.append(vsetvli_keep(vtype))
            words.append(memory_op(store, vd, WIDTH[eew], mop=draw(st.sampled_from([1, 3])), lumop=vs2, vm=vm,
                                   nf=fields - 1))
    # csrwi vstart, k before each of them that took place (and whose kind takes a vstart), and
    # csrwi vstart, 0 after it: QEMU 7.2 skips an instruction whose vstart is at or past vl
    # and leaves vstart as it was, where RVV 1.0 (and the simulator) reset it to 0.
    if started and started[-1][0] == len(words):
        started.pop()
    for where, start, kind in reversed(started):
        if kind in ("int", "multiply", "unit", "strided", "indexed", "segment", "widen", "narrow") and where < len(words):
            words[where:where + 1] = [CSR_VSTART << 20 | start << 15 | 5 << 12 | 0x73, words[where],
                                      CSR_VSTART << 20 | 5 << 12 | 0x73]
    return words[: CODE_WORDS - 1]


def element_edges(rng: random.Random, size: int) -> bytes:
    """SIZE bytes of elements of random widths, many at the edges (0, 1, the signed and
    unsigned extremes and their neighbours), where saturation and rounding differ."""
    out = bytearray()
    while len(out) < size:
        width = rng.choice([1, 2, 4, 8])
        bits = 8 * width
        if rng.random() < 0.5:
            top, half = 1 << (bits - 1), 1 << (bits // 2)
            value = rng.choice([0, 1, 2, 3, 2 * top - 1, 2 * top - 2, top - 1, top, top + 1, top - 2, half, 2 * top - half])
        else:
            value = rng.getrandbits(bits)
        out += value.to_bytes(width, "little")
    return bytes(out[:size])


@st.composite
def case(draw) -> bytes:
    words = draw(program())
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    edges = [0, 1, (1 << 64) - 1, 1 << 63, (1 << 63) - 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFF_FFFF,
             0x8000_0000, 0xFFFF_FFFF]
    xs = [(rng.choice(edges) if rng.random() < 0.3 else rng.getrandbits(64 if rng.random() < 0.5 else 10))
          if n in X_USED else 0 for n in range(32)]
    fs = [rng.getrandbits(64) for _ in range(32)]
    if rng.random() < 0.5:
        vregs = element_edges(rng, 2048)
    else:
        vregs = bytes(rng.choice([0, 0xFF, 0x80, 0x7F, 1]) if rng.random() < 0.2 else rng.getrandbits(8) for _ in range(2048))
    memory = rng.randbytes(MEMORY)
    vl, vtype = rng.randint(0, 16), 0x10  # (e32, m1: the harness's vsetvl before the code)
    vcsr = rng.randint(0, 7)  # vxsat and vxrm, above fcsr's 8 bits (run_v.S)
    state = STATE.pack(*xs, *fs, vcsr << 8, vl, vtype, vregs, memory)
    return CASE.pack(state, *words, RET, *([0] * (CODE_WORDS - 1 - len(words))))


def _on_qemu(program_path: Path, cases: list[bytes]) -> list[bytes]:
    return qemu.on_qemu(program_path, QEMU_CPU, cases, STATE.size)


def _on_simulator(kernels: Path, cases: list[bytes]) -> list[bytes]:
    return qemu.on_simulator(kernels, [HERE / "thread_v.c", HERE / "run_v.S"], cases, STATE.size)


def _explain(cases, ours, theirs) -> str:
    for i, (c, a, b) in enumerate(zip(cases, ours, theirs)):
        if a != b:
            code = CASE.unpack(c)[1:]
            words = " ".join(f"{w:#010x}" for w in code[: code.index(RET)])
            u, v = STATE.unpack(a), STATE.unpack(b)
            names = ([f"x{n}" for n in range(32)] + [f"f{n}" for n in range(32)]
                     + ["fcsr | vcsr << 8", "vl", "vtype", "v", "memory"])
            diffs = []
            for name, p, q in zip(names, u, v):
                if p != q:
                    if isinstance(p, bytes):
                        at = next(k for k in range(len(p)) if p[k] != q[k])
                        diffs.append(f"{name}: first difference at byte {at} (v{at // 64} if v): "
                                     f"simulator {p[at:at + 8].hex()}, qemu {q[at:at + 8].hex()}")
                    else:
                        diffs.append(f"{name}: simulator {p:#x}, qemu {q:#x}")
            return f"case {i}: code {words}\n  " + "\n  ".join(diffs)
    return "equal"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(cases=st.lists(case(), min_size=15, max_size=15))
def test_the_simulated_vector_instructions_agree_with_qemu(qemu_program, kernels, cases):  # noqa: D103
    theirs = _on_qemu(qemu_program, cases)
    ours = _on_simulator(kernels, cases)
    assert ours == theirs, _explain(cases, ours, theirs)
