"""Lesson 41, "Vectors": its program prints what the lesson shows, the page shows its files
as they are, the thread is the vector code the lesson names, and its common mistakes
behave as it says."""

import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import assert_page_shows, run_program, variant
from tests.tutorial.test_lesson40 import _instructions
from tests.threads import machine_cluster

LESSON = ROOT / "tutorial" / "41_vectors"
THREAD = LESSON / "thread" / "double.c"
PAGE = ROOT / "docs" / "41_vectors.md"
EXPECTED_START = (
    "8 passes, the last of 104 numbers\n"
    "first five doubled: [0.0, 2.0, 4.0, 6.0, 8.0]\n"
    "the sum of the doubled numbers: 999000\n"
    "cluster 1, region 'numbers' (ID 0, 4000 bytes, 63 lines, card mode)\n"
    f"  {'f' * 63}\n"
    "  63 fresh from DRAM\n"
    "cluster 1, region 'doubled' (ID 1, 4000 bytes, 63 lines, card mode)\n"
    f"  {'w' * 63}\n"
    "  63 written and flushed\n"
)


def page() -> str:
    return PAGE.read_text()


def test_the_program_prints_what_the_lesson_shows():
    done = run_program(LESSON)
    assert done.stdout.startswith(EXPECTED_START)
    assert_page_shows(page(), LESSON / "program.py", THREAD, output=done.stdout)


def _run(source, monkeypatch, flags=None):
    import numpy as np

    if flags is not None:
        monkeypatch.setenv("KMX_CFLAGS", flags)
    numbers = np.arange(1000, dtype=np.float32)
    program = km.Program("lesson41", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[source], regions={"numbers": numbers, "doubled": numbers.nbytes})
    with km.Session() as session:
        run = session.load(program)
        try:
            return run.thread_result(timeout=30), run
        finally:
            run.stop()


def _op_v(funct6: int, funct3: int):
    return lambda i: i & 0x7F == 0x57 and (i >> 12) & 7 == funct3 and i >> 26 == funct6


VSETVLI = lambda i: i & 0x8000_707F == 0x0000_7057  # noqa: E731
VLE32 = lambda i: i & 0x1DF0_707F == 0x0000_6007  # noqa: E731  (unit-stride load, width 6: 32 bits)
VSE32 = lambda i: i & 0x1DF0_707F == 0x0000_6027  # noqa: E731
VFMUL_VF = _op_v(0x24, 5)
VFREDUSUM = _op_v(0x01, 1)


def test_the_thread_is_the_vector_code_the_lesson_names(monkeypatch):
    result, run = _run(THREAD, monkeypatch)
    assert result.code == 0 and list(result.words[:3]) == [8, 104, 999000]
    found = _instructions(machine_cluster(run, 1).image)
    for name, matches in (("vsetvli", VSETVLI), ("vle32.v", VLE32), ("vfmul.vf", VFMUL_VF), ("vse32.v", VSE32),
                          ("vfredusum.vs", VFREDUSUM)):
        assert any(matches(i) for i in found), f"no {name} in the compiled thread"
    assert machine_cluster(run, 1).cores[0].native.isa.traps > 0  # (the engine lacks them: the unit ran them)


def test_a_missing_invalidate_is_found_at_the_vector_loads_line(tmp_path, monkeypatch):
    source = variant(tmp_path, THREAD, "    kmx_invalidate(0);\n", "")
    with pytest.warns(km.CoherenceWarning, match=r"read region 'numbers' \(all 4000 bytes\) at line 20 before"):
        _, run = _run(source, monkeypatch)
    assert "read-before-invalidate in region 'numbers' (bytes 0 to 3999) at double.c:20" in run.cache_report()
    assert "s" * 63 in run.cache_report()
    assert "at line 20 before the thread invalidated it." in page()


def test_taking_the_whole_register_runs_past_the_region_and_faults_at_the_load(tmp_path, monkeypatch):
    source = variant(tmp_path, THREAD, "vl = __riscv_vsetvl_e32m8(count - i);", "vl = __riscv_vsetvlmax_e32m8();")
    with pytest.raises(km.ThreadFault) as fault:
        _run(source, monkeypatch)
    text = str(fault.value)
    assert "double.c:21" in text and "past the end of region 'numbers'" in text
    assert "element 104 of vle32.v (vl 128, vtype e32, m8, ta, ma)" in text
    assert "element 104 of vle32.v" in page()


def test_compiling_without_the_vector_unit_is_refused_as_the_lesson_says(monkeypatch):
    with pytest.raises(km.CompileError) as error:
        _run(THREAD, monkeypatch, "-march=rv64gc")
    said = "error: RISC-V type 'vfloat32m1_t' (aka '__rvv_float32m1_t') requires the 'zve32f' extension"
    assert said in str(error.value) and said in page()
