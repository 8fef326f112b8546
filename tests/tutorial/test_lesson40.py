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
