"""Lesson 40, "The X280's own instructions": its program prints what the lesson shows, the
page shows its files as they are, the thread uses the instructions the lesson names, and
its common mistakes behave as it says."""

import struct

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import assert_page_shows, run_program, variant

LESSON = ROOT / "tutorial" / "40_the_x280s_own_instructions"
THREAD = LESSON / "thread" / "bits_and_halves.c"
PAGE = ROOT / "docs" / "40_the_x280s_own_instructions.md"
EXPECTED = (
    "set bits in 1024 words: 32837\n"
    "the half-precision dot product: 64.5\n"
    "as Python rounds it, step by step: 64.5\n"
)


def page() -> str:
    return PAGE.read_text()


def test_the_program_prints_what_the_lesson_shows():
    done = run_program(LESSON)
    assert done.stdout == EXPECTED
    assert_page_shows(page(), LESSON / "program.py", THREAD, output=EXPECTED)


def _load(source, monkeypatch, flags=None):
    if flags is not None:
        monkeypatch.setenv("KMX_CFLAGS", flags)
    program = km.Program("lesson40", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[source], regions={"words": 64, "a": 64, "b": 64})
    with km.Session() as session:
        run = session.load(program)
        try:
            return run.thread_result(timeout=30), run
        finally:
            run.stop()


def _instructions(image):
    """The 32-bit instructions of IMAGE's code, as compiled (before the loader's rewrites)."""
    from tests.threads import compiled_instructions

    return compiled_instructions(image)


CPOP = lambda i: i & 0xFFF0_707F == 0x6020_1013  # noqa: E731  (cpop: OP-IMM, funct3 1, imm 0x602)
FLH = lambda i: i & 0x707F == 0x1007  # noqa: E731
FMADD_H = lambda i: i & 0x0600_007F == 0x0400_0043  # noqa: E731  (fmadd, fmt 10: half)
SH1ADD = lambda i: i & 0xFE00_707F == 0x2000_2033  # noqa: E731
VSETVLI = lambda i: i & 0x8000_707F == 0x0000_7057  # noqa: E731
VREDSUM_VS = lambda i: i & 0xFC00_707F == 0x0000_2057  # noqa: E731  (OPMVV, funct6 0)
VFMUL_VV = lambda i: i & 0xFC00_707F == 0x9000_1057  # noqa: E731  (OPFVV, funct6 0x24)
VFREDOSUM_VS = lambda i: i & 0xFC00_707F == 0x0C00_1057  # noqa: E731  (OPFVV, funct6 3)
PRAGMA = "#pragma clang loop vectorize(disable)\n"


def test_the_thread_runs_the_instructions_the_lesson_names(monkeypatch):
    """The compiled loops are cpop, flh, fmadd.h and sh1add, as the lesson says, and the
    simulator runs them (the engine lacks them: they trap, or the loader rewrote them):
    the pragma keeps them scalar."""
    from tests.threads import machine_cluster

    result, run = _load(THREAD, monkeypatch)
    assert result.code == 0
    cluster = machine_cluster(run, 1)
    found = _instructions(cluster.image)
    for name, matches in (("cpop", CPOP), ("flh", FLH), ("fmadd.h", FMADD_H), ("sh1add", SH1ADD)):
        assert any(matches(i) for i in found), f"no {name} in the compiled thread"
        assert f"`{name}`" in page()
    assert cluster.cores[0].native.isa.traps > 0
    assert THREAD.read_text().count(PRAGMA) == 2 and f"`{PRAGMA.strip()}`" in page()


def _halves(a, b, fused):
    """The dot product of A and B a step at a time, each step's sum rounded to a half, the
    product first rounded too unless FUSED."""
    dot = 0.0
    for x, y in zip(a.astype(float), b.astype(float)):
        product = x * y if fused else struct.unpack("<e", struct.pack("<e", x * y))[0]
        dot = struct.unpack("<e", struct.pack("<e", dot + product))[0]
    return dot


