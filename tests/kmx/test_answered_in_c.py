"""The kmx calls answered in C (sim/native/calls.c): the same values, the same cache, the
same findings and the same story as when Python answers every call (as it does while a
listener hears every call: km.Session(trace=...)), in every mode of the cache; and a
thread that spins on kmx_invalidate and a load reaches Python only a few times."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import komorebi as km

from komorebi.sim.kmx import traps
from tests.threads import program_for, run_to_end

CALLS = r"""
#include "kmx.h"

/* Every call calls.c answers, and the ones it hands to Python (a size to store, a bad
   word); invalidates and flushes of a region written and not, read between. */
int kmx_main(int core) {
    (void)core;
    uint64_t size = 0;
    uint32_t* data = (uint32_t*)kmx_region(0, &size);
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(1, 0);
    uint32_t out[16] = {0};
    out[0] = kmx_word(0) + kmx_word(1);
    out[1] = (uint32_t)kmx_word_count();
    out[2] = (uint32_t)kmx_cluster();
    out[3] = (uint32_t)size;
    out[4] = (uint32_t)((uint64_t)kmx_region(0, 0) - (uint64_t)data);
    out[5] = (uint32_t)(((uint64_t)data - (uint64_t)kmx_region_uncached(0)) >> 32);
    out[6] = kmx_region(7, 0) == 0 && kmx_region_uncached(7) == 0;
    uint64_t before = kmx_cycles();
    for (int round = 0; round < 50; round++) {
        kmx_invalidate(1);
        out[7] += flags[round % 8];
        kmx_flush(1);
        if (round % 10 == 3) {
            data[round] += 1;
            kmx_flush(0);
        }
        if (round % 10 == 7) {
            data[round + 1] = 5;  /* dropped: a finding */
            kmx_invalidate(0);
        }
        out[8] += data[round];
    }
    out[9] = kmx_cycles() > before;
    kmx_result(0, out, 16);
    return 0;
}
"""


def _expand(steps) -> list[tuple]:
    """The story's steps, a step counted N times in a row as N steps (the first of them
    with the step's changes, the rest with none, as each was when Python answered)."""
    out = []
    for step in steps:
        match = re.fullmatch(r"([\d,]+) times in a row", step.detail)
        times = int(match.group(1).replace(",", "")) if match else 1
        where = (step.core, step.what, step.file and Path(step.file).name, step.line)
        out.append((*where, tuple((region, runs.tolist()) for region, runs in step.changes)))
        out.extend([(*where, ())] * (times - 1))
    return out


def _run(tmp_path, *, trace: bool, **options):
    tmp_path.mkdir()
    tables = []
    answer_in_c = traps.TrapTable.answer_in_c

    def spy(table, *args):
        tables.append(table)
        return answer_in_c(table, *args)

    program = program_for(CALLS, tmp_path, regions={"data": np.arange(256, dtype=np.uint32), "flags": 64},
                          words=(3, 4))
    if trace:
        options["trace"] = tmp_path / "trace.json"
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the findings are the test's: run.findings)
        patch.setattr(traps.TrapTable, "answer_in_c", spy)
        result, run = run_to_end(program, **options)
    story = run._loaded.machine.story()
    return result, run, story, tables[0].native.answered


@pytest.mark.parametrize("options", [{}, {"coherence": "strict"}, {"cache": "card-size"}],
                         ids=["card", "strict", "card-size"])
def test_answered_in_c_as_python_answers(tmp_path, options):
    result, run, story, answered = _run(tmp_path / "c", trace=False, **options)
    reference, reference_run, reference_story, none = _run(tmp_path / "python", trace=True, **options)
    # (at least the 50 flushes of a region nothing was written to; the invalidates too where the
    # host's memory lets C give the view back; with a trace every call is Python's)
    assert answered >= 50 and none == 0
    assert list(result.words[:10]) == list(reference.words[:10])
    assert list(result.words[:7]) == [7, 2, 1, 1024, 0, 0x4000, 1]
    assert [(f.kind, f.message) for f in run.findings] == [(f.kind, f.message) for f in reference_run.findings]
    assert any(f.kind == "invalidate-dropped-writes" for f in run.findings)
    assert np.array_equal(run.thread.read("data"), reference_run.thread.read("data"))
    assert _expand(story.steps) == _expand(reference_story.steps)
    assert [step.detail for step in story.steps] == [step.detail for step in reference_story.steps]
    assert story.stopped == reference_story.stopped


