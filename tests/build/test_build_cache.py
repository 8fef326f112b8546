"""The build cache never runs old code, never crashes on what it holds, and says what to do
when its folders cannot be used; a compile has a time limit and leaves nothing running.
(Issue 11, items 1, 9, 13, 14 and 15.)"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

import komorebi as km
from komorebi.sim.build import depends
from komorebi.sim.build import thread as _build
from tests import processes
from tests.conftest import HANG, ROOT
from tests.threads import run_to_end, wait_for, zig_wrapper

KERNELS = ROOT / "tutorial" / "35_sharing_memory" / "kernels"


def _program(source: Path) -> km.Program:
    program = km.Program("cache", kernels=KERNELS)
    program.thread(cluster=1, sources=[source])
    return program


def _code(source: Path) -> int:
    return run_to_end(_program(source))[0].code


def _returns_value(source: Path, include: str) -> Path:
    """SOURCE: a thread that returns VALUE, which INCLUDE (an #include's operand) defines."""
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(f'#include "kmx.h"\n#include {include}\nint kmx_main(int core) {{ return VALUE; }}\n')
    return source


@pytest.fixture
def open_tmp():
    """A folder every user can reach (pytest's own is root's alone), for tests that run a
    child as another user."""
    folder = Path(tempfile.mkdtemp(prefix="komorebi-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("KMX_CACHE_DIR", str(folder))
    return folder


# -- item 1: every file a compile read is in the key -----------------------------------------


@pytest.mark.parametrize(
    "included, place",
    [
        ("../common.h", "common.h"),  # a folder up
        ("inc/k.h", "src/inc/k.h"),  # a folder down
        ("tables.inl", "src/tables.inl"),
        ("gen.def", "src/gen.def"),
        ("impl.c", "src/impl.c"),  # a C file included as text
    ],
)
def test_an_edit_to_any_included_file_compiles_the_thread_again(tmp_path, own_cache, included, place):
    source = tmp_path / "src" / "thread.c"
    (tmp_path / place).parent.mkdir(parents=True, exist_ok=True)
    source.parent.mkdir(exist_ok=True)
    source.write_text(f'#include "kmx.h"\n#include "{included}"\nint kmx_main(int core) {{ return VALUE; }}\n')
    (tmp_path / place).write_text("#define VALUE 5\n")
    assert _code(source) == 5
    (tmp_path / place).write_text("#define VALUE 6\n")  # same size, same second
    assert _code(source) == 6
    (tmp_path / place).write_text("#define VALUE 5\n")
    assert _code(source) == 5


def test_a_header_found_through_a_flag_is_in_the_key_too(tmp_path, own_cache, monkeypatch):
    elsewhere = tmp_path / "include"
    elsewhere.mkdir()
    (elsewhere / "v.h").write_text("#define VALUE 1\n")
    monkeypatch.setenv("KMX_CFLAGS", f"-I{elsewhere}")
    source = _returns_value(tmp_path / "thread.c", "<v.h>")
    assert _code(source) == 1
    (elsewhere / "v.h").write_text("#define VALUE 2\n")
    assert _code(source) == 2


def test_a_deleted_include_is_a_compile_error_not_an_old_build(tmp_path, own_cache):
    source = tmp_path / "thread.c"
    (tmp_path / "gone.h").write_text("#define VALUE 3\n")
    source.write_text('#include "kmx.h"\n#include "gone.h"\nint kmx_main(int core) { return VALUE; }\n')
    assert _code(source) == 3
    (tmp_path / "gone.h").unlink()
    with pytest.raises(km.CompileError, match="gone.h"):
        _code(source)


def test_a_header_edited_while_its_source_compiles_is_compiled_again(tmp_path, own_cache, monkeypatch):
    """The compile reads the header, then it changes before the build is kept: the build
    must not be kept as made from the new header."""
    mark = tmp_path / "compiled"
    compiler = zig_wrapper(tmp_path, after=f'case "$*" in *thread.c*) touch {mark}; sleep 1;; esac')
    monkeypatch.setenv("KMX_CC", str(compiler))
    header, source = tmp_path / "v.h", tmp_path / "thread.c"
    header.write_text("#define VALUE 1\n")
    source.write_text('#include "kmx.h"\n#include "v.h"\nint kmx_main(int core) { return VALUE; }\n')
    got = {}
    loader = threading.Thread(target=lambda: got.setdefault("code", _code(source)))
    loader.start()
    deadline = time.monotonic() + 60
    while not mark.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    header.write_text("#define VALUE 2\n")  # the editor saves while the build goes on
    loader.join(60)
    assert got["code"] == 1  # what the compile read
    assert _code(source) == 2  # and never the old build again


@pytest.mark.parametrize("rival", ["kmx.h", "v.h"])
def test_a_header_put_where_it_shadows_another_is_seen(tmp_path, own_cache, monkeypatch, rival):
    """A header found through -I (or kmx.h, in the runtime) is shadowed by one of the same
    name put beside the source, which an #include "..." looks in first."""
    elsewhere = tmp_path / "include"
    elsewhere.mkdir()
    (elsewhere / "v.h").write_text("#define VALUE 1\n")
    monkeypatch.setenv("KMX_CFLAGS", f"-I{elsewhere}")
    source = tmp_path / "src" / "thread.c"
    source.parent.mkdir()
    source.write_text('#include "kmx.h"\n#include "v.h"\nint kmx_main(int core) { return VALUE; }\n')
    assert _code(source) == 1
    text = "#define VALUE 5\n" if rival == "v.h" else (ROOT / "kmx_runtime" / "kmx.h").read_text() + "\n#undef KMX_RESULT_WORDS\n"
    (source.parent / rival).write_text(text)
    if rival == "v.h":
        assert _code(source) == 5
    else:  # the shadowing kmx.h is read: its own copy, with an extra line
        before = _build.compiler_runs
        assert _code(source) == 1
        assert _build.compiler_runs == before + 1


def test_a_relative_include_folder_is_taken_from_where_python_runs(tmp_path, own_cache, monkeypatch):
    for value, folder in ((1, "a"), (2, "b")):
        (tmp_path / folder / "inc").mkdir(parents=True)
        (tmp_path / folder / "inc" / "v.h").write_text(f"#define VALUE {value}\n")
    monkeypatch.setenv("KMX_CFLAGS", "-Iinc")
    source = tmp_path / "thread.c"
    source.write_text('#include "kmx.h"\n#include <v.h>\nint kmx_main(int core) { return VALUE; }\n')
    monkeypatch.chdir(tmp_path / "a")
    assert _code(source) == 1
    monkeypatch.chdir(tmp_path / "b")
    assert _code(source) == 2


def test_phony_rules_and_odd_paths_in_the_depfile_do_not_break_the_build(tmp_path, own_cache, monkeypatch):
    monkeypatch.setenv("KMX_CFLAGS", "-MP")
    folder = tmp_path / "a dir\twith # odd $ names"
    folder.mkdir()
    (folder / "v.h").write_text("#define VALUE 3\n")
    source = _returns_value(folder / "thread.c", '"v.h"')
    assert _code(source) == 3
    (folder / "v.h").write_text("#define VALUE 4\n")
    assert _code(source) == 4


def test_an_unchanged_thread_is_not_compiled_again(tmp_path, own_cache):
    source = tmp_path / "thread.c"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) { return 4; }\n')
    assert _code(source) == 4
    before = _build.compiler_runs
    assert _code(source) == 4
    assert _build.compiler_runs == before


# -- issue 38, item 5: a header probed and not found is in the key too ------------------------

PROBING = '#if {probe}\n#include {name}\n#else\n#define VALUE 1\n#endif\n'


@pytest.mark.parametrize(
    "probe, name, where, flagged",
    [
        ('__has_include("cfg.h")', '"cfg.h"', "src", False),  # beside the source
        ("__has_include(<cfg.h>)", "<cfg.h>", "include", True),  # in a folder -I names
        ('__has_include ( "sub/cfg.h" )', '"sub/cfg.h"', "src", False),  # in a folder not there yet
        ('__has_include_next("cfg.h")', '"cfg.h"', "later", True),  # in a folder after probe.h's
    ],
)
def test_a_header_probed_with_has_include_and_created_later_is_seen(tmp_path, own_cache, monkeypatch, probe, name,
                                                                    where, flagged):
    """`#if __has_include("cfg.h")` with a default when it is absent: the compile reads no
    cfg.h, so no depfile names it. Once it is created the next load must use it, the one
    after that is a hit, and with it deleted the default comes back. The probe is in a
    header (found through -I) when FLAGGED, in the thread's own file otherwise."""
    include, later = tmp_path / "include", tmp_path / "later"
    include.mkdir()
    later.mkdir()
    monkeypatch.setenv("KMX_CFLAGS", f"-I{include} -I{later}")
    source = tmp_path / "src" / "thread.c"
    source.parent.mkdir()
    probing = PROBING.format(probe=probe, name=name)
    if flagged:
        (include / "probe.h").write_text(probing)
        source.write_text('#include "kmx.h"\n#include "probe.h"\nint kmx_main(int core) { return VALUE; }\n')
    else:
        source.write_text('#include "kmx.h"\n' + probing + "int kmx_main(int core) { return VALUE; }\n")
    assert _code(source) == 1
    created = tmp_path / where / name.strip('"<>')
    created.parent.mkdir(exist_ok=True)
    created.write_text("#define VALUE 2\n")
    assert _code(source) == 2
    before = _build.compiler_runs
    assert _code(source) == 2
    assert _build.compiler_runs == before  # a hit
    created.unlink()
    assert _code(source) == 1


def test_a_probe_whose_name_a_macro_makes_is_compiled_at_every_load(tmp_path, own_cache):
    """__has_include(CFG): which name it probes is the preprocessor's to say, so the object
    is never served from the cache, and the new header is seen."""
    source = tmp_path / "thread.c"
    source.write_text('#include "kmx.h"\n#define CFG "cfg.h"\n' + PROBING.format(probe="__has_include(CFG)", name="CFG")
                      + "int kmx_main(int core) { return VALUE; }\n")
    assert _code(source) == 1
    before = _build.compiler_runs
    assert _code(source) == 1
    assert _build.compiler_runs == before + 1
    (tmp_path / "cfg.h").write_text("#define VALUE 2\n")
    assert _code(source) == 2


def test_a_scan_finds_the_probes_and_not_the_comments(tmp_path):
    header = tmp_path / "a.h"
    header.write_bytes(b'// __has_include(NOT)\n/* __has_include(<no.h>) */\n#if __has_include\\\n("a.h")'
                       b' && __has_include_next(<b/c.h>)\n#endif\n#if __has_embed("d.bin")\n#endif\n'
                       b"#ifdef __has_include\n#endif\nchar quote = '\"';\n")
    assert depends.probed_names([header]) == {"a.h", "b/c.h", "d.bin"}
    header.write_text("#define HAS(x) __has_include(x)\n")
    assert depends.probed_names([header]) is None


# -- item 13: a damaged entry is built again ------------------------------------------------


def _entries(cache: Path, kind: str, suffix: str) -> list[Path]:
    return sorted((cache / kind).glob(f"*/*{suffix}"))


def test_a_truncated_elf_in_the_cache_is_built_again(tmp_path, own_cache):
    source = tmp_path / "thread.c"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) { return 7; }\n')
    assert _code(source) == 7
    (elf,) = _entries(own_cache, "threads", ".elf")
    elf.write_bytes(elf.read_bytes()[:100])
    before = _build.compiler_runs
    assert _code(source) == 7
    assert _build.compiler_runs == before + 1


def test_a_damaged_object_in_the_cache_is_built_again(tmp_path, own_cache):
    source = tmp_path / "thread.c"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) { return 8; }\n')
    assert _code(source) == 8
    for obj in _entries(own_cache, "objects", ".o"):
        obj.write_bytes(b"\0" * obj.stat().st_size)  # same size, other bytes
    assert _code(source) == 8


