"""komorebi's pytest plugin (komorebi/pytest_plugin.py), as a user's test suite meets it:
each test here writes a small project (a thread, a test file) and runs pytest on it with
pytester."""

from __future__ import annotations

import importlib.metadata
import os
import re
import textwrap
from pathlib import Path

# numpy is imported here, before any inline run: pytester undoes the imports of a run, and
# numpy cannot be loaded twice in one process (this file alone failed so)
import numpy  # noqa: F401
import pytest

pytest_plugins = ["pytester"]

# zig's cache as this process found it: pytester gives each run a HOME of its own, where
# zig would build the C library again (a minute a test).
ZIG_CACHE = os.environ.get("ZIG_GLOBAL_CACHE_DIR") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path(os.environ.get("HOME", "~")).expanduser() / ".cache") / "zig")

# A thread that writes word i of region 0 as i * 3 for its word count, flushing or not.
THREAD = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint32_t* out = (uint32_t*)kmx_region(0, 0);
    uint32_t n = kmx_word(0);
    for (uint32_t i = 0; i < n; i++) out[i] = i * 3;
    if (kmx_word(1)) kmx_flush(0);
    return kmx_word(2);
}
"""

HEADER = """
import numpy as np
import pytest
import komorebi as km
from pathlib import Path

HERE = Path(__file__).parent

def program(flush=1, code=0, n=16):
    p = km.Program("p", kernels=HERE / "kernels")
    p.thread(cluster=0, sources=[HERE / "thread.c"], regions={"out": 4096}, words=[n, flush, code])
    return p

def finish(run):
    result = run.thread_result(timeout=60)
    run.stop()
    return result
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch):
    """A user's project: a thread, a kernels folder, and a test file made from BODY."""
    monkeypatch.setenv("ZIG_GLOBAL_CACHE_DIR", ZIG_CACHE)
    # (a user's project, which leaves komorebi's warnings as warnings: this suite's own
    # configuration makes them errors, and an inline run would inherit that)
    pytester.makeini("[pytest]\nfilterwarnings =\n    default::komorebi.CoherenceWarning\n")
    (pytester.path / "kernels").mkdir()
    (pytester.path / "thread.c").write_text(THREAD)

    def make(body: str) -> pytest.Pytester:
        pytester.makepyfile(test_threads=HEADER + textwrap.dedent(body))
        return pytester

    return make


def test_the_plugin_is_installed_as_a_pytest11_entry_point():
    found = [e for e in importlib.metadata.entry_points(group="pytest11") if e.name == "komorebi"]
    assert [e.value for e in found] == ["komorebi.pytest_plugin"]


def test_a_passing_test_gets_a_session_that_is_closed_after_it(project):
    tester = project("""
        sessions = []

        def test_triples(km_session):
            sessions.append(km_session)
            run = km_session.load(program())
            assert finish(run).code == 0
            assert run.thread.read("out").view(np.uint32)[:4].tolist() == [0, 3, 6, 9]
            assert km_session.coherence == "card" and km_session.schedule_seed is None

        def test_it_was_closed():
            assert sessions[0].closed
    """)
    tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_the_marker_sets_the_sessions_arguments(project):
    tester = project("""
        @pytest.mark.komorebi(coherence="strict", schedule_seed=7, quantum=500)
        def test_strict(km_session):
            assert (km_session.coherence, km_session.schedule_seed, km_session.quantum) == ("strict", 7, 500)

        @pytest.mark.komorebi(colour="blue")
        def test_a_wrong_argument(km_session):
            pass
    """)
    result = tester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*has no argument colour; it takes coherence, schedule_seed, quantum*"])


def test_km_strict_runs_every_session_strict_so_an_unflushed_write_never_arrives(project):
    tester = project("""
        def test_unflushed(km_session):
            run = km_session.load(program(flush=0))
            finish(run)
            assert run.thread.read("out").view(np.uint32)[1] == 3
    """)
    tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)  # card mode hands it back
    strict = tester.runpytest("-p", "no:cacheprovider", "--km-strict")
    strict.assert_outcomes(failed=1)


def test_km_findings_error_fails_a_test_whose_run_had_a_finding_with_its_text(project):
    tester = project("""
        def test_unflushed(km_session):
            run = km_session.load(program(flush=0))
            finish(run)

        def test_flushed(km_session):
            run = km_session.load(program(flush=1))
            finish(run)
    """)
    quiet = tester.runpytest("-p", "no:cacheprovider")
    quiet.assert_outcomes(passed=2, warnings=1)
    loud = tester.runpytest("-p", "no:cacheprovider", "--km-findings=error")
    loud.assert_outcomes(passed=1, failed=1)
    loud.stdout.fnmatch_lines([
        "*1 coherence finding (--km-findings=error):*",
        "*thread.c:6: *kmx_flush*",
    ])


