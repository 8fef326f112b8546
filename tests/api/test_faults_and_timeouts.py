"""A thread that never ends, a thread that crashes: clear errors, and the session goes on."""

import numpy as np
import pytest

import komorebi as km
from tests.threads import program_for, run_to_end


def test_a_thread_that_never_ends_times_out_and_stops(tmp_path):
    with km.Session() as session:
        run = session.load(program_for("forever.c", tmp_path, regions={"r": 64}))
        with pytest.raises(TimeoutError, match="cluster 1 handed no result in 0.3 s"):
            run.thread_result(timeout=0.3)
        run.stop()
        run.stop()  # idempotent
        with pytest.raises(RuntimeError, match="stopped before the thread on cluster 1 handed"):
            run.thread_result()  # no wait for ever: nothing more will come
        assert run.thread.read("r").tolist() == [0] * 64
        # the same session runs the next program
        data = np.arange(100, dtype=np.uint8)
        run2 = session.load(program_for("copy.c", tmp_path, regions={"a": data, "b": 100}))
        assert run2.thread_result(timeout=30).code == 0
        run2.stop()
        assert (run2.thread.read("b") == data).all()


def test_closing_the_session_stops_a_running_thread(tmp_path):
    with km.Session() as session:
        run = session.load(program_for("forever.c", tmp_path))
    assert run.stopped and session.closed
    with pytest.raises(ValueError, match="session is closed"):
        session.load(program_for("forever.c", tmp_path))


NULL = """
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    uint32_t* p = (uint32_t*)kmx_region(5, &bytes);
    p[1] = 3;
    return 0;
}
"""


def test_using_the_null_pointer_of_an_unknown_region_is_a_thread_fault(tmp_path):
    with km.Session() as session:
        run = session.load(program_for(NULL, tmp_path, regions={"r": 64}))
        with pytest.raises(km.ThreadFault) as caught:
            run.thread_result(timeout=10)
        fault = caught.value
        assert (fault.cluster, fault.core) == (1, 0)
        assert fault.file.endswith("thread.c") and fault.line == 6
        assert "a store to 0x4" in fault.cause and "null pointer" in fault.cause
        assert "thread.c:6" in str(fault)
        with pytest.raises(km.ThreadFault):  # asking again gives the same fault
            run.thread_result(timeout=10)
        run.stop()
        assert run.thread.read("r").size == 64
        result, _ = run_to_end(program_for("copy.c", tmp_path, regions={"a": np.ones(8, np.uint8), "b": 8}))
        assert result.code == 0


def test_writing_past_a_regions_end_is_a_thread_fault_naming_it(tmp_path):
    source = """
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    uint8_t* p = (uint8_t*)kmx_region(0, &bytes);
    for (uint64_t i = 0; i < bytes + 4096; i++) p[i] = 1;
    return 0;
}
"""
    with pytest.raises(km.ThreadFault, match=r"past the end of region 'buffer'") as caught:
        run_to_end(program_for(source, tmp_path, regions={"buffer": 4096}))
    assert caught.value.line == 6


def test_a_stack_overflow_hits_the_guard_page(tmp_path):
    source = """
#include "kmx.h"
static int deep(volatile int n) {
    volatile char pad[4000];
    pad[0] = (char)n;
    return n == 0 ? pad[0] : deep(n - 1) + pad[0];
}
int kmx_main(int core) { return deep(100000); }
"""
    with pytest.raises(km.ThreadFault, match="stack overflow") as caught:
        run_to_end(program_for(source, tmp_path))
    assert len(caught.value.backtrace) > 1


def test_an_illegal_instruction_says_what_the_simulator_runs(tmp_path):
    source = '#include "kmx.h"\nint kmx_main(int core) {\n    __asm__ volatile(".word 0x0000000b");\n    return 0;\n}\n'
    with pytest.raises(km.ThreadFault, match="illegal instruction.*rv64imafdcv_zicsr_zifencei_zba_zbb_zfh_zfhmin_zvfbfmin_zvfh") as caught:
        run_to_end(program_for(source, tmp_path))
    assert caught.value.line == 3


def test_an_unknown_call_number_is_a_fault(tmp_path):
    source = (
        '#include "kmx.h"\nint kmx_main(int core) {\n'
        '    __asm__ volatile("li a7, 999\\n ecall" ::: "a0", "a7", "memory");\n'
        "    return 0;\n}\n"
    )
    with pytest.raises(km.ThreadFault, match="999 in a7, which is no kmx call") as caught:
        run_to_end(program_for(source, tmp_path))
    assert caught.value.line == 3


