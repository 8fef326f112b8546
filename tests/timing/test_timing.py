"""The timing mode (km.Session(timing="x280"); sim/native/timing.c, docs/timing.md): a
core's clock in modelled cycles, the same results as the default mode, the same cycles
every run, and the chip's figures the model was built from (bench/timing.py prints them
all beside the chip's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import komorebi as km
from komorebi.sim.timing import x280

BENCH = Path(__file__).resolve().parents[2] / "bench" / "timing"
BYTES = 303_872
PATHS = {"L3 vector": 0, "L3 scalar": 1, "DRAM vector": 2, "uncached vector": 3, "chase": 4}


def _tensix() -> Path:
    folder = BENCH.parent / "kernels" / "tensix"  # (the benchmarks' empty folder of Tensix kernels)
    folder.mkdir(exist_ok=True)
    return folder


def _copy(path: str, harts: int = 1, quantum: int = 2000, **session) -> list[int]:
    p = km.Program("timing", kernels=_tensix())
    n = BYTES * 4
    p.thread(cluster=1, sources=[BENCH / "copy.c"], cores=4,
             words=[PATHS[path], harts, BYTES if path != "chase" else 4000],
             regions={"from": np.arange(n // 8, dtype=np.uint64), "to": n})
    with km.Session(timing="x280", quantum=quantum, **session) as s:
        run = s.load(p)
        result = run.thread_result(timeout=600)
        run.stop()
    words = [int(w) for w in result.words]
    return [words[2 * i] | words[2 * i + 1] << 32 for i in range(max(harts, 1))]


LESSON = Path(__file__).resolve().parents[2] / "tutorial" / "46_how_long_a_thread_takes"


def _lesson_copy(harts: int, *more_sources: Path) -> km.Program:
    """Lesson 46's thread: each of HARTS harts copies its 64 KiB slice through the uncached
    alias with vector loads (the crowded case), with MORE_SOURCES linked too."""
    p = km.Program("how_long", kernels=LESSON / "kernels")
    p.thread(cluster=1, sources=[LESSON / "thread" / "copy.c", *more_sources], cores=4, words=[1, 1, harts],
             regions={"from": np.arange(4 * 8192, dtype=np.uint64), "to": 4 * 65536})
    return p


def _alu(timing, iterations=20_000):
    p = km.Program("alu", kernels=_tensix())
    p.thread(cluster=1, sources=[BENCH / "alu.c"], words=[iterations, 1])
    with km.Session(timing=timing) as s:
        run = s.load(p)
        result = run.thread_result(timeout=600)
        run.stop()
    return [int(w) for w in result.words[:2]]


def test_the_results_are_the_default_modes_and_the_cycles_are_the_models():
    default, timed = _alu(None), _alu("x280")
    assert timed[0] == default[0]  # (the sum: the same instructions ran)
    assert timed[1] != default[1]  # the default counts instructions; the model, cycles
    assert _alu("x280") == timed  # the same every run


def test_a_pointer_chase_through_the_l1d_takes_three_cycles_a_load():
    # the U74's L1D load-to-load (the X280's scalar pipeline), LLVM's load latency 3
    cycles = _copy("chase")[0]
    assert cycles == pytest.approx(3 * 4000, rel=0.01)


def test_an_uncached_copy_from_one_hart_is_near_the_chips_and_four_harts_crowd_it():
    one = _copy("uncached vector", 1)[0] / (x280.CLOCK_MHZ * 1e3)  # ms
    assert one == pytest.approx(0.059, rel=0.25)  # tt-metal tools/l2cpu: 0.059 ms
    four = max(_copy("uncached vector", 4, quantum=100)) / (x280.CLOCK_MHZ * 1e3)
    assert 1.1 * 0.75 <= four <= 1.7 * 1.25  # the chip: 1.1 to 1.7 ms each, a ~20x collapse
    assert four > 10 * one


def test_a_copy_from_dram_is_slower_than_from_the_l3():
    l3, dram = _copy("L3 vector")[0], _copy("DRAM vector")[0]
    assert dram > 10 * l3


def test_bad_timing_options_are_clear_errors():
    with pytest.raises(ValueError, match="timing must be one of 'x280'"):
        km.Session(timing="u74")
    with pytest.raises(TypeError, match="timing must be a str"):
        km.Session(timing=1)
    with pytest.raises(ValueError, match="clock_mhz must be 1 to 10,000 MHz"):
        km.Session(timing="x280", clock_mhz=0)
    with pytest.raises(ValueError, match="give timing='x280' with it"):
        km.Session(clock_mhz=1000)
    with pytest.raises(TypeError, match="clock_mhz must be a number"):
        km.Session(timing="x280", clock_mhz="fast")


def test_the_parameter_table_is_timing_defs_and_each_says_its_source():
    names = x280.names()
    assert names == list(x280.PARAMETERS)
    for name, parameter in x280.PARAMETERS.items():
        assert parameter.kind in "DUMI" and parameter.source, name
    with pytest.raises(ValueError, match="no timing parameter 'nope'"):
        x280.table({"nope": 1})


def test_docs_timing_md_lists_every_parameter_with_its_value():
    text = (Path(__file__).resolve().parents[2] / "docs" / "timing.md").read_text()
    for name, parameter in x280.PARAMETERS.items():
        assert f"| `{name}` | {parameter.value} |" in text, name


def test_the_profile_counts_each_lines_cycles_the_costliest_first(tmp_path):
    p = _lesson_copy(4)
    profiles, whole = {}, {}
    for timing in ("x280", None):
        with km.Session(timing=timing, profile=True) as s:
            run = s.load(p)
            run.thread_result(timeout=60)
            run.stop()
        whole[timing] = run.profile()
        profiles[timing] = whole[timing].core(0, cluster=1)
    timed, plain = profiles["x280"], profiles[None]
    top = timed.lines[0]
    assert (Path(top.file).name, top.line) == ("copy.c", 9)  # the vle64's line: the crowded alias
    assert top.cycles > 0.8 * timed.cycles
    assert sum(line.cycles for line in timed.lines) == pytest.approx(timed.cycles, rel=0.02)
    assert plain.cycles == 0 and all(line.cycles == 0 for line in plain.lines)
    # the functions (by their instructions' cycles, as the lines) and the call stacks (by the
    # call tree's own count, profile.c) in cycles: each adds up to the core's
    assert sum(f.own_cycles for f in timed.functions) == pytest.approx(timed.cycles, rel=0.02)
    assert sum(cycles for _, cycles in timed.stack_cycles) == pytest.approx(timed.cycles, rel=0.02)
    main = next(f for f in timed.functions if f.name == "kmx_main")
    assert timed.functions[0] == main and main.own_cycles > 0.8 * timed.cycles  # (the copy is kmx_main's)
    # kmx_main's cycles with what it called, from the call tree, are its own and its callees' instructions'
    assert main.inclusive_cycles == pytest.approx(timed.cycles - sum(
        f.own_cycles for f in timed.functions if f.name.startswith("kmx__")), rel=0.02)
    assert not plain.stack_cycles and all(f.own_cycles == f.inclusive_cycles == 0 for f in plain.functions)
    table = str(whole["x280"])
    assert "own cycles" in table and f"{main.own_cycles:>14,}" in table
    stacks = whole["x280"].flamegraph(tmp_path / "stacks.txt").read_text().splitlines()
    assert sum(int(line.rsplit(" ", 1)[1]) for line in stacks if line.startswith("cluster 1 core 0;")) == sum(
        cycles for _, cycles in timed.stack_cycles)
    assert {(line.file, line.line): line.instructions for line in timed.lines} == {
        (line.file, line.line): line.instructions for line in plain.lines}


def test_the_trace_is_in_each_cores_modelled_microseconds(tmp_path):
    import json

    p = _lesson_copy(4)
    with km.Session(timing="x280", trace=tmp_path / "t.json") as s:
        run = s.load(p)
        run.thread_result(timeout=60)
        run.stop()
    trace = json.loads((tmp_path / "t.json").read_text())
    assert "microseconds at 1750 MHz" in trace["otherData"]["clock"]
    for timing in run.timing():
        turns = [e for e in trace["traceEvents"] if e.get("name") == "turn" and e["tid"] == timing.core]
        starts = sorted(e["ts"] for e in turns)
        assert max(e["ts"] + e["dur"] for e in turns) == pytest.approx(timing.microseconds, abs=0.01)
        assert starts == sorted(set(starts))  # (a core's turns follow one another)


def test_a_seed_gives_the_same_cycles_every_run_and_its_schedule_replays_them():
    p = _lesson_copy(3)

    def cycles(**session):
        with km.Session(timing="x280", **session) as s:
            run = s.load(p)
            result = run.thread_result(timeout=60)
            run.stop()
        return [int(w) for w in result.words[:3]], [t.cycles for t in run.timing()], run.schedule

    first, again = cycles(schedule_seed=5), cycles(schedule_seed=5)
    assert first[:2] == again[:2]
    assert cycles(schedule=first[2])[:2] == first[:2]  # the recorded turns replay the same time


def test_a_runs_timing_is_its_loads_whatever_the_session_says_later():
    p = km.Program("alu", kernels=_tensix())
    p.thread(cluster=1, sources=[BENCH / "alu.c"], words=[1000, 1])
    with km.Session(timing="x280") as s:
        run = s.load(p)
        run.thread_result(timeout=60)
        run.stop()
        s.timing = None
        assert run.timed and "cycles" in repr(run) and run.timing()[0].cycles > 0



WAITER = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(1, 0);
    flags[16] = 1; /* the stand-in may push */
    kmx_flush(1);
    uint64_t start = kmx_cycles();
    do
        kmx_invalidate(1);
    while (flags[0] != 1);
    uint64_t took = kmx_cycles() - start;
    uint32_t said[2] = {(uint32_t)took, (uint32_t)(took >> 32)};
    kmx_result(0, said, 2);
    return 0;
}
"""


