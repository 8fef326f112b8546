"""The turns in C (sim/native/sched.c): the plans' choices are the ones Python made before
(a schedule seed draws its cores as random.Random's choice, and its lengths log-uniformly from
random.Random's random()), and a run stopped while the turn loop runs
its cores stops."""

from __future__ import annotations

import ctypes
import math
import random
import threading

import pytest

import komorebi as km
from komorebi.sim.native import hooks
from komorebi.sim.machine.schedule import Plan, Schedule
from tests.threads import machine_cluster, program_for, wait_for


def _choices(plan: Plan, readies: list[list[int]], cores: int) -> list[tuple[int, int]]:
    schedule = Schedule(plan, [1], [(1, n) for n in range(cores)])
    out = []
    for ready in readies:
        count = ctypes.c_uint64()
        index = hooks.library().group_choose(schedule.native, sum(1 << n for n in ready), ctypes.byref(count))
        out.append((int(index), count.value))
    assert [(core, n) for _, core, n in schedule.turns] == out
    return out


def _length(u: float, quantum: int) -> int:
    """A turn's length, log-uniform from 1 to 2 x QUANTUM - 1, of random()'s U."""
    return min(max(int(math.exp(u * math.log(2 * quantum))), 1), 2 * quantum - 1)


def test_a_seeds_random_turns_are_those_random_random_draws():
    draw = random.Random(5)
    readies = [sorted(draw.sample(range(4), draw.randint(2, 4))) for _ in range(500)]
    for seed, quantum in ((1, 500), (7, 100_000), (123456789, 3)):
        expected = random.Random(f"komorebi-sim schedule {seed} cluster 1")
        wanted = [(expected.choice(ready), _length(expected.random(), quantum)) for ready in readies]
        assert _choices(Plan("random", quantum, seed), readies, 4) == wanted


def test_round_robin_takes_the_next_ready_core_and_a_lone_one_runs_unlimited():
    readies = [[0, 1, 2, 3], [0, 1, 2, 3], [0, 2], [0, 2], [3], [1, 3]]
    assert _choices(Plan("round robin", 50), readies, 4) == [(0, 50), (1, 50), (2, 50), (0, 50), (3, 0), (1, 50)]


def test_a_replay_passes_over_turns_of_cores_not_ready_then_goes_round():
    plan = Plan("replay", 10, turns=((1, 2, 7), (1, 1, 3), (2, 0, 9), (1, 2, 4), (1, 0, 5)))
    # (cluster 2's turn is not this group's; core 2 is not ready at the fourth turn)
    assert _choices(plan, [[0, 2], [0, 1], [0, 1], [0, 1]], 3) == [(2, 7), (1, 3), (0, 5), (1, 10)]


def test_a_run_whose_turns_run_in_c_stops_and_says_where_its_cores_are(tmp_path):
    """Four cores that never end, in turns of 100 in the turn loop: a timeout's message
    says where each is (the loop comes back to say), and stop() ends the run."""
    with km.Session(quantum=100) as session:
        run = session.load(program_for("forever.c", tmp_path, cores=4))
        cores = machine_cluster(run, 1).cores
        wait_for(lambda: sum(core.cycles for core in cores) > 10**5, "a hundred thousand instructions")
        places = machine_cluster(run, 1).places()
        try:
            run.thread_result(timeout=0.2)
        except TimeoutError as error:
            said = str(error)
        run.stop()
    assert said.count("running") + said.count("ready, waiting for its turn") == 4, said
    assert run.stopped and len(run.schedule.turns) > 1000
    # asked while the loop runs, each core is somewhere in the loop's own source
    assert all(frame is not None and frame.source.file.endswith("forever.c") for _, _, frame, _ in places), places


def _racy_run(tmp_path, poll: bool, trace: bool, schedule=None):
    """Four cores race on a counter (seed 3, or SCHEDULE); POLL: another thread asks where
    the cores are all the while (what a timeout's message does)."""
    program = program_for("racy.c", tmp_path, cores=4, words=[60_000, 0])
    options = {"schedule": schedule} if schedule is not None else {"schedule_seed": 3}
    if trace:
        options["trace"] = tmp_path / "trace.json"
    said = []
    with km.Session(**options) as session:
        run = session.load(program)
        cluster, done = machine_cluster(run, 1), threading.Event()

        def poll_places():
            while not done.is_set():
                said.extend(frame for _, doing, frame, _ in cluster.places() if doing == "running")

        poller = threading.Thread(target=poll_places)
        if poll:
            poller.start()
        try:
            result = run.thread_result(timeout=600)
        finally:
            done.set()
            if poll:
                poller.join()
        run.stop()
    return [int(w) for w in result.words[:8]], run.schedule, said



@pytest.mark.parametrize("trace", [False, True], ids=["turns in C", "turns in Python"])
def test_asking_where_the_cores_are_does_not_change_the_run(tmp_path, trace):
    """A stop from outside (to ask where a core is, as a timeout's message does) comes
    before a block, which the block hook then does not count, and the turn goes on with its
    budget: the run, its cycles and its schedule are the run nobody looked at, and replay."""
    quiet, schedule, _ = _racy_run(tmp_path, poll=False, trace=trace)
    looked, looked_schedule, said = _racy_run(tmp_path, poll=True, trace=trace)
    assert looked == quiet
    assert looked_schedule.turns == schedule.turns
    # (how many asks land while the cores run depends on the host's threads, so none may;
    # that the answer names the core's line is the test above's, which waits for the run):
    # a core seen is in the program, its runtime (start.S) or its C library (a barrier's atomics)
    files = {frame.source.file for frame in said if frame is not None and frame.source is not None}
    assert all(f.endswith("racy.c") or "kmx_runtime" in f or "/musl/" in f for f in files), files
    replayed, _, _ = _racy_run(tmp_path, poll=False, trace=trace, schedule=looked_schedule)
    assert replayed == quiet
