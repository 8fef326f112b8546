"""Lesson 36, "Twelve cores": its program prints what the lesson shows, and its common
mistakes behave as the lesson says."""

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import assert_page_shows, run_program, twelve_cores_program, variant, wide

LESSON = ROOT / "tutorial" / "36_twelve_cores"
SQUARES = LESSON / "thread" / "squares.c"
PAGE = ROOT / "docs" / "36_twelve_cores.md"
CLUSTERS = [1, 2, 3]
EXPECTED = (
    "cluster 1: numbers 0 to 4095, at 0x400034500000\n"
    "  squares 0 to 16769025\n"
    "  each core's sum: [357389824, 2503824896, 6797743616, 13239145984]\n"
    "  core 0's total: 22898104320, codes (0, 0, 0, 0)\n"
    "cluster 2: numbers 4096 to 8191, at 0x400034500000\n"
    "  squares 16777216 to 67092481\n"
    "  each core's sum: [21828032000, 32564401664, 45448254976, 60479591936]\n"
    "  core 0's total: 160320280576, codes (0, 0, 0, 0)\n"
    "cluster 3: numbers 8192 to 12287, at 0x4000b4500000\n"
    "  squares 67108864 to 150970369\n"
    "  each core's sum: [77658412544, 96984716800, 118458504704, 142079776256]\n"
    "  core 0's total: 435181410304, codes (0, 0, 0, 0)\n"
    "the twelve cores together: 618399795200\n"
)
CLUSTER_1_SUMS = [357389824, 2503824896, 6797743616, 13239145984]
CLUSTER_1_TOTAL = 22898104320


def page() -> str:
    return PAGE.read_text()


def test_program_prints_the_lessons_output():
    assert run_program(LESSON).stdout == EXPECTED


def test_lesson_page_shows_the_program_and_the_output():
    text = page()
    assert_page_shows(text, LESSON / "program.py", SQUARES, output=EXPECTED)
    assert text.startswith("Part 5. X280 threads · lesson 36 (lessons 32 to 46)\n\n# 36. Twelve cores\n")


def run_lesson(source=SQUARES, **session):
    """Each cluster's result (or fault), and each cluster's squares."""
    results = {}
    with km.Session(**session) as s:
        run = s.load(twelve_cores_program(source))
        for c in CLUSTERS:
            try:
                results[c] = run.thread_result(timeout=10.0, cluster=c)
            except km.ThreadFault as fault:
                results[c] = fault
        run.stop()
        squares = {c: run.threads[c].read("squares").view(np.uint32) for c in CLUSTERS}
    return results, squares


def test_each_cluster_has_its_own_memory_at_the_same_address():
    results, squares = run_lesson()
    where = {c: wide(results[c].words, 10) for c in CLUSTERS}
    assert where[1] == where[2]  # the same address: D6 on cluster 1, D7 on cluster 2
    assert where[3] == where[2] + 0x8000_0000  # cluster 3's half of D7
    for k, c in enumerate(CLUSTERS):
        numbers = np.arange(4096 * k, 4096 * (k + 1), dtype=np.uint32)
        assert (squares[c] == numbers * numbers).all()
        assert results[c].codes == (0, 0, 0, 0) and results[c].code == 0


@pytest.mark.parametrize("quantum, seed", [(10, 0), (10, 8), (1000, 3)])
def test_other_turns_give_the_same_answers(quantum, seed):
    usual, _ = run_lesson()
    other, squares = run_lesson(quantum=quantum, schedule_seed=seed)
    for k, c in enumerate(CLUSTERS):
        assert other[c].words.tolist() == usual[c].words.tolist()
        numbers = np.arange(4096 * k, 4096 * (k + 1), dtype=np.uint32)
        assert (squares[c] == numbers * numbers).all()
    assert "`km.Session(quantum=N, schedule_seed=S)`" in page()


def test_the_same_loop_on_every_core_counts_four_times(tmp_path):
    source = variant(
        tmp_path,
        SQUARES,
        "for (uint64_t i = first; i < end; i++) {",
        "for (uint64_t i = 0; i < count; i++) {",
    )
    with pytest.warns(km.CompileWarning, match=r"unused variable 'first' \[-Wunused-variable\]"):
        results, squares = run_lesson(source)
    words = results[1].words
    assert [wide(words, 2 * core) for core in range(4)] == [CLUSTER_1_TOTAL] * 4
    assert wide(words, 8) == 4 * CLUSTER_1_TOTAL == 91592417280
    numbers = np.arange(4096, dtype=np.uint32)
    assert (squares[1] == numbers * numbers).all()  # right, written four times over
    assert "91592417280 on cluster 1" in page()
    assert "`for (uint64_t i = 0; i < count; i++)`" in page()
    assert "`warning: unused variable 'first' [-Wunused-variable]`" in page()


