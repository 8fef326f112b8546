"""The profile (km.Session(profile=True), run.profile()): exact counts by line, against a
run of single steps; the call tree's counts; the table, the annotated source and the
collapsed stacks; the cache's events by line."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import komorebi as km
from komorebi.sim.machine.card import Card
from komorebi.sim.machine.config import MachineConfig
from komorebi.sim.image.elf import load_image
from komorebi.sim.build.thread import build_thread
from tests.threads import THREADS

SOURCE = THREADS / "profiled.c"


def profiled(tmp_path, cores=1, **session):
    program = km.Program("profiled", kernels=tmp_path)
    program.thread(cluster=1, sources=[SOURCE], regions={"data": np.arange(64, dtype=np.uint32)}, cores=cores)
    with km.Session(profile=True, **session) as s:
        run = s.load(program)
        result = run.thread_result(timeout=60)
        while not result.final:
            result = run.thread_result(timeout=60)
        run.stop()
    return run, result


def test_the_counts_by_line_are_every_instruction_a_single_step_run_sees():
    """The reference: the same thread run one instruction at a time (a turn of one,
    sim/native/turns.c), each pc seen once a step."""
    image = load_image(build_thread([SOURCE]).elf)

    def place(profile: bool):
        card = Card(MachineConfig(profiled=profile))
        cluster = card.place_thread(1, image, [("data", np.arange(64, dtype=np.uint32))], [], 1)
        return card, cluster

    card, cluster = place(True)
    core = cluster.cores[0]
    while core.state.value == "ready":
        core.run()
        cluster.runnable()
    stepped_card, stepped = place(True)
    stepped.cores[0].native.profile.on = 0  # (counting on, the profile off: the turns of one are the reference)
    seen: Counter = Counter()
    one = stepped.cores[0]
    while one.state.value == "ready":
        seen[one.pc] += 1
        one.run(1)
        stepped.runnable()
    assert one.cycles == core.cycles == sum(seen.values())
    explainer = cluster.explainer
    by_line: Counter = Counter()
    for pc, times in seen.items():
        source = explainer.source_line(explainer.unstubbed(pc))
        by_line[(source.file, source.line) if source else None] += times  # (the C library's: no lines)
    card.stop()
    stepped_card.stop()
    counted = cluster.profile.result[0][0]
    got: Counter = Counter()
    for c in counted.lines:
        got[(c.file, c.line) if c.file else None] += c.instructions
    assert got == by_line
    assert counted.instructions == core.cycles
    assert sum(count for _, count in counted.stacks) == core.cycles


def test_the_call_tree_counts_calls_and_what_they_ran(tmp_path):
    run, result = profiled(tmp_path)
    assert result.words[:3].tolist() == [189, 55, 110]
    profile = run.profile()
    core = profile.core(0)
    functions = {f.name: f for f in core.functions}
    assert functions["fib"].calls == 177  # fib(10): 177 calls
    assert functions["twice"].calls == 1 and functions["triple_all"].calls == 1
    callees = ("fib", "triple_all", "twice", "kmx_region", "kmx_invalidate", "kmx_flush", "kmx_result")
    assert functions["kmx_main"].inclusive == functions["kmx_main"].own + sum(functions[n].inclusive for n in callees)
    assert functions["kmx__start"].inclusive == core.instructions
    assert functions["fib"].inclusive == functions["fib"].own  # (recursion: inside the first call's count)
    stacks = dict(core.stacks)
    deepest = max((s for s in stacks if s[-1] == "fib"), key=len)
    assert deepest[-10:] == ("fib",) * 10 and "kmx_main" in deepest
    assert any(s[-2:] == ("kmx_main", "twice") for s in stacks)


@pytest.mark.parametrize("quantum", [1, 7, 50])
def test_the_call_tree_is_the_same_whatever_the_turns(tmp_path, quantum):
    """Short turns end inside blocks, whose rest runs in the interpreter (isa.c) or a block
    translated for it: a call into a block so begun is followed all the same."""
    mains = ("kmx_main", "fib", "triple_all", "twice", "kmx_region", "kmx_invalidate", "kmx_flush", "kmx_result")

    def table(**session):  # (the start's spins on the C library's lock are the turns', not kmx_main's)
        run, _ = profiled(tmp_path, cores=2, **session)
        return [sorted((f.name, f.calls, f.own, f.inclusive) for f in run.profile().core(n).functions if f.name in mains)
                for n in range(2)]

    assert table(quantum=quantum) == table(quantum=100_000)


def test_the_table_annotation_and_flame_graph(tmp_path):
    run, _ = profiled(tmp_path, cores=2, quantum=100_000)  # (each core whole in a turn: the thread is one core's)
    profile = run.profile()
    text = str(profile)
    assert "cluster 1 core 0:" in text and "cluster 1 core 1:" in text
    assert "profiled.c:8 (fib)" in text.splitlines()[2]  # (the top line)
    assert "profiled.c:12 (triple_all)" in profile.table(top=40)
    annotated = profile.annotate(tmp_path / "annotated.txt").read_text()
    assert f"==> {SOURCE} <==" in annotated
    fib_line = next(line for line in annotated.splitlines() if "static int __attribute__((noinline)) fib" in line)
    assert fib_line.split("|")[0].strip(), fib_line  # (a count)
    flush_line = next(line for line in annotated.splitlines() if "kmx_flush(0);" in line)
    assert "bytes flushed" in flush_line
    stacks = profile.flamegraph(tmp_path / "stacks.txt").read_text().splitlines()
    total = sum(int(line.rsplit(" ", 1)[1]) for line in stacks)
    assert total == sum(c.instructions for c in profile.cores)
    assert any(line.startswith("cluster 1 core 1;kmx__start;kmx__start_core;kmx_main;fib;fib ") for line in stacks)


def test_the_cache_events_by_line(tmp_path):
    run, _ = profiled(tmp_path)
    events = {(e.file, e.line): e for e in run.profile().cache}
    lines = (SOURCE.read_text().splitlines())
    flush = next(n for n, text in enumerate(lines, 1) if "kmx_flush(0);" in text)
    assert events[(str(SOURCE), flush)].bytes_flushed == 256
    assert sum(e.pages_filled for e in events.values()) >= 1
    assert sum(e.pages_first_written for e in events.values()) == 1


def test_a_profile_needs_a_profiled_and_stopped_run(tmp_path):
    with pytest.raises(TypeError, match="profile must be True or False"):
        km.Session(profile=1)
    program = km.Program("plain", kernels=tmp_path)
    program.thread(cluster=1, sources=[SOURCE], regions={"data": np.arange(64, dtype=np.uint32)})
    with km.Session() as s:
        run = s.load(program)
        with pytest.raises(RuntimeError, match="after run.stop"):
            run.profile()
        run.thread_result(timeout=60)
        run.stop()
        with pytest.raises(RuntimeError, match="km.Session\\(profile=True\\)"):
            run.profile()


def run_text(tmp_path, text, cores=1, **session):
    source = tmp_path / "thread.c"
    source.write_text(text)
    (tmp_path / "kernels").mkdir(exist_ok=True)
    program = km.Program("profiled", kernels=tmp_path / "kernels")
    program.thread(cluster=1, sources=[source], cores=cores)
    with km.Session(profile=True, **session) as s:
        run = s.load(program)
        try:
            run.thread_result(timeout=60)
        except km.ThreadFault:
            pass
        run.stop()
    return run.profile(), source


LONGJMP = """#include <setjmp.h>
#include "kmx.h"
static jmp_buf back;
int __attribute__((noinline)) thrower(int depth) {
    if (depth == 0)
        longjmp(back, 1);
    return thrower(depth - 1) + 1;
}
int __attribute__((noinline)) work(int n) {
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i * 3;
    return s;
}
int kmx_main(int core) {
    if (!setjmp(back))
        thrower(5);
    uint32_t s = (uint32_t)work(100);
    kmx_result(0, &s, 1);
    return 0;
}
"""


def test_after_a_longjmp_the_caller_goes_on_in_its_own_frame(tmp_path):
    profile, _ = run_text(tmp_path, LONGJMP)
    stacks = dict(profile.core(0).stacks)
    works = [s for s in stacks if s[-1] == "work"]
    assert works == [("kmx__start", "kmx__start_core", "kmx_main", "work")], works
    assert max(len(s) for s in stacks if "thrower" in s) <= 4 + 6 + 2  # (thrower 6 deep, then longjmp)
    functions = {f.name: f for f in profile.core(0).functions}
    assert functions["thrower"].calls == 6 and functions["longjmp"].inclusive < 60


FAULT = """#include "kmx.h"
int kmx_main(int core) {
    if (core == 1)
        *(volatile int *)16 = core;
    kmx_barrier();
    return 0;
}
"""


def test_a_fault_counts_no_instruction_after_it(tmp_path):
    profile, source = run_text(tmp_path, FAULT, cores=2)
    core = profile.core(1)
    lines = {(c.file, c.line): c.instructions for c in core.lines}
    assert (str(source), 4) in lines and (str(source), 5) not in lines
    assert sum(c.instructions for c in core.lines) == core.instructions == sum(n for _, n in core.stacks)
