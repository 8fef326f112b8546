"""The X280's scalar extensions from C (Zba, Zbb, Zfh), run by sim/native/isa.c, and the
targets a thread can be compiled for (sim.isa.target), the X280 itself by default."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

import komorebi as km
from tests.threads import compiled_instructions, machine_cluster, program_for, run_to_end

MASK = (1 << 64) - 1


def _words64(values):
    out = []
    for v in values:
        v &= MASK
        out += [v & 0xFFFF_FFFF, v >> 32]
    return out


def _results64(result, count):
    w = [int(x) for x in result.words[: 2 * count]]
    return [w[2 * i] | w[2 * i + 1] << 32 for i in range(count)]


BITS = r"""
#include "kmx.h"
static uint64_t arg(int i) { return (uint64_t)kmx_word(2 * i) | (uint64_t)kmx_word(2 * i + 1) << 32; }
static uint64_t out[32];
static int n;
static void put(uint64_t v) { out[n++] = v; }

__attribute__((noinline)) static uint64_t index_sum(const uint32_t *a, const uint64_t *b, uint64_t i) {
    return a[i] + b[i]; /* sh2add, sh3add */
}

int kmx_main(int core) {
    (void)core;
    uint64_t x = arg(0), y = arg(1);
    int64_t sx = (int64_t)x, sy = (int64_t)y;
    put((uint64_t)__builtin_popcountll(x));
    put((uint64_t)__builtin_popcount((uint32_t)x));
    put(x ? (uint64_t)__builtin_ctzll(x) : 64);
    put(x ? (uint64_t)__builtin_clzll(x) : 64);
    put((uint32_t)x ? (uint64_t)__builtin_ctz((uint32_t)x) : 32);
    put(sx < sy ? (uint64_t)sx : (uint64_t)sy);
    put(x > y ? x : y);
    put(x & ~y);
    put(~(x ^ y));
    put(x | ~y);
    put(__builtin_bswap64(x));
    put((x >> (y & 63)) | (x << ((64 - (y & 63)) & 63)));
    put((uint64_t)(int64_t)(int8_t)x);
    put((uint64_t)(int64_t)(int16_t)x);
    put((uint16_t)x);
    put((uint64_t)(uint32_t)x + y); /* add.uw */
    static uint32_t a[64];
    static uint64_t b[64];
    for (int i = 0; i < 64; i++) { a[i] = (uint32_t)(i * 3); b[i] = (uint64_t)i << 40; }
    put(index_sum(a, b, y & 63));
    for (int i = 0; i < n; i++) {
        uint32_t two[2] = {(uint32_t)out[i], (uint32_t)(out[i] >> 32)};
        kmx_result(2 * i, two, 2);
    }
    return 0;
}
"""


def _expected_bits(x: int, y: int) -> list[int]:
    def s64(v):
        return v - (1 << 64) if v >> 63 else v

    r = y & 63
    rot = ((x >> r) | (x << ((64 - r) & 63))) & MASK
    return [
        bin(x).count("1"), bin(x & 0xFFFFFFFF).count("1"),
        (x & -x).bit_length() - 1 if x else 64, 64 - x.bit_length(),
        ((x & 0xFFFFFFFF) & -(x & 0xFFFFFFFF)).bit_length() - 1 if x & 0xFFFFFFFF else 32,
        min(s64(x), s64(y)) & MASK, max(x, y), x & ~y & MASK, ~(x ^ y) & MASK, (x | ~y) & MASK,
        int.from_bytes(x.to_bytes(8, "little"), "big"), rot,
        (x & 0xFF) - (0x100 if x & 0x80 else 0) & MASK, (x & 0xFFFF) - (0x10000 if x & 0x8000 else 0) & MASK,
        x & 0xFFFF, ((x & 0xFFFFFFFF) + y) & MASK, ((y & 63) * 3 + ((y & 63) << 40)) & MASK,
    ]


@pytest.mark.parametrize("x, y", [
    (0, 0), (MASK, 1), (1 << 63, MASK), (0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210), (0x80, 0x8000), (12345, 77),
])
def test_zba_and_zbb_from_c_give_what_the_instructions_mean(tmp_path, x, y):
    program = program_for(BITS, tmp_path, words=_words64([x, y]))
    result, run = run_to_end(program)
    expected = _expected_bits(x, y)
    assert _results64(result, len(expected)) == expected
    core = machine_cluster(run, 1).cores[0]
    assert core.native.isa.traps > 0  # (the instructions ran in C: the engine lacks them)


HALF = r"""
#include "kmx.h"
static float arg(int i) { uint32_t w = kmx_word(i); float f; __builtin_memcpy(&f, &w, 4); return f; }
static uint32_t out[16];
static int n;
static void put_h(_Float16 h) { uint16_t bits; __builtin_memcpy(&bits, &h, 2); out[n++] = bits; }
static _Float16 root(_Float16 x) { _Float16 r; __asm__("fsqrt.h %0, %1" : "=f"(r) : "f"(x)); return r; }