SPIN = r"""
#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(0, 0);
    uint32_t spins = kmx_word(0), seen = 0;
    for (uint32_t i = 0; i < spins; i++) {
        kmx_invalidate(0);
        seen += flags[0];
    }
    kmx_result(0, &seen, 1);
    return 0;
}
"""


def test_a_spin_on_invalidate_stays_in_c_and_is_one_step(tmp_path, monkeypatch):
    python_calls = []
    dispatch = traps.TrapTable.dispatch
    monkeypatch.setattr(traps.TrapTable, "dispatch",
                        lambda table, core: (python_calls.append(core.call_arguments()[0]), dispatch(table, core))[1])
    program = program_for(SPIN, tmp_path, regions={"flags": np.array([7], np.uint32)}, words=(5000,))
    result, run = run_to_end(program)
    assert result.words[0] == 7 * 5000
    assert python_calls.count(traps.Call.INVALIDATE) <= 3  # (the first, and one after the line was first loaded)
    steps = [step for step in run._loaded.machine.story().steps if step.what == "kmx_invalidate(0)"]
    assert len(steps) <= 3 and len(_expand(steps)) == 5000
    assert steps[-1].detail.endswith("times in a row")


OTHER_CORE = r"""
#include "kmx.h"

/* Core 1 writes (its TLB may write the page), core 0 flushes the page clean, core 1
   writes again and never flushes: its write must be seen (a fill), so the thread's end
   finds it unflushed. */
int kmx_main(int core) {
    uint32_t* out = (uint32_t*)kmx_region(0, 0);
    out[core * 4] = 1;
    kmx_barrier();
    if (core == 0)
        kmx_flush(0);
    kmx_barrier();
    if (core == 1)
        out[8] = 2;
    return 0;
}
"""


@pytest.mark.parametrize("cores", [2, 4])
def test_a_flush_makes_every_core_forget_the_page(tmp_path, cores):
    program = program_for(OTHER_CORE, tmp_path, regions={"out": 64}, cores=cores)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, run = run_to_end(program)
    assert [f.kind for f in run.findings] == ["unflushed-write"]
    assert "core 1" in run.findings[0].message


WAITS = r"""
#include "kmx.h"

/* The shape of every wait for the Tensix side: spin on a flag (kmx_invalidate, a load)
   until the stand-in raises it, reading the data it wrote under lines the cache holds. */
int kmx_main(int core) {
    (void)core;
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(0, 0);
    volatile uint32_t* data = (volatile uint32_t*)kmx_region(1, 0);
    uint32_t out[4] = {0}, seen = data[0];  /* (cached: the stand-in writes under it) */
    for (uint32_t round = 1; round <= 3; round++) {
        do {
            kmx_invalidate(0);
            out[3]++;
        } while (flags[0] < round);
        kmx_invalidate(1);
        out[round - 1] = data[0] + seen;
    }
    kmx_result(0, out, 3);
    return 0;
}
"""


def _stand_in(noc):
    for round_ in range(1, 4):
        for _ in range(20):
            noc.read("flags", 0, 4)
        noc.write("data", 0, np.array([100 * round_], np.uint32))
        noc.write("flags", 0, np.array([round_], np.uint32))


@pytest.mark.parametrize("coherence", ["card", "strict"])
def test_a_wait_for_a_stand_in_as_python_answers(tmp_path, coherence):
    outcomes = []
    for trace in (False, True):
        folder = tmp_path / str(trace)
        folder.mkdir()
        program = program_for(WAITS, folder, regions={"flags": 64, "data": np.array([7], np.uint32)})
        program.noc_agent("tensix", _stand_in, cluster=1)
        options = {"coherence": coherence, **({"trace": folder / "trace.json"} if trace else {})}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result, run = run_to_end(program, **options)
        story = run._loaded.machine.story()
        outcomes.append((list(result.words[:3]), [(f.kind, f.message) for f in run.findings],
                         _expand(story.steps), story.stopped))
    assert outcomes[0] == outcomes[1]  # (a spin at one line is one step, counted, whoever answers)
    words, _, steps, stopped = outcomes[0]
    if coherence == "card":
        assert words == [100 + 7, 200 + 7, 300 + 7]
    assert not stopped and len(steps) > 100


