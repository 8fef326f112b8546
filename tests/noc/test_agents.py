"""Tensix stand-ins (program.noc_agent, sim/noc/agent.py): a Python function that reads
and writes a thread's regions in DRAM, past the X280's cache, as one more participant in
the cluster's schedule; what the card does with it, what the checker says, and the errors."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import komorebi as km
from tests.threads import program_for

WORDS = 1024
REGIONS = {"data": 4 * WORDS, "flags": 128, "out": 4 * WORDS}
DATA = np.arange(WORDS, dtype=np.uint32) + 7


def producer(noc):
    """The stand-in of tests/threads/exchange.c: the data, its flag, the thread's flag,
    the results, then "I have read them"."""
    noc.write("data", 0, DATA)
    noc.write("flags", 0, np.uint32([1]))
    noc.wait("flags", 64, 1)
    out = noc.read("out", 0, 4 * WORDS)
    noc.write("flags", 0, np.uint32([2]))
    return out


def exchange(tmp_path, invalidate=True, flush=True, agent=producer, name="producer"):
    program = program_for("exchange.c", tmp_path, regions=REGIONS, words=[int(invalidate), int(flush)])
    program.noc_agent(name, agent, cluster=1)
    return program


def run(program, timeout=120.0, **session):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", km.CoherenceWarning)
        with km.Session(**session) as s:
            loaded = s.load(program)
            result = loaded.thread_result(timeout=timeout)
            loaded.stop()
    return result, loaded


def kinds(loaded):
    return sorted(f.kind for f in loaded.findings)


# -- what the card does ------------------------------------------------------------------------


@pytest.mark.parametrize("coherence", ["card", "strict"])
def test_a_right_exchange_gets_its_results_and_finds_nothing(tmp_path, coherence):
    result, loaded = run(exchange(tmp_path), coherence=coherence)
    agent = loaded.agent("producer")
    assert agent.done and agent.error is None and agent.steps == 6  # (its start, and five calls)
    assert (agent.result.view(np.uint32) == 2 * DATA).all()
    assert (loaded.thread.read("out").view(np.uint32) == 2 * DATA).all()
    assert int(result.words[0]) > 1  # the thread spun on the flag while the stand-in wrote
    assert loaded.findings == []


def test_without_the_invalidate_the_thread_reads_the_old_bytes_and_the_checker_names_the_write(tmp_path):
    result, loaded = run(exchange(tmp_path, invalidate=False))
    got = loaded.thread.read("out").view(np.uint32)
    assert int(result.words[1]) == 0  # the data's line was cached holding zeros
    assert (got[:16] == 0).all()  # its first line: the cache's old bytes, doubled
    found = [f for f in loaded.findings if f.kind == "stale-read"]
    assert len(found) == 1
    f = found[0]
    assert f.region == "data" and f.file.endswith("exchange.c") and f.line == 29
    assert f.agent == "producer" and f.agent_file == __file__ and f.agent_line == 24
    assert "agent 'producer' had written them to DRAM" in f.message and "kmx_invalidate(0)" in f.message


def test_without_the_flush_the_stand_in_reads_old_dram_and_the_checker_names_both_places(tmp_path):
    _, loaded = run(exchange(tmp_path, flush=False))
    assert (loaded.agent("producer").result == 0).all()  # DRAM's zeros: the results were in the cache
    assert (loaded.thread.read("out").view(np.uint32) == 2 * DATA).all()  # (the hand-back, at the end)
    f = next(f for f in loaded.findings if f.kind == "noc-read-unflushed")
    assert f.region == "out" and (f.start, f.end) == (0, 4 * WORDS)
    assert f.file.endswith("exchange.c") and f.line == 29  # the core's store
    assert f.agent == "producer" and f.agent_file == __file__ and f.agent_line == 27  # the stand-in's read
    assert "kmx_flush(2)" in f.message
    assert kinds(loaded) == ["noc-read-unflushed", "unflushed-write"]


def test_in_strict_mode_the_same_mistakes_are_named(tmp_path):
    _, loaded = run(exchange(tmp_path, flush=False), coherence="strict")
    assert (loaded.agent("producer").result == 0).all()
    assert "noc-read-unflushed" in kinds(loaded)


def test_noc_read_is_dram_never_the_cache_and_noc_write_changes_nothing_of_the_callers(tmp_path):
    data = DATA.copy()
    seen = {}

    def agent(noc):
        noc.write("data", 0, data)
        data[:] = 0  # (the stand-in's own array, changed after the write: DRAM keeps what was written)
        got = noc.read("data", 0, 4 * WORDS)
        got[:] = 1  # (a copy: DRAM does not change)
        seen["again"] = noc.read("data", 0, 4 * WORDS).view(np.uint32).copy()
        producer(noc)

    _, loaded = run(exchange(tmp_path, agent=agent))
    assert (seen["again"] == DATA).all()
    assert loaded.agent("producer").error is None


# -- the schedule ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [None, 5])
def test_the_same_program_and_seed_give_the_same_steps_bytes_and_findings_and_replay(tmp_path, seed):
    options = {} if seed is None else {"schedule_seed": seed}
    runs = [run(exchange(tmp_path, flush=False), **options)[1] for _ in range(2)]
    schedule = runs[0].schedule
    assert any(core == 4 for _, core, _ in schedule.turns)  # the stand-in's steps: "core" 4, one each
    assert all(n == 1 for _, core, n in schedule.turns if core == 4)
    assert runs[1].schedule.turns == schedule.turns
    assert runs[1].findings == runs[0].findings
    replayed = run(exchange(tmp_path, flush=False), schedule=schedule)[1]
    assert replayed.schedule.turns == schedule.turns
    assert replayed.findings == runs[0].findings
    assert (replayed.agent("producer").result == runs[0].agent("producer").result).all()


def test_seeds_place_the_steps_differently(tmp_path):
    steps = set()
    for seed in range(3):
        turns = run(exchange(tmp_path), schedule_seed=seed)[1].schedule.turns
        steps.add(tuple(i for i, (_, core, _) in enumerate(turns) if core == 4))
    assert len(steps) > 1


def test_pct_places_the_stand_ins_steps_as_it_places_the_cores_turns(tmp_path):
    program = exchange(tmp_path, flush=False)
    first = run(program)[1]
    schedule = km.Schedule.pct(3, instructions=first.schedule.instructions)
    _, loaded = run(exchange(tmp_path, flush=False), schedule=schedule)
    assert any(core == 4 for _, core, _ in loaded.schedule.turns)
    assert "noc-read-unflushed" in kinds(loaded)


def test_a_lone_core_takes_turns_while_a_stand_in_waits_and_runs_without_limit_after(tmp_path):
    _, loaded = run(exchange(tmp_path))
    turns = loaded.schedule.turns
    last_step = max(i for i, (_, core, _) in enumerate(turns) if core == 4)
    assert all(n > 0 for _, core, n in turns[:last_step] if core == 0)


# -- the story, the trace ------------------------------------------------------------------------


def test_the_story_and_the_trace_show_the_stand_ins_steps_at_its_lines(tmp_path):
    trace = tmp_path / "trace.json"
    _, loaded = run(exchange(tmp_path, flush=False), trace=trace)
    page = loaded.cache_story(tmp_path / "story.html").read_text()
    assert "agent 'producer': noc.write('data', 0, 4096 bytes)" in page
    events = json.loads(trace.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert "agent producer" in names
    calls = [e for e in events if e.get("cat") == "noc"]
    assert [e["name"] for e in calls] == ["noc.write", "noc.write", "noc.wait", "noc.read", "noc.write"]
    assert calls[3]["args"]["line"] == f"{__file__}:27"
    assert any(e["name"] == "finding: noc-read-unflushed" for e in events)


# -- the end, and stopping -------------------------------------------------------------------------


def test_after_the_thread_ends_the_stand_in_goes_on_and_a_wait_nothing_can_answer_raises(tmp_path):
    def agent(noc):
        producer(noc)
        noc.wait("flags", 64, 7)  # (the thread never writes 7)

    _, loaded = run(exchange(tmp_path, agent=agent))
    error = loaded.agent("producer").error
    assert isinstance(error, RuntimeError)
    assert "DRAM will never hold 7 at byte 64 of region 'flags'" in str(error)


def test_a_stand_in_that_polls_after_the_thread_ended_finishes_before_stop_returns(tmp_path):
    def agent(noc):
        producer(noc)
        return [int(noc.read("out", 0, 4).view(np.uint32)[0]) for _ in range(50)]

    _, loaded = run(exchange(tmp_path, agent=agent))
    assert loaded.agent("producer").result == [2 * int(DATA[0])] * 50


def test_a_run_stopped_before_the_stand_in_returned_says_so(tmp_path):
    def agent(noc):
        noc.wait("flags", 64, 9)  # (never: the thread waits for the data that never comes)

    program = exchange(tmp_path, agent=agent)
    with km.Session() as session:
        loaded = session.load(program)
        with pytest.raises(TimeoutError) as raised:
            loaded.thread_result(timeout=0.5)
        loaded.stop()
    assert "agent 'producer': waiting in noc.wait('flags', 64, 9)" in str(raised.value)
    report = loaded.agent("producer")
    assert report.done and report.doing == "stopped before it returned"
    assert type(report.error).__name__ == "AgentStopped"


# -- errors ----------------------------------------------------------------------------------------


def test_a_stand_in_that_raises_keeps_its_error_and_a_thread_waiting_for_it_times_out_saying_so(tmp_path):
    def agent(noc):
        noc.write("data", 0, DATA)
        raise ValueError("the camera is unplugged")

    program = exchange(tmp_path, agent=agent)
    with km.Session() as session:
        loaded = session.load(program)
        with pytest.raises(TimeoutError) as raised:
            loaded.thread_result(timeout=1.0)
        loaded.stop()
    said = str(raised.value)
    assert "agent 'producer': failed: ValueError('the camera is unplugged')" in said
    assert f"at {__file__}:" in said and "agent 'producer' failed" in said
    error = loaded.agent("producer").error
    assert isinstance(error, ValueError) and error.__traceback__ is not None


@pytest.mark.parametrize("call, expected", [
    (lambda noc: noc.read("nope", 0, 4), (KeyError, "no region 'nope' on cluster 1; its regions are 'data' (4096 bytes)")),
    (lambda noc: noc.read("data", 4090, 8), (ValueError, "bytes 4090 to 4097 are outside region 'data', which is 4096 bytes")),
    (lambda noc: noc.read("data", 0, 0), (ValueError, "size must be at least 1 byte")),
    (lambda noc: noc.write("flags", 100, np.zeros(8, np.uint32)), (ValueError, "outside region 'flags', which is 128 bytes")),
    (lambda noc: noc.write("flags", 0, [1, 2]), (TypeError, "data must be bytes or a numpy array")),
    (lambda noc: noc.wait("flags", 2, 1), (ValueError, "offset 2 is not a multiple of 4")),
    (lambda noc: noc.wait("flags", 0, 1, dtype=np.complex64), (TypeError, "dtype must be a number of 1, 2, 4 or 8 bytes")),
    (lambda noc: noc.wait("flags", 0, 300, dtype=np.uint8), (ValueError, "value 300 is not one uint8")),
    (lambda noc: noc.wait("flags", 0, 2**70), (ValueError, f"value {2**70} is not one uint32 (a whole number 0 to 4294967295)")),
    (lambda noc: noc.wait("flags", 0, -1), (ValueError, "value -1 is not one uint32 (a whole number 0 to 4294967295)")),
    (lambda noc: noc.wait("flags", 0, -2**70, dtype=np.int64), (ValueError, f"value {-2**70} is not one int64 (a whole")),
    (lambda noc: noc.wait("flags", 0, 1.5), (ValueError, "value 1.5 is not one uint32 (a whole number")),
    (lambda noc: noc.wait("flags", 0, float("nan")), (ValueError, "value nan is not one uint32")),
    (lambda noc: noc.wait("flags", 0, "1"), (ValueError, "value '1' is not one uint32")),
    (lambda noc: noc.wait("flags", 0, 2, dtype=np.bool_), (ValueError, "value 2 is not one bool (True or False, 1 or 0)")),
    (lambda noc: noc.wait("flags", 0, 1e300, dtype=np.float32), (ValueError, "value 1e+300 is not one float32 (a number of")),
    (lambda noc: noc.wait("flags", 0, -1e300, dtype=np.float32), (ValueError, "value -1e+300 is not one float32")),
    (lambda noc: noc.wait("flags", 0, 2**2000, dtype=np.float64), (ValueError, "is not one float64 (a number of")),
    (lambda noc: noc.wait("flags", 0, 1e-300, dtype=np.float32), (ValueError, "value 1e-300 is not one float32")),
    (lambda noc: noc.wait("flags", 0, 1e5, dtype=np.float16), (ValueError, "value 100000.0 is not one float16")),
    (lambda noc: noc.wait("flags", 0, 1, timeout=-1), (ValueError, "timeout must be a number of seconds >= 0")),
])
def test_a_bad_noc_call_raises_at_the_call_naming_the_region_and_its_size(tmp_path, call, expected):
    def agent(noc):
        try:
            call(noc)
        except Exception as error:  # noqa: BLE001 - handed back for the test
            return error
        return None

    _, loaded = run(exchange(tmp_path, agent=lambda noc: (agent(noc), producer(noc))[0]))
    error = loaded.agent("producer").result
    kind, text = expected
    assert isinstance(error, kind) and text in str(error), repr(error)


def test_a_wait_past_its_timeout_raises_in_the_stand_in(tmp_path):
    def agent(noc):
        try:
            noc.wait("flags", 64, 5, timeout=0.2)  # (the thread waits for the data first: never)
        except TimeoutError as error:
            producer(noc)
            return str(error)

    _, loaded = run(exchange(tmp_path, agent=agent))
    assert "did not hold 5 at byte 64 of region 'flags' within the timeout" in loaded.agent("producer").result


def test_a_dtype_that_does_not_divide_the_region(tmp_path):
    program = program_for("exchange.c", tmp_path, regions={"data": 4 * WORDS, "flags": 128, "out": 4 * WORDS, "odd": 6},
                          words=[1, 1])

    def agent(noc):
        try:
            noc.wait("odd", 0, 1)
        except ValueError as error:
            producer(noc)
            return str(error)

    program.noc_agent("producer", agent, cluster=1)
    _, loaded = run(program)
    assert "a uint32 (4 bytes) does not divide region 'odd', which is 6 bytes" in loaded.agent("producer").result


def test_noc_agent_refuses_a_cluster_without_a_thread_a_name_twice_and_too_many(tmp_path):
    program = program_for("exchange.c", tmp_path, regions=REGIONS)
    with pytest.raises(ValueError, match="cluster 2 has no thread in program 'test'"):
        program.noc_agent("a", producer, cluster=2)
    program.noc_agent("a", producer, cluster=1)
    with pytest.raises(ValueError, match="has an agent named 'a' already"):
        program.noc_agent("a", producer, cluster=1)
    with pytest.raises(TypeError, match="function must be a callable"):
        program.noc_agent("b", 3, cluster=1)
    with pytest.raises(TypeError, match="name must be a str"):
        program.noc_agent(b"b", producer, cluster=1)
    for name in "bcd":
        program.noc_agent(name, producer, cluster=1)
    with pytest.raises(ValueError, match="cluster 1 has 4 agents already"):
        program.noc_agent("e", producer, cluster=1)


def test_run_agent_names_the_agents_it_has(tmp_path):
    _, loaded = run(exchange(tmp_path))
    with pytest.raises(KeyError, match="no agent 'nope' in this run; its agents are 'producer'"):
        loaded.agent("nope")


def test_two_stand_ins_on_one_cluster_take_their_own_steps(tmp_path):
    def second(noc):
        return int(noc.wait("flags", 0, 2))  # (the first one's "read done")

    program = exchange(tmp_path)
    program.noc_agent("watcher", second, cluster=1)
    _, loaded = run(program)
    assert loaded.agent("watcher").result == 2
    assert {core for _, core, _ in loaded.schedule.turns} == {0, 4, 5}


def test_a_wait_for_a_value_of_eight_bytes_past_32_bits(tmp_path):
    big = 2**40 + 5

    def writer(noc):
        producer(noc)
        noc.write("out", 8, np.uint64([big]))

    def waiter(noc):
        return int(noc.wait("out", 8, big, dtype=np.uint64))

    program = exchange(tmp_path, agent=writer)
    program.noc_agent("waiter", waiter, cluster=1)
    _, loaded = run(program)
    assert loaded.agent("waiter").result == big and loaded.agent("waiter").error is None


# -- what a review found: the thread's end by a fault, pct, the trace, the limits -----------------

FAULT_AND_SPIN = r"""
#include "kmx.h"
int kmx_main(int core) {
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(1, 0);
    if (core == 0)
        *(volatile uint32_t*)0 = 1;  /* line 6: a fault */
    for (;;)
        kmx_invalidate(1);  /* core 1: spins for ever */
    return flags[0];
}
"""


def test_a_fault_ends_the_thread_and_a_stand_in_waiting_for_it_fails_at_once(tmp_path):
    def agent(noc):
        noc.wait("flags", 0, 12345)

    program = program_for(FAULT_AND_SPIN, tmp_path, regions=REGIONS, cores=2)
    program.noc_agent("producer", agent, cluster=1)
    with km.Session() as session:
        loaded = session.load(program)
        with pytest.raises(km.ThreadFault):
            loaded.thread_result(timeout=60)
        loaded.stop()  # (returns: the spinning core ended with the fault, and the wait failed)
    error = loaded.agent("producer").error
    assert isinstance(error, RuntimeError) and "DRAM will never hold 12345" in str(error)


def test_pct_counts_a_lone_cores_instructions_and_its_seeds_differ(tmp_path):
    first = run(exchange(tmp_path))[1]
    [(cluster, instructions)] = first.schedule.instructions
    assert cluster == 1 and instructions > 1000  # (a stand-in is no core: no start barrier is waited for)
    turns = {tuple(run(exchange(tmp_path), schedule=km.Schedule.pct(seed, instructions=first.schedule.instructions))[1]
                   .schedule.turns) for seed in range(4)}
    assert len(turns) > 1


def test_under_pct_a_stand_in_that_polls_does_not_starve_the_core(tmp_path):
    def poller(noc):
        producer_first = noc.write("data", 0, DATA), noc.write("flags", 0, np.uint32([1]))
        while int(noc.read("flags", 64, 4).view(np.uint32)[0]) != 1:  # (polls, rather than waits)
            pass
        noc.write("flags", 0, np.uint32([2]))
        return producer_first is not None

    for seed in range(4):
        _, loaded = run(exchange(tmp_path, agent=poller), schedule=km.Schedule.pct(seed, depth=1), timeout=120)
        assert loaded.agent("producer").result is True


def test_a_trace_does_not_change_a_seeds_turns(tmp_path):
    plain = run(exchange(tmp_path), schedule_seed=7)[1].schedule.turns
    traced = run(exchange(tmp_path), schedule_seed=7, trace=tmp_path / "t.json")[1].schedule.turns
    assert plain == traced


def test_a_stand_in_that_calls_on_and_on_after_the_thread_ended_is_stopped(tmp_path, monkeypatch):
    from komorebi.sim.noc import agent as agents
    from komorebi.sim.machine import cluster

    monkeypatch.setattr(cluster, "STEPS_AFTER_END", 50)
    monkeypatch.setattr(agents, "STEPS_AFTER_END", 50)

    def stubborn(noc):
        producer(noc)
        while True:
            try:
                noc.read("out", 0, 4)
            except Exception:  # noqa: BLE001 - it swallows what it can
                pass

    _, loaded = run(exchange(tmp_path, agent=stubborn))
    error = loaded.agent("producer").error
    assert isinstance(error, km.AgentStopped) and "made 50 noc calls after the thread ended" in str(error)


def test_a_generator_or_async_function_is_refused(tmp_path):
    program = program_for("exchange.c", tmp_path, regions=REGIONS)

    def generator(noc):
        yield noc.read("data", 0, 4)

    async def coroutine(noc):
        return None

    for function in (generator, coroutine):
        with pytest.raises(TypeError, match="its body would never run"):
            program.noc_agent("a", function, cluster=1)


def test_an_endless_timeout_waits_for_ever(tmp_path):
    def agent(noc):
        noc.write("data", 0, DATA)
        noc.write("flags", 0, np.uint32([1]))
        noc.wait("flags", 64, 1, timeout=float("inf"))
        noc.write("flags", 0, np.uint32([2]))
        return "done"

    _, loaded = run(exchange(tmp_path, agent=agent))
    assert loaded.agent("producer").result == "done"


def test_an_error_at_a_step_is_at_the_functions_own_line(tmp_path):
    def agent(noc):
        noc.wait("flags", 64, 5, timeout=0.1)  # (line 1 of the function's body: a timeout)

    with km.Session() as session:
        loaded = session.load(exchange(tmp_path, agent=agent))
        with pytest.raises(TimeoutError):  # (the thread waits for the data that never comes)
            loaded.thread_result(timeout=0.5)
        loaded.stop()
    report = loaded.agent("producer")
    assert isinstance(report.error, TimeoutError)
    assert report.file == __file__ and report.line == agent.__code__.co_firstlineno + 1


def test_a_stand_in_that_polls_is_one_step_of_the_story(tmp_path):
    def poller(noc):
        producer(noc)
        for _ in range(200):
            noc.read("out", 0, 4)

    _, loaded = run(exchange(tmp_path, agent=poller))
    page = loaded.cache_story(tmp_path / "story.html").read_text()
    assert "200 times in a row" in page


def test_the_picture_says_what_each_stand_in_did_to_each_regions_dram(tmp_path):
    _, loaded = run(exchange(tmp_path, flush=False))
    report = loaded.cache_report()
    assert "  the Tensix side: agent 'producer' wrote all 4096 bytes to DRAM (1 noc.write, the last at test_agents.py:24)" in report
    assert "the Tensix side: agent 'producer' wrote bytes 0 to 3 to DRAM (2 noc.writes, the last at test_agents.py:28)" in report
    assert "the Tensix side: agent 'producer' read all 4096 bytes from DRAM (1 noc.read, the last at test_agents.py:27)" in report
    svg = loaded.cache_map(tmp_path / "map.svg").read_text()
    assert "agent &#x27;producer&#x27; read all 4096 bytes from DRAM" in svg or "agent 'producer' read all 4096 bytes" in svg


SHARED_LINE = r"""
#include "kmx.h"
int kmx_main(int core) {
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(1, 0);
    do kmx_invalidate(1); while (flags[0] != 1);
    for (volatile uint32_t i = 0; i < 5000; i++) {
    }
    flags[1] = 1;  /* line 8: the thread's flag, at byte 4: the stand-in's line */
    kmx_flush(1);
    return 0;
}
"""


def test_a_flush_over_a_stand_ins_bytes_in_the_same_line_loses_them_and_is_named(tmp_path):
    def agent(noc):
        noc.write("flags", 0, np.uint32([1]))
        noc.write("flags", 8, np.uint32([5]))  # (a second word, while the thread holds the line)
        noc.wait("flags", 4, 1)
        return int(noc.read("flags", 8, 4).view(np.uint32)[0])

    program = program_for(SHARED_LINE, tmp_path, regions=REGIONS)
    program.noc_agent("producer", agent, cluster=1)
    _, loaded = run(program)
    assert loaded.agent("producer").result == 0  # (the cache's older copy of byte 8 went back over the 5)
    f = next(f for f in loaded.findings if f.kind == "flush-over-noc-write")
    assert f.region == "flags" and (f.start, f.end) == (0, 64) and f.line == 9
    assert f.agent == "producer" and f.agent_file == __file__
    assert "a flush writes whole 64-byte lines" in f.message and "lines of their own" in f.message


# (imported here: the tests above name lines of this file)
import functools  # noqa: E402
import gc  # noqa: E402


class _GeneratorCall:
    """A callable whose __call__ is a generator function."""

    def __call__(self, noc):
        yield noc.read("data", 0, 4)


async def _coroutine_body(noc):
    noc.write("flags", 0, np.uint32([1]))


@functools.wraps(_coroutine_body)
def _wrapped_coroutine(noc):  # (looks like a plain function: inspect sees no async def)
    return _coroutine_body(noc)


class _AsyncGeneratorCall:
    def __call__(self, noc):
        return self.frames(noc)

    async def frames(self, noc):
        yield noc.read("data", 0, 4)


ENDS_AT_ONCE = '#include "kmx.h"\nint kmx_main(int core) {\n    (void)core;\n    return 0;\n}\n'


@pytest.mark.parametrize("function, made", [
    (_wrapped_coroutine, "a coroutine"),
    (_AsyncGeneratorCall(), "an async generator"),
    (lambda noc: _GeneratorCall()(noc), "a generator"),
], ids=["wrapped-async-def", "async-generator", "generator"])
def test_a_callable_that_makes_a_generator_or_coroutine_fails_at_its_first_step(tmp_path, function, made):
    program = program_for(ENDS_AT_ONCE, tmp_path, regions=REGIONS)
    program.noc_agent("a", function, cluster=1)  # (nothing to see before it is called)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, loaded = run(program)
        gc.collect()  # (a coroutine never awaited says so when collected)
    report = loaded.agent("a")
    assert report.done and report.result is None and report.doing.startswith("failed: TypeError")
    assert isinstance(report.error, TypeError)
    assert str(report.error) == (
        f"agent 'a': its function returned {made} without making a noc call, so its body never ran: a stand-in's "
        "function must be a plain function that calls noc.read, noc.write and noc.wait, not a generator or async function")
    assert not [w for w in caught if "never awaited" in str(w.message)]


def test_a_callable_object_whose_call_is_a_generator_is_refused_when_added(tmp_path):
    program = program_for(ENDS_AT_ONCE, tmp_path, regions=REGIONS)
    with pytest.raises(TypeError, match=r"not an object whose __call__ is a generator function: its body would never run"):
        program.noc_agent("a", _GeneratorCall(), cluster=1)


def test_a_plain_function_that_returns_a_generator_after_its_noc_calls_keeps_it_as_its_result(tmp_path):
    def agent(noc):
        words = noc.read("data", 0, 16).view(np.uint32)
        return (int(word) for word in words)  # (its body ran: the generator is what it returned)

    program = program_for(ENDS_AT_ONCE, tmp_path, regions=REGIONS)
    program.noc_agent("a", agent, cluster=1)
    _, loaded = run(program)
    assert loaded.agent("a").error is None and list(loaded.agent("a").result) == [0, 0, 0, 0]


def test_a_wait_for_a_float_takes_the_nearest_and_compares_bytes_so_nan_and_minus_zero_are_their_own(tmp_path):
    def writer(noc):
        producer(noc)
        noc.write("out", 0, np.float32([0.1, np.nan, -0.0, np.inf]))

    def waiter(noc):
        got = [noc.wait("out", 0, 0.1, dtype=np.float32), noc.wait("out", 4, float("nan"), dtype=np.float32),
               noc.wait("out", 12, float("inf"), dtype=np.float32)]
        try:
            noc.wait("out", 8, 0.0, dtype=np.float32, timeout=0)  # (DRAM holds -0.0: other bytes)
        except TimeoutError:
            got.append("-0.0 is not 0.0")
        return got

    program = exchange(tmp_path, agent=writer)
    program.noc_agent("waiter", waiter, cluster=1)
    _, loaded = run(program)
    got = loaded.agent("waiter").result
    assert loaded.agent("waiter").error is None
    assert got[0] == np.float32(0.1) and np.isnan(got[1]) and got[2] == np.inf and got[3] == "-0.0 is not 0.0"