def test_a_result_pointer_outside_the_threads_memory_is_a_fault(tmp_path):
    source = '#include "kmx.h"\nint kmx_main(int core) {\n    kmx_result(0, (const uint32_t*)0x1000, 1);\n    return 0;\n}\n'
    with pytest.raises(km.ThreadFault, match="kmx_result: a pointer to 4 bytes at 0x1000, which is not in the thread's memory"):
        run_to_end(program_for(source, tmp_path))


def test_flush_of_a_region_id_out_of_range_is_a_fault(tmp_path):
    source = '#include "kmx.h"\nint kmx_main(int core) {\n    kmx_flush(2);\n    return 0;\n}\n'
    with pytest.raises(km.ThreadFault, match=r"kmx_flush: region ID 2 does not exist; the thread has IDs 0 to 1"):
        run_to_end(program_for(source, tmp_path, regions={"a": 8, "b": 8}))


OVERRUN_BY_ONE = """
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    volatile uint8_t* p = (volatile uint8_t*)kmx_region(0, &bytes);
    uint32_t sum = 0;
    for (uint64_t i = 0; i <= bytes; i++) sum += p[i]; /* one byte too far */
    return sum;
}
"""


@pytest.mark.parametrize("size", [1, 63, 100, 4095, 4097, 12288])
def test_reading_one_byte_past_the_end_of_any_size_of_region_is_a_fault(tmp_path, size):
    with pytest.raises(km.ThreadFault) as caught, pytest.warns(km.CoherenceWarning, match="before the thread invalidated it"):
        run_to_end(program_for(OVERRUN_BY_ONE, tmp_path, regions={"r": size}))
    fault = caught.value
    assert f"the first byte past the end of region 'r' (ID 0, {size} bytes at" in fault.cause
    assert fault.line == 7


ADDRESS = """
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    uint64_t address = (uint64_t)kmx_region(0, &bytes);
    uint32_t out[2] = {(uint32_t)address, (uint32_t)(address >> 32)};
    kmx_result(0, out, 2);
    return 0;
}
"""


@pytest.mark.parametrize("dtype, count", [(np.uint8, 4095), (np.uint16, 1001), (np.uint32, 1023), (np.float64, 3), (np.uint32, 4096)])
def test_a_region_is_aligned_for_its_elements(tmp_path, dtype, count):
    result, _ = run_to_end(program_for(ADDRESS, tmp_path, regions={"r": np.zeros(count, dtype)}))
    address = int(result.words[0]) | int(result.words[1]) << 32
    assert address % np.dtype(dtype).itemsize == 0
    if count * np.dtype(dtype).itemsize % 4096 == 0:
        assert address % 4096 == 0


MISALIGNED = """
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    uint8_t* r = (uint8_t*)kmx_region(0, &bytes);
    kmx_invalidate(0);
    volatile uint32_t* p = (volatile uint32_t*)(r + 1);
    uint32_t v = *p;  /* a misaligned load: carried out */
    *p = v + 1;       /* a misaligned store: carried out */
    if (kmx_word(0)) __atomic_fetch_add((uint32_t*)(r + 2), 1, __ATOMIC_RELAXED);
    kmx_flush(0);
    return 0;
}
"""


def test_misaligned_loads_and_stores_run_and_a_misaligned_atomic_is_a_fault(tmp_path):
    data = np.arange(64, dtype=np.uint8)
    result, run = run_to_end(program_for(MISALIGNED, tmp_path, regions={"r": data}, words=[0]))
    assert result.code == 0 and run.thread.read("r")[:5].tolist() == [0, 2, 2, 3, 4]
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(MISALIGNED, tmp_path, regions={"r": data}, words=[1]))
    assert caught.value.line == 10
    assert "a misaligned atomic access to" in caught.value.cause
    assert "byte 2 of region 'r' (ID 0)" in caught.value.cause
    assert "multiple of their size, 4 bytes" in caught.value.cause
    assert (data == np.arange(64)).all()