POLLED = r"""
#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    volatile uint32_t* data = (volatile uint32_t*)kmx_region(0, 0);  /* never invalidated: a finding that grows */
    volatile uint32_t* flag = (volatile uint32_t*)kmx_region(1, 0);
    uint32_t acc = 0, n = kmx_word(0);
    for (uint32_t i = 0; i < n; i++) {
        kmx_invalidate(1);
        acc += flag[0];
        if (i % 10000 == 0)
            acc += data[(i / 10000) * 16];
    }
    kmx_result(0, &acc, 1);
    return 0;
}
"""


def test_findings_read_while_the_cores_run_lose_no_step(tmp_path):
    """run.findings on another thread names the findings' bytes again (the observers hear
    it there): the calls C queued meanwhile are told on the cores' host thread only, none
    lost, none twice."""
    import threading

    calls = 300_000
    program = program_for(POLLED, tmp_path, regions={"data": 40 * 64, "flag": 64}, words=(calls,))
    errors, done = [], threading.Event()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with km.Session() as session:
            run = session.load(program)

            def poll():
                while not done.is_set():
                    try:
                        run.findings
                    except Exception as error:  # noqa: BLE001 (the test's: any error fails it)
                        errors.append(error)
                        return

            poller = threading.Thread(target=poll)
            poller.start()
            try:
                run.thread_result(timeout=600)
            finally:
                done.set()
                poller.join()
                run.stop()
    assert errors == []
    steps = [step for step in run._loaded.machine.story().steps if step.what == "kmx_invalidate(1)"]
    assert len(_expand(steps)) == calls


def test_calls_c_numbers_the_calls_as_kmx_h_does():
    source = (Path(traps.__file__).resolve().parent.parent / "native" / "calls.c").read_text()
    numbers = dict(re.findall(r"CALL_([A-Z_]+) = (\d+)", source))
    assert numbers and {name: int(n) for name, n in numbers.items()} == {
        name: int(traps.Call[name]) for name in numbers}


BARRIERS = r"""
#include "kmx.h"

/* Barrier-heavy, and racy where turns end: each round every core adds to a shared word
   without atomics (what is lost depends on where each turn ends), waits in kmx_barrier,
   reads the word, and spins until core 0 has raised the round's flag (how long depends on
   the turns), then waits again. Word 1 of the arguments: the core that returns before the
   last barrier (-1: none), which the others then wait for for ever (a fault). */
int kmx_main(int core) {
    volatile uint32_t* shared = (volatile uint32_t*)kmx_region(0, 0);
    uint32_t rounds = kmx_word(0), seen = 0, spins = 0;
    for (uint32_t round = 0; round < rounds; round++) {
        for (uint32_t i = 0; i < (core + round) % 5 + 1; i++)
            shared[0] = shared[0] + 1;
        kmx_barrier();
        seen = seen * 31 + shared[0];
        if (core == 0)
            shared[1] = round + 1;
        else
            while (shared[1] <= round)
                spins++;
        if (round + 1 == rounds && (int)kmx_word(1) == core)
            return 0;
        kmx_barrier();
    }
    uint32_t out[2] = {seen, spins};
    kmx_result(2 * core, out, 2);
    return 0;
}
"""


def _barriers(tmp_path, cores: int, *, python: bool, leaves: int = -1, rounds: int = 40, **options):
    """BARRIERS on CORES cores (every call answered by Python: PYTHON, with a trace): the
    results (or the fault), the findings, the turns, the story, and the barriers Python
    answered and those C answered."""
    tmp_path.mkdir()
    tables, barriers = [], []
    answer_in_c, dispatch = traps.TrapTable.answer_in_c, traps.TrapTable.dispatch

    def spy(table, *args):
        tables.append(table)
        return answer_in_c(table, *args)

    def counted(table, core):
        barriers.append(core.call_arguments()[0] == traps.Call.BARRIER)
        return dispatch(table, core)

    program = program_for(BARRIERS, tmp_path, regions={"shared": 64}, words=(rounds, leaves & 0xFFFF_FFFF),
                          cores=cores)
    if python:
        options["trace"] = tmp_path / "trace.json"
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        patch.setattr(traps.TrapTable, "answer_in_c", spy)
        patch.setattr(traps.TrapTable, "dispatch", counted)
        with km.Session(**options) as session:
            run = session.load(program)
            try:
                result = run.thread_result(timeout=120)
                outcome = list(result.words[: 2 * cores])
            except km.ThreadFault as fault:
                outcome = [fault.core, Path(fault.file).name, fault.line, fault.cause]
            finally:
                run.stop()
    story = run._loaded.machine.story()
    return (outcome, [(f.kind, f.message) for f in run.findings], run.schedule, _expand(story.steps),
            story.stopped), sum(barriers), tables[0].native.answered


