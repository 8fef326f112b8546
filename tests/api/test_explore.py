"""Finding races: km.Schedule replays a run's turns bit for bit, clusters 2 and 3 take
turns together under a schedule, and km.explore finds the known bugs of bench/races.py
(PCT within 100 schedules), shrinks what it finds, and runs on local processes and on a
Dask cluster."""

from __future__ import annotations

import threading
import warnings
from concurrent import futures

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT

import bench.races as races

RACY = ROOT / "tests" / "threads" / "racy.c"


def racy_counter(kernels, n=300, cores=2):
    program = km.Program("racy", kernels=kernels)
    program.thread(cluster=1, sources=[RACY], words=[n, 0], cores=cores)
    return program


def counted(session_args, program):
    with km.Session(**session_args) as session:
        run = session.load(program)
        total = int(run.thread_result(timeout=60).words[0])
        run.stop()
    return total, run.schedule


# -- km.Schedule ---------------------------------------------------------------------------


def test_a_runs_recorded_schedule_replays_it_bit_for_bit(kernels):
    program = racy_counter(kernels)
    seen = {}
    for seed in range(8):
        total, schedule = counted({"schedule": km.Schedule.random(seed, quantum=500)}, program)
        again, replayed = counted({"schedule": schedule}, program)
        assert again == total and replayed.turns == schedule.turns
        seen[seed] = total
    assert min(seen.values()) < 600, "no seed lost an update: the test shows nothing"


def test_a_random_schedule_is_the_schedule_seeds_interleaving(kernels):
    program = racy_counter(kernels)
    for seed in (1, 2, 3):
        by_seed, _ = counted({"schedule_seed": seed, "quantum": 500}, program)
        by_schedule, _ = counted({"schedule": km.Schedule.random(seed, quantum=500)}, program)
        assert by_seed == by_schedule


def test_a_list_of_turns_is_a_schedule_and_turns_of_no_ready_core_are_skipped(kernels):
    program = racy_counter(kernels, n=200)
    # core 1 runs first to its end, core 0 after: no update is lost
    total, recorded = counted({"schedule": km.Schedule(turns=((1, 1, 0), (1, 0, 0), (1, 3, 5)))}, program)
    assert total == 400
    assert recorded.turns[:2] == ((1, 1, 0), (1, 0, 0))


def test_schedule_values_are_checked():
    with pytest.raises(ValueError, match="strategy is one of"):
        km.Schedule("fifo")
    with pytest.raises(ValueError, match="needs a seed"):
        km.Schedule("pct")
    with pytest.raises(ValueError, match=r"a turn is \(cluster 0-3"):
        km.Schedule(turns=((4, 0, 10),))
    with pytest.raises(TypeError, match="triples of ints"):
        km.Schedule(turns=((1, 0),))
    with pytest.raises(TypeError, match="schedule must be a km.Schedule"):
        km.Session(schedule="pct")
    with pytest.raises(ValueError, match="not both"):
        km.Session(schedule=km.Schedule.random(1), schedule_seed=1)


def test_a_pickled_schedule_comes_back_the_same_and_an_old_random_one_is_refused():
    import pickle

    for schedule in (km.Schedule.random(3, quantum=50), km.Schedule.pct(2), km.Schedule(turns=((1, 0, 7),))):
        assert pickle.loads(pickle.dumps(schedule)) == schedule
    # what a komorebi-sim that drew random turns uniformly pickled: no "_draws"
    old = km.Schedule.random(3)
    state = {k: v for k, v in old.__dict__.items() if k != "_draws"}
    with pytest.raises(ValueError, match=r"random, seed 3\) was made by a komorebi-sim that drew random turns"):
        km.Schedule.__new__(km.Schedule).__setstate__(state)
    replay = km.Schedule(turns=((1, 0, 7),))
    kept = km.Schedule.__new__(km.Schedule)
    kept.__setstate__({k: v for k, v in replay.__dict__.items() if k != "_draws"})
    assert kept == replay  # a replay's turns are the same in any version