def test_a_hooks_library_cut_short_is_built_again_not_loaded(tmp_path):
    """Loading a truncated shared library crashes the process: in a child, so that a crash
    fails the test instead of ending the run."""
    cache = tmp_path / "cache"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from komorebi.sim.native import hooks
        print(hooks._build())
        """
    )
    env = {**os.environ, "KMX_CACHE_DIR": str(cache)}
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    library = Path(first.stdout.strip())
    library.write_bytes(library.read_bytes()[:4096])
    check = script + "hooks.library(); print('loaded')\n"
    second = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split()[-1] == "loaded"
    assert Path(second.stdout.split()[0]) == library  # the same name, built again whole
    assert len(library.read_bytes()) > 4096


def test_a_damaged_manifest_is_a_miss(tmp_path, own_cache):
    source = tmp_path / "thread.c"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) { return 9; }\n')
    assert _code(source) == 9
    for manifest in (own_cache / "threads").glob("*/manifest.json"):
        manifest.write_text("{not json")
    assert _code(source) == 9


# -- item 14: folders that cannot be used ----------------------------------------------------


def _load_error(tmp_path: Path, env: dict[str, str], *, user: int | None = None) -> str:
    """The CompileError message of a load in a child process with ENV (and, when USER is
    given, running as that uid after komorebi is imported: root can write anywhere)."""
    source = tmp_path / "thread.c"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) { return 0; }\n')
    # Read first what root alone may read (zig's version, the hooks), then become USER.
    drop = (
        f"import komorebi._simulator, komorebi.sim.machine.card, komorebi.sim.debug.stub; from komorebi.sim.native import hooks; from komorebi.sim.build import toolchain; toolchain.zig_identity(); hooks.library(); os.setgid({user}); os.setuid({user})"
        if user is not None else "pass"
    )
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        import komorebi as km
        {drop}
        p = km.Program("p", kernels={str(KERNELS)!r})
        p.thread(cluster=0, sources=[{str(source)!r}])
        try:
            with km.Session() as s:
                s.load(p).stop()
            print("LOADED")
        except km.CompileError as e:
            print("COMPILE-ERROR", e)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _env(**changes: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def test_a_cache_folder_that_is_a_file_names_the_folder_and_the_variable(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    said = _load_error(tmp_path, _env(KMX_CACHE_DIR=str(blocker)))
    assert said.startswith("COMPILE-ERROR"), said
    assert str(blocker) in said and "KMX_CACHE_DIR" in said and "cannot be written" in said


def test_a_cache_folder_the_user_cannot_write_names_the_folder_and_the_variable(open_tmp):
    tmp_path = open_tmp
    cache = tmp_path / "readonly"
    cache.mkdir()
    if os.getuid() == 0:
        said = _load_error(tmp_path, _env(KMX_CACHE_DIR=str(cache)), user=65534)
    else:
        cache.chmod(0o555)
        said = _load_error(tmp_path, _env(KMX_CACHE_DIR=str(cache)))
    assert said.startswith("COMPILE-ERROR"), said
    assert str(cache) in said and "KMX_CACHE_DIR" in said and "Permission denied" in said


@pytest.mark.skipif(os.getuid() != 0, reason="needs a uid with no password entry")
def test_no_home_and_no_password_entry_says_to_set_kmx_cache_dir(open_tmp):
    tmp_path = open_tmp
    said = _load_error(tmp_path, _env(HOME=None, XDG_CACHE_HOME=None, KMX_CACHE_DIR=None), user=54321)
    assert said.startswith("COMPILE-ERROR"), said
    assert "HOME is not set" in said and "KMX_CACHE_DIR" in said


@pytest.mark.slow
def test_no_home_but_a_cache_folder_compiles_with_zigs_cache_inside_it(tmp_path):
    """(Through a KMX_CC that is zig's cc, freestanding: a fresh zig cache would otherwise
    build the C library, a minute, for a test of where the cache goes.)"""
    cache = tmp_path / "cache"
    said = _load_error(tmp_path, _env(HOME=None, XDG_CACHE_HOME=None, ZIG_GLOBAL_CACHE_DIR=None, KMX_CACHE_DIR=str(cache),
                                      KMX_CC=str(zig_wrapper(tmp_path))))
    assert said.strip() == "LOADED", said
    assert (cache / "zig").is_dir()


def test_a_zig_cache_folder_that_cannot_be_used_names_zig_global_cache_dir(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("")
    said = _load_error(tmp_path, _env(KMX_CACHE_DIR=str(tmp_path / "cache"), ZIG_GLOBAL_CACHE_DIR=str(blocker)))
    assert said.startswith("COMPILE-ERROR"), said
    assert "ZIG_GLOBAL_CACHE_DIR" in said and str(blocker) in said


def test_a_read_only_cache_still_serves_what_it_holds(open_tmp):
    tmp_path = open_tmp
    cache = tmp_path / "cache"
    assert _load_error(tmp_path, _env(KMX_CACHE_DIR=str(cache))).strip() == "LOADED"
    if os.getuid() == 0:
        for folder in [cache, *cache.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o755)
            else:
                folder.chmod(0o644)
        said = _load_error(tmp_path, _env(KMX_CACHE_DIR=str(cache)), user=65534)
    else:
        for folder in [cache, *cache.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o555)
        said = _load_error(tmp_path, _env(KMX_CACHE_DIR=str(cache)))
    assert said.strip() == "LOADED", said


# -- item 9: a time limit, and nothing left running -------------------------------------------


def _slow_compiler(tmp_path: Path) -> tuple[Path, Path]:
    """A KMX_CC that starts a child which would run for ten minutes, and waits for it;
    it writes the child's pid to a file first."""
    pids = tmp_path / "pids"
    compiler = tmp_path / "slowcc"
    compiler.write_text(f"#!/bin/sh\nsleep 600 &\necho $! >> {pids}\nwait\n")
    compiler.chmod(0o755)
    return compiler, pids