int kmx_main(int core) {
    (void)core;
    _Float16 a = (_Float16)arg(0), b = (_Float16)arg(1), c = (_Float16)arg(2);
    put_h(a);
    put_h(a + b);
    put_h(a - b);
    put_h(a * b);
    put_h(a / b);
    put_h(a * b + c);
    put_h(root(a < 0 ? -a : a));
    out[n++] = (uint32_t)(int32_t)a;           /* fcvt.w.h (round toward zero) */
    put_h((_Float16)(int32_t)kmx_word(3));     /* fcvt.h.w */
    float back = (float)(a * b);               /* fcvt.s.h */
    __builtin_memcpy(&out[n++], &back, 4);
    out[n++] = a < b;                          /* flt.h */
    put_h(a > b ? a : b);
    kmx_result(0, out, (uint32_t)n);
    return 0;
}
"""


def _h(value: float) -> int:
    return struct.unpack("<H", struct.pack("<e", value))[0]


def _half(value: float) -> float:
    return struct.unpack("<e", struct.pack("<e", value))[0]


@pytest.mark.parametrize("a, b, c, i", [(1.5, 2.25, -0.75, 7), (-3.0, 0.1, 100.0, -12), (65504.0, 2.0, 1.0, 70000),
                                        (1e-5, 3.0, 6e-8, 0)])
def test_float16_arithmetic_and_conversions_from_c_round_as_ieee_says(tmp_path, a, b, c, i):
    words = [struct.unpack("<I", struct.pack("<f", v))[0] for v in (a, b, c)] + [i & 0xFFFFFFFF]
    program = program_for(HALF, tmp_path, words=words)
    result, _ = run_to_end(program)
    got = [int(w) for w in result.words[:14]]
    ha, hb, hc = _half(a), _half(b), _half(c)

    def half_of(x):  # the exact value rounded once to half (a double holds every sum and product of halves exactly)
        try:
            return _h(x)
        except OverflowError:
            return 0x7C00 if x > 0 else 0xFC00

    expected = [
        _h(ha), half_of(ha + hb), half_of(ha - hb), half_of(ha * hb), half_of(ha / hb),
        half_of(ha * hb + hc), half_of(math.sqrt(abs(ha))), int(ha) & 0xFFFFFFFF, half_of(float(i)),
        struct.unpack("<I", struct.pack("<f", struct.unpack("<e", struct.pack("<H", half_of(ha * hb)))[0]))[0],
        int(ha < hb), _h(max(ha, hb)),
    ]
    assert got[:12] == expected


def test_fmin_and_fmax_of_a_number_and_a_signalling_nan_give_the_number(tmp_path):
    """F 2.2 (Unicorn's QEMU 5.0 gave the canonical NaN): the simulator's build of the engine."""
    source = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    uint32_t one = 0x3f800000u, snan = kmx_word(0);
    float a, b;
    __builtin_memcpy(&a, &one, 4);
    __builtin_memcpy(&b, &snan, 4);
    float lo = __builtin_fminf(a, b), hi = __builtin_fmaxf(b, a);
    double d = __builtin_fmin(2.0, (double)kmx_word(1)), e;
    uint64_t dsnan = 0x7ff0000000000001ull;
    __builtin_memcpy(&e, &dsnan, 8);
    double m = __builtin_fmax(e, -3.0);
    uint32_t out[4];
    __builtin_memcpy(&out[0], &lo, 4);
    __builtin_memcpy(&out[1], &hi, 4);
    out[2] = (uint32_t)(int32_t)d;
    out[3] = (uint32_t)(int32_t)m;
    kmx_result(0, out, 4);
    return 0;
}
"""
    program = program_for(source, tmp_path, words=[0x7F800001, 5])
    result, _ = run_to_end(program)
    assert [int(w) for w in result.words[:4]] == [0x3F800000, 0x3F800000, 2, (-3) & 0xFFFFFFFF]


# NaN-boxing (the F extension's "NaN Boxing of Narrower Values"): a single in a 64-bit f
# register has its upper 32 bits all ones; one that is not so boxed is read as the
# canonical NaN. Each case: the instruction, how its operands go in and its result comes
# out ("f": an f register, as 64 bits; "x": an x register), the operands, and the result.
BOX = 0xFFFF_FFFF_0000_0000
NAN_BOXING = [
    # results boxed: the engine's arithmetic, conversions and moves
    ("fadd.s {d}, {a}, {b}", "ff", (BOX | 0x3F80_0000, BOX | 0x3F80_0000), BOX | 0x4000_0000),
    ("fcvt.s.l {d}, {a}", "fx", (2**64 - 1,), BOX | 0xBF80_0000),
    ("fcvt.s.lu {d}, {a}", "fx", (1,), BOX | 0x3F80_0000),
    ("fcvt.s.w {d}, {a}", "fx", (2**64 - 2,), BOX | 0xC000_0000),
    ("fcvt.s.wu {d}, {a}", "fx", (3,), BOX | 0x4040_0000),
    ("fcvt.s.d {d}, {a}", "ff", (0x3FF0_0000_0000_0000,), BOX | 0x3F80_0000),
    ("fmv.w.x {d}, {a}", "fx", (0x1234_5678,), BOX | 0x1234_5678),
    ("fmv.w.x {d}, {a}", "fx", (0xAAAA_AAAA_8000_0000,), BOX | 0x8000_0000),
    ("fmadd.s {d}, {a}, {b}, {a}", "ff", (BOX | 0x3F80_0000, BOX | 0x4000_0000), BOX | 0x4040_0000),
    ("fmin.s {d}, {a}, {b}", "ff", (BOX | 0x3F80_0000, BOX | 0x7F80_0001), BOX | 0x3F80_0000),
    ("fcvt.s.h {d}, {a}", "ff", (0xFFFF_FFFF_FFFF_3C00,), BOX | 0x3F80_0000),  # (the simulator's Zfh)
    # operands that are not boxed: the canonical NaN
    ("fadd.s {d}, {a}, {b}", "ff", (0x3F80_0000, BOX | 0x3F80_0000), BOX | 0x7FC0_0000),
    ("fsgnj.s {d}, {a}, {b}", "ff", (0x7FFF_FFFE_1234_5678, 0), BOX | 0x7FC0_0000),
    ("fsgnj.s {d}, {a}, {b}", "ff", (BOX | 0x1234_5678, 0), BOX | 0x1234_5678),
    ("fsgnj.s {d}, {a}, {b}", "ff", (BOX | 0x1234_5678, BOX | 0x8000_0000), BOX | 0x9234_5678),
    ("fsgnjn.s {d}, {a}, {b}", "ff", (0xFFFF_FFFE_1234_5678, BOX | 0x8000_0000), BOX | 0x7FC0_0000),
    ("fsgnjx.s {d}, {a}, {b}", "ff", (BOX | 0x9234_5678, 0x7FFF_FFFF_8000_0000), BOX | 0x9234_5678),
    ("fsgnj.s {d}, {a}, {a}", "ff", (0x3FF0_0000_0000_0000,), BOX | 0x7FC0_0000),  # fmv.s
    ("feq.s {d}, {a}, {a}", "xf", (0x7FFF_FFFF_1111_1111,), 0),
    ("feq.s {d}, {a}, {a}", "xf", (0xFFFF_FFFF_1111_1111,), 1),
    ("fclass.s {d}, {a}", "xf", (0x3F80_0000,), 1 << 9),
    ("fcvt.w.s {d}, {a}", "xf", (0x3F80_0000,), 0x7FFF_FFFF),
    ("fcvt.d.s {d}, {a}", "ff", (0x3F80_0000,), 0x7FF8_0000_0000_0000),
    ("fcvt.h.s {d}, {a}", "ff", (0x3F80_0000,), 0xFFFF_FFFF_FFFF_7E00),  # (the simulator's Zfh)
    ("fmin.s {d}, {a}, {b}", "ff", (0x3F80_0000, BOX | 0x4000_0000), BOX | 0x4000_0000),
    # moves of the raw bits: no check
    ("fmv.x.w {d}, {a}", "xf", (0x0000_0000_8000_0000,), 0xFFFF_FFFF_8000_0000),
    ("fsgnj.d {d}, {a}, {b}", "ff", (0x7FFF_FFFF_1111_1111, 0x8000_0000_0000_0000), 0xFFFF_FFFF_1111_1111),
]


def test_single_precision_values_are_nan_boxed_as_the_f_extension_says(tmp_path):
    """The simulator's build of the engine (sim/build/engine.py) boxes every single it
    computes and reads an operand that is not boxed as the canonical NaN; so do the
    simulator's own instructions (Zfh's conversions). The cases of the official tests'
    rv64ud `move` and riscv-arch-test's `fcvt.s.l` are among these."""
    bodies = []
    for n, (text, kinds, operands, _) in enumerate(NAN_BOXING):
        into = "fmv.x.d %0, ft2" if kinds[0] == "f" else "mv %0, t2"
        load = [f"fmv.d.x ft{i}, %{i + 1}" if kinds[1] == "f" else f"mv t{i}, %{i + 1}" for i in range(2)]
        names = {"f": ("ft2", "ft0", "ft1"), "x": ("t2", "t0", "t1")}
        d = names[kinds[0]][0]
        a, b = names[kinds[1]][1:]
        insn = text.format(d=d, a=a, b=b)
        bodies.append(f'    __asm__ volatile("{load[0]}\\n{load[1]}\\n{insn}\\n{into}" : "=r"(out[{n}]) '
                      f': "r"(in[{2 * n}]), "r"(in[{2 * n + 1}]) : "t0", "t1", "t2", "ft0", "ft1", "ft2");')
    operands = [v for _, _, ops, _ in NAN_BOXING for v in (*ops, *(0,) * (2 - len(ops)))]
    source = ("#include \"kmx.h\"\nstatic const uint64_t in[] = {" + ", ".join(f"{v:#x}ull" for v in operands)
              + "};\nint kmx_main(int core) {\n    (void)core;\n    uint64_t bytes;\n"
              + "    volatile uint64_t *out = (volatile uint64_t *)kmx_region(0, &bytes);\n"
              + "\n".join(bodies) + "\n    kmx_flush(0);\n    return 0;\n}\n")
    program = program_for(source, tmp_path, regions={"out": 8 * len(NAN_BOXING)})
    with km.Session() as session:
        run = session.load(program)
        assert run.thread_result(timeout=60).code == 0
        run.stop()
        got = [int(v) for v in run.thread.read("out").view(np.uint64)]
    wrong = [f"{text} of {', '.join(f'{v:#x}' for v in ops)}: {g:#x}, the spec {want:#x}"
             for (text, _, ops, want), g in zip(NAN_BOXING, got) if g != want]
    assert not wrong, "\n".join(wrong)


def test_flh_and_fsh_go_through_the_cache_model_and_fault_like_a_load(tmp_path):
    source = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    uint64_t bytes;
    _Float16 *h = (_Float16 *)kmx_region(0, &bytes);
    kmx_invalidate(0);
    _Float16 sum = 0;
    for (uint64_t i = 0; i < bytes / 2; i++) sum += h[i];
    h[0] = sum;
    kmx_flush(0);
    if (kmx_word(0)) return (int)h[kmx_word(0)];
    return 0;
}
"""
    halves = np.full(64, 0.5, np.float16)
    program = program_for(source, tmp_path, regions={"h": halves}, words=[0])
    result, run = run_to_end(program)
    assert result.code == 0
    assert run.thread.read("h").view(np.float16)[0] == 32.0
    assert not run.findings
    program = program_for(source, tmp_path, regions={"h": halves}, words=[1 << 30])
    with pytest.raises(km.ThreadFault) as fault:
        run_to_end(program)
    assert "a load from" in str(fault.value) and "thread.c:12" in str(fault.value)


CYCLES = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    uint64_t x = kmx_word(0), y = 3, start = kmx_cycles();
    for (int i = 0; i < 1000; i++) {
        __asm__ volatile(INSN " %0, %0, %1" : "+r"(x) : "r"(y));
    }
    uint64_t spent = kmx_cycles() - start;
    uint32_t out[2] = {(uint32_t)spent, (uint32_t)x};
    kmx_result(0, out, 2);
    return 0;
}
"""