@pytest.mark.parametrize("cores", [2, 4])
@pytest.mark.parametrize("options", [{}, {"quantum": 23}, {"schedule_seed": 1}, {"schedule_seed": 7, "quantum": 37}],
                         ids=["round-robin", "round-robin-quantum-23", "seed-1", "seed-7-quantum-37"])
def test_barriers_answered_in_c_as_python_answers(tmp_path, cores, options):
    """The same results, findings, turns (each core's choice and length) and story as when
    Python answers every barrier; and the turns recorded replay to the same run, barriers
    in C or not."""
    in_c, python_barriers, answered = _barriers(tmp_path / "c", cores, python=False, **options)
    reference, _, none = _barriers(tmp_path / "python", cores, python=True, **options)
    assert in_c == reference
    assert none == 0 and answered > 40 * cores  # (the story's steps too: no line changes at a barrier)
    assert python_barriers < 2 * cores + 2  # (the start code's, and the first at each line while the story steps)
    for python in (False, True):
        replayed, _, _ = _barriers(tmp_path / f"replay-{python}", cores, python=python, schedule=in_c[2])
        assert replayed[:2] == in_c[:2] and replayed[2].turns[: len(in_c[2].turns)] == in_c[2].turns


@pytest.mark.parametrize("cores", [2, 4])
def test_a_barrier_a_core_left_is_the_same_fault_answered_in_c(tmp_path, cores):
    """A core returns before the last barrier while the others wait in it (blocked in C):
    the same fault, at the same turn, as when Python answers every barrier."""
    in_c, _, answered = _barriers(tmp_path / "c", cores, python=False, leaves=cores - 1, rounds=5, schedule_seed=3)
    reference, _, _ = _barriers(tmp_path / "python", cores, python=True, leaves=cores - 1, rounds=5, schedule_seed=3)
    assert in_c == reference and answered > 0
    core, file, line, cause = in_c[0]
    assert (core, file, line) == (0, "thread.c", 24) and "never complete" in cause



def test_barriers_of_two_clusters_in_one_loop_as_python_answers(tmp_path):
    """Clusters 2 and 3 take their turns in one loop under a seed (their cores one group):
    each cluster's barriers, answered in C, make its own cores ready or not there; the
    results and the turns are those of every call in Python."""
    outcomes, answered = [], []
    answer_in_c = traps.TrapTable.answer_in_c
    for python in (False, True):
        tables = []

        def spy(table, *args):
            tables.append(table)
            return answer_in_c(table, *args)

        folder = tmp_path / str(python)
        folder.mkdir()
        program = program_for(BARRIERS, folder, cluster=2, regions={"shared": 64}, words=(30, 0xFFFF_FFFF), cores=4)
        program.thread(cluster=3, sources=[folder / "thread.c"], regions={"shared": 64}, words=(30, 0xFFFF_FFFF),
                       cores=4)
        options = {"trace": folder / "trace.json"} if python else {}
        with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (its reads before an invalidate are the other tests')
            patch.setattr(traps.TrapTable, "answer_in_c", spy)
            with km.Session(schedule_seed=5, quantum=41, **options) as session:
                run = session.load(program)
                words = [list(run.threads[c].result(timeout=120).words[:8]) for c in (2, 3)]
                run.stop()
        outcomes.append((words, run.schedule))
        answered.append([table.native.answered for table in tables])
    assert outcomes[0] == outcomes[1]
    assert min(answered[0]) > 100 and answered[1] == [0, 0]
