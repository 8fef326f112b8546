"""The vector unit as far as it is simulated (sim/native/vector.h) against qemu-riscv64
(QEMU 7.2, `-cpu rv64,v=true,vlen=512,elen=64,vext_spec=v1.0`), instruction for instruction.

Hypothesis writes programs: a vsetvli or vsetivli of random SEW, LMUL (fractional too,
and illegal ones), policies and AVL, then instructions of what is simulated so far, on
register groups aligned to the LMUL, masked or not, with loads and stores on a block of
memory. Both machines run them through tests/vs_qemu/run_v.S; every x, f and v register,
vl, vtype, fcsr and the memory must agree. Tail and masked-off elements: both leave them
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
pytestmark = qemu.needed

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
    group = st.sampled_from(list(range(0, 32, regs)))
    unmasked_group = st.sampled_from(list(range(regs, 32, regs)))  # (not v0: masked destinations)
    any_reg = st.integers(0, 31)
    x = st.sampled_from(X_USED)
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["int", "int", "compare", "merge", "move", "multiply", "reduce", "scalar",
                                     "mask", "count", "id", "unit", "strided", "whole", "maskmem", "ff",
                                     "slide", "slide1", "gather", "wholemove"]))
        vm = draw(st.integers(0, 1))
        if kind in ("int", "compare"):
            table = INTEGER if kind == "int" else COMPARES
            funct6 = draw(st.sampled_from(sorted(table)))
            form = draw(st.sampled_from(table[funct6]))
            funct3 = {"v": OPIVV, "x": OPIVX, "i": OPIVI}[form]
            vs2 = draw(group)
            vs1 = draw(group) if form == "v" else draw(x) if form == "x" else draw(st.integers(0, 31))
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
            vs1 = draw(group) if form == "v" else draw(x) if form == "x" else draw(st.integers(0, 31))
            words.append(op_v(0x17, 0, draw(group), vs1, funct3, draw(unmasked_group)))
        elif kind == "move":
            form = draw(st.sampled_from("vxi"))
            funct3 = {"v": OPIVV, "x": OPIVX, "i": OPIVI}[form]
            vs1 = draw(group) if form == "v" else draw(x) if form == "x" else draw(st.integers(0, 31))
            words.append(op_v(0x17, 1, 0, vs1, funct3, draw(group)))
        elif kind == "multiply":
            funct3 = draw(st.sampled_from([OPMVV, OPMVX]))
            vs1 = draw(group) if funct3 == OPMVV else draw(x)
            words.append(op_v(draw(st.sampled_from(MULTIPLY)), vm, draw(group), vs1, funct3,
                              draw(group if vm else unmasked_group)))
        elif kind == "reduce":
            words.append(op_v(draw(st.integers(0, 7)), vm, draw(group), draw(any_reg), OPMVV, draw(any_reg)))
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
            words.append(memory_op(store, draw(group if (vm or store) else unmasked_group), WIDTH[sew], mop=mop,
                                   lumop=STRIDE if mop == 2 else 16 if kind == "ff" else 0, vm=vm))
        elif kind in ("slide", "slide1", "gather"):
            vs2 = draw(group)
            apart = [r for r in range(0, 32, regs) if not (r < vs2 + regs and vs2 < r + regs) and (vm or r != 0)]
            if kind == "slide1":
                funct6, funct3, vs1 = draw(st.sampled_from([0x0E, 0x0F])), OPMVX, draw(x)
            elif kind == "slide":
                funct6 = draw(st.sampled_from([0x0E, 0x0F]))
                funct3 = draw(st.sampled_from([OPIVX, OPIVI]))
                vs1 = draw(x) if funct3 == OPIVX else draw(st.integers(0, 31))
            else:
                funct6, funct3 = 0x0C, draw(st.sampled_from([OPIVV, OPIVX, OPIVI]))
                vs1 = draw(group) if funct3 == OPIVV else draw(x) if funct3 == OPIVX else draw(st.integers(0, 31))
                if funct3 == OPIVV:
                    apart = [r for r in apart if not (r < vs1 + regs and vs1 < r + regs)]
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
        else:  # vlm.v, vsm.v
            words.append(memory_op(draw(st.booleans()), draw(any_reg), 0, lumop=11))
    return words[: CODE_WORDS - 1]


@st.composite
def case(draw) -> bytes:
    words = draw(program())
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    edges = [0, 1, (1 << 64) - 1, 1 << 63, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x8000_0000, 0xFFFF_FFFF]
    xs = [(rng.choice(edges) if rng.random() < 0.3 else rng.getrandbits(64 if rng.random() < 0.5 else 10))
          if n in X_USED else 0 for n in range(32)]
    fs = [rng.getrandbits(64) for _ in range(32)]
    vregs = bytes(rng.choice([0, 0xFF, 0x80, 0x7F, 1]) if rng.random() < 0.2 else rng.getrandbits(8) for _ in range(2048))
    memory = rng.randbytes(MEMORY)
    vl, vtype = rng.randint(0, 16), 0x10  # (e32, m1: the harness's vsetvl before the code)
    state = STATE.pack(*xs, *fs, 0, vl, vtype, vregs, memory)
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
            names = [f"x{n}" for n in range(32)] + [f"f{n}" for n in range(32)] + ["fcsr", "vl", "vtype", "v", "memory"]
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


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(cases=st.lists(case(), min_size=15, max_size=15))
def test_the_simulated_vector_instructions_agree_with_qemu(qemu_program, kernels, cases):  # noqa: D103
    theirs = _on_qemu(qemu_program, cases)
    ours = _on_simulator(kernels, cases)
    assert ours == theirs, _explain(cases, ours, theirs)