def test_emulated_instructions_count_in_kmx_cycles_like_the_engines(tmp_path):
    spent = {}
    for insn in ("add", "sh1add", "andn", "min"):
        (tmp_path / insn).mkdir()
        program = program_for(f'#define INSN "{insn}"\n' + CYCLES, tmp_path / insn, words=[5])
        result, _ = run_to_end(program)
        spent[insn] = int(result.words[0])
    assert len(set(spent.values())) == 1, spent


RACE = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    volatile uint32_t *counter = (volatile uint32_t *)kmx_region(0, &bytes);
    uint64_t step = 1, scratch = 0;
    kmx_invalidate(0);
    for (int i = 0; i < 3000; i++) {
        __asm__ volatile(INSN " %0, %1, %0" : "+r"(scratch) : "r"(step));
        *counter = *counter + 1;
    }
    kmx_flush(0);
    return core & 0;
}
"""


@pytest.mark.filterwarnings("ignore::komorebi.CoherenceWarning")  # (a race on purpose)
@pytest.mark.parametrize("seed", [1, 7])
def test_turns_are_the_same_whether_the_engine_or_the_c_runs_an_instruction(tmp_path, seed):
    """Four cores race on a counter; how many updates are lost depends only on where the
    turns end, so on instruction counts: sh1add (run in C) and add (by the engine) must
    interleave the same."""
    lost = {}
    for insn in ("add", "sh1add"):
        (tmp_path / insn).mkdir()
        program = program_for(f'#define INSN "{insn}"\n' + RACE, tmp_path / insn, regions={"c": 64}, cores=4)
        with km.Session(schedule_seed=seed, quantum=97) as session:
            run = session.load(program)
            run.thread_result(timeout=60)
            run.stop()
            lost[insn] = int(run.thread.read("c").view(np.uint32)[0])
    assert lost["add"] == lost["sh1add"], lost
    assert lost["add"] < 4 * 3000  # (the race did lose updates: the test can fail)


@pytest.mark.parametrize("insn, extension, name", [  # (what the card traps on, measured on a P300)
    ("0x28b51533", "Zbs", "bset"), ("0x0ab51533", "Zbc", "clmul"), ("0x0eb55533", "Zicond", "czero.eqz"),
    ("0x0025200f", "Zicbom", "cbo.flush"), ("0xf0180553", "Zfa", "fli.s"),
    ("0x4485f553", "Zfbfmin", "fcvt.bf16.s"), ("0x40658553", "Zfbfmin", "fcvt.s.bf16"),
    ("0xef881457", "Zvfbfwma", "vfwmaccbf16.vv"), ("0xef855457", "Zvfbfwma", "vfwmaccbf16.vf"),
    ("0x070c0457", "Zvkb", "vandn.vv"), ("0x4b042457", "Zvkb", "vbrev8.v"),
    ("0x4b052457", "Zvbb", "vbrev.v"), ("0xd70c0457", "Zvbb", "vwsll.vv"),
])
def test_an_instruction_of_an_extension_the_x280_lacks_is_a_fault_naming_it(tmp_path, insn, extension, name):
    """Hand-encoded, so that no compiler stands in the way; the vector ones after a legal
    vsetvli of e16, so that only the instruction itself can be what is refused."""
    source = (f'#include "kmx.h"\nint kmx_main(int core) {{\n    __asm__ volatile(".option push\\n.option arch, +v\\n'
              f'vsetivli zero, 8, e16, m1, ta, ma\\n.option pop\\n.word {insn}");\n    return core;\n}}\n')
    with pytest.raises(km.ThreadFault) as fault:
        run_to_end(program_for(source, tmp_path))
    assert f"an instruction of {extension} (" in str(fault.value) and f": {name}, instruction {insn}" in str(fault.value)
    assert "which the X280 does not have" in str(fault.value) and "thread.c:3" in str(fault.value)


@pytest.mark.parametrize("flags, said", [
    ("-march=rv64gcv_zvbb", "the extension zvbb (vector basic bit manipulation), which the X280 does not have"),
    ("-mcpu=sifive_x280+zvkned", "the extension zvkned (vector AES), which the X280 does not have"),
    ("-mcpu=sifive-x280+zvfbfwma", "the extension zvfbfwma (vector BF16 widening multiply-add)"),  # (gcc's spelling)
    ("-march=rv64gcv_zvfbfmin_zvfbfwma", "the extension zvfbfwma (vector BF16 widening multiply-add)"),
    ("-march=rv64gc_zfbfmin", "the extension zfbfmin (scalar BF16 conversions)"),
    ("-mcpu=sifive_x280+zicond", "the extension zicond (conditional zero)"),
    ("-march=rv64gc_zbc", "the extension zbc (carry-less multiplication)"),
    ("-march=rv64gcv_zvkb", "the extension zvkb (vector bit manipulation for cryptography)"),
    ("-mcpu=sifive_x280+zicbom", "the extension zicbom (cache-block management)"),
    ("-march=rv64gc_zfa", "the extension zfa (additional floating point)"),
    ("-march=rv64gcv_zvl1024b", "the extension zvl1024b (vector registers of at least 1024 bits), and the X280's "
                                "vector registers are 512 bits (VLEN 512)"),
    ("-march=rv64gc_zbs", "zbs (single-bit instructions)"),
    ("-march=rv32gc", "a 32-bit target"),
    ("-mcpu=sifive_u74", "a CPU the simulator does not know"),
    ("-march=rv64_zba", "no base"),
])
def test_a_target_the_simulated_x280_does_not_run_is_refused_at_load(tmp_path, monkeypatch, flags, said):
    monkeypatch.setenv("KMX_CFLAGS", flags)
    source = '#include "kmx.h"\nint kmx_main(int core) { return core; }\n'
    with pytest.raises(km.CompileError) as error:
        run_to_end(program_for(source, tmp_path))
    assert f"KMX_CFLAGS asks for {flags}" in str(error.value) and said in str(error.value)
    assert ("runs rv64imafdcv_zicsr_zifencei_zba_zbb_zfh_zfhmin_zvfbfmin_zvfh_zvfhmin_zvl512b_xsfvfnrclipxfqf"
            in str(error.value))
    assert "the default target is the X280 itself, -mcpu=sifive_x280+zvfbfmin+xsfvfnrclipxfqf (" in str(error.value)


@pytest.mark.parametrize("flags, traps", [("-march=rv64gc", False), ("-mcpu=baseline_rv64+zbb", True),
                                          ("-march=rv64gc_zba_zbb_zfh", True), ("", True),
                                          ("-mcpu=sifive_x280", True), ("-mcpu=sifive_x280-v", True),
                                          ("-march=rv64gcv", False), ("-march=rv64gc_zve32x_zvl256b", False),
                                          ("-mcpu=sifive_x280 -march=rv64gc_zbb", True),  # (-march wins: no V)
                                          ("-mcpu=baseline_rv64+zbb+relax", True)])
def test_targets_in_either_spelling_build_what_they_name(tmp_path, monkeypatch, flags, traps):
    monkeypatch.setenv("KMX_CFLAGS", flags)
    source = '#include "kmx.h"\nint kmx_main(int core) { return __builtin_popcountll(kmx_word(0) * 0x10001ull); }\n'
    result, run = run_to_end(program_for(source, tmp_path, words=[0xFF]))
    assert result.code == 16
    assert (machine_cluster(run, 1).cores[0].native.isa.traps > 0) == traps


@pytest.mark.parametrize("flags, cpu", [
    ("", "sifive_x280+zvfbfmin+xsfvfnrclipxfqf"),  # (the whole X280: the CPU and the measured extensions)
    ("-mcpu=sifive_x280", "sifive_x280"),  # (the CPU as zig has it)
    ("-mcpu=sifive-x280+relax", "sifive_x280"),
    ("-mcpu=sifive_x280+xsfvfnrclipxfqf+zvfbfmin", "sifive_x280+zvfbfmin+xsfvfnrclipxfqf"),
    ("-march=rv64gcv_zba_zbb_zfh_zvfh_zvfbfmin_zvl512b_xsfvfnrclipxfqf", "sifive_x280+zvfbfmin+xsfvfnrclipxfqf"),
    ("-march=rv64gcv_zba_zbb_zfh_zvfh_zvl512b_zvfbfmin", "sifive_x280+zvfbfmin"),
    ("-march=rv64gcv_zba_zbb_zfh_zvfh_zvl512b", "sifive_x280"),  # (the same extensions: the X280's -mcpu)
    ("-march=rv64imafdcv_zicsr_zifencei_zfh_zba_zbb_zvfh_zvl512b", "sifive_x280"),
    ("-march=rv64gcv_zba_zbb_zfh_zvfh_zvfbfmin_xsfvfnrclipxfqf",  # (VLEN >= 128: not the X280's CPU)
     "generic_rv64+a+c+d+f+m+v+xsfvfnrclipxfqf+zba+zbb+zfh+zicsr+zifencei+zvfbfmin+zvfh"),
    ("-mcpu=sifive_x280+xsfvfnrclipxfqf+zvfbfmin-v", "generic_rv64+a+c+d+f+m+zba+zbb+zfh+zicsr+zifencei"),
    ("-march=rv64gcv_zba_zbb_zfh_zvfh", "generic_rv64+a+c+d+f+m+v+zba+zbb+zfh+zicsr+zifencei+zvfh"),  # (VLEN >= 128)
    ("-mcpu=sifive_x280-v", "generic_rv64+a+c+d+f+m+zba+zbb+zfh+zicsr+zifencei"),  # (and no Zv*)
    ("-mcpu=sifive_x280-zvfh", "generic_rv64+a+c+d+f+m+v+zba+zbb+zfh+zicsr+zifencei+zvl512b"),
    ("-march=rv64gc_zba_zbb_zfh", "generic_rv64+a+c+d+f+m+zba+zbb+zfh+zicsr+zifencei"),
    ("-march=rv64gc_zve64d_zvl512b", "generic_rv64+a+c+d+f+m+zicsr+zifencei+zve64d+zvl512b"),
])
def test_zig_gets_the_x280s_own_cpu_only_for_exactly_its_extensions(monkeypatch, flags, cpu):
    from komorebi.sim.build import thread

    monkeypatch.setenv("KMX_CFLAGS", flags)
    monkeypatch.delenv("KMX_CC", raising=False)
    assert thread.toolchain_in_use().target_flags() == [f"-mcpu={cpu}"]


SUM = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    const uint32_t *a = (const uint32_t *)kmx_region(0, &bytes);
    kmx_invalidate(0);
    uint32_t sum = 0;
    for (uint64_t i = 0; i < bytes / 4; i++) sum += a[i] * 3u;
    kmx_result(0, &sum, 1);
    return core;
}
"""