def _end_compilers(*pids: Path) -> None:
    """Kill the slow compilers' children that are still running (a test that failed): each
    a sleep (its pid is no other process's now)."""
    listed = [int(pid) for path in pids if path.exists() for pid in path.read_text().split()]
    processes.kill([pid for pid in listed if _alive(pid) and _command(pid).startswith(b"sleep\0")])


def _command(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _assert_gone(pids: Path, what: str) -> None:
    """The one child pid in PIDS ends within a few seconds (a bound for a hang)."""
    (pid,) = map(int, pids.read_text().split())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), what


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


def test_a_compile_past_the_time_limit_is_stopped_and_killed(tmp_path, own_cache, monkeypatch):
    compiler, pids = _slow_compiler(tmp_path)
    monkeypatch.setenv("KMX_CC", str(compiler))
    monkeypatch.setenv("KMX_COMPILE_TIMEOUT", "1.5")
    source = tmp_path / "thread.c"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) { return 0; }\n')
    try:
        with pytest.raises(km.CompileError, match=r"past the time limit of 1\.5 s.*KMX_COMPILE_TIMEOUT"):
            _code(source)  # (the message is the timer's: the compile was stopped, not waited for)
        _assert_gone(pids, "the compiler's child is still running")
    finally:
        _end_compilers(pids)


