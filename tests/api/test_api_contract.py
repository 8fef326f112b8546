"""What the API promises, apart from the machine: the same calls over a fake backend
(tests/fake_backend.py), with no compiler and no cores. Result order, the stop and read
rules, errors, warnings, and the seam's use (what the session hands the backend, and what
it does with what comes back)."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest

import komorebi as km
from tests.fake_backend import FakeBackend, Script, fault, result

from komorebi._records import Output


@pytest.fixture
def program(tmp_path):
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    source = tmp_path / "thread.c"
    source.write_text("/* never compiled: the backend is a fake */\n")
    p = km.Program("contract", kernels=kernels)
    p.thread(cluster=1, sources=[source], regions={"numbers": np.arange(8, dtype=np.uint8), "out": 16},
             words=[7], cores=2)
    return p


def _session(backend: FakeBackend, **options) -> km.Session:
    return km.Session(backend=backend, **options)


def test_the_session_hands_the_backend_the_program_and_its_options(program):
    backend = FakeBackend()
    with _session(backend, coherence="strict", quantum=50, schedule_seed=3, output_limit=10) as session:
        run = session.load(program)
        run.thread_result(timeout=1)
    [machine] = backend.loads
    assert machine.started and machine.stopped
    spec = machine.threads[1]
    assert (spec.cluster, spec.cores, spec.words, [name for name, _ in spec.regions]) == (1, 2, (7,), ["numbers", "out"])
    assert (machine.options.coherence, machine.options.quantum, machine.options.schedule_seed,
            machine.options.output_limit) == ("strict", 50, 3, 10)


def test_results_come_in_order_then_nothing_more(program):
    backend = FakeBackend({1: Script([result(1), result(2), result(3, final=True, code=4)])})
    with _session(backend) as session:
        run = session.load(program)
        got = [run.thread_result(timeout=1) for _ in range(3)]
        assert [r.words[0] for r in got] == [1, 2, 3]
        assert [r.final for r in got] == [False, False, True]
        assert (got[0].code, got[2].code) == (None, 4)
        with pytest.raises(RuntimeError, match="has ended and its final result was already returned"):
            run.thread_result(timeout=1)


def test_a_stopped_runs_schedule_comes_from_the_backend(program):
    backend = FakeBackend({1: Script([result(1, final=True, code=0)])})
    with _session(backend, quantum=700) as session:
        run = session.load(program)
        run.thread_result(timeout=1)
        with pytest.raises(RuntimeError, match="run.schedule"):
            run.schedule  # (not before stop)
        run.stop()
        assert run.schedule == km.Schedule(turns=(), quantum=700)


def test_a_thread_that_hands_nothing_times_out_saying_where_its_cores_are(program):
    backend = FakeBackend({1: Script([])})
    with _session(backend) as session:
        run = session.load(program)
        with pytest.raises(TimeoutError) as caught:
            run.thread_result(timeout=0.05)
        assert str(caught.value).split("\n") == [
            "the thread on cluster 1 handed no result in 0.05 s",
            "  core 0: running, at thread.c:9 (pc 0x400030000040)",
            "  core 1: running, at thread.c:9 (pc 0x400030000040)",
        ]
        run.stop()
        with pytest.raises(RuntimeError, match="stopped before the thread on cluster 1 handed another result"):
            run.thread_result(timeout=None)


def test_a_fault_is_the_same_thread_fault_every_time(program):
    backend = FakeBackend({1: Script([fault(1)])})
    with _session(backend) as session:
        run = session.load(program)
        with pytest.raises(km.ThreadFault) as first:
            run.thread_result(timeout=1)
        with pytest.raises(km.ThreadFault) as second:
            run.thread_result(timeout=1)
        assert first.value is second.value is run.thread.fault
        assert (first.value.cluster, first.value.file, first.value.line) == (1, "thread.c", 5)
        assert "crashed at thread.c:5" in str(first.value)
        assert first.value.category is km.Category.MISTAKE and str(first.value).startswith("the thread's mistake: ")


def test_regions_are_read_after_stop_as_new_arrays(program):
    backend = FakeBackend({1: Script(regions={"out": np.full(16, 3, np.uint8)})})
    with _session(backend) as session:
        run = session.load(program)
        with pytest.raises(RuntimeError, match="regions are read after run.stop()"):
            run.thread.read("out")
        run.stop()
        out = run.thread.read("out")
        out[:] = 9  # the caller's own array
        assert run.thread.read("out").tolist() == [3] * 16
        assert run.thread.read("numbers").tolist() == list(range(8))
        with pytest.raises(KeyError, match=r"no region 'nope' on cluster 1; its regions are \['numbers', 'out'\]"):
            run.thread.read("nope")
        with pytest.raises(TypeError, match="name must be a region name"):
            run.thread.read(3)


def test_stop_is_idempotent_and_findings_warn_at_their_source_line(program):
    finding = km.Finding("read-before-invalidate", 1, 0, "numbers", 0, 0, 8, "thread.c", 12, "core 0 read ...")
    backend = FakeBackend(findings=[finding])
    with _session(backend) as session:
        run = session.load(program)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run.stop()
            run.stop()
    coherence = [w for w in caught if w.category is km.CoherenceWarning]
    said = "unpredictable on a card: core 0 read ..."  # (a finding's category's words first)
    assert [(w.filename, w.lineno, str(w.message)) for w in coherence] == [("thread.c", 12, said)]
    assert coherence[0].message.category is km.Category.UNPREDICTABLE and coherence[0].message.finding == finding
    assert run.findings == [finding] and str(finding) == f"thread.c:12: {said}"


def test_the_compilers_warnings_point_at_the_callers_load(program):
    backend = FakeBackend(warnings="thread.c:3:5: warning: unused variable 'x'")
    with pytest.warns(km.CompileWarning, match="unused variable") as said:
        with _session(backend) as session:
            session.load(program).stop()
    assert [w.filename for w in said if w.category is km.CompileWarning] == [__file__]


def test_the_hosts_output_trouble_is_an_output_warning_at_stop(program):
    backend = FakeBackend({1: Script(output=Output("a\n", 2, BrokenPipeError(32, "Broken pipe")))})
    with _session(backend) as session:
        run = session.load(program)
        with pytest.warns(km.OutputWarning, match="cluster 1 printed could not all be written"):
            run.stop()
    assert (run.thread.output, run.thread.output_dropped) == ("a\n", 2)


def test_a_closed_session_loads_nothing_and_close_stops_its_runs(program):
    backend = FakeBackend({1: Script([])})
    session = _session(backend)
    run = session.load(program)
    session.close()
    assert run.stopped and backend.loads[0].stopped
    with pytest.raises(ValueError, match="the session is closed"):
        session.load(program)


def test_a_dropped_run_is_abandoned(program):
    backend = FakeBackend({1: Script([])})
    session = _session(backend)
    session.load(program)
    gc.collect()
    assert backend.loads[0].abandoned
    session.close()


def test_the_picture_draws_what_the_backend_hands(program):
    with _session(FakeBackend()) as session:
        run = session.load(program)
        with pytest.raises(RuntimeError, match="comes after run.stop()"):
            run.cache_report()
        run.stop()
    report = run.cache_report()
    assert "cluster 1, region 'numbers' (ID 0, 8 bytes, 1 line, card mode)" in report
    assert "cluster 1, region 'out' (ID 1, 16 bytes, 1 line, card mode)" in report


def test_run_thread_and_threads_name_the_clusters(tmp_path, program):
    source = tmp_path / "thread.c"
    program.thread(cluster=3, sources=[source])
    with _session(FakeBackend()) as session:
        run = session.load(program)
        with pytest.raises(ValueError, match=r"threads on clusters \[1, 3\]; use run.threads\[cluster\]"):
            run.thread
        with pytest.raises(KeyError, match="no thread on cluster 2"):
            run.threads[2]
        assert run.thread_result(timeout=1, cluster=3).final
        with pytest.raises(TypeError, match="cluster must be an int"):
            run.thread_result(timeout=1, cluster="3")
