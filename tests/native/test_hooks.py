"""The engine's hooks in C (sim/native/): that they agree with their Python mirrors, that a
turn of exact length runs exactly that many instructions (checked against Unicorn's own
instruction count), and that the engine's TLB grows so that a thread ranging over many
pages stops coming back to the fill hook."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import komorebi as km
from tests.threads import machine_cluster
from komorebi.sim.build.thread import build_thread
from komorebi.sim.hart import engine
from komorebi.sim.native import hooks
from komorebi.sim.machine.card import Card
from komorebi.sim.hart.core import READY
from komorebi.sim.image.elf import load_image

# A loop of branches, compressed and full-size instructions, loads and stores: blocks of
# many lengths, so that turn ends land everywhere inside them.
MIXED = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    volatile uint32_t* r = (volatile uint32_t*)kmx_region(0, &bytes);
    uint64_t x = 88172645463325252ull + (uint64_t)core;
    for (uint32_t i = 0; i < 200000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        if (x & 1) r[x % 64] += (uint32_t)i;
        else if (x & 2) r[(x >> 8) % 64] ^= (uint32_t)x;
        else { for (int k = 0; k < (int)(x % 5); k++) r[k] += 1; }
    }
    return (int)(x & 0xff);
}
"""


def test_the_structs_and_constants_agree_with_hooks_c():
    library = hooks.library()  # checks every struct's size against the native hooks'
    assert ctypes.sizeof(hooks.CoreState) == library.struct_size(2)
    assert (hooks.MEM_READ, hooks.MEM_WRITE, hooks.MEM_FETCH) == (engine.READ, engine.WRITE, engine.FETCH)
    assert (hooks.PROT_READ, hooks.PROT_WRITE, hooks.PROT_EXEC) == (
        engine.PROT_READ, engine.PROT_WRITE, engine.PROT_EXEC)


def _images(folder, text):
    """The thread's image as the simulator runs it (Zba and Zbb rewritten into RV64GC
    stubs, sim.isa.rewrite), and as the oracle does: every such instruction trapping, one
    instruction each in Unicorn's own count."""
    source = folder / "thread.c"
    source.write_text(text)
    elf = build_thread([source]).elf
    ours = load_image(elf)
    oracle = load_image(elf, rewrites=False)
    assert ours.stubs.sites and not oracle.stubs.sites  # (the code has some: the test tests them)
    return ours, oracle


@pytest.fixture(scope="module")
def mixed_image(tmp_path_factory):
    return _images(tmp_path_factory.mktemp("mixed"), MIXED)


# Strides over 8 MiB, a page at a time: enough fills that the engine's TLB grows (the fill
# hook stops the run between blocks, sim/native/, maybe_grow) inside counted turns.
STRIDE = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    volatile uint8_t* r = (volatile uint8_t*)kmx_region(0, &bytes);
    uint64_t sum = (uint64_t)core;
    for (int pass = 0; pass < 16; pass++)
        for (uint64_t at = (uint64_t)pass * 64; at < bytes; at += 4096 + 8) {
            r[at] = (uint8_t)(r[at] + 1);
            sum += r[(at * 7) % bytes];
        }
    return (int)(sum & 0xff);
}
"""


def _core(image, region_bytes=256, interpret=True, oracle=False):
    """Core 0 of a thread of two (so the block hook is on). Not INTERPRET: the code after
    an instruction the engine lacks is the engine's again (the oracle's way: Unicorn's
    own count counts the instructions the engine runs, the trapped one among them)."""
    card = Card()
    cluster = card.place_thread(1, image, [("r", region_bytes)], [], 2)
    core = cluster.cores[0]
    core.native.isa.interpret = int(interpret)
    if oracle:  # it runs the engine itself, and cannot go on after a stop (Core.run does): its
        for region in cluster.cache.regions:  # cache model keeps no events, which stop a run at
            region.state.events = None  # a kind's first (sim/native/events.c)
    _past_the_start(cluster)
    return card, core


def _past_the_start(cluster) -> None:
    """Both cores through the C library's start and the meeting that ends it
    (kmx_runtime/process.c), so that the turns a test counts are kmx_main's own."""
    first, second = cluster.cores
    first.run()  # to the meeting
    second.run()  # its own start, then the meeting, which lets core 0 go on
    cluster.runnable()
    assert first.state == second.state == READY, (first.state, second.state)
    first.cycles = second.cycles = 0