def test_without_the_pragma_the_loops_are_vector_code_and_round_as_the_lesson_says(tmp_path):
    source = tmp_path / "vectorised.c"
    source.write_text(THREAD.read_text().replace(PRAGMA, ""))
    rng = np.random.default_rng(0)  # (the page's numbers)
    a, b = rng.uniform(-2, 2, 256).astype(np.float16), rng.uniform(-2, 2, 256).astype(np.float16)
    words = np.random.default_rng(1).integers(0, 2**64, 1000, dtype=np.uint64)
    results, runs = {}, {}
    for name, path in (("vector", source), ("scalar", THREAD)):
        program = km.Program("lesson40", kernels=LESSON / "kernels")
        program.thread(cluster=1, sources=[path], regions={"words": words, "a": a, "b": b})
        with km.Session() as session:
            run = session.load(program)
            results[name], runs[name] = run.thread_result(timeout=30), run
            run.stop()
    result, scalar = results["vector"], results["scalar"]
    from tests.threads import machine_cluster

    found = _instructions(machine_cluster(runs["vector"], 1).image)
    assert any(VSETVLI(i) for i in found)
    for name, matches in (("vredsum.vs", VREDSUM_VS), ("vfmul.vv", VFMUL_VV), ("vfredosum.vs", VFREDOSUM_VS)):
        assert any(matches(i) for i in found), f"no {name} in the vectorised thread"
        assert f"`{name}`" in page()
    assert not any(CPOP(i) for i in found) and not any(FMADD_H(i) for i in found)
    assert int(result.words[0]) | int(result.words[1]) << 32 == sum(bin(int(w)).count("1") for w in words)
    dot = float(np.array([result.words[2]], dtype=np.uint16).view(np.float16)[0])
    assert dot == _halves(a, b, fused=False) == 47.25
    assert float(np.array([scalar.words[2]], dtype=np.uint16).view(np.float16)[0]) == _halves(a, b, fused=True) == 47.28125
    assert scalar.words[:2].tolist() == result.words[:2].tolist()
    assert "the vector loop gives 47.25 where the scalar one gives 47.28125" in page()
    assert "`np.random.default_rng(0)`" in page()
    lesson = np.linspace(-1.0, 1.0, 256).astype(np.float16), np.linspace(0.5, 2.0, 256).astype(np.float16)
    assert _halves(*lesson, fused=False) == _halves(*lesson, fused=True) == 64.5


@pytest.mark.parametrize("flags, said", [
    ("-march=rv64gc_zbs", "km.CompileError: KMX_CFLAGS asks for -march=rv64gc_zbs: the extension zbs (single-bit "
                          "instructions), which the X280 does not have. "),
    ("-march=rv64gcv_zvbb", "the extension zvbb (vector basic bit manipulation), which the X280 does not have"),
])
def test_a_target_the_lesson_warns_of_is_refused_as_it_says(monkeypatch, flags, said):
    with pytest.raises(km.CompileError) as error:
        _load(THREAD, monkeypatch, flags)
    assert said.removeprefix("km.CompileError: ") in str(error.value)
    assert said in page()


@pytest.mark.parametrize("flags", ["-march=rv64gc_zba_zbb_zfh", "-mcpu=sifive_x280-v"])
def test_the_x280_without_v_builds_as_the_lesson_says(tmp_path, monkeypatch, flags):
    """Without its vector unit, the thread without the pragma is scalar code too."""
    from tests.threads import machine_cluster

    source = tmp_path / "vectorised.c"
    source.write_text(THREAD.read_text().replace(PRAGMA, ""))
    result, run = _load(source, monkeypatch, flags)
    assert result.code == 0
    found = _instructions(machine_cluster(run, 1).image)
    assert any(CPOP(i) for i in found) and not any(VSETVLI(i) for i in found)  # (the runtime's too)
    assert f"`{flags}`" in page()


def test_an_instruction_the_x280_lacks_does_not_assemble_and_as_a_word_is_a_fault(tmp_path, monkeypatch):
    old = "    kmx_invalidate(0);\n"
    (tmp_path / "name").mkdir()
    (tmp_path / "word").mkdir()
    by_name = variant(tmp_path / "name", THREAD, old, '    __asm__ volatile("bset a0, a0, a1");\n' + old)
    with pytest.raises(km.CompileError):
        _load(by_name, monkeypatch)
    as_word = variant(tmp_path / "word", THREAD, old, '    __asm__ volatile(".word 0x28b51533");\n' + old)
    with pytest.raises(km.ThreadFault) as fault:
        _load(as_word, monkeypatch)
    message = ("an instruction of Zbs (single-bit instructions: bset, instruction 0x28b51533), which the X280 "
               "does not have")
    assert message in str(fault.value) and message in page()
    assert fault.value.line == 15


def test_ctz_of_zero_is_64_as_the_lesson_says(tmp_path, monkeypatch):
    old = "    kmx_invalidate(0);\n"
    source = variant(tmp_path, THREAD, old, '    { uint64_t z = 0, n; __asm__ volatile("ctz %0, %1" : "=r"(n) : "r"(z));'
                                            ' if (n != 64) return 7; }\n' + old)
    result, _ = _load(source, monkeypatch)
    assert result.code == 0
    assert "The instructions themselves give 64" in page()


# -- the second half: bfloat16 rows in, int8 out ------------------------------------------------