def test_a_stand_ins_noc_calls_cost_their_bytes_and_a_core_waiting_on_it_sees_the_time(tmp_path):
    (tmp_path / "waiter.c").write_text(WAITER)
    took = {}
    for pushed in (64, 65536):
        def pusher(noc, pushed=pushed):
            noc.wait("flags", 64, 1)
            noc.write("data", 0, np.zeros(pushed, np.uint8))
            noc.write("flags", 0, np.uint32([1]))
            return "pushed"

        p = km.Program("waiter", kernels=_tensix())
        p.thread(cluster=1, sources=[tmp_path / "waiter.c"], regions={"data": 65536, "flags": 128})
        p.noc_agent("pusher", pusher, cluster=1)
        with km.Session(timing="x280", quantum=100) as s:  # (turns of 100: the clocks close together)
            run = s.load(p)
            result = run.thread_result(timeout=60)
            run.stop()
        assert run.agent("pusher").result == "pushed"
        took[pushed] = int(result.words[0]) | int(result.words[1]) << 32
        # the calls' costs as docs/timing.md gives them (1 us a call, its bytes past 64 at
        # 19 GB/s), at 1750 MHz: the wait's poll, once the core's flag is in DRAM, then the
        # two writes; the core sees the flag within about a turn of the last
        calls = 1.75 * (1000 + 1000 + max(0, pushed - 64) * 1000 / 19000 + 1000)
        assert calls - 200 <= took[pushed] <= calls + 1000, (pushed, took[pushed])
    assert took[65536] - took[64] == pytest.approx(1.75 * 65472 / 19, abs=500)  # (64 KiB more at 19 GB/s)