def _registers(core) -> list[int]:
    return [core.engine.x(n) for n in range(32)] + [core.engine.read("pc")]


@settings(max_examples=25, deadline=None)
@given(turns=st.lists(st.integers(1, 3000), min_size=1, max_size=6))
def test_a_turn_runs_exactly_its_count_as_unicorns_own_count_does(mixed_image, turns):
    ours_card, ours = _core(mixed_image[0])
    oracle_card, oracle = _core(mixed_image[1], interpret=False, oracle=True)
    try:
        for count in turns:
            ours.run(count)
            # Unicorn's count: a hook at every instruction, the reference.
            oracle.engine.run(oracle.pc, oracle._halt, count=count)
            oracle.pc = oracle.engine.read("pc")
            assert _registers(ours) == _registers(oracle)
        assert ours.cycles == sum(turns)
    finally:
        ours_card.stop()
        oracle_card.stop()


@pytest.fixture(scope="module")
def stride_image(tmp_path_factory):
    return _images(tmp_path_factory.mktemp("stride"), STRIDE)


@pytest.mark.parametrize("interpret", [False, True], ids=["engine", "interpreter"])
@settings(max_examples=6, deadline=None)
@given(turn=st.integers(200, 5000))
def test_turns_stay_exact_while_the_tlb_grows(stride_image, turn, interpret):
    """The loop has a Zba instruction. Rewritten into a stub, the engine runs the loop, and
    its TLB grows inside counted turns. Left to trap, the interpreter (isa.c) runs it, and
    its loads and stores keep translations of their own."""
    # (the interpreter runs code whose Zba instructions trap: the oracle's image)
    ours_card, ours = _core(stride_image[1 if interpret else 0], 8 << 20, interpret=interpret)
    oracle_card, oracle = _core(stride_image[1], 8 << 20, interpret=False, oracle=True)
    # The oracle runs the engine itself, and cannot grow its TLB (Core.run does that):
    # it keeps the first one, which only slows it.
    oracle.native.tlb.grow_at = 1 << 62
    turns = 300_000 // turn
    try:
        for _ in range(turns):
            ours.run(turn)
            oracle.engine.run(oracle.pc, oracle._halt, count=turn)
            oracle.pc = oracle.engine.read("pc")
            assert _registers(ours) == _registers(oracle)
        assert ours.cycles == turns * turn
        if interpret:
            assert ours.native.isa.interpreted > 0, "the interpreter never ran: the test tests nothing"
        else:
            assert ours._tlb_entries > hooks_first_entries(), "the TLB never grew: the test tests nothing"
    finally:
        ours_card.stop()
        oracle_card.stop()


def hooks_first_entries() -> int:
    from komorebi.sim.hart.core import TLB_FIRST_ENTRIES

    return TLB_FIRST_ENTRIES