def test_the_default_target_vectorises_a_loop_and_the_simulator_runs_it(tmp_path):
    numbers = np.arange(1, 1001, dtype=np.uint32)
    result, run = run_to_end(program_for(SUM, tmp_path, regions={"a": numbers}))
    assert int(result.words[0]) == int(3 * numbers.astype(np.uint64).sum()) % 2**32
    words = compiled_instructions(machine_cluster(run, 1).image)
    assert any(w & 0x8000_707F == 0x7057 for w in words), "no vsetvli in the compiled thread"  # (OP-V, OPCFG)


STORES = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    uint64_t bytes;
    _Float16 *h = (_Float16 *)kmx_region(0, &bytes);
    kmx_invalidate(0);
    for (uint64_t i = 0; i < bytes / 2; i++) {
        _Float16 x = (_Float16)(int)i;
        __asm__ volatile("fsh %1, 0(%0)" :: "r"(&h[i]), "f"(x) : "memory");
    }
    if (kmx_word(0)) kmx_flush(0);
    return 0;
}
"""


@pytest.mark.parametrize("flush", [True, False])
def test_fsh_writes_are_seen_by_the_cache_model_in_strict_mode(tmp_path, flush):
    """Strict mode keeps the cache's copy apart from DRAM: only what the model knows was
    written reaches DRAM at a flush, and a write never flushed is a finding at its line."""
    program = program_for(STORES, tmp_path, regions={"h": 8192 * 2}, words=[int(flush)])
    with km.Session(coherence="strict") as session:
        run = session.load(program)
        run.thread_result(timeout=30)
        with pytest.warns(km.CoherenceWarning) if not flush else _no_warning():
            run.stop()
        halves = run.thread.read("h").view(np.float16)
        findings = run.findings
    if flush:
        assert (halves == np.arange(8192, dtype=np.float16)).all()
        assert not findings
    else:
        assert [(f.kind, f.line) for f in findings] == [("unflushed-write", 10)]


class _no_warning:
    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error", km.CoherenceWarning)

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)


def test_a_finding_in_interpreted_code_names_the_users_line(tmp_path):
    """The interpreter (isa.c) runs the code after a cpop; the checker walks the frames
    from the engine's fp to name the line of a read before any invalidate: fp must be the
    interpreted code's, not what it was at the trap."""
    source = r"""
#include "kmx.h"
__attribute__((noinline)) static uint64_t work(const uint64_t *r, uint64_t x, uint64_t n) {
    uint64_t bits = (uint64_t)__builtin_popcountll(x);
    uint64_t copy[64];
    __builtin_memcpy(copy, r, n * 8); /* (a call: the runtime's memcpy) */
    return bits + copy[1];
}
__attribute__((noinline)) static uint64_t outer(const uint64_t *r) {
    return work(r, kmx_word(0), kmx_word(1)) + 1;
}
int kmx_main(int core) {
    (void)core;
    uint64_t bytes;
    const uint64_t *r = (const uint64_t *)kmx_region(0, &bytes);
    return (int)outer(r);
}
"""
    program = program_for(source, tmp_path, regions={"r": np.arange(512, dtype=np.uint64)}, words=[0xFF, 64])
    with km.Session() as session:
        run = session.load(program)
        assert run.thread_result(timeout=30).code == 8 + 1 + 1
        with pytest.warns(km.CoherenceWarning):
            run.stop()
        lines = [(f.kind, f.line) for f in run.findings]
    assert lines == [("read-before-invalidate", 6)]


def test_the_interpreter_runs_through_a_stub_that_borrows_a_register(tmp_path):
    """A loop with a cpop (run in C) and a sh1add x, x, x (a stub that keeps a register in
    the scratch page): the interpreter reaches the scratch page too, and stays in the
    loop, rather than handing each pass back to the engine at the stub's store."""
    source = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t x = kmx_word(0), b = 1;
    for (int i = 0; i < 100000; i++) {
        __asm__ volatile("cpop %0, %0\n sh1add %1, %1, %1" : "+r"(x), "+r"(b));
        x += b;
    }
    return (int)(x & 0xff) + core;
}
"""
    result, run = run_to_end(program_for(source, tmp_path, words=[5]))
    isa = machine_cluster(run, 1).cores[0].native.isa
    assert isa.episodes < 100, f"{isa.episodes} interpreter runs for 100,000 passes"
    x, b = 5, 1
    for _ in range(100000):
        x = bin(x).count("1")
        b = (3 * b) & MASK
        x = (x + b) & MASK
    assert result.code == x & 0xFF