def test_an_exponential_macro_meets_the_time_limit(tmp_path, own_cache, monkeypatch):
    monkeypatch.setenv("KMX_COMPILE_TIMEOUT", "3")
    lines = ['#include "kmx.h"', "#define E0(x) x x"]
    lines += [f"#define E{i}(x) E{i - 1}(E{i - 1}(x))" for i in range(1, 8)]
    lines += ["int kmx_main(int core) { return 0 E7(+1); }"]
    source = tmp_path / "thread.c"
    source.write_text("\n".join(lines) + "\n")
    with pytest.raises(km.CompileError, match=r"past the time limit of 3 s.*a macro or a template in thread\.c"):
        _code(source)


def test_an_interrupted_compile_leaves_no_compiler_running(tmp_path):
    compiler, pids = _slow_compiler(tmp_path)
    source = tmp_path / "thread.c"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) { return 0; }\n')
    script = processes.INTERRUPTIBLE + textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import komorebi as km
        p = km.Program("p", kernels={str(KERNELS)!r})
        p.thread(cluster=0, sources=[{str(source)!r}])
        try:
            with km.Session() as s:
                s.load(p)
        except KeyboardInterrupt:
            print("INTERRUPTED")
        """
    )
    env = _env(KMX_CC=str(compiler), KMX_CACHE_DIR=str(tmp_path / "cache"))
    try:
        with processes.started([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True) as child:
            wait_for(lambda: pids.exists() and pids.read_text().strip(), "the compiler's start", HANG)
            child.send_signal(signal.SIGINT)
            out, _ = child.communicate(timeout=HANG)
        assert "INTERRUPTED" in out
        _assert_gone(pids, "the compiler's child outlived the interrupt")
    finally:
        _end_compilers(pids)  # (the compiler runs in a session of its own: not in the child's group)


def test_a_bad_time_limit_says_what_it_takes(tmp_path, own_cache, monkeypatch):
    monkeypatch.setenv("KMX_COMPILE_TIMEOUT", "soon")
    source = tmp_path / "thread.c"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) { return 0; }\n')
    with pytest.raises(km.CompileError, match="KMX_COMPILE_TIMEOUT='soon' is not a time limit"):
        _code(source)


# -- item 15: warnings on every load, however the compile went -------------------------------


@pytest.mark.slow  # (15 s: three rounds of racing processes)
def test_racing_processes_all_get_the_compilers_warning(tmp_path):
    cache = tmp_path / "cache"
    for round_ in range(3):
        source = tmp_path / f"thread{round_}.c"
        source.write_text(
            '#include "kmx.h"\nint kmx_main(int core) {\n    int unused_here = 0;\n'
            f"    return {round_};\n}}\n"
        )
        script = textwrap.dedent(
            f"""
            import sys, warnings
            sys.path.insert(0, {str(ROOT)!r})
            import komorebi as km
            warnings.simplefilter("always")
            p = km.Program("p", kernels={str(KERNELS)!r})
            p.thread(cluster=0, sources=[{str(source)!r}])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with km.Session() as s:
                    s.load(p).stop()
            print(sum(issubclass(w.category, km.CompileWarning) and "unused_here" in str(w.message) for w in caught))
            """
        )
        env = _env(KMX_CACHE_DIR=str(cache), KMX_CFLAGS="-Wall")
        with contextlib.ExitStack() as stack:
            children = [stack.enter_context(processes.started([sys.executable, "-c", script], env=env, text=True,
                                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE))
                        for _ in range(4)]
            said = [child.communicate(timeout=HANG) for child in children]
        assert [out.strip() for out, _ in said] == ["1"] * 4, said


def test_compilers_run_together_give_every_output_and_the_first_failure(tmp_path):
    """sim.build.toolchain.run_together (the hooks' files compiled side by side): each
    command's output, in order, and the first failing command's status."""
    from komorebi.sim.build import toolchain

    done = toolchain.run_together([["sh", "-c", "echo one"], ["sh", "-c", "echo two; exit 3"], ["sh", "-c", "exit 4"]],
                                  what="three commands")
    assert done.returncode == 3
    assert done.output.split() == ["one", "two"]
    assert toolchain.run_together([["sh", "-c", "echo one"], ["true"]], what="two").returncode == 0


def test_compilers_run_together_past_the_time_limit_are_all_stopped(tmp_path, monkeypatch):
    from komorebi.sim.build import toolchain

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, first_pids = _slow_compiler(tmp_path / "a")
    second, second_pids = _slow_compiler(tmp_path / "b")
    monkeypatch.setenv("KMX_COMPILE_TIMEOUT", "2")
    try:
        with pytest.raises(toolchain.CompilerTimeout, match=r"past the time limit of 2 s"):
            toolchain.run_together([[str(first)], [str(second)]], what="two slow compilers", kind="first")
        _assert_gone(first_pids, "the first compiler's child outlived the time limit")
        _assert_gone(second_pids, "the second compiler's child outlived the time limit")
    finally:
        _end_compilers(first_pids, second_pids)
