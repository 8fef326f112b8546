"""Zba, Zbb and Zfh as the simulator runs them (sim/native/isa.c, softfloat.c), and F and
D's single-precision instructions and fmin/fmax as the simulator's build of the engine runs
them (sim/build/engine.py: NaN-boxing), against qemu-riscv64 (Debian's qemu-user, QEMU
7.2), instruction for instruction.

Hypothesis writes sequences of the new instructions with random and edge operands (0, -1,
INT_MIN, powers of two; zero, subnormal, infinite and NaN halves, signalling ones too;
every rounding mode, static and dynamic). Both machines run the same cases through the
same routine (tests/vs_qemu/run.S: the registers and fcsr in, the code, the registers
out); every x register the code may use, every f register and fcsr (fflags and frm) must
agree. Under the simulator the code is written at run time, so it runs in C, as every
instruction the engine lacks does when the loader has not rewritten it.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import qemu

HERE = qemu.HERE
QEMU = qemu.QEMU
QEMU_CPU = "rv64,zba=true,zbb=true,Zfh=true"  # (QEMU 7.2 refuses zfh in lower case)
ZIG_CPU = "-mcpu=generic_rv64+a+c+d+f+m+zba+zbb+zfh+zicsr+zifencei"

pytestmark = [qemu.needed, pytest.mark.slow]  # (slow: CI runs it, .ci/run)

CODE_WORDS = 24
X_USED = (5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 28, 29, 30, 31)  # what run.S loads and stores
S1 = 9  # run.S keeps the state's address there: flh may read the state
RET = 0x0000_8067
CASE = struct.Struct(f"<32Q32QQ{CODE_WORDS}I")
STATE = struct.Struct("<32Q32QQ")


@pytest.fixture(scope="module")
def qemu_program(tmp_path_factory) -> Path:
    return qemu.build(tmp_path_factory.mktemp("vs_qemu") / "vs.elf", [HERE / "main.c", HERE / "run.S"], ZIG_CPU)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("kernels")


# -- the instructions --------------------------------------------------------------------------

def r_type(funct7, funct3, opcode):
    return lambda rd, rs1, rs2: funct7 << 25 | rs2 << 20 | rs1 << 15 | funct3 << 12 | rd << 7 | opcode


def i_type(imm12, funct3, opcode):
    return lambda rd, rs1, rs2: imm12 << 20 | rs1 << 15 | funct3 << 12 | rd << 7 | opcode


X, F = "x", "f"
# name: (encoder(rd, rs1, rs2[, extra]), rd kind, rs1 kind, rs2 kind or None, takes rm, extra)
INTEGER = {
    "sh1add": r_type(0x10, 2, 0x33), "sh2add": r_type(0x10, 4, 0x33), "sh3add": r_type(0x10, 6, 0x33),
    "add.uw": r_type(0x04, 0, 0x3B), "sh1add.uw": r_type(0x10, 2, 0x3B), "sh2add.uw": r_type(0x10, 4, 0x3B),
    "sh3add.uw": r_type(0x10, 6, 0x3B), "andn": r_type(0x20, 7, 0x33), "orn": r_type(0x20, 6, 0x33),
    "xnor": r_type(0x20, 4, 0x33), "max": r_type(0x05, 6, 0x33), "maxu": r_type(0x05, 7, 0x33),
    "min": r_type(0x05, 4, 0x33), "minu": r_type(0x05, 5, 0x33), "rol": r_type(0x30, 1, 0x33),
    "ror": r_type(0x30, 5, 0x33), "rolw": r_type(0x30, 1, 0x3B), "rorw": r_type(0x30, 5, 0x3B),
}
UNARY = {
    "clz": i_type(0x600, 1, 0x13), "ctz": i_type(0x601, 1, 0x13), "cpop": i_type(0x602, 1, 0x13),
    "sext.b": i_type(0x604, 1, 0x13), "sext.h": i_type(0x605, 1, 0x13), "clzw": i_type(0x600, 1, 0x1B),
    "ctzw": i_type(0x601, 1, 0x1B), "cpopw": i_type(0x602, 1, 0x1B), "orc.b": i_type(0x287, 5, 0x13),
    "rev8": i_type(0x6B8, 5, 0x13), "zext.h": r_type(0x04, 4, 0x3B),
}
# QEMU 7.2 (Debian's) gets ctzw wrong when the low word is 0 and the high one is not
# (1 << 63 gives 63; Zbb says 32, the width it counts): ctzw is checked on its own,
# below, against the definition.
QEMU_WRONG = {"ctzw"}
SHIFTS = {  # name: (encoder(rd, rs1, shamt), bits of shamt)
    "slli.uw": (lambda rd, rs1, k: (0x02 << 26) | k << 20 | rs1 << 15 | 1 << 12 | rd << 7 | 0x1B, 6),
    "rori": (lambda rd, rs1, k: (0x18 << 26) | k << 20 | rs1 << 15 | 5 << 12 | rd << 7 | 0x13, 6),
    "roriw": (lambda rd, rs1, k: (0x30 << 25) | k << 20 | rs1 << 15 | 5 << 12 | rd << 7 | 0x1B, 5),
}


def op_fp(funct7, rs2=None, funct3=None):
    def encode(rd, rs1, rs2_, rm):
        return funct7 << 25 | (rs2_ if rs2 is None else rs2) << 20 | rs1 << 15 | \
            (rm if funct3 is None else funct3) << 12 | rd << 7 | 0x53
    return encode


# name: (encoder, rd kind, rs1 kind, rs2 kind (None: fixed), has rm)
HALF = {
    "fadd.h": (op_fp(0x02), F, F, F, True), "fsub.h": (op_fp(0x06), F, F, F, True),
    "fmul.h": (op_fp(0x0A), F, F, F, True), "fdiv.h": (op_fp(0x0E), F, F, F, True),
    "fsqrt.h": (op_fp(0x2E, rs2=0), F, F, None, True),
    "fsgnj.h": (op_fp(0x12, funct3=0), F, F, F, False), "fsgnjn.h": (op_fp(0x12, funct3=1), F, F, F, False),
    "fsgnjx.h": (op_fp(0x12, funct3=2), F, F, F, False),
    "fmin.h": (op_fp(0x16, funct3=0), F, F, F, False), "fmax.h": (op_fp(0x16, funct3=1), F, F, F, False),
    "fcvt.s.h": (op_fp(0x20, rs2=2), F, F, None, True), "fcvt.h.s": (op_fp(0x22, rs2=0), F, F, None, True),
    "fcvt.d.h": (op_fp(0x21, rs2=2), F, F, None, True), "fcvt.h.d": (op_fp(0x22, rs2=1), F, F, None, True),
    "feq.h": (op_fp(0x52, funct3=2), X, F, F, False), "flt.h": (op_fp(0x52, funct3=1), X, F, F, False),
    "fle.h": (op_fp(0x52, funct3=0), X, F, F, False),
    "fclass.h": (op_fp(0x72, rs2=0, funct3=1), X, F, None, False),
    "fmv.x.h": (op_fp(0x72, rs2=0, funct3=0), X, F, None, False),
    "fmv.h.x": (op_fp(0x7A, rs2=0, funct3=0), F, X, None, False),
    **{f"fcvt.{t}.h": (op_fp(0x62, rs2=n), X, F, None, True) for n, t in enumerate(("w", "wu", "l", "lu"))},
    **{f"fcvt.h.{t}": (op_fp(0x6A, rs2=n), F, X, None, True) for n, t in enumerate(("w", "wu", "l", "lu"))},
}
# F's instructions that read or write a single, and D's that the engine changed (fmin and
# fmax) or that move a single's bits (fsgnj.d, fmv.x.d): the NaN-boxing of every result
# and the canonical NaN for every operand that is not boxed (sim/build/engine.py).
SINGLE = {
    "fadd.s": (op_fp(0x00), F, F, F, True), "fsub.s": (op_fp(0x04), F, F, F, True),
    "fmul.s": (op_fp(0x08), F, F, F, True), "fdiv.s": (op_fp(0x0C), F, F, F, True),
    "fsqrt.s": (op_fp(0x2C, rs2=0), F, F, None, True),
    "fsgnj.s": (op_fp(0x10, funct3=0), F, F, F, False), "fsgnjn.s": (op_fp(0x10, funct3=1), F, F, F, False),
    "fsgnjx.s": (op_fp(0x10, funct3=2), F, F, F, False),
    "fmin.s": (op_fp(0x14, funct3=0), F, F, F, False), "fmax.s": (op_fp(0x14, funct3=1), F, F, F, False),
    "fmin.d": (op_fp(0x15, funct3=0), F, F, F, False), "fmax.d": (op_fp(0x15, funct3=1), F, F, F, False),
    "fsgnj.d": (op_fp(0x11, funct3=0), F, F, F, False), "fsgnjn.d": (op_fp(0x11, funct3=1), F, F, F, False),
    "fcvt.s.d": (op_fp(0x20, rs2=1), F, F, None, True), "fcvt.d.s": (op_fp(0x21, rs2=0), F, F, None, True),
    "feq.s": (op_fp(0x50, funct3=2), X, F, F, False), "flt.s": (op_fp(0x50, funct3=1), X, F, F, False),
    "fle.s": (op_fp(0x50, funct3=0), X, F, F, False),
    "fclass.s": (op_fp(0x70, rs2=0, funct3=1), X, F, None, False),
    "fmv.x.w": (op_fp(0x70, rs2=0, funct3=0), X, F, None, False),
    "fmv.w.x": (op_fp(0x78, rs2=0, funct3=0), F, X, None, False),
    "fmv.x.d": (op_fp(0x71, rs2=0, funct3=0), X, F, None, False),
    **{f"fcvt.{t}.s": (op_fp(0x60, rs2=n), X, F, None, True) for n, t in enumerate(("w", "wu", "l", "lu"))},
    **{f"fcvt.s.{t}": (op_fp(0x68, rs2=n), F, X, None, True) for n, t in enumerate(("w", "wu", "l", "lu"))},
}
FUSED = {"fmadd.h": 0x43, "fmsub.h": 0x47, "fnmsub.h": 0x4B, "fnmadd.h": 0x4F}
FUSED_SINGLE = {"fmadd.s": 0x43, "fmsub.s": 0x47, "fnmsub.s": 0x4B, "fnmadd.s": 0x4F}  # (fmt 0: single)
ROUNDING = [0, 1, 2, 3, 4, 7]  # RNE RTZ RDN RUP RMM, dynamic

x_register = st.sampled_from(X_USED)
f_register = st.integers(0, 31)


@st.composite
def instruction(draw) -> int:
    kind = draw(st.sampled_from(["int", "unary", "shift", "half", "fused", "flh", "single", "fused_single"]))
    if kind == "int":
        return INTEGER[draw(st.sampled_from(sorted(INTEGER)))](draw(x_register), draw(x_register), draw(x_register))
    if kind == "unary":
        return UNARY[draw(st.sampled_from(sorted(set(UNARY) - QEMU_WRONG)))](draw(x_register), draw(x_register), 0)
    if kind == "shift":
        encode, bits = SHIFTS[draw(st.sampled_from(sorted(SHIFTS)))]
        return encode(draw(x_register), draw(x_register), draw(st.integers(0, (1 << bits) - 1)))
    if kind == "flh":  # from the state itself (s1): the same bytes under both
        offset = draw(st.integers(0, 255)) * 2
        return offset << 20 | S1 << 15 | 1 << 12 | draw(f_register) << 7 | 0x07
    rm = draw(st.sampled_from(ROUNDING))
    if kind in ("fused", "fused_single"):
        table, fmt = (FUSED, 2) if kind == "fused" else (FUSED_SINGLE, 0)
        opcode = table[draw(st.sampled_from(sorted(table)))]
        rd, a, b, c = (draw(f_register) for _ in range(4))
        return c << 27 | fmt << 25 | b << 20 | a << 15 | rm << 12 | rd << 7 | opcode
    table = HALF if kind == "half" else SINGLE
    encode, rd_kind, rs1_kind, rs2_kind, _ = table[draw(st.sampled_from(sorted(table)))]
    reg = {X: x_register, F: f_register}
    rs2 = draw(reg[rs2_kind]) if rs2_kind else 0
    return encode(draw(reg[rd_kind]), draw(reg[rs1_kind]), rs2, rm)


EDGE_INTEGERS = [0, 1, 2, 3, 0xFF, 0x80, 0x8000, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 1 << 32,
                 0x7FFF_FFFF_FFFF_FFFF, 1 << 63, (1 << 64) - 1, 0x0123_4567_89AB_CDEF, 63, 64, 31, 32,
                 2049, 2051, 4097, 4099, 65519, 65520, (1 << 64) - 2049, (1 << 64) - 65520]  # (ties, overflow)
EDGE_HALVES = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFD55, 0x0001, 0x8001,
               0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x3555, 0x4248, 0x5A00, 0x1400, 0x2E66,
               0x1000, 0x1400, 0x3C01, 0x3C03, 0x6800, 0x6801, 0x0200, 0x0201, 0x8200, 0x77FF]  # (ties)
EDGE_SINGLES = [0x3F80_0000, 0x7F80_0000, 0x7FC0_0000, 0x7F80_0001, 0x0000_0001, 0x477F_E000, 0x477F_F000,
                0x3380_0000, 0x3300_0000, 0xC780_0000, 0x3FAA_AAAB, 0x0080_0000]
UNBOXED = [0, 0x7FFF_FFFF_0000_0000, 0xFFFF_FFFE_0000_0000, 0x3FF0_0000_0000_0000]  # upper halves not all ones
EDGE_DOUBLES = [0x3FF0_0000_0000_0000, 0x7FF0_0000_0000_0000, 0x7FF0_0000_0000_0001, 0x40EF_FE00_0000_0000,
                0x3E70_0000_0000_0000, 0xC0E0_0000_0000_0000, 0x4000_0000_0000_0001, 0x3E6F_FFFF_FFFF_FFFF]

integers = st.one_of(st.sampled_from(EDGE_INTEGERS), st.integers(0, (1 << 64) - 1),
                     st.integers(-(1 << 20), 1 << 20).map(lambda v: v & ((1 << 64) - 1)))
halves = st.one_of(st.sampled_from(EDGE_HALVES), st.integers(0, 0xFFFF))
singles = st.one_of(st.sampled_from(EDGE_SINGLES), st.integers(0, 0xFFFF_FFFF))
f_values = st.one_of(
    halves.map(lambda h: 0xFFFF_FFFF_FFFF_0000 | h),  # boxed halves, most of all
    halves.map(lambda h: 0xFFFF_FFFF_FFFF_0000 | h),
    singles.map(lambda s: 0xFFFF_FFFF_0000_0000 | s),  # boxed singles
    st.sampled_from(EDGE_DOUBLES),
    st.integers(0, (1 << 64) - 1),  # doubles, and singles that are not boxed
    singles,  # singles with the upper half 0, not boxed
    singles.map(lambda s: 0x7FFF_FFFF_0000_0000 | s),  # and all but one bit boxed
)


@st.composite
def case(draw) -> bytes:
    code = draw(st.lists(instruction(), min_size=1, max_size=8))
    x = [draw(integers) if n in X_USED else 0 for n in range(32)]
    some = draw(st.lists(f_values, min_size=8, max_size=8))  # (fewer draws: hypothesis is faster so)
    f = [some[(n * 5) % 8] if n % 3 else some[n % 8] for n in range(32)]
    fcsr = draw(st.integers(0, 4)) << 5 | draw(st.integers(0, 31))
    return CASE.pack(*x, *f, fcsr, *code, RET, *([0] * (CODE_WORDS - 1 - len(code))))


def _on_qemu(program: Path, cases: list[bytes]) -> list[tuple]:
    return [STATE.unpack(state) for state in qemu.on_qemu(program, QEMU_CPU, cases, STATE.size)]


def _on_simulator(kernels: Path, cases: list[bytes]) -> list[tuple]:
    states = qemu.on_simulator(kernels, [HERE / "thread.c", HERE / "run.S"], cases, STATE.size)
    return [STATE.unpack(state) for state in states]


def _explain(cases, ours, theirs) -> str:
    for i, (case_bytes, a, b) in enumerate(zip(cases, ours, theirs)):
        if a != b:
            code = CASE.unpack(case_bytes)[65:]
            words = [f"{w:#010x}" for w in code[: code.index(RET)]]
            diffs = [f"{'x' if n < 32 else 'f' if n < 64 else 'fcsr'}{n % 32 if n < 64 else ''}: "
                     f"simulator {u:#x}, qemu {v:#x}" for n, (u, v) in enumerate(zip(a, b)) if u != v]
            return f"case {i}: code {' '.join(words)}\n  " + "\n  ".join(diffs)
    return "equal"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                 HealthCheck.large_base_example])
@given(cases=st.lists(case(), min_size=25, max_size=25))
def test_the_new_instructions_agree_with_qemu(qemu_program, kernels, cases):
    theirs = _on_qemu(qemu_program, cases)
    ours = _on_simulator(kernels, cases)
    assert len(ours) == len(theirs) == len(cases)
    assert ours == theirs, _explain(cases, ours, theirs)


def test_every_instruction_and_rounding_mode_once(qemu_program, kernels):
    """Each instruction, in every rounding mode it takes, on the edge values."""
    import random

    rng = random.Random(5)
    cases = []

    def one(words, halves=None, ints=None, singles=False):
        x = [rng.choice(EDGE_INTEGERS) if n in X_USED else 0 for n in range(32)]
        f = [0xFFFF_FFFF_FFFF_0000 | EDGE_HALVES[(n + len(cases)) % len(EDGE_HALVES)] for n in range(32)]
        if singles:  # boxed singles, and every fourth register a value that is not boxed
            f = [(UNBOXED[n // 4 % len(UNBOXED)] if n % 4 == 3 else 0xFFFF_FFFF_0000_0000)
                 | EDGE_SINGLES[(n + len(cases)) % len(EDGE_SINGLES)] for n in range(32)]
        f[31] = 0xFFFF_FFFF_0000_0000 | EDGE_SINGLES[len(cases) % len(EDGE_SINGLES)]
        f[30] = EDGE_DOUBLES[len(cases) % len(EDGE_DOUBLES)]
        for n, h in enumerate(halves or ()):
            f[n] = 0xFFFF_FFFF_FFFF_0000 | h
        for n, v in (ints or {}).items():
            x[n] = v
        fcsr = (len(cases) % 5) << 5
        cases.append(CASE.pack(*x, *f, fcsr, *words, RET, *([0] * (CODE_WORDS - 1 - len(words)))))

    for encode in INTEGER.values():
        for rd, a, b in ((5, 6, 7), (5, 5, 6), (5, 6, 5), (5, 5, 5)):
            one([encode(rd, a, b)])
    for name, encode in UNARY.items():
        if name not in QEMU_WRONG:
            one([encode(10, 11, 0)])
    for encode, bits in SHIFTS.values():
        one([encode(10, 11, k) for k in (0, 1, (1 << bits) - 1, bits * 3 // 2)])
    for table, singles in ((HALF, False), (SINGLE, True)):
        for name, (encode, rd_kind, rs1_kind, rs2_kind, rounded) in table.items():
            for rm in ROUNDING if rounded else [0]:
                words = []
                for start in range(0, 20, 4):  # several operands: f0..f19 against each other
                    rd = 10 if rd_kind == X else 20 + start // 4
                    rs1 = 11 if rs1_kind == X else start
                    words.append(encode(rd, rs1, start + 1 if rs2_kind else 0, rm))
                if name.startswith("fcvt.h."):
                    words += [encode(10, 31, 0, rm), encode(11, 30, 0, rm)]
                one(words, singles=singles)
    for opcode in FUSED_SINGLE.values():
        for rm in ROUNDING:
            one([c << 27 | (c + 1) << 20 | (c + 2) << 15 | rm << 12 | (20 + c % 10) << 7 | opcode
                 for c in range(0, 18, 3)], singles=True)
    for opcode in FUSED.values():
        for rm in ROUNDING:
            one([c << 27 | 2 << 25 | (c + 1) << 20 | (c + 2) << 15 | rm << 12 | (20 + c % 10) << 7 | opcode
                 for c in range(0, 18, 3)])
    # Ties, in every rounding mode: 1 + 2^-11 and 1 + 3 * 2^-11 (to even: down, then up)
    for rm in ROUNDING:
        one([HALF["fadd.h"][0](20 + k, a, b, rm) for k, (a, b) in enumerate(((0, 1), (2, 3), (4, 5), (6, 7)))],
            halves=[0x3C00, 0x1000, 0x3C00, 0x1600, 0xBC00, 0x9000, 0x0200, 0x0001])
        one([HALF["fcvt.h.w"][0](20, 5, 0, rm), HALF["fcvt.h.l"][0](21, 6, 0, rm), HALF["fcvt.h.wu"][0](22, 7, 0, rm),
             HALF["fcvt.h.l"][0](23, 10, 0, rm)], ints={5: 2049, 6: 2051, 7: 65520, 10: (1 << 64) - 2049})
    theirs = _on_qemu(qemu_program, cases)
    ours = _on_simulator(kernels, cases)
    assert ours == theirs, _explain(cases, ours, theirs)


def test_ctzw_counts_the_low_word_only(kernels):
    """Zbb: ctzw is the trailing zeros of the low 32 bits, 32 when they are all 0, whatever
    the high ones hold (QEMU 7.2 says 63 for 1 << 63)."""
    values = [0, 1, 1 << 31, 1 << 32, 1 << 63, (1 << 64) - 1, 0xFFFF_FFFF_0000_0000, 0x0000_0001_0000_0100]
    cases = []
    for v in values:
        x = [0] * 32
        x[5] = v
        cases.append(CASE.pack(*x, *([0] * 32), 0, UNARY["ctzw"](28, 5, 0), RET, *([0] * (CODE_WORDS - 2))))
    got = [state[28] for state in _on_simulator(kernels, cases)]
    low = [v & 0xFFFF_FFFF for v in values]
    assert got == [(w & -w).bit_length() - 1 if w else 32 for w in low]