def test_the_cycles_do_not_depend_on_the_folder_the_sources_are_in(tmp_path):
    """An assert's __FILE__ holds its folder, so the length of a folder's name changes the
    image's read-only strings; the data after them starts a page on (kmx_runtime/kmx.ld),
    so where the data lies, and the cycles with it, stay the same."""
    cycles = []
    for name in ("a", "a_folder_whose_name_is_much_longer_than_the_other_" * 3):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "where.c").write_text(  # (a constructor: linked whatever calls it, and its string with it)
            "#include <assert.h>\nvolatile int never;\n__attribute__((constructor)) static void where(void) { assert(!never); }\n")
        p = _lesson_copy(4, folder / "where.c")
        with km.Session(timing="x280") as s:
            run = s.load(p)
            result = run.thread_result(timeout=60)
            run.stop()
        cycles.append(([int(w) for w in result.words[:4]], [t.cycles for t in run.timing()]))
    assert cycles[0] == cycles[1]


def test_a_finding_a_stand_ins_step_makes_is_at_the_stand_ins_clock(tmp_path):
    from tests.noc.test_agents import exchange, run

    _, loaded = run(exchange(tmp_path, flush=False), timing="x280")
    steps = loaded._loaded.machine.story().steps
    at = next(i for i, s in enumerate(steps) if s.what == "finding: noc-read-unflushed")
    read = steps[at - 1]  # (the stand-in's noc.read that found it)
    assert read.core == -1 and "noc.read" in read.what
    assert steps[at].cycles == read.cycles > 0


DONE_FLAG = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(0, 0);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < kmx_word(0); i++)
        sum += i * i;
    flags[0] = 1 + (uint32_t)(sum & 1); /* done */
    kmx_flush(0);
    return 0;
}
"""


def _waits_for_done(tmp_path, **session):
    (tmp_path / "done.c").write_text(DONE_FLAG)

    def watcher(noc):
        noc.wait("flags", 0, 1)
        return noc.read("flags", 0, 4)

    p = km.Program("done", kernels=_tensix())
    p.thread(cluster=1, sources=[tmp_path / "done.c"], regions={"flags": 64}, words=[20_000])
    p.noc_agent("watcher", watcher, cluster=1)
    with km.Session(timing="x280", **session) as s:
        run = s.load(p)
        run.thread_result(timeout=60)
        run.stop()
    return run


def test_a_stand_in_woken_by_a_thread_that_has_returned_is_later_than_the_write(tmp_path):
    run = _waits_for_done(tmp_path)
    core = run.timing()[0].cycles
    steps = [s for s in run._loaded.machine.story().steps if "agent 'watcher'" in s.what]
    wait = next(s for s in steps if "noc.wait" in s.what)
    assert wait.cycles >= core  # (the core wrote the flag and returned: the wait ends after, not at its start)


def test_a_recorded_schedule_replays_a_stand_ins_clock(tmp_path):
    first = _waits_for_done(tmp_path, schedule_seed=3)
    again = _waits_for_done(tmp_path, schedule=first.schedule)
    for run in (first, again):
        assert run.agent("watcher").result is not None
    story = [[(s.what, s.cycles) for s in r._loaded.machine.story().steps] for r in (first, again)]
    assert story[0] == story[1]
    assert [t.cycles for t in first.timing()] == [t.cycles for t in again.timing()]
