"""The trace (km.Session(trace=PATH)): a Chrome trace event file of the run, in
instruction time; loaded back and checked event by event."""

from __future__ import annotations

import json

import numpy as np
import pytest

import komorebi as km
from komorebi._cache_story import story_data
from tests.threads import THREADS


def traced(tmp_path, path, word=0, **session):
    program = km.Program("traced", kernels=tmp_path)
    program.thread(cluster=2, sources=[THREADS / "traced.c"], regions={"data": np.arange(256, dtype=np.uint32)},
                   words=[word], cores=4)
    with km.Session(trace=path, quantum=200, **session) as s:
        run = s.load(program)
        submitted = run.thread_result(timeout=60)
        final = run.thread_result(timeout=60)
        run.stop()
    return run, submitted, final


def test_a_track_per_core_a_slice_per_turn_and_the_calls(tmp_path):
    path = tmp_path / "run.json"
    run, submitted, final = traced(tmp_path, path)
    assert submitted.words[0] == sum(range(256))
    document = json.loads(path.read_text())
    events = document["traceEvents"]
    names = {(e["tid"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {(n, f"core {n}") for n in range(4)}
    assert {e["pid"] for e in events} == {2}
    turns = [e for e in events if e["name"] == "turn"]
    # the turns tile the clock: one core at a time, no gaps, each at most a quantum long
    turns.sort(key=lambda e: e["ts"])
    for one, two in zip(turns, turns[1:]):
        assert one["ts"] + one["dur"] == two["ts"]
    assert all(0 < e["dur"] <= 200 for e in turns if e["tid"] != 0 or e["ts"] > 0)
    calls = [e for e in events if e.get("cat") == "kmx"]
    by_core = {n: [e["name"] for e in calls if e["tid"] == n] for n in range(4)}
    assert by_core[0] == ["kmx_barrier", "kmx_region", "kmx_invalidate", "kmx_barrier", "kmx_flush", "kmx_barrier", "kmx_word",
                          "kmx_invalidate",
                          "kmx_result", "kmx_submit", "kmx_barrier", "kmx_exit"]
    assert by_core[3] == ["kmx_barrier", "kmx_region", "kmx_invalidate", "kmx_barrier", "kmx_flush", "kmx_barrier", "kmx_word",
                          "kmx_barrier",
                          "kmx_exit"]
    flush = next(e for e in calls if e["name"] == "kmx_flush" and e["tid"] == 1)
    assert flush["args"]["region"] == "data" and flush["args"]["bytes_written_back"] == 64
    assert flush["args"]["line"].endswith("traced.c:15")
    for e in calls:  # each instant lies in a turn of its core
        assert any(t["tid"] == e["tid"] and t["ts"] <= e["ts"] <= t["ts"] + t["dur"] for t in turns), e
    waits = [e for e in events if e.get("cat") == "wait"]
    barrier_waits = [e for e in waits if e["name"] == "kmx_barrier (waiting)"]
    assert len(barrier_waits) == 16  # (the C library's start meets at one too) and all(e["dur"] >= 0 for e in barrier_waits)
    first = [e for e in barrier_waits if e["args"]["line"].endswith("traced.c:16")]
    assert len(first) == 4
    last_arrival = max(e["ts"] for e in first)
    for e in first:  # nobody leaves the barrier before the last one came
        assert e["ts"] + e["dur"] >= last_arrival
    submit = [e for e in waits if e["name"] == "kmx_submit (waiting)"]
    assert len(submit) == 1 and submit[0]["tid"] == 0
    assert document["otherData"]["clock"].startswith("instructions")


def test_two_runs_write_the_same_file_and_a_finding_is_on_it(tmp_path):
    for name in ("one", "two"):
        with pytest.warns(km.CoherenceWarning, match="still dirty in the cache when the thread ended"):
            traced(tmp_path, tmp_path / f"{name}.json", word=1)
    one, two = (tmp_path / "one.json").read_bytes(), (tmp_path / "two.json").read_bytes()
    assert one == two
    events = json.loads(one)["traceEvents"]
    found = [e for e in events if e.get("cat") == "finding"]
    assert [e["name"] for e in found] == ["finding: unflushed-write"] and found[0]["tid"] == 2
    assert found[0]["args"]["line"].endswith("traced.c:18") and "kmx_flush(0)" in found[0]["args"]["message"]


def test_a_session_numbers_its_runs_traces_and_checks_the_path(tmp_path):
    with pytest.raises(TypeError, match="trace must be a file path"):
        km.Session(trace=3)
    with pytest.raises(ValueError, match="is a folder"):
        km.Session(trace=tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        km.Session(trace=tmp_path / "nowhere" / "run.json")
    program = km.Program("traced", kernels=tmp_path)
    program.thread(cluster=2, sources=[THREADS / "traced.c"], regions={"data": np.arange(256, dtype=np.uint32)},
                   words=[0], cores=4)
    with km.Session(trace=tmp_path / "run.json") as s:
        for _ in range(2):
            run = s.load(program)
            run.thread_result(timeout=60)
            run.stop()
    assert (tmp_path / "run.json").exists() and (tmp_path / "run-2.json").exists()


def test_a_trace_that_runs_out_of_room_says_where_and_keeps_what_came_before(tmp_path, monkeypatch):
    from komorebi.sim.observe import timeline

    monkeypatch.setattr(timeline, "TRACE_EVENTS", 40)
    path = tmp_path / "short.json"
    traced(tmp_path, path)
    document = json.loads(path.read_text())
    events = [e for e in document["traceEvents"] if e["ph"] != "M"]
    marker = [e for e in events if e["name"] == "the trace stopped here"]
    assert len(marker) == 1 and "stopped" in document["otherData"]
    assert all(e["ts"] <= marker[0]["ts"] for e in events)
    turns = [e for e in events if e["name"] == "turn"]
    for e in events:
        if e.get("cat") == "kmx":  # (still each in a turn of its core)
            assert any(t["tid"] == e["tid"] and t["ts"] <= e["ts"] <= t["ts"] + t["dur"] for t in turns), e


def test_the_c_librarys_system_calls_name_their_callers_lines(tmp_path):
    source = tmp_path / "prints.c"
    source.write_text('#include <stdio.h>\n#include "kmx.h"\nint kmx_main(int core) {\n'
                      '    printf("one\\n");\n    printf("two\\n");\n    return 0;\n}\n')
    (tmp_path / "kernels").mkdir()
    program = km.Program("prints", kernels=tmp_path / "kernels")
    program.thread(cluster=1, sources=[source])
    with km.Session(trace=tmp_path / "prints.json") as s:
        run = s.load(program)
        run.thread_result(timeout=60)
        run.stop()
    events = json.loads((tmp_path / "prints.json").read_text())["traceEvents"]
    lines = [e["args"]["line"].rsplit(":", 1)[1] for e in events if e.get("cat") == "linux" and e["name"] == "writev"
             and e["args"].get("line", "").startswith(str(source))]
    assert sorted(set(lines)) == ["4", "5"] and lines == sorted(lines), lines


# A read of Python's data before any invalidate, then a long loop, on one core: the
# finding is heard after the read's block (the cache model's event stops the run there,
# sim/native/events.c), so the trace stamps it at the read, not where Python next had the
# core (the loop's end). Before it, a flush answered in C; after it, another.
EARLY_READ = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    volatile uint32_t* in = (volatile uint32_t*)kmx_region(0, 0);
    kmx_flush(0);
    uint32_t first = in[5]; /* the early read */
    volatile uint64_t sum = first;
    for (int i = 0; i < 100000; i++)
        sum += (uint64_t)i * first;
    kmx_flush(0);
    uint32_t out = (uint32_t)sum;
    kmx_result(0, &out, 1);
    return (int)kmx_cycles() & 1;
}
"""


def test_a_finding_is_stamped_at_its_access_and_told_in_the_order_it_happened(tmp_path):
    (tmp_path / "kernels").mkdir()
    source = tmp_path / "early.c"
    source.write_text(EARLY_READ)
    program = km.Program("early", kernels=tmp_path / "kernels")
    program.thread(cluster=1, sources=[source], regions={"data": np.arange(64, dtype=np.uint32)})
    path = tmp_path / "early.json"
    with km.Session(trace=path) as session:
        run = session.load(program)
        with pytest.warns(km.CoherenceWarning, match="before"):
            run.thread_result(timeout=60)
            run.stop()
    events = json.loads(path.read_text())["traceEvents"]
    [found] = [e for e in events if e.get("cat") == "finding"]
    flushes = sorted(e["ts"] for e in events if e["name"] == "kmx_flush")
    assert found["name"] == "finding: read-before-invalidate"
    assert flushes[0] <= found["ts"] < flushes[0] + 100 < flushes[1]  # at the read: the loop ran 100,000 times after
    steps = [step["what"] for step in story_data(run._loaded.machine.story())["steps"]]
    flush_steps = [i for i, what in enumerate(steps) if what.startswith("kmx_flush")]
    finding_step = next(i for i, what in enumerate(steps) if what.startswith("finding"))
    assert flush_steps[0] < finding_step < flush_steps[-1], steps


# Core 0 reads Python's data before any invalidate inside its loop, at its 1,000th
# iteration, while core 1 spins: in turns of 5 instructions the turn loop in C runs both in
# the interpreter, where no block hook sees the event's stop (sim/native/sched.c goes back
# to Python after the turn for it).
IN_SHORT_TURNS = r"""
#include "kmx.h"
int kmx_main(int core) {
    volatile uint32_t* in = (volatile uint32_t*)kmx_region(0, 0);
    if (core) {
        volatile int x = 0;
        for (int k = 0; k < 300000; k++)
            x++;
        return 0;
    }
    uint32_t first = 1;
    volatile uint64_t sum = 0;
    for (int i = 0; i < 100000; i++) {
        sum += (uint64_t)i * first;
        if (i == 1000)
            first = in[5]; /* the early read */
    }
    kmx_flush(0);
    return 0;
}
"""


def test_a_finding_in_the_turn_loops_short_turns_is_heard_after_its_turn(tmp_path, monkeypatch):
    from komorebi.sim.cache import checker
    from tests.threads import machine_cluster

    heard, cluster = [], []
    told = checker.Checker._read_before_invalidate

    def hear(self, region, page, core, site):
        heard.append(cluster[0].cores[0].cycles)
        return told(self, region, page, core, site)

    monkeypatch.setattr(checker.Checker, "_read_before_invalidate", hear)
    (tmp_path / "kernels").mkdir()
    source = tmp_path / "short.c"
    source.write_text(IN_SHORT_TURNS)
    program = km.Program("short", kernels=tmp_path / "kernels")
    program.thread(cluster=1, sources=[source], regions={"data": np.arange(64, dtype=np.uint32)}, cores=2)
    with km.Session(quantum=5) as session:
        run = session.load(program)
        cluster.append(machine_cluster(run, 1))
        with pytest.warns(km.CoherenceWarning, match="before"):
            run.thread_result(timeout=120)
            run.stop()
    ran = cluster[0].cores[0].cycles
    # heard within a few turns of the read (about 1,000 iterations in), not at the loop's end
    assert len(heard) == 1 and heard[0] < 20_000 < ran, (heard, ran)
