"""The simulated card against a plain write-back cache, a line at a time (tests/cache/
script_run.py, Reference): a thread reads and writes lines and pages, flushes, invalidates
and flushes lines, and a Tensix stand-in writes and reads DRAM between its steps; what the
thread read, what the stand-in read and DRAM at the end must be the reference's, in both
modes and with the card-size cache.

The reference is the memory model (docs/memory-model.md) said the simplest way: a line not in the cache is filled
from DRAM when a core touches it, a write makes it dirty (whatever it stores), a flush
writes the dirty lines back, an invalidate drops every line, a stand-in's noc.write
changes DRAM only. Hypothesis builds the script step by step (a stateful machine: each
rule is a step, and the reference takes it), then runs it on the card and compares.
Each example is one thread run, about 20 ms: the default suite runs a few dozen per
configuration, `-m slow` many more.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from tests.cache.script_run import (
    FLUSH,
    INVALIDATE,
    LINE,
    LINE_FLUSH,
    LOG_WORDS,
    PAGE,
    READ,
    READ_BYTE,
    READ_PAGE,
    SYNC,
    WRITE,
    WRITE_BYTE,
    WRITE_PAGE,
    Reference,
    Step,
    simulate,
)

PAGES = 2
INITIAL = (np.arange(PAGES * PAGE) * 7 % 251).astype(np.uint8)  # (bytes that differ from line to line)
# Lines where things collide: each page's first, second and last, and one in between.
LINES = [0, 1, 4, 63, 64, 65, 100, 127]
lines = st.sampled_from(LINES)
words = st.builds(lambda line, word: line * LINE + 8 * word, lines, st.sampled_from([0, 1, 7]))
byte_offsets = st.builds(lambda line, byte: line * LINE + byte, lines, st.sampled_from([0, 3, 63]))
# (strict mode's stale bytes too: a store of them over a stale line still makes it dirty)
values = st.one_of(st.integers(0, 3), st.just(0xA5A5_A5A5_A5A5_A5A5), st.integers(0, 2**64 - 1))
agent_write = st.builds(lambda at, data: ("write", at, data), byte_offsets, st.binary(min_size=1, max_size=72))
agent_read = st.builds(lambda at, size: ("read", at, size), byte_offsets, st.integers(1, 72))
agent_calls = st.lists(st.one_of(agent_write, agent_read), min_size=1, max_size=3).map(
    lambda calls: [call for call in calls if call[1] + (len(call[2]) if call[0] == "write" else call[2]) <= PAGES * PAGE])


class Card(RuleBasedStateMachine):
    """A script, built a step at a time against the reference, then run on the card."""

    session: dict = {}

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[Step] = []
        self.model = Reference(INITIAL, self.session.get("coherence") == "strict")

    def _do(self, step: Step) -> None:
        self.steps.append(step)
        self.model.step(step)

    @rule(at=words)
    def read(self, at):
        self._do(Step(READ, at))

    @rule(at=words, value=values)
    def write(self, at, value):
        self._do(Step(WRITE, at, value))

    @rule(at=byte_offsets)
    def read_byte(self, at):
        self._do(Step(READ_BYTE, at))

    @rule(at=byte_offsets, value=st.one_of(st.just(0xA5), st.integers(0, 255)))
    def write_byte(self, at, value):
        self._do(Step(WRITE_BYTE, at, value))

    @rule()
    def flush(self):
        self._do(Step(FLUSH))

    @rule()
    def invalidate(self):
        self._do(Step(INVALIDATE))

    @rule(at=words)
    def line_flush(self, at):
        self._do(Step(LINE_FLUSH, at))

    @rule(page=st.integers(0, PAGES - 1), value=values)
    def write_page(self, page, value):
        self._do(Step(WRITE_PAGE, page * PAGE, value))

    @rule(page=st.integers(0, PAGES - 1))
    def read_page(self, page):
        self._do(Step(READ_PAGE, page * PAGE))

    @rule(calls=agent_calls)
    def agent(self, calls):
        self._do(Step(SYNC, agent=calls))

    def teardown(self) -> None:
        if not self.steps:
            return
        assert len(self.model.log) <= LOG_WORDS
        got = simulate(self.steps, INITIAL, self.tmp_path, **self.session)
        where = f"script: {self.steps}"
        assert got.log == self.model.log, f"the thread's reads differ; {where}"
        assert got.agent_reads == self.model.agent_reads, f"the stand-in's reads differ; {where}"
        want = self.model.end()
        differ = np.flatnonzero(got.dram != want)
        assert differ.size == 0, f"DRAM differs at bytes {differ[:8].tolist()} at the end; {where}"


CONFIGURATIONS = {
    "card": {},
    "strict": {"coherence": "strict"},
    "card, card-size cache": {"cache": "card-size"},
    "strict, card-size cache": {"coherence": "strict", "cache": "card-size"},
}


def _check(session: dict, tmp_path, examples: int) -> None:
    machine = type("Machine", (Card,), {"session": session, "tmp_path": tmp_path})
    case = machine.TestCase
    case.settings = settings(max_examples=examples, stateful_step_count=20, deadline=None, derandomize=True,
                             suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    case("runTest").runTest()


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_the_card_is_a_write_back_cache_a_line_at_a_time(configuration, tmp_path):
    _check(CONFIGURATIONS[configuration], tmp_path, examples=25)


@pytest.mark.slow
@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_the_card_is_a_write_back_cache_a_line_at_a_time_long(configuration, tmp_path):
    _check(CONFIGURATIONS[configuration], tmp_path, examples=400)


# -- the shapes the differential test found, each named -----------------------------------------

BEEF = (0xDEADBEEF).to_bytes(4, "little")


@pytest.mark.parametrize("coherence", ["card", "strict"])
def test_a_stand_ins_write_under_a_page_a_core_touched_is_not_lost_nor_blamed_on_the_core(tmp_path, coherence):
    """The core reads line 0; the stand-in writes line 4 of the same page; the core
    invalidates, reads line 4, writes line 0 and does not flush; the stand-in reads line
    4, the core invalidates again. The stand-in's bytes stay in DRAM, and the only
    finding about writes is the dropped line 0."""
    steps = [Step(READ, 0), Step(SYNC, agent=[("write", 256, BEEF)]), Step(INVALIDATE), Step(READ, 256),
             Step(WRITE, 0, 5), Step(SYNC, agent=[("read", 256, 4)]), Step(INVALIDATE)]
    got = simulate(steps, np.zeros(PAGES * PAGE, np.uint8), tmp_path, coherence=coherence)
    assert got.log[1] == 0xDEADBEEF
    assert got.agent_reads == [BEEF]
    assert got.dram[256:260].tobytes() == BEEF
    kinds = {f.kind: (f.start, f.end) for f in got.findings}
    assert "noc-read-unflushed" not in kinds
    assert kinds["invalidate-dropped-writes"] == (0, 64)


@pytest.mark.parametrize("coherence", ["card", "strict"])
def test_a_line_no_core_touched_reads_what_a_stand_in_wrote(tmp_path, coherence):
    """The core reads line 0 of a page; the stand-in writes line 4, which no core touched;
    the core's first read of line 4 fills it from DRAM (strict mode: the line was in the
    cache from the start, stale)."""
    steps = [Step(READ, 0), Step(SYNC, agent=[("write", 256, BEEF)]), Step(READ, 256)]
    got = simulate(steps, np.zeros(PAGES * PAGE, np.uint8), tmp_path, coherence=coherence)
    if coherence == "card":
        assert got.log[1] == 0xDEADBEEF
        assert "stale-read" not in {f.kind for f in got.findings}
    else:
        assert got.log[1] == 0xA5A5A5A5A5A5A5A5


def test_a_store_of_a_lines_own_bytes_makes_it_dirty_beside_a_stand_in(tmp_path):
    """The core stores 0 over 0, the stand-in writes the line in DRAM, the core flushes:
    the flush writes the whole line back, as a card's would, and the checker says so."""
    steps = [Step(READ, 256), Step(WRITE, 256, 0), Step(SYNC, agent=[("write", 256, b"\x07")]), Step(FLUSH),
             Step(INVALIDATE), Step(READ, 256)]
    got = simulate(steps, np.zeros(PAGES * PAGE, np.uint8), tmp_path)
    assert got.log == [0, 0] and got.dram[256] == 0
    assert "flush-over-noc-write" in {f.kind for f in got.findings}
