"""Nothing leaked, nothing left running, nobody left waiting: what a run holds and until
when (sim.machine.card, komorebi._session). (Issue 11, items 2, 7, 8 and 10.)"""

from __future__ import annotations

import gc
import os
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import komorebi as km
from tests import processes
from tests.conftest import HANG, ROOT
from tests.threads import machine_cluster, program_for, wait_for, zig_wrapper

KERNELS = ROOT / "tutorial" / "35_sharing_memory" / "kernels"

FOREVER = '#include "kmx.h"\nint kmx_main(int core) {\n    for (;;) {\n    }\n}\n'
QUICK = '#include "kmx.h"\nint kmx_main(int core) {\n    uint64_t n;\n    uint8_t* r = kmx_region(0, &n);\n    for (uint64_t i = 0; i < n; i++) r[i] = (uint8_t)i;\n    kmx_flush(0);\n    return 3;\n}\n'


def _cluster_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("komorebi-cluster-")]


def _machine_threads() -> list[threading.Thread]:
    """The clusters' host threads, and the reapers that free dropped runs."""
    return [t for t in threading.enumerate() if t.name.startswith("komorebi-")]


def _until(condition, seconds: float = 10.0) -> bool:
    """Whether CONDITION comes true within SECONDS (a bound for a hang, not a speed)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _resident_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


# -- item 7: a run that ended holds nothing ---------------------------------------------------


def test_a_run_that_ended_frees_its_engines_and_host_thread_without_stop(tmp_path):
    program = program_for(QUICK, tmp_path, regions={"r": 4096})
    session = km.Session()
    run = session.load(program)
    assert run.thread_result(timeout=30).code == 3
    assert _until(lambda: not _cluster_threads())
    cluster = machine_cluster(run, 1)
    assert all(core.engine is None for core in cluster.cores)  # engines closed
    run.stop()  # still works: hands back nothing more, regions readable
    assert run.thread.read("r")[:5].tolist() == [0, 1, 2, 3, 4]
    session.close()


@pytest.mark.slow
@pytest.mark.parametrize("stop", [False, True], ids=["never stopped", "stopped"])
def test_a_sessions_memory_and_files_stay_flat_over_many_loads(tmp_path, stop):
    program = program_for(QUICK, tmp_path, regions={"r": 1 << 20, "s": np.ones(1 << 18, np.uint8)})
    session = km.Session()

    def load_and_drop(times: int) -> None:
        for _ in range(times):
            run = session.load(program)
            assert run.thread_result(timeout=30).code == 3
            if stop:
                run.stop()

    load_and_drop(30)  # warm: the build, the hooks, the allocator
    gc.collect()
    memory, fds = _resident_mib(), _open_fds()
    load_and_drop(400)
    assert _until(lambda: not _machine_threads())
    grown = _resident_mib() - memory
    assert grown < 48, f"resident memory grew {grown:.0f} MiB over 400 loads"
    assert _open_fds() - fds <= 8
    session.close()


# -- item 8: nothing unreachable keeps running ------------------------------------------------


def test_a_dropped_run_of_a_thread_that_never_ends_is_stopped(tmp_path):
    program = program_for(FOREVER, tmp_path)
    session = km.Session()
    run = session.load(program)
    assert _until(lambda: len(_cluster_threads()) == 1)
    del run
    gc.collect()
    assert _until(lambda: not _cluster_threads()), "the dropped run still runs"
    session.close()


def test_a_dropped_session_and_run_stop(tmp_path):
    program = program_for(FOREVER, tmp_path)
    km.Session().load(program)  # nothing keeps either
    gc.collect()
    assert _until(lambda: not _cluster_threads())


def test_a_thread_kept_keeps_its_run_going(tmp_path):
    program = program_for(FOREVER, tmp_path)
    session = km.Session()
    thread = session.load(program).thread
    gc.collect()
    # (a dropped run's finalizer abandons its card at once, and its host threads stop
    # after: that it has not run is seen now, with nothing to wait for)
    assert not thread._loaded.machine._card._abandoned
    assert len(_cluster_threads()) == 1
    with pytest.raises(TimeoutError):
        thread.result(timeout=0)
    session.close()  # the session still knows the run
    assert _until(lambda: not _cluster_threads())


def test_a_close_during_a_load_leaves_nothing_running(tmp_path, monkeypatch):
    started = tmp_path / "compiling"
    monkeypatch.setenv("KMX_CC", str(zig_wrapper(tmp_path, before=f"touch {started}; sleep 0.5")))
    monkeypatch.setenv("KMX_CACHE_DIR", str(tmp_path / "cache"))
    program = program_for(FOREVER, tmp_path)
    session = km.Session()
    outcome = {}

    def load() -> None:
        try:
            outcome["run"] = session.load(program)
        except ValueError as error:
            outcome["error"] = error

    loader = threading.Thread(target=load)
    loader.start()
    wait_for(started.exists, "the load's first compile")  # (the close comes during the load)
    session.close()
    loader.join(60)
    assert not loader.is_alive()
    assert "closed" in str(outcome.get("error", "")) or outcome["run"].stopped
    assert _until(lambda: not _cluster_threads()), "the run loaded during close() still runs"


# -- item 10: every waiter wakes ----------------------------------------------------------------


def _two_waiters(run: km.Run) -> list:
    """What two Python threads waiting for RUN's next result at once got: a result or
    what was raised, each."""
    got: list = []

    def wait() -> None:
        try:
            got.append(run.thread_result(timeout=None))
        except Exception as error:  # noqa: BLE001 - the test looks at it
            got.append(error)

    waiters = [threading.Thread(target=wait) for _ in range(2)]
    for waiter in waiters:
        waiter.start()
    for waiter in waiters:
        waiter.join(30)
    assert not any(w.is_alive() for w in waiters), "a waiter still waits"
    return got


SLOW_THEN = '#include "kmx.h"\nint kmx_main(int core) {\n    volatile uint64_t x = 0;\n    for (uint64_t i = 0; i < 3000000; i++) x += i;\n    return %s;\n}\n'


def test_a_second_waiter_wakes_when_another_took_the_final_result(tmp_path):
    with km.Session() as session:
        run = session.load(program_for(SLOW_THEN % "4", tmp_path))
        got = _two_waiters(run)
        results = [g for g in got if isinstance(g, km.ThreadResult)]
        errors = [g for g in got if not isinstance(g, km.ThreadResult)]
        assert len(results) == 1 and results[0].code == 4
        assert len(errors) == 1 and isinstance(errors[0], RuntimeError)
        assert "has ended and its final result was already returned" in str(errors[0])
        run.stop()
        with pytest.raises(RuntimeError, match="already returned"):  # not "stopped before"
            run.thread_result(timeout=None)


def test_a_second_waiter_of_a_faulting_thread_gets_the_same_fault(tmp_path):
    with km.Session() as session:
        run = session.load(program_for(SLOW_THEN % "*(volatile int*)0", tmp_path))
        got = _two_waiters(run)
        assert len(got) == 2 and got[0] is got[1] and isinstance(got[0], km.ThreadFault)
        run.stop()


# -- item 2: a forked child never writes the parent's memory ---------------------------------


def test_a_forked_child_does_not_write_the_parents_region(tmp_path):
    source = tmp_path / "thread.c"
    source.write_text(textwrap.dedent("""
        #include "kmx.h"
        int kmx_main(int core) {
            uint64_t n;
            uint8_t* r = kmx_region(0, &n);
            for (uint64_t i = 0; i < n; i++) r[i] = 1;
            kmx_flush(0);
            kmx_submit();                       /* Python forks here */
            volatile uint64_t x = 0;
            for (uint64_t i = 0; i < 20000000; i++) x += i;
            for (uint64_t i = 0; i < n; i++) r[i] = 0;
            kmx_flush(0);
            return 0;
        }
    """))
    script = textwrap.dedent(f"""
        import os, sys, warnings
        sys.path.insert(0, {str(ROOT)!r})
        import numpy as np
        import komorebi as km
        warnings.simplefilter("ignore")
        p = km.Program("fork", kernels={str(KERNELS)!r})
        p.thread(cluster=0, sources=[{str(source)!r}], regions={{"r": 1 << 20}})
        with km.Session() as s:
            run = s.load(p)
            run.thread_result(timeout=30)       # the region is all 1s now
            pid = os.fork()
            if pid == 0:
                sys.exit(0)                     # the child only exits
            os.waitpid(pid, 0)
            final = run.thread_result(timeout=60)
            run.stop()
            r = run.thread.read("r")
            print("ZEROS" if not r.any() else f"ONES {{int(r.sum())}}")
    """)
    done = processes.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ZEROS", done.stdout


def test_a_forked_child_cannot_use_the_parents_run(tmp_path):
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        import komorebi as km
        p = km.Program("fork", kernels={str(KERNELS)!r})
        p.thread(cluster=0, sources=[{str(ROOT / "tests" / "threads" / "copy.c")!r}], regions={{"a": 8, "b": 8}})
        with km.Session() as s:
            run = s.load(p)
            run.thread_result(timeout=30)
            pid = os.fork()
            if pid == 0:
                try:
                    run.thread_result(timeout=0)
                except RuntimeError as error:
                    print("CHILD", error, flush=True)
                run.stop()  # nothing: the run is the parent's
                s.close()
                print("CHILD CLOSED", flush=True)
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            print("CHILD STATUS", status)
            run.stop()
            print("PARENT", run.thread.read("b").tolist())
    """)
    done = processes.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(l.startswith("CHILD this run was loaded by process") and "forked child" in l for l in lines), lines
    assert "CHILD CLOSED" in lines and "CHILD STATUS 0" in lines
    assert lines[-1].startswith("PARENT [")