def test_run_schedule_is_read_after_stop(kernels):
    with km.Session() as session:
        run = session.load(racy_counter(kernels, n=10))
        with pytest.raises(RuntimeError, match="run.schedule"):
            run.schedule
        run.thread_result(timeout=30)
        run.stop()
        assert run.schedule.turns and "turns" in str(run.schedule)


# -- clusters 2 and 3 ------------------------------------------------------------------------


def _d7_total(schedule):
    with km.Session(schedule=schedule) as session:
        run = session.load(races.d7_race())
        run.thread_result(timeout=60, cluster=2)
        run.thread_result(timeout=60, cluster=3)
        names = {t.name for t in threading.enumerate()}
        run.stop()
    return int(run.threads[2].read("counter").view(np.uint32)[0]), run.schedule, names


def test_clusters_two_and_three_take_turns_on_one_host_thread_under_a_schedule():
    totals = []
    for seed in range(6):
        total, recorded, _ = _d7_total(km.Schedule.random(seed, quantum=300))
        again, replayed, _ = _d7_total(recorded)
        assert again == total and replayed.turns == recorded.turns
        assert {cluster for cluster, _, _ in recorded.turns} == {2, 3}
        totals.append(total)
    assert min(totals) < 2 * races.D7_INCREMENTS, "no schedule lost an update through D7"


# -- km.explore --------------------------------------------------------------------------------


@pytest.mark.parametrize("bug", races.BUGS, ids=[bug.name for bug in races.BUGS])
def test_pct_finds_each_known_bug_within_100_schedules(bug):
    report = km.explore(bug.make, bug.check, schedules=100, workers=1, stop_at_first=True, seed=0)
    assert report.failed == 1 and report.first_failure <= 100, str(report)
    failure = report.failures[0]
    assert failure.kind == "check" and report.schedules == report.first_failure
    assert failure.schedule.switches <= failure.found.switches
    assert len(failure.schedule.turns) <= len(failure.found.turns)
    # the shrunk schedule replays the failure
    with km.Session(schedule=failure.schedule) as session, warnings.catch_warnings():
        warnings.simplefilter("ignore", km.CoherenceWarning)  # (the stale frame's stale-read)
        run = session.load(bug.make())
        for thread in run.threads.values():
            while not thread.result(timeout=60).final:
                pass
        run.stop()
    with pytest.raises(AssertionError) as error:
        bug.check(run)
    assert f"AssertionError: {error.value}" == failure.message


def test_a_correct_program_passes_every_schedule(kernels):
    report = km.explore(lambda: racy_counter(kernels, n=50, cores=2), lambda run: True, schedules=30, workers=1)
    assert report.ok and report.schedules == 30 and report.failures == () and report.first_failure is None


def test_the_same_seed_draws_the_same_schedules_on_one_process_or_two(kernels):
    def make():
        return racy_counter(kernels, n=100)

    def check(run):
        assert int(run.thread.results[-1].words[0]) == 200

    one = km.explore(make, check, schedules=40, workers=1, shrink=False)
    two = km.explore(make, check, schedules=40, workers=2, shrink=False)
    assert one.failed > 0
    assert [f.number for f in one.failures] == [f.number for f in two.failures]
    assert [f.found for f in one.failures] == [f.found for f in two.failures]
    assert two.workers == 2