def test_without_the_second_barrier_core_0_reports_too_early(tmp_path):
    text = SQUARES.read_text()
    old = "    __atomic_fetch_add(&total, sum, __ATOMIC_RELAXED);\n    kmx_barrier();\n"
    source = variant(tmp_path, SQUARES, old, "    __atomic_fetch_add(&total, sum, __ATOMIC_RELAXED);\n")
    assert text.count("kmx_barrier();") == 2 and source.read_text().count("kmx_barrier();") == 1
    with pytest.warns(km.CoherenceWarning, match="still dirty"):  # (core 0 flushed before the others wrote)
        results, _ = run_lesson(source)
    words = results[1].words
    assert [wide(words, 2 * core) for core in range(4)] == CLUSTER_1_SUMS
    assert wide(words, 8) == CLUSTER_1_SUMS[0] == 357389824
    assert results[1].code == 0
    assert "is 357389824: its own sum alone" in page()


def test_a_core_that_returns_before_a_barrier_is_a_fault(tmp_path):
    old = "    __atomic_fetch_add(&total, sum, __ATOMIC_RELAXED);\n    kmx_barrier();\n"
    new = (
        "    __atomic_fetch_add(&total, sum, __ATOMIC_RELAXED);\n"
        "    if (core == 3) {\n        return 0;\n    }\n"
        "    kmx_barrier();\n"
    )
    source = variant(tmp_path, SQUARES, old, new)
    assert source.read_text().splitlines()[32].strip() == "kmx_barrier();"
    results, _ = run_lesson(source)
    cause = (
        "kmx_barrier: core 0 waits for all 4 cores of the thread, but core 3 returned from "
        "kmx_main without reaching the barrier, so it can never complete. Every core must "
        "call kmx_barrier the same number of times."
    )
    for c in CLUSTERS:
        fault = results[c]
        assert isinstance(fault, km.ThreadFault)
        assert (fault.cluster, fault.core) == (c, 0)
        assert fault.file == str(source) and fault.line == 33
        assert fault.cause == cause
    assert f"crashed at .../thread/squares.c:33 (pc ...): {cause}" in page()
    assert "      if (core == 3) {\n          return 0;\n      }\n" in page()


def test_a_plain_add_loses_a_sum_under_other_turns(tmp_path):
    source = variant(
        tmp_path, SQUARES, "__atomic_fetch_add(&total, sum, __ATOMIC_RELAXED);", "total += sum;"
    )
    results, _ = run_lesson(source)  # the usual turns happen to be kind
    assert wide(results[1].words, 8) == CLUSTER_1_TOTAL
    results, _ = run_lesson(source, quantum=10, schedule_seed=4)
    assert wide(results[1].words, 8) == CLUSTER_1_TOTAL - CLUSTER_1_SUMS[0] == 22540714496
    results, _ = run_lesson(SQUARES, quantum=10, schedule_seed=4)  # the atomic add
    assert wide(results[1].words, 8) == CLUSTER_1_TOTAL
    assert "`km.Session(quantum=10, schedule_seed=4)`, core 0's total on cluster 1 is 22540714496, core 0's own sum short" in page()


def test_twelve_cores_in_one_thread_and_two_threads_on_one_cluster():
    program = km.Program("twelve_cores", kernels=LESSON / "kernels")
    with pytest.raises(ValueError) as caught:
        program.thread(cluster=1, sources=[SQUARES], cores=12)
    assert str(caught.value) == "cores must be 1 to 4, not 12"
    assert f"`ValueError: {caught.value}`" in page()
    program.thread(cluster=1, sources=[SQUARES], regions={"numbers": 16, "squares": 16}, cores=4)
    with pytest.raises(ValueError) as caught:
        program.thread(cluster=1, sources=[SQUARES], cores=4)
    assert str(caught.value) == (
        "cluster 1 already has a thread in program 'twelve_cores'; one thread per cluster"
    )
    assert f"`ValueError: {caught.value}`" in page()


def test_run_thread_with_three_threads_is_a_value_error():
    message = "the program has threads on clusters [1, 2, 3]; use run.threads[cluster]"
    with km.Session() as session:
        run = session.load(twelve_cores_program(SQUARES))
        with pytest.raises(ValueError) as caught:
            run.thread
        assert str(caught.value) == message
        with pytest.raises(ValueError) as caught:
            run.thread_result(timeout=10.0)
        assert str(caught.value) == message
        for c in CLUSTERS:
            assert run.thread_result(timeout=10.0, cluster=c).code == 0
        run.stop()
    assert f"`ValueError: {message}`" in page()