CHASE = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    uint64_t bytes;
    uint32_t* next = (uint32_t*)kmx_region(0, &bytes);
    uint64_t p = 0;
    kmx_invalidate(0);
    for (uint64_t s = 0; s < 400000; s++) p = next[p];
    uint32_t out[1] = {(uint32_t)p};
    kmx_result(0, out, 1);
    return 0;
}
"""


def test_the_tlb_grows_so_a_pointer_chase_stops_refilling(tmp_path, kernels):
    """400,000 random loads over 2,048 pages: with the engine's first TLB (256 entries)
    nearly every load would come through the fill hook."""
    source = tmp_path / "chase.c"
    source.write_text(CHASE)
    count = (8 << 20) // 4
    order = np.random.default_rng(7).permutation(count).astype(np.uint32)
    chain = np.empty(count, np.uint32)
    chain[order] = np.roll(order, -1)  # one cycle through every element
    program = km.Program("chase", kernels=kernels)
    program.thread(cluster=0, sources=[source], regions={"next": chain})
    with km.Session() as session:
        run = session.load(program)
        core = machine_cluster(run, 0).cores[0]
        words = run.thread_result(timeout=120).words
        fills = core.native.tlb.fills
        run.stop()
    p = 0
    for _ in range(400000 % count):
        p = chain[p]
    assert words[0] == p
    assert fills < 400000 // 10, f"{fills} fills for 400,000 loads"


# Vector code (the compiler's, from plain loops, and intrinsics) between scalar code: the
# unit runs in the interpreter (isa.c, vector/), which must count and stop exactly too.
VECTOR = r"""
#include <riscv_vector.h>
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    float* r = (float*)kmx_region(0, &bytes);
    uint64_t n = bytes / 4, x = 88172645463325252ull + (uint64_t)core;
    for (uint64_t i = 0; i < n; i++) r[i] = (float)(i % 97);
    vfloat32m1_t sum = __riscv_vfmv_s_f_f32m1(0.0f, 1);
    for (int pass = 0; pass < 400; pass++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        size_t start = x % (n / 2), count = n / 2 - (x >> 20) % 64;
        for (size_t i = 0, vl; i < count; i += vl) {
            vl = __riscv_vsetvl_e32m4(count - i);
            vfloat32m4_t v = __riscv_vle32_v_f32m4(r + start + i, vl);
            v = __riscv_vfmacc_vf_f32m4(v, 0.5f, v, vl);
            __riscv_vse32_v_f32m4(r + start + i, v, vl);
            sum = __riscv_vfredusum_vs_f32m4_f32m1(v, sum, vl);
        }
        for (uint64_t i = 0; i < n; i++) r[i] = r[i] > 1e6f ? r[i] * 0.001f : r[i];
    }
    float total = __riscv_vfmv_f_s_f32m1_f32(sum);
    return (int)((uint32_t)total & 0xff);
}
"""


class _Held:
    """A value with a short repr (hypothesis prints a failing example's arguments)."""

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return "<the image>"


@pytest.fixture(scope="module")
def vector_image(tmp_path_factory):
    source = tmp_path_factory.mktemp("vector") / "thread.c"
    source.write_text(VECTOR)
    return _Held(load_image(build_thread([source]).elf))


def _vector_registers(core) -> tuple:
    state = core.vector_state()
    return (*_registers(core), state.registers, state.vl, state.vtype, state.vstart)


@settings(max_examples=10, deadline=None)
@given(turns=st.lists(st.integers(1, 5000), min_size=2, max_size=8).filter(lambda t: sum(t) > 3000))  # (the thread: 100,000s)
def test_a_turn_in_vector_code_runs_exactly_its_count(vector_image, turns):
    """The oracle runs the same thread one instruction a turn: after every one of the turns
    both have run the same count and hold the same x, pc and vector registers, vl, vtype.
    (A turn of one instruction runs it alone: each vector instruction traps and runs by
    itself, as the engine's own count sees it.)"""
    ours_card, ours = _core(vector_image.value, 4096)
    oracle_card, oracle = _core(vector_image.value, 4096)
    try:
        for count in turns:
            ours.run(count)
            for _ in range(count):
                oracle.run(1)
            assert _vector_registers(ours) == _vector_registers(oracle)
        assert ours.cycles == oracle.cycles == sum(turns)
        assert ours.native.isa.interpreted > 0, "the interpreter never ran: the test tests nothing"
        assert ours.vector_state().vl > 0, "no vector instruction ran: the test tests nothing"
        # (and its loops jump to the loader's stubs, which the interpreter's blocks count as none)
        assert vector_image.value.stubs.sites, "no stub in the code: the test tests less than it says"
    finally:
        ours_card.stop()
        oracle_card.stop()


@settings(max_examples=8, deadline=None)
@given(turns=st.lists(st.integers(1, 5000), min_size=2, max_size=8).filter(lambda t: sum(t) > 3000))
def test_the_interpreters_blocks_stop_where_its_careful_loop_does(vector_image, turns):
    """The interpreter runs a block at a time where its checks let it, else an instruction at
    a time (sim/native/isa.c, run_blocks). A breakpoint anywhere (here at an address with no
    code) makes it take every instruction the careful way. Both ways must run the same
    instructions in C, counted the same, and hand back to the engine at the same pcs: the
    interpreter's own counts agree at every turn's end, and so do the registers."""
    blocks_card, blocks = _core(vector_image.value, 4096)
    careful_card, careful = _core(vector_image.value, 4096)
    never = np.array([8], np.uint64)  # (address 8: no code is there)
    turn = careful.native.turn
    turn.breakpoints = never.ctypes.data_as(type(turn.breakpoints))
    turn.breakpoint_count = 1
    try:
        for count in turns:
            blocks.run(count)
            careful.run(count)
            assert _vector_registers(blocks) == _vector_registers(careful)
            ours, theirs = blocks.native.isa, careful.native.isa
            assert (ours.interpreted, ours.episodes, ours.traps) == (theirs.interpreted, theirs.episodes, theirs.traps)
        assert blocks.native.isa.interpreted > 0, "the interpreter never ran: the test tests nothing"
        assert careful.native.turn.breakpoint_count == 1  # (still the careful way at the end)
    finally:
        blocks_card.stop()
        careful_card.stop()


@pytest.mark.parametrize("source, words", [("racy.c", [800, 0]), ("racy.c", [800, 1]), ("vracy.c", [30])],
                         ids=["plain", "lr-sc", "vector"])
def test_turns_in_c_run_as_turns_from_python_and_the_engine_would(kernels, monkeypatch, source, words):
    """The turn loop in C (sched.c), and turns that end inside a block finishing in the
    interpreter (isa.c, isa_finish_turn) as far as it can, or inside the interpreter's
    run of the vector unit: the results, every core's cycles and the turns are those of
    the same runs with every turn from Python, and then with every turn's rest run by the
    engine; most turns did finish in C."""
    from komorebi._simulator import Simulator
    from komorebi.sim.machine import schedule
    from tests.threads import THREADS

    def runs(**switches):
        out, finished = [], 0
        for seed in (None, 1, 2):
            program = km.Program("racy", kernels=kernels)
            program.thread(cluster=1, sources=[THREADS / source], words=words, cores=4)
            with km.Session(quantum=37, schedule_seed=seed, backend=Simulator(**switches)) as session:
                run = session.load(program)
                results = []
                while not results or not results[-1].final:
                    results.append(run.thread_result(timeout=60))
                finished += sum(c.native.isa.finished_turns for c in machine_cluster(run, 1).cores)
                run.stop()
            out.append(([r.words.tolist() for r in results], run.schedule.turns))
        return out, finished

    needless = []  # turns the loop handed to Python though they made no call of Python's
    loop_run = schedule.TurnLoop.run

    def counting_run(self, ready, *rest):
        calls = [core.native.isa.python_calls for core in self.cores]
        handed = loop_run(self, ready, *rest)
        if handed is not None:
            needless.append(handed[0].native.isa.python_calls == calls[self.cores.index(handed[0])])
        return handed

    monkeypatch.setattr(schedule.TurnLoop, "run", counting_run)
    in_c, finished = runs()
    turns = sum(len(turns) for _, turns in in_c)
    assert sum(needless) < turns / 50, (sum(needless), turns)
    from_python, _ = runs(turn_loop_in_c=False)
    in_engine, none = runs(turn_loop_in_c=False, finish_turns_in_c=False)
    assert in_c == from_python == in_engine
    assert none == 0 and finished > 100


def test_the_interpreters_amos_are_the_engines(kernels):
    """Every AMO (.w and .d) run by the interpreter (turns of 1 to 3 instructions on four
    cores, which it runs before the engine) leaves and returns what the engine's own do (a
    lone core, and the default turns): each core's checksum of them is the same."""
    from tests.threads import THREADS

    def checksums(cores, **session):
        program = km.Program("amos", kernels=kernels)
        program.thread(cluster=1, sources=[THREADS / "amos.c"], words=[300], cores=cores)
        with km.Session(**session) as s:
            run = s.load(program)
            result = run.thread_result(timeout=60)
            cores_ = machine_cluster(run, 1).cores
            interpreted = sum(c.native.isa.interpreted for c in cores_), sum(c.cycles for c in cores_)
            run.stop()
        words = [int(w) for w in result.words]
        return [words[2 * c] | words[2 * c + 1] << 32 for c in range(cores)], interpreted

    engine = [checksums(1)[0][0]]
    fine, interpreted = checksums(4, quantum=1)
    assert fine[0] == engine[0] and len(set(fine)) == 4  # (the cores' values differ)
    assert checksums(4, quantum=3, schedule_seed=2)[0] == checksums(4)[0] == fine
    interpreted, ran = interpreted
    assert ran - interpreted < 4 * 300 * 19, "the interpreter did not run the AMOs: the test tests nothing"