QUANTIZE = LESSON / "thread" / "quantize.c"
QUANTIZE_EXPECTED = (
    "8 rows of 1000 bfloat16s to int8, scale 42.3333\n"
    "row 0 starts -1.14062, -1.07031, -0.757812, 0.769531 -> -48, -45, -32, 33\n"
    "clipped to -128 or 127: 19 of 8000\n"
    "the same as numpy's: True\n"
)
VFWCVTBF16 = lambda i: i & 0xFC0F_F07F == 0x4806_9057  # noqa: E731  (VFUNARY0, vs1 13; any vm)
SF_VFNRCLIP_X = lambda i: i & 0xFC00_707F == 0x8C00_505B  # noqa: E731  (custom-2, OPFVF, funct6 0x23)


def test_the_quantize_program_prints_what_the_lesson_shows():
    done = run_program(LESSON, "quantize.py")
    assert done.stdout == QUANTIZE_EXPECTED
    assert_page_shows(page(), LESSON / "quantize.py", QUANTIZE, output=QUANTIZE_EXPECTED)
    assert "the 19 numbers beyond about ±3 clip" in page() and "With a scale of 127/3" in page()


def _quantize_program(source=QUANTIZE, n=256):
    from tests.lessons import one_thread_program

    rows = np.arange(n, dtype=np.uint16) | np.uint16(0x3F00)  # (0.5 to 1)
    return one_thread_program(LESSON, source, regions={"rows": rows, "quantized": n},
                              words=[int(np.array([np.float32(100.0)]).view(np.uint32)[0])])


def test_the_quantize_thread_runs_the_two_extensions_instructions():
    from tests.threads import machine_cluster, run_to_end

    result, run = run_to_end(_quantize_program())
    assert result.code == 0
    found = _instructions(machine_cluster(run, 1).image)
    assert any(VFWCVTBF16(i) for i in found), "no vfwcvtbf16.f.f.v in the compiled thread"
    assert any(SF_VFNRCLIP_X(i) for i in found), "no sf.vfnrclip.x.f.qf in the compiled thread"
    for name in ("vfwcvtbf16.f.f.v", "vfncvtbf16.f.f.w", "sf.vfnrclip.x.f.qf", "sf.vfnrclip.xu.f.qf"):
        assert f"`{name}`" in page()
    assert ("One element count `vl` serves all three widths: an int8 group of LMUL 1 holds 64 elements, as do a "
            "bfloat16 group of LMUL 2 and a `float` group of LMUL 4") in page()


def test_the_quantize_mistakes_behave_as_the_lesson_says(monkeypatch, tmp_path):
    from tests.threads import run_to_end

    monkeypatch.setenv("KMX_CFLAGS", "-mcpu=sifive_x280")
    with pytest.raises(km.CompileError) as error:
        run_to_end(_quantize_program())
    said = "error: builtin requires at least one of the following extensions: zvfbfmin"
    assert said in str(error.value) and f"`{said}`" in page()
    monkeypatch.setenv("KMX_CFLAGS", "-march=rv64gcv_zvfbfwma")
    with pytest.raises(km.CompileError) as error:
        run_to_end(_quantize_program())
    said = "the extension zvfbfwma (vector BF16 widening multiply-add), which the X280 does not have"
    assert said in str(error.value) and f"`{said}`" in page()
    assert '`KMX_CFLAGS="-march=rv64gcv_zvfbfwma"`' in page()
    monkeypatch.delenv("KMX_CFLAGS")
    # (a cast truncates: the page's example, from the program's first row)
    x, scale = np.float32(0.769531), np.float32(127 / 3)
    assert f"{x * scale:.2f}" == "32.58" and int(x * scale) == 32 and np.rint(x * scale) == 33
    assert "0.769531 times the scale is 32.58, which the cast makes 32 and the X280 33" in page()
    # (truncating to bfloat16 and rounding it to nearest even differ in about half of all numbers)
    bits = np.random.default_rng(0).integers(0, 2**32, 100000, dtype=np.uint64)
    rne = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    assert 0.45 < float(np.mean(rne != bits >> 16)) < 0.55
    # (under another element width, the widening is refused and named)
    wrong = variant(tmp_path, QUANTIZE, "    kmx_invalidate(0);\n",
                    '    __asm__ volatile(".option push\\n.option arch, +v, +zvfbfmin\\n vsetivli zero, 4, e32, m1, ta, ma\\n'
                    ' vfwcvtbf16.f.f.v v8, v16\\n .option pop\\n" ::: "v8", "v9", "v16");\n    kmx_invalidate(0);\n')
    with pytest.raises(km.ThreadFault) as fault:
        run_to_end(_quantize_program(wrong))
    message = str(fault.value)
    assert "a vector instruction (vfwcvtbf16.f.f.v, instruction 0x" in message
    assert ") that the vector unit refuses (vl 4, vtype e32, m1, ta, ma)" in message
    assert ("`a vector instruction (vfwcvtbf16.f.f.v, ...) that the vector unit refuses (vl 4, vtype e32, m1, ta, "
            "ma)`") in page()