def test_stop_wakes_a_python_thread_waiting_for_ever(tmp_path):
    import threading

    program = program_for("forever.c", tmp_path)
    with km.Session() as session:
        run = session.load(program)
        caught = []

        def wait():
            try:
                run.thread_result(timeout=None)
            except BaseException as error:  # noqa: BLE001 - the test looks at it
                caught.append(error)

        waiter = threading.Thread(target=wait)
        waiter.start()
        waiter.join(0.3)
        assert waiter.is_alive()  # still waiting: the thread never ends
        run.stop()
        waiter.join(10)
        assert not waiter.is_alive()
    assert len(caught) == 1 and isinstance(caught[0], RuntimeError)
    assert "stopped before the thread on cluster 1 handed another result" in str(caught[0])


@pytest.mark.parametrize("before, word, name", [
    ("", 0x02000057, "vadd.vv"),  # vadd.vv v0, v0, v0 before any vsetvli: vtype is illegal
    ("", 0x0205_6007, "vle32.v"),
    ("", 0x02001057, "vfadd.vv"),
    ("vsetivli zero, 31, e64, m8, ta, ma\\n vsetvl zero, zero, %0\\n", 0x02001057, "vfadd.vv"),  # (vtype e128)
])
def test_a_vector_instruction_while_vtype_is_illegal_says_so(tmp_path, before, word, name):
    source = (f'#include "kmx.h"\nint kmx_main(int core) {{\n    __asm__ volatile("{before}.word {word:#010x}"'
              f' :: "r"((long)0x20));\n    return 0;\n}}\n')
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(source, tmp_path))
    fault = caught.value
    assert fault.line == 3
    assert fault.cause.startswith(f"a vector instruction ({name}, instruction {word:#010x}) while vtype is illegal "
                                  "(vl 0, vtype illegal (vill")
    assert "Set vtype with a vsetvli first" in fault.cause


@pytest.mark.parametrize("word, name", [
    (0x022200D7, "vadd.vv"),  # vadd.vv v1, v2, v4 at LMUL 2: v1 is not a group's first register
    (0x0E000057, "an OP-V encoding RVV 1.0 reserves"),  # (OPIVV, funct6 3: vrsub has no .vv form)
    (0x02256407, "a vector load or store encoding RVV 1.0 reserves"),  # (vle32.v with lumop 2)
])
def test_a_vector_instruction_the_unit_refuses_says_what_it_is_and_vtype(tmp_path, word, name):
    source = ('#include "kmx.h"\nint kmx_main(int core) {\n'
              f'    __asm__ volatile("vsetivli zero, 8, e32, m2, ta, ma\\n .word {word:#010x}");\n    return 0;\n}}\n')
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(source, tmp_path))
    fault = caught.value
    assert fault.line == 3
    assert fault.cause.startswith(f"a vector instruction ({name}, instruction {word:#010x}) that the vector unit "
                                  "refuses (vl 8, vtype e32, m2, ta, ma): an encoding RVV 1.0 reserves")


@pytest.mark.parametrize("word", [0x40B57533, 0x20B52533, 0x60051513])  # andn, sh1add, clz
def test_bit_manipulation_written_by_hand_runs(tmp_path, word):
    """andn a0, a0, a1; sh1add a0, a0, a1; clz a0, a0 (Zbb, Zba): the X280's, run in C."""
    source = (f'#include "kmx.h"\nint kmx_main(int core) {{\n    register long a0 __asm__("a0") = 8 + 2 * core + 2 * (long)kmx_word(0);\n'
              f'    register long a1 __asm__("a1") = 10 + (long)kmx_word(1);\n'
              f'    __asm__ volatile(".word {word:#010x}" : "+r"(a0) : "r"(a1));\n    return (int)a0;\n}}\n')
    words = [0, 0] if word != 0x20B52533 else [1, 0]  # sh1add a0, a0, a1 = a1 + 2 * a0
    result, _ = run_to_end(program_for(source, tmp_path, words=words))
    a0, a1 = 8 + 2 * words[0], 10
    want = {0x40B57533: a0 & ~a1, 0x20B52533: a1 + 2 * a0, 0x60051513: 64 - a0.bit_length()}[word]
    assert result.code == want


def test_builtin_trap_is_named_as_a_trap_at_its_line(tmp_path):
    source = '#include "kmx.h"\nint kmx_main(int core) {\n    if (kmx_word(0) == 1)\n        __builtin_trap();\n    return 0;\n}\n'
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(source, tmp_path, words=[1]))
    assert caught.value.line == 4
    assert "a trap instruction (instruction 0x0000, unimp" in caught.value.cause