def test_a_forked_child_that_leaves_its_with_block_exits_cleanly(tmp_path):
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        import komorebi as km
        p = km.Program("fork", kernels={str(KERNELS)!r})
        p.thread(cluster=0, sources=[{str(ROOT / "tests" / "threads" / "forever.c")!r}], regions={{"r": 64}})
        with km.Session() as s:
            with s.load(p) as run:
                pid = os.fork()
        if pid == 0:
            sys.exit(0)   # the child left both with blocks and exits
        _, status = os.waitpid(pid, 0)
        print("STATUS", os.waitstatus_to_exitcode(status), run.thread.read("r").tolist() == [0] * 64)
    """)
    done = processes.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "STATUS 0 True", (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr


def test_a_dropped_run_whose_thread_faulted_is_freed_without_the_cycle_collector(tmp_path):
    """The ThreadFault's traceback holds the Thread's frames; the Thread must not hold the
    fault back, or the run lives until the cycle collector happens to run."""
    faulting = tmp_path / "fault.c"
    faulting.write_text('#include "kmx.h"\nint kmx_main(int core) {\n    return *(volatile int*)0;\n}\n')
    spinning = tmp_path / "spin.c"
    spinning.write_text(FOREVER)
    program = km.Program("p", kernels=KERNELS)
    program.thread(cluster=0, sources=[faulting])
    program.thread(cluster=1, sources=[spinning])
    session = km.Session()
    run = session.load(program)
    try:
        run.thread_result(timeout=30, cluster=0)
    except km.ThreadFault:
        pass
    gc.disable()
    try:
        del run
        assert _until(lambda: not _cluster_threads()), "the dropped run's other cluster still runs"
    finally:
        gc.enable()
    session.close()


def test_a_bug_of_the_simulators_at_a_threads_end_is_not_lost(tmp_path, monkeypatch):
    from komorebi.sim.machine.cluster import Cluster

    def broken(self):
        raise OSError("the hand-back broke")

    monkeypatch.setattr(Cluster, "hand_back", broken)
    with km.Session() as session:
        run = session.load(program_for(QUICK, tmp_path, regions={"r": 64}))
        with pytest.raises(km.ThreadFault, match="the simulator failed: OSError.*hand-back broke") as fault:
            run.thread_result(timeout=30)
        assert fault.value.category is km.Category.SIMULATOR  # (never the thread's mistake)
        with pytest.raises(RuntimeError, match="the simulator failed while the thread on cluster 1 ended") as error:
            run.stop()
        assert error.value.category is km.Category.SIMULATOR and str(error.value).startswith("a simulator failure")
        monkeypatch.undo()