def test_faults_timeouts_and_findings_fail_a_schedule_as_fail_on_says(kernels, tmp_path):
    source = tmp_path / "faults.c"
    source.write_text(
        '#include "kmx.h"\n'
        "int kmx_main(int core) {\n"
        "    if (kmx_word(0) == 1) *(volatile int *)8 = 1;\n"
        "    if (kmx_word(0) == 2) for (;;) {}\n"
        "    if (kmx_word(0) == 3) { uint32_t *p = (uint32_t *)kmx_region(0, 0); p[0] = 1; }\n"
        "    return core;\n"
        "}\n"
    )

    def make(word):
        def program():
            p = km.Program("faults", kernels=kernels)
            p.thread(cluster=1, sources=[source], words=[word], regions={"r": 64})
            return p
        return program

    fault = km.explore(make(1), lambda run: True, schedules=2, workers=1)
    assert fault.failed == 2 and fault.failures[0].kind == "fault" and "fault" in fault.failures[0].message.lower()
    ignored = km.explore(make(1), lambda run: True, schedules=2, workers=1, fail_on=("check",))
    assert ignored.ok
    hang = km.explore(make(2), lambda run: True, schedules=1, workers=1, timeout=1.0)
    assert hang.failures[0].kind == "timeout"
    found = km.explore(make(3), lambda run: True, schedules=1, workers=1, fail_on=("check", "finding"))
    assert found.failures[0].kind == "finding" and "flush" in found.failures[0].message
    returned_false = km.explore(make(0), lambda run: False, schedules=1, workers=1)
    assert returned_false.failures[0].message == "check(run) returned False"


def test_progress_is_told_through_a_callback_and_on_a_tqdm_bar(kernels, capsys):
    told = []
    km.explore(lambda: racy_counter(kernels, n=10), lambda run: True, schedules=5, workers=1,
               progress=lambda done, total, failed: told.append((done, total, failed)))
    assert told[0] == (1, 5, 0) and told[-1] == (5, 5, 0)
    km.explore(lambda: racy_counter(kernels, n=10), lambda run: True, schedules=3, workers=1, progress=True)
    assert "km.explore" in capsys.readouterr().err


def test_bad_arguments_say_what_was_expected(kernels, tmp_path):
    make = lambda: racy_counter(kernels, n=10)  # noqa: E731
    ok = lambda run: True  # noqa: E731
    with pytest.raises(ValueError, match="strategy must be 'pct' or 'random'"):
        km.explore(make, ok, strategy="dfs")
    with pytest.raises(ValueError, match="schedules must be 1 or more"):
        km.explore(make, ok, schedules=0)
    with pytest.raises(ValueError, match="fail_on takes some of"):
        km.explore(make, ok, fail_on=("crash",))
    with pytest.raises(ValueError, match="workers .* or an executor, not both"):
        km.explore(make, ok, workers=2, executor=object())
    with pytest.raises(TypeError, match="executor must be a concurrent.futures.Executor"):
        km.explore(make, ok, executor=object())
    with pytest.raises(TypeError, match="make_program must return a km.Program"):
        km.explore(lambda: "program", ok, schedules=1, workers=1)
    bad = tmp_path / "broken.c"
    bad.write_text("int kmx_main(int core) { return missing; }\n")

    def broken():
        p = km.Program("broken", kernels=kernels)
        p.thread(cluster=1, sources=[bad])
        return p
    with pytest.raises(km.CompileError, match="missing"):  # (not a failing schedule: the program's error)
        km.explore(broken, ok, schedules=3, workers=1)