@pytest.mark.parametrize("warned", ["default", "error"])
def test_km_findings_error_shows_the_findings_of_a_test_whose_own_assert_failed_first(project, tmp_path, warned):
    """The test's own failure stays the report's, and the findings are told beside it: in
    the failure's komorebi section and in findings.txt, also when the project makes
    CoherenceWarning an error (run.stop() raises the first one)."""
    tester = project("""
        def test_wrong_code(km_session):
            run = km_session.load(program(flush=0, code=3))
            assert run.thread_result(timeout=60).code == 0, "the thread's own code"
    """)
    artifacts = tmp_path / "saved"
    result = tester.runpytest("-p", "no:cacheprovider", "--km-findings=error", f"--km-artifacts={artifacts}",
                              "-W", f"{warned}::komorebi.CoherenceWarning")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*AssertionError: the thread's own code*",
        "*- Captured komorebi call -*",
        "1 coherence finding (--km-findings=error):",
        "*thread.c:6: *Call kmx_flush(0) after the last write.",
        f"the runs' faults, findings and cache maps: {artifacts}*",
    ])
    findings = (_only(artifacts, "test_threads.py-test_wrong_code-") / "findings.txt").read_text()
    assert "thread.c:6" in findings and "kmx_flush(0)" in findings, findings


def test_km_seeds_runs_each_test_under_each_seed_with_the_seed_in_its_id(project):
    tester = project("""
        def test_seeded(km_session):
            run = km_session.load(program())
            finish(run)
            assert km_session.schedule_seed != 1, "seed 1 is the racy one"

        @pytest.mark.komorebi(schedule_seed=5)
        def test_pinned(km_session):
            assert km_session.schedule_seed == 5

        def test_without_a_session():
            pass
    """)
    result = tester.runpytest("-p", "no:cacheprovider", "--km-seeds=3", "-v")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines([
        "*test_seeded?km-seed-0? PASSED*",
        "*test_seeded?km-seed-1? FAILED*",
        "*test_seeded?km-seed-2? PASSED*",
        "*test_pinned PASSED*",
    ])


def _only(folder: Path, start: str) -> Path:
    """The one folder in FOLDER named START and a hash (8 hex digits) of the test's id."""
    found = [p for p in folder.iterdir() if re.fullmatch(re.escape(start) + "[0-9a-f]{8}", p.name)]
    assert len(found) == 1, sorted(p.name for p in folder.iterdir())
    return found[0]


def test_a_failing_test_saves_the_fault_the_findings_and_the_cache_map(project, tmp_path):
    tester = project("""
        def test_wrong_code(km_session):
            run = km_session.load(program(flush=0, code=3))
            assert finish(run).code == 0

        def test_fault(km_session):
            run = km_session.load(program(n=5000))  # past the region's 4096 bytes
            finish(run)
    """)
    artifacts = tmp_path / "saved"
    result = tester.runpytest("-p", "no:cacheprovider", f"--km-artifacts={artifacts}")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([f"*the runs' faults, findings and cache maps: {artifacts}*"])
    wrong = _only(artifacts, "test_threads.py-test_wrong_code-")
    assert sorted(p.name for p in wrong.iterdir()) == [  # (no fault: no fault file, rather than one saying "no fault")
        "findings.txt", "run-cache-map.svg", "run-cache-report.txt", "run-cluster0-output.txt",
    ]
    assert "unflushed-write" in (wrong / "findings.txt").read_text() or "kmx_flush" in (wrong / "findings.txt").read_text()
    assert (wrong / "run-cache-map.svg").read_text().startswith("<svg")
    assert "region 'out'" in (wrong / "run-cache-report.txt").read_text() or "out" in (wrong / "run-cache-report.txt").read_text()
    fault = (_only(artifacts, "test_threads.py-test_fault-") / "run-cluster0-fault.txt").read_text()
    assert "thread.c:6" in fault and "backtrace" in fault and "region 'out'" in fault


def test_the_artifacts_default_to_pytests_temporary_folder(project):
    tester = project("""
        def test_wrong_code(km_session):
            assert finish(km_session.load(program(code=3))).code == 0
    """)
    basetemp = tester.path / "temporary"
    result = tester.runpytest("-p", "no:cacheprovider", f"--basetemp={basetemp}")
    result.assert_outcomes(failed=1)
    assert (_only(basetemp / "km-artifacts", "test_threads.py-test_wrong_code-") / "run-cluster0-output.txt").exists()


