"""The vector unit's floating point (sim/native/vector/float.c) against qemu-riscv64, as
tests/isa/test_vs_qemu_vector.py does the integer side (the same harness, tests/vs_qemu/run_v.S).

Hypothesis writes programs of the floating-point instructions at SEW 16 (Zvfh), 32 and 64
(and 8 for the conversions that have an 8-bit integer side), in a random dynamic rounding
mode, on vector registers and f registers full of edge values of the format: zeros,
infinities, quiet and signalling NaNs, subnormals, the largest finite numbers, and numbers
of few significant bits whose sums and products tie or round to the smallest normal. Every
x, f and v register, vl, vtype, fcsr (so fflags) and the memory must agree.

QEMU 7.2 aborts on the rtz conversions (vfcvt.rtz.*, vfwcvt.rtz.*, vfncvt.rtz.*: an
assertion in its decode_save_opc). They mean their plain forms rounded toward zero, so a
program that has them runs with frm = RTZ, and QEMU runs it with the plain forms instead.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import qemu
from tests.isa.test_vs_qemu_vector import (  # noqa: F401 (the fixtures)
    CASE, CODE_WORDS, MEMORY, RET, STATE, X_USED, _explain, _on_qemu, _on_simulator, kernels, op_v, qemu_program,
)

pytestmark = [qemu.needed, pytest.mark.slow]  # (slow: CI runs it, .ci/run)
OPFVV, OPFVF = 1, 5
FORMS = {  # funct6: which of .vv .vf it has
    0x00: "vf", 0x02: "vf", 0x04: "vf", 0x06: "vf", 0x08: "vf", 0x09: "vf", 0x0A: "vf", 0x20: "vf", 0x24: "vf",
    0x21: "f", 0x27: "f",
}
FMA = list(range(0x28, 0x30))
COMPARES = {0x18: "vf", 0x19: "vf", 0x1B: "vf", 0x1C: "vf", 0x1D: "f", 0x1F: "f"}
WIDENING = [0x30, 0x32, 0x34, 0x36, 0x38, 0x3C, 0x3D, 0x3E, 0x3F]
REDUCTIONS = [0x01, 0x03, 0x05, 0x07]
WIDE_REDUCTIONS = [0x31, 0x33]
CONVERSIONS = [0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]
RTZ_FORMS = {6: 0, 7: 1, 14: 8, 15: 9, 22: 16, 23: 17}  # (their plain forms)


def rtz_conversion(word: int) -> bool:
    return word & 0x7F == 0x57 and (word >> 12) & 7 == OPFVV and word >> 26 == 0x12 and (word >> 15) & 31 in RTZ_FORMS


def for_qemu(case_bytes: bytes) -> bytes:
    """The case with each rtz conversion in its plain form (the case's frm is RTZ then)."""
    state, *words = CASE.unpack(case_bytes)
    plain = [w & ~(31 << 15) | RTZ_FORMS[(w >> 15) & 31] << 15 if rtz_conversion(w) else w for w in words]
    return CASE.pack(state, *plain)
FRAC = {16: 10, 32: 23, 64: 52}


def edge_values(sew: int, rng: random.Random) -> int:
    """One SEW-bit float from the edges of the format, or random bits."""
    if sew not in FRAC:
        return rng.getrandbits(sew)
    frac = FRAC[sew]
    expbits = sew - 1 - frac
    bias = (1 << (expbits - 1)) - 1
    sign = rng.getrandbits(1) << (sew - 1)
    inf = ((1 << expbits) - 1) << frac
    pick = rng.random()
    if pick < 0.25:
        return sign | rng.choice([0, inf, inf | 1 << (frac - 1), inf | 1, 1, (1 << frac) - 1, 1 << frac, inf - 1,
                                  bias << frac, (bias + 1) << frac, (bias - 1) << frac | (1 << frac) - 1])
    if pick < 0.6:  # a few leading bits, around 1 or just above the smallest normal's square root
        e = rng.choice([bias + rng.randint(-3, 3), rng.randint(0, frac + 2), bias // 2 + rng.randint(-frac, 2)])
        return sign | max(0, min(e, 2 * bias)) << frac | rng.getrandbits(4) << (frac - 4)
    if pick < 0.8:  # small integers (for the conversions)
        return sign | (bias + rng.randint(0, 6)) << frac | rng.getrandbits(3) << (frac - 3)
    return rng.getrandbits(sew)


CSR_VSTART = 0x008


@st.composite
def program(draw) -> tuple[list[int], int]:
    vsew = draw(st.sampled_from([1, 1, 2, 2, 3, 3, 0]))
    sew = 8 << vsew
    vlmul = draw(st.sampled_from([0, 0, 1, 2, 3, 5, 6, 7]))
    if vlmul >= 5 and sew > (64 >> (8 - vlmul)):
        vlmul = 0
    lmul8 = 8 << vlmul if vlmul < 4 else 8 >> (8 - vlmul)
    vtype = draw(st.integers(0, 3)) << 6 | vsew << 3 | vlmul
    words = [3 << 30 | vtype << 20 | draw(st.integers(0, 31)) << 15 | 7 << 12 | draw(st.sampled_from(X_USED)) << 7 | 0x57]
    regs = max(1, lmul8 // 8)
    wide_regs = max(1, 2 * lmul8 // 8)
    group = st.sampled_from(list(range(0, 32, regs)))
    masked_group = st.sampled_from(list(range(regs, 32, regs)))  # (not v0: masked destinations)
    f = st.integers(0, 31)
    started = []  # (where, vstart, kind) of instructions given a nonzero vstart before them
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["binary", "binary", "fma", "compare", "merge", "move", "scalar", "unary", "slide1",
                                     "reduce", "widen", "widen_reduce", "convert", "convert"]))
        if started and started[-1][0] == len(words):  # (the last iteration added nothing)
            started.pop()
        if draw(st.integers(0, 5)) == 0:
            started.append((len(words), draw(st.integers(1, 31)), kind))
        vm = draw(st.integers(0, 1))
        vd_any = group if vm else masked_group
        if sew == 8 and kind != "convert":
            continue
        if kind in ("binary", "fma"):
            funct6 = draw(st.sampled_from(sorted(FORMS) if kind == "binary" else FMA))
            form = draw(st.sampled_from(FORMS.get(funct6, "vf")))
            funct3 = OPFVV if form == "v" else OPFVF
            words.append(op_v(funct6, vm, draw(group), draw(group) if form == "v" else draw(f), funct3, draw(vd_any)))
        elif kind == "compare":
            funct6 = draw(st.sampled_from(sorted(COMPARES)))
            form = draw(st.sampled_from(COMPARES[funct6]))
            vs2 = draw(group)
            vs1 = draw(group) if form == "v" else draw(f)
            taken = set(range(vs2, vs2 + regs)) | (set(range(vs1, vs1 + regs)) if form == "v" else set())
            vd = draw(st.sampled_from([r for r in range(32) if r not in taken] or [vs2]))
            words.append(op_v(funct6, vm, vs2, vs1, OPFVV if form == "v" else OPFVF, vd))
        elif kind == "merge":
            words.append(op_v(0x17, 0, draw(group), draw(f), OPFVF, draw(masked_group)))
        elif kind == "move":
            words.append(op_v(0x17, 1, 0, draw(f), OPFVF, draw(group)))
        elif kind == "scalar":
            if draw(st.booleans()):
                words.append(op_v(0x10, 1, draw(st.integers(0, 31)), 0, OPFVV, draw(f)))  # vfmv.f.s
            else:
                words.append(op_v(0x10, 1, 0, draw(f), OPFVF, draw(st.integers(0, 31))))  # vfmv.s.f
        elif kind == "unary":
            words.append(op_v(0x13, vm, draw(group), draw(st.sampled_from([0, 4, 5, 16])), OPFVV, draw(vd_any)))
        elif kind == "slide1":
            vs2 = draw(group)
            funct6 = draw(st.sampled_from([0x0E, 0x0F]))
            apart = [r for r in range(0, 32, regs) if not (r < vs2 + regs and vs2 < r + regs) and (vm or r != 0)]
            if apart:
                words.append(op_v(funct6, vm, vs2, draw(f), OPFVF, draw(st.sampled_from(apart))))
        elif kind == "reduce":
            words.append(op_v(draw(st.sampled_from(REDUCTIONS)), vm, draw(group), draw(st.integers(0, 31)), OPFVV,
                              draw(st.integers(0, 31))))
        elif kind in ("widen", "widen_reduce"):
            if sew == 64 or wide_regs > 8:
                continue
            if kind == "widen_reduce":
                words.append(op_v(draw(st.sampled_from(WIDE_REDUCTIONS)), vm, draw(group), draw(st.integers(0, 31)),
                                  OPFVV, draw(st.integers(0, 31))))
                continue
            funct6 = draw(st.sampled_from(WIDENING))
            form = draw(st.sampled_from("vf"))
            wide_vs2 = funct6 in (0x34, 0x36)
            vd = draw(st.sampled_from([r for r in range(0, 32, wide_regs) if vm or r != 0]))
            apart = [r for r in range(0, 32, regs) if not (r < vd + wide_regs and vd < r + regs)]
            vs2 = draw(st.sampled_from(list(range(0, 32, wide_regs)))) if wide_vs2 else draw(st.sampled_from(apart))
            vs1 = draw(st.sampled_from(apart)) if form == "v" else draw(f)
            words.append(op_v(funct6, vm, vs2, vs1, OPFVV if form == "v" else OPFVF, vd))
        else:  # conversions
            code = draw(st.sampled_from(CONVERSIONS))
            kind_of = code >> 3
            if kind_of and (sew == 64 or wide_regs > 8):
                continue
            from_bits = 2 * sew if kind_of == 2 else sew
            to_bits = 2 * sew if kind_of == 1 else sew
            op = code & 7
            float_from = op in (0, 1, 4, 5, 6, 7)
            float_to = op in (2, 3, 4, 5)
            if (float_from and from_bits not in FRAC) or (float_to and to_bits not in FRAC):
                continue
            sregs, dregs = (wide_regs if kind_of == 2 else regs), (wide_regs if kind_of == 1 else regs)
            vd = draw(st.sampled_from([r for r in range(0, 32, dregs) if vm or r != 0]))
            apart = [r for r in range(0, 32, sregs) if not (r < vd + dregs and vd < r + sregs)]
            if not apart:
                continue
            words.append(op_v(0x12, vm, draw(st.sampled_from(apart)), code, OPFVV, vd))
    # csrwi vstart, k before each of them that took place (and whose kind takes a vstart), and
    # csrwi vstart, 0 after it: QEMU 7.2 skips an instruction whose vstart is at or past vl
    # and leaves vstart as it was, where RVV 1.0 (and the simulator) reset it to 0.
    if started and started[-1][0] == len(words):
        started.pop()
    for where, start, kind in reversed(started):
        if kind in ("binary", "fma", "compare", "move", "unary", "widen", "convert") and where < len(words):
            words[where:where + 1] = [CSR_VSTART << 20 | start << 15 | 5 << 12 | 0x73, words[where],
                                      CSR_VSTART << 20 | 5 << 12 | 0x73]
    return words[: CODE_WORDS - 1], sew


class Case(bytes):
    """A case's bytes, shown by its code (hypothesis prints a failing example)."""

    def __repr__(self) -> str:
        code = CASE.unpack(self)[1:]
        return "Case(" + " ".join(f"{w:#010x}" for w in code[: code.index(RET)]) + ")"


@st.composite
def case(draw) -> bytes:
    words, sew = draw(program())
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    xs = [rng.getrandbits(6) if n in X_USED else 0 for n in range(32)]
    element_bits = sew if sew in FRAC else 16
    elements = []
    for _ in range(2048 * 8 // element_bits):
        elements.append(edge_values(element_bits if rng.random() < 0.8 else min(64, 2 * element_bits), rng)
                        & ((1 << element_bits) - 1))
    vregs = b"".join(e.to_bytes(element_bits // 8, "little") for e in elements)
    box = {16: 0xFFFF_FFFF_FFFF_0000, 32: 0xFFFF_FFFF_0000_0000, 64: 0}[element_bits]
    fs = [(box | edge_values(element_bits, rng)) if rng.random() < 0.9 else rng.getrandbits(64) for _ in range(32)]
    frm = 1 if any(map(rtz_conversion, words)) else rng.randint(0, 4)
    memory = rng.randbytes(MEMORY)
    vl, vtype = rng.randint(0, 16), 0x10
    state = STATE.pack(*xs, *fs, frm << 5, vl, vtype, vregs, memory)
    return Case(CASE.pack(state, *words, RET, *([0] * (CODE_WORDS - 1 - len(words)))))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(cases=st.lists(case(), min_size=15, max_size=15))
def test_the_vector_floating_point_agrees_with_qemu(qemu_program, kernels, cases):  # noqa: D103, F811 (the fixtures)
    theirs = _on_qemu(qemu_program, [for_qemu(c) for c in cases])
    ours = _on_simulator(kernels, cases)
    assert ours == theirs, _explain(cases, ours, theirs)


def test_the_estimates_and_square_roots_of_every_half_agree_with_qemu(qemu_program, kernels):  # noqa: F811
    """vfrec7, vfrsqrt7 and vfsqrt on all 65,536 halves, in each rounding mode (vfrec7's
    overflow depends on it): 1,024 halves a case, in four groups of eight registers."""
    vtype = 1 << 3 | 3  # e16, m8: 256 elements a group
    vset = vtype << 20 | 6 << 15 | 7 << 12 | 5 << 7 | 0x57  # vsetvli t0, t1 (t1 = 256)
    xs = [256 if n == 6 else 0 for n in range(32)]
    cases = []
    for code in (0, 4, 5):
        for frm in range(5):
            for first in range(0, 65536, 1024):
                vregs = b"".join(h.to_bytes(2, "little") for h in range(first, first + 1024))
                words = [vset] + [op_v(0x13, 1, group, code, OPFVV, group) for group in (0, 8, 16, 24)]
                state = STATE.pack(*xs, *([0] * 32), frm << 5, 4, 0x10, vregs, bytes(MEMORY))
                cases.append(CASE.pack(state, *words, RET, *([0] * (CODE_WORDS - 1 - len(words)))))
    theirs = _on_qemu(qemu_program, cases)
    ours = _on_simulator(kernels, cases)
    assert ours == theirs, _explain(cases, ours, theirs)
