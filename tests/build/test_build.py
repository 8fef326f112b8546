"""The compiler driver: the build cache, compile errors, optimisation levels, KMX_CC."""

import re
import stat
import sys

import numpy as np
import pytest

import komorebi as km
from komorebi.sim.build import thread as _build
from tests.threads import program_for, run_to_end

TRIPLE = "copy.c"


def test_a_second_load_does_not_run_the_compiler(tmp_path, monkeypatch):
    monkeypatch.setenv("KMX_CACHE_DIR", str(tmp_path / "cache"))
    program = program_for(TRIPLE, tmp_path, regions={"a": np.arange(10, dtype=np.uint8), "b": 10})
    before = _build.compiler_runs
    run_to_end(program)
    assert _build.compiler_runs == before + 1
    result, run = run_to_end(program)
    assert _build.compiler_runs == before + 1
    assert result.code == 0 and run.thread.read("b").tolist() == list(range(10))


def test_a_changed_header_is_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setenv("KMX_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "value.h").write_text("#define VALUE 5\n")
    source = '#include "kmx.h"\n#include "value.h"\nint kmx_main(int core) { return VALUE; }\n'
    program = program_for(source, tmp_path)
    assert run_to_end(program)[0].code == 5
    (tmp_path / "value.h").write_text("#define VALUE 6\n")
    assert run_to_end(program)[0].code == 6


def test_a_compile_error_carries_the_compilers_message(tmp_path):
    source = '#include "kmx.h"\nint kmx_main(int core) {\n    return undefined_name;\n}\n'
    with pytest.raises(km.CompileError) as caught:
        run_to_end(program_for(source, tmp_path))
    message = str(caught.value)
    assert "thread.c:3:12: error" in message and "undefined_name" in message
    assert isinstance(caught.value, km.KomorebiError)


def test_a_missing_kmx_main_is_a_compile_error(tmp_path):
    with pytest.raises(km.CompileError, match="kmx_main"):
        run_to_end(program_for('#include "kmx.h"\nint main(void) { return 0; }\n', tmp_path))


@pytest.mark.parametrize("level", ["-O0", "-O1", "-O2", "-O3", "-Os"])
def test_every_optimisation_level_runs_the_lesson_kernel(tmp_path, monkeypatch, level):
    monkeypatch.setenv("KMX_CFLAGS", level)
    data = np.arange(3000, dtype=np.uint32)
    result, run = run_to_end(program_for(TRIPLE, tmp_path, regions={"a": data, "b": data.nbytes}))
    assert result.code == 0
    assert (run.thread.read("b").view(np.uint32) == data).all()


def test_c_that_needs_the_runtime_compiles_and_runs(tmp_path, monkeypatch):
    """Struct copies, memset, 128-bit division and doubles: memcpy/memset and compiler-rt."""
    monkeypatch.setenv("KMX_CFLAGS", "-O0")
    source = """
#include "kmx.h"
struct big { uint32_t v[40]; };
static struct big make(uint32_t k) { struct big b; for (int i = 0; i < 40; i++) b.v[i] = k * i; return b; }
int kmx_main(int core) {
    struct big a = make(3), c;
    c = a;
    uint8_t zero[100];
    __builtin_memset(zero, 0, sizeof zero);
    __int128 q = ((__int128)1 << 100) / 3;
    double d = 2.5 * (double)c.v[39];
    uint32_t out[3] = {c.v[39], (uint32_t)(q >> 64), (uint32_t)d + zero[50]};
    kmx_result(0, out, 3);
    return 0;
}
"""
    result, _ = run_to_end(program_for(source, tmp_path))
    assert result.words[:3].tolist() == [117, (((1 << 100) // 3) >> 64) & 0xFFFF_FFFF, 292]


def test_kmx_cc_names_the_compiler(tmp_path, monkeypatch):
    log = tmp_path / "calls.log"
    wrapper = tmp_path / "mycc"
    wrapper.write_text(
        f"#!/bin/sh\necho called >> {log}\nexec {sys.executable} -m ziglang cc "
        '-target riscv64-freestanding-none -mcpu=baseline_rv64 "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("KMX_CC", str(wrapper))
    monkeypatch.setenv("KMX_CACHE_DIR", str(tmp_path / "cache"))
    program = program_for('#include "kmx.h"\nint kmx_main(int c) { return 11; }\n', tmp_path)
    result, _ = run_to_end(program)
    assert result.code == 11
    # Each source (the runtime's three and the thread's) compiled, then the link.
    assert log.read_text() == "called\n" * 5
    run_to_end(program)
    assert log.read_text() == "called\n" * 5


def test_a_missing_compiler_is_a_compile_error(tmp_path, monkeypatch):
    monkeypatch.setenv("KMX_CC", "no-such-compiler-here")
    monkeypatch.setenv("KMX_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(km.CompileError, match="no-such-compiler-here"):
        run_to_end(program_for('#include "kmx.h"\nint kmx_main(int c) { return 0; }\n', tmp_path))


def test_compiler_warnings_reach_python_at_each_load(tmp_path, kernels):
    source = tmp_path / "warn.c"
    source.write_text(
        '#include "kmx.h"\nint kmx_main(int core) {\n    int unused_but_set = 0;\n'
        "    uint32_t w = kmx_word(0);\n    return (int)(w << 40);\n}\n"
    )
    program = km.Program("warn", kernels=kernels)
    program.thread(cluster=0, sources=[source], words=[1])
    for _ in range(2):  # compiled, then from the cache: the warning both times
        with pytest.warns(km.CompileWarning, match=r"warn\.c:5:.*shift count >= width") as said:
            with km.Session() as session:
                run = session.load(program)
                run.thread_result(timeout=30)
                run.stop()
        # The warning points at the caller's session.load line, not inside komorebi.
        assert [w.filename for w in said if w.category is km.CompileWarning] == [__file__]


def test_a_thread_without_kmx_main_is_told_so_in_its_own_words(tmp_path, kernels):
    """Not the linker's `undefined symbol: kmx_main ... referenced by process.c`: what the
    thread lacks, and the names it has that are near (tests/docs/test_errors_doc.py: a near one)."""
    source = tmp_path / "helper.c"
    source.write_text('#include "kmx.h"\nint helper(int core) { return core; }\n')
    program = km.Program("nomain", kernels=kernels)
    program.thread(cluster=0, sources=[source])
    with km.Session() as session, pytest.raises(km.CompileError) as raised:
        session.load(program)
    assert str(raised.value) == ("the thread has no kmx_main: no file of it (helper.c) defines "
                                 "`int kmx_main(int core)`, the function each of its cores runs")
    assert "process.c" not in str(raised.value) and raised.value.command


UNINITIALISED = '#include "kmx.h"\nint kmx_main(int core) {\n    int x;\n    if (core > 8)\n        x = 1;\n    return x;\n}\n'


def test_warnings_a_c_programmer_expects_are_on_and_kmx_cflags_changes_them(tmp_path, kernels, monkeypatch):
    """-Wall: a variable returned before it is set is warned of at its line; -w silences
    it, -Werror makes it an error."""
    source = tmp_path / "uninitialised.c"
    source.write_text(UNINITIALISED)
    program = km.Program("warned", kernels=kernels)
    program.thread(cluster=0, sources=[source])
    with km.Session() as session, pytest.warns(km.CompileWarning, match=r"uninitialised\.c:\d+:\d+: warning: .*x.* "
                                                                      r"(uninitialized|-Wsometimes-uninitialized)"):
        session.load(program).stop()
    monkeypatch.setenv("KMX_CFLAGS", "-w")
    with km.Session() as session:
        session.load(program).stop()  # (no warning: the suite makes one an error)
    monkeypatch.setenv("KMX_CFLAGS", "-Werror")
    with km.Session() as session, pytest.raises(km.CompileError, match="uninitialized"):
        session.load(program)


def test_an_undefined_function_whose_name_starts_with_kmx_main_is_the_linkers_to_say(tmp_path, kernels):
    source = tmp_path / "step.c"
    source.write_text('#include "kmx.h"\nint kmx_main_step(int);\nint kmx_main(int core) { return kmx_main_step(core); }\n')
    program = km.Program("step", kernels=kernels)
    program.thread(cluster=0, sources=[source])
    with km.Session() as session, pytest.raises(km.CompileError) as raised:
        session.load(program)
    assert "undefined symbol: kmx_main_step" in str(raised.value) and "has no kmx_main" not in str(raised.value)


def test_kmx_cflags_reach_the_users_files_and_not_the_runtimes(tmp_path, kernels, monkeypatch):
    """Issue 38, item 12. -std=c11 broke the runtime's process.c (musl's internal headers
    need locale_t, which strict C11 hides) and -Wextra made it warn: real projects pass
    both. The user's file still gets them (strict C, -Wextra's unused parameter, -D), and
    the runtime's objects are not compiled again when only KMX_CFLAGS changes."""
    monkeypatch.setenv("KMX_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "strict.c"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) {\n'
                      "#ifdef __STRICT_ANSI__\n    return VALUE;\n#else\n    return -1;\n#endif\n}\n")
    program = km.Program("strict", kernels=kernels)
    program.thread(cluster=0, sources=[source])
    monkeypatch.setenv("KMX_CFLAGS", "-std=c11 -Wextra -DVALUE=11")
    with pytest.warns(km.CompileWarning) as said:
        result, _ = run_to_end(program)
    assert result.code == 11
    warned = [str(w.message) for w in said if w.category is km.CompileWarning]
    assert warned and all("kmx_runtime" not in text for text in warned), warned
    assert any(re.search(r"strict\.c:2:\d+: warning: unused parameter 'core'", text) for text in warned), warned
    before = _build._compiles
    monkeypatch.setenv("KMX_CFLAGS", "-std=c11 -Wextra -DVALUE=12")
    with pytest.warns(km.CompileWarning):
        assert run_to_end(program)[0].code == 12
    assert _build._compiles == before + 2  # the user's file and the link: no runtime file
    # The runtime's files are still built for the target KMX_CFLAGS names, and only that.
    monkeypatch.setenv("KMX_CFLAGS", "-march=rv64gc -mabi=lp64d -std=c11 -O0")
    tools = _build.toolchain_in_use()
    cpu = tools.target_flags()[0]
    assert cpu.startswith("-mcpu=generic_rv64")
    for runtime in tools.runtime_sources:
        flags = tools.flags_for(runtime)
        assert cpu in flags and "-mabi=lp64d" in flags and "-std=c11" not in flags and "-O0" not in flags