# -- small ones (issue 11, item 16) --------------------------------------------------------------


@pytest.mark.parametrize("huge", [10**400, __import__("fractions").Fraction(10**400, 3)])
def test_a_timeout_too_big_for_a_float_waits_for_ever(tmp_path, huge):
    with km.Session() as session:
        run = session.load(program_for('#include "kmx.h"\nint kmx_main(int c) { return 2; }\n', tmp_path))
        assert run.thread_result(timeout=huge).code == 2
        run.stop()


def test_a_negative_timeout_too_big_for_a_float_is_refused(tmp_path):
    with km.Session() as session:
        run = session.load(program_for('#include "kmx.h"\nint kmx_main(int c) { return 2; }\n', tmp_path))
        with pytest.raises(ValueError, match="timeout must be a number of seconds >= 0"):
            run.thread_result(timeout=-(10**400))
        run.stop()


def test_a_jump_into_a_zeroed_static_buffer_says_so_not_builtin_trap(tmp_path):
    source = (
        '#include "kmx.h"\nstatic uint32_t buffer[64];\ntypedef int (*fn)(void);\n'
        "int kmx_main(int core) {\n    return ((fn)&buffer[4])();\n}\n"
    )
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(source, tmp_path))
    cause = caught.value.cause
    assert "__builtin_trap" not in cause
    assert "in the thread's static data ('buffer' + 16), not in its code: the core jumped into data" in cause


def test_an_uncached_access_where_the_thread_has_no_memory_names_what_is_there_when_cached(tmp_path):
    source = (
        '#include "kmx.h"\nint kmx_main(int core) {\n    uint64_t n;\n'
        "    uint8_t* r = kmx_region(0, &n);\n"
        "    volatile uint8_t* uncached = (volatile uint8_t*)((uint64_t)r - 0x400000000000ull);\n"
        "    return uncached[4096 + 8];\n}\n"
    )
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(source, tmp_path, regions={"numbers": 4096}))
    cause = caught.value.cause
    assert "which is DRAM's uncached alias of 0x4000" in cause
    assert "8 bytes past the end of region 'numbers' (ID 0" in cause
    assert cause.endswith("where the thread has no memory")


# -- a wait that says where the cores are (issue 12, item 7) --------------------------------------

WHERE = """#include "kmx.h"
int kmx_main(int core) {
    volatile uint64_t spins = 0;
    if (core == 2) return 0;
    if (core == 1) kmx_barrier();
    for (;;) spins++;
}
"""


def test_a_timeout_says_where_each_core_is(tmp_path):
    with km.Session() as session:
        run = session.load(program_for(WHERE, tmp_path, cores=3))
        with pytest.raises(TimeoutError) as caught:
            run.thread_result(timeout=0.5)
        run.stop()
    head, *cores = str(caught.value).split("\n")
    assert head == "the thread on cluster 1 handed no result in 0.5 s"
    source = str((tmp_path / "thread.c").resolve())
    assert cores[0].startswith(f"  core 0: running, at {source}:6 (pc 0x")
    assert cores[1].startswith(f"  core 1: waiting in kmx_barrier, at {source}:5 (pc 0x")
    assert cores[2] == "  core 2: returned from kmx_main"


def test_ctrl_c_in_a_wait_raises_at_once_and_the_run_stops(tmp_path):
    import signal
    import subprocess
    import sys
    import textwrap

    from tests import processes
    from tests.conftest import HANG, ROOT

    source = tmp_path / "spin.c"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) {\n    for (;;) {\n    }\n}\n')
    script = processes.INTERRUPTIBLE + textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import komorebi as km
        p = km.Program("spin", kernels={str(ROOT / "tutorial" / "35_sharing_memory" / "kernels")!r})
        p.thread(cluster=0, sources=[{str(source)!r}])
        try:
            with km.Session() as session:
                run = session.load(p)
                print("WAITING", flush=True)
                run.thread_result(timeout=None)
        except KeyboardInterrupt:
            print("INTERRUPTED", run.stopped, flush=True)
    """)
    with processes.started([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True) as child:
        assert child.stdout.readline().strip() == "WAITING"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=HANG)
    assert out.strip() == "INTERRUPTED True", err
    assert child.returncode == 0