# A thread that sums a frame a Tensix stand-in writes (bench/races/stale_frame.c); word 0:
# invalidate the frame again after its flag (the fix).
FRAME_THREAD = r"""
#include "kmx.h"
int kmx_main(int core) {
    const volatile uint32_t* frame = (const volatile uint32_t*)kmx_region(0, 0);
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(1, 0);
    kmx_invalidate(0);
    uint32_t header = frame[0];
    do kmx_invalidate(1); while (flags[0] != 1);
    if (kmx_word(0)) kmx_invalidate(0);
    uint32_t sum = 0;
    for (int i = 0; i < 64; i++) sum += frame[i];
    uint32_t out[2] = {sum, header};
    kmx_result(0, out, 2);
    return 0;
}
"""


def test_stand_ins_run_under_km_seeds_and_km_strict(project, pytester):
    (pytester.path / "frame.c").write_text(FRAME_THREAD)
    tester = project("""
        def tensix(noc):
            noc.write("frame", 0, np.arange(1, 65, dtype=np.uint32))
            noc.write("flags", 0, np.uint32([1]))

        @pytest.mark.parametrize("fixed", [0, 1], ids=["racy", "fixed"])
        def test_frame(km_session, fixed):
            p = km.Program("p", kernels=HERE / "kernels")
            p.thread(cluster=1, sources=[HERE / "frame.c"], regions={"frame": 256, "flags": 64}, words=[fixed])
            p.noc_agent("tensix", tensix, cluster=1)
            run = km_session.load(p)
            result = finish(run)
            assert run.agent("tensix").done
            assert int(result.words[0]) == 64 * 65 // 2
    """)
    seeds = tester.runpytest_subprocess("-p", "no:cacheprovider", "--km-seeds=6", "-v")
    lines = [line for line in seeds.stdout.lines if line.startswith("test_threads.py::")]  # (-v's, one a test)
    assert sum("fixed" in line and "PASSED" in line for line in lines) == 6, "\n".join(lines)
    failed = sum("racy" in line and "FAILED" in line for line in lines)
    assert 1 <= failed <= 5, "\n".join(lines)  # the seeds place the stand-in's write before or after the early read
    strict = tester.runpytest_subprocess("-p", "no:cacheprovider", "--km-strict", "--km-seeds=2", "-k", "fixed")
    strict.assert_outcomes(passed=2)


def _reported_folders(result) -> dict[str, Path]:
    """Each failing test's artifacts folder, as its failure's report names it."""
    folders, test = {}, None
    for line in result.stdout.lines:
        header = re.fullmatch(r"_+ (test_\S+) _+", line)
        if header:
            test = header.group(1)
        said = re.search(r"the runs' faults, findings and cache maps: (.+)$", line)
        if said and test is not None:
            folders[test] = Path(said.group(1))
    return folders


def test_ids_that_differ_only_in_what_a_folder_name_cannot_hold_get_folders_of_their_own(project, tmp_path):
    long = "x" * 250
    tester = project(f"""
        @pytest.mark.parametrize("n", [5000, 16, 5001, 17], ids=["a+b", "a-b", "{long}1", "{long}2"])
        def test_ids(km_session, n):
            run = km_session.load(program(n=n, code=3))  # (n past 1024 words: a fault)
            assert finish(run).code == 0
    """)
    artifacts = tmp_path / "saved"
    result = tester.runpytest("-p", "no:cacheprovider", f"--km-artifacts={artifacts}")
    result.assert_outcomes(failed=4)
    folders = _reported_folders(result)
    assert len(folders) == 4 and len(set(folders.values())) == 4, folders
    for test, folder in folders.items():
        fault = folder / "run-cluster0-fault.txt"
        faulted = "a+b" in test or test.endswith("1]")
        assert fault.exists() == faulted, (test, folder)  # the folder holds its own test's run
        assert not faulted or "thread.c:6" in fault.read_text()
        assert folder.parent == artifacts and len(folder.name) <= 200
        assert folder.name.startswith("test_threads.py-test_ids-")  # (readable: the id, cut, then a hash)


def test_a_timed_sessions_failure_saves_each_cores_time(project):
    tester = project("""
        @pytest.mark.komorebi(timing="x280", clock_mhz=1000)
        def test_wrong_code(km_session):
            assert (km_session.timing, km_session.clock_mhz) == ("x280", 1000.0)
            assert finish(km_session.load(program(code=3))).code == 0
    """)
    basetemp = tester.path / "temporary"
    result = tester.runpytest("-p", "no:cacheprovider", f"--basetemp={basetemp}")
    result.assert_outcomes(failed=1)
    saved = _only(basetemp / "km-artifacts", "test_threads.py-test_wrong_code-") / "run-timing.txt"
    assert saved.read_text().startswith("cluster 0 core 0: ")
    assert "us at 1000 MHz" in saved.read_text()