@pytest.mark.slow
def test_a_dask_cluster_of_two_workers_runs_the_schedules():
    distributed = pytest.importorskip("distributed")
    bug = races.BUGS[0]  # the lost update
    local = km.explore(bug.make, bug.check, schedules=24, workers=1, shrink=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        report = km.explore(bug.make, bug.check, schedules=24, executor=client.get_executor(), shrink=False)
    assert report.workers == 2
    assert [f.number for f in report.failures] == [f.number for f in local.failures]
    assert [f.found for f in report.failures] == [f.found for f in local.failures]


class _Counting(futures.Executor):
    """An executor that runs each task as it is submitted, and counts them."""

    def __init__(self) -> None:
        self.submitted = []

    def submit(self, function, *args, **kwargs):
        future = futures.Future()
        self.submitted.append(args[2][0][0])  # (the chunk's first schedule)
        future.set_result(function(*args, **kwargs))
        return future


def test_a_billion_schedules_cost_what_the_schedules_run_cost():
    """Tasks are submitted a window at a time, none after the first failure: asking for
    10**9 schedules costs what running the first few does."""
    bug = races.BUGS[0]  # the lost update: PCT finds it within a few schedules
    executor = _Counting()
    report = km.explore(bug.make, bug.check, schedules=10**9, executor=executor, stop_at_first=True, shrink=False)
    assert report.failed == 1 and report.first_failure <= 16
    assert executor.submitted == [1, 17, 33, 49]  # (a window of twice the workers, 2 when unknown; 16 a task)
    executor = _Counting()
    executor._max_workers = 5  # (as concurrent.futures' own pools say how many they have)
    km.explore(bug.make, bug.check, schedules=10**9, executor=executor, stop_at_first=True, shrink=False)
    assert executor.submitted == list(range(1, 1 + 10 * 16, 16))  # (a window of twice its 5 workers)
    local = km.explore(bug.make, bug.check, schedules=10**9, workers=2, stop_at_first=True, shrink=False)
    assert [f.found for f in local.failures] == [f.found for f in report.failures]


def test_pct_runs_a_one_core_thread_and_replays_it(kernels):
    def make():
        return racy_counter(kernels, n=20, cores=1)

    report = km.explore(make, lambda run: int(run.thread.results[-1].words[0]) == 20, schedules=4, workers=1)
    assert report.ok, str(report)


SUBMITS = r"""
#include "kmx.h"
/* Cluster 3 submits 20 results; cluster 2 computes and ends. */
int kmx_main(int core) {
    (void)core;
    if (kmx_cluster() == 3)
        for (uint32_t i = 0; i < 20; i++) {
            kmx_result(0, &i, 1);
            kmx_submit();
        }
    return 0;
}
"""


def test_clusters_two_and_three_under_a_schedule_do_not_wait_for_each_others_python(kernels, tmp_path):
    source = tmp_path / "submits.c"
    source.write_text(SUBMITS)
    program = km.Program("submits", kernels=kernels)
    for cluster in (2, 3):
        program.thread(cluster=cluster, sources=[source])
    with km.Session(schedule_seed=1) as session:
        run = session.load(program)
        assert run.thread_result(timeout=30, cluster=2).final  # while 3's submissions wait, more than 16
        taken = [run.thread_result(timeout=30, cluster=3) for _ in range(21)]
        run.stop()
    assert [int(r.words[0]) for r in taken[:20]] == list(range(20)) and taken[-1].final


def test_shrinking_hands_back_a_schedule_that_fails(kernels):
    def make():
        return racy_counter(kernels, n=100)

    def check(run):
        assert int(run.thread.results[-1].words[0]) == 200, "lost"

    for strategy in ("pct", "random"):
        report = km.explore(make, check, schedules=30, workers=1, strategy=strategy, quantum=300)
        for failure in report.failures:
            if failure.shrink_runs:
                with km.Session(schedule=failure.schedule) as session:
                    run = session.load(make())
                    run.thread_result(timeout=30)
                    run.stop()
                with pytest.raises(AssertionError):
                    check(run)


def test_an_exploration_seed_out_of_range_is_refused(kernels):
    with pytest.raises(ValueError, match=r"seed must be 0 to 2\*\*31 - 1"):
        km.explore(lambda: racy_counter(kernels, n=1), lambda run: True, seed=2**31)


def test_a_check_that_returns_numpys_false_fails_the_schedule_and_a_verdict_of_another_type_is_refused(kernels):
    make = lambda: racy_counter(kernels, n=10)  # noqa: E731
    values = np.zeros(4)
    report = km.explore(make, lambda run: (values == 1).all(), schedules=4, workers=1, shrink=False)
    assert report.failed == 4, str(report)  # ((a == b).all() is np.False_, a failing verdict)
    assert report.failures[0].message == "check(run) returned False"
    assert km.explore(make, lambda run: (values == 0).all(), schedules=2, workers=1).ok
    for verdict, name in ((values == 1, "ndarray"), (0, "int"), ("no", "str")):
        with pytest.raises(TypeError, match=f"check must return True, False or None .*, not {name}"):
            km.explore(make, lambda run: verdict, schedules=2, workers=1)
