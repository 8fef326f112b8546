"""docs/errors.md is true: each message it shows is the message the library gives.

Every ```text block of the page is one entry: `TYPE: MESSAGE` for an exception or a
warning, or the bare `cause` of a km.ThreadFault. Words in braces vary; a line `...`
stands for any further lines. Each case below names its block by a piece of its text,
makes the error happen through the public API, and checks the type and the message
against the block (with the braces filled where the case knows the value, and matched
loosely where it does not). A block that no case names fails, and so does a case whose
block is gone: the page and the library cannot drift apart.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.threads import run_to_end, wait_for, zig_wrapper

PAGE = ROOT / "docs" / "errors.md"
KERNELS = ROOT / "tutorial" / "35_sharing_memory" / "kernels"  # empty kernels
GiB = 1 << 30

TYPES: dict[str, type] = {
    "TypeError": TypeError,
    "ValueError": ValueError,
    "KeyError": KeyError,
    "FileNotFoundError": FileNotFoundError,
    "RuntimeError": RuntimeError,
    "TimeoutError": TimeoutError,
    "ImportError": ImportError,
    "km.CompileError": km.CompileError,
    "km.ThreadFault": km.ThreadFault,
    "km.NotSimulatedWarning": km.NotSimulatedWarning,
    "km.CoherenceWarning": km.CoherenceWarning,
    "km.CompileWarning": km.CompileWarning,
    "km.OutputWarning": km.OutputWarning,
}
PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def blocks() -> list[str]:
    return re.findall(r"^```text\n(.*?)\n```$", PAGE.read_text(), re.S | re.M)


def pattern(template: str, values: dict[str, str]) -> str:
    """A regex for TEMPLATE: {name} is VALUES[name] when given, else any text on one
    line; a line "..." is any number of further lines."""
    out = []
    for i, line in enumerate(template.split("\n")):
        if line == "...":
            out.append(r"(?:\n.*)*")
            continue
        regex, position = "", 0
        for match in PLACEHOLDER.finditer(line):
            name = match.group(1)
            regex += re.escape(line[position : match.start()])
            regex += re.escape(values[name]) if name in values else ".+?"
            position = match.end()
        out.append(("\n" if i else "") + regex + re.escape(line[position:]))
    return "".join(out)


# -- making errors happen ---------------------------------------------------------------------


def raised(action: Callable[[], Any]) -> BaseException:
    try:
        action()
    except Exception as error:  # noqa: BLE001 - the case checks its type
        return error
    pytest.fail("no exception was raised")


def warned(action: Callable[[], Any], category: type[Warning]) -> warnings.WarningMessage:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
    ours = [w for w in caught if issubclass(w.category, category)]
    assert ours, f"no {category.__name__}; got {[str(w.message) for w in caught]}"
    return ours[0]


def c_file(tmp_path: Path, body: str = "    return 0;\n", prelude: str = "\n") -> Path:
    """A thread whose kmx_main runs BODY, after PRELUDE; with the default PRELUDE, BODY's
    first line is line 5 of the file."""
    path = tmp_path / "thread.c"
    path.write_text('#include "kmx.h"\n' + prelude + "int kmx_main(int core) {\n    (void)core;\n" + body + "}\n")
    return path


def program(tmp_path: Path, body: str = "    return 0;\n", *, cluster: int = 1, prelude: str = "\n",
            **thread) -> km.Program:
    p = km.Program("errors", kernels=KERNELS)
    p.thread(cluster=cluster, sources=[c_file(tmp_path, body, prelude)], **thread)
    return p


def bad_thread(tmp_path: Path, **changes) -> Callable[[], Any]:
    def action():
        arguments = {"cluster": 1, "sources": [c_file(tmp_path)], **changes}
        km.Program("errors", kernels=KERNELS).thread(**arguments)

    return action


def fault(tmp_path: Path, body: str, **thread) -> BaseException:
    """What the first thread_result raises for a thread running BODY."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", km.CoherenceWarning)
        warnings.simplefilter("ignore", km.CompileWarning)
        with km.Session() as session:
            run = session.load(program(tmp_path, body, **thread))
            try:
                return raised(lambda: run.thread_result(timeout=10.0))
            finally:
                run.stop()


def on_a_run(tmp_path: Path, act: Callable[[km.Run], Any], *, stop_first: bool = False,
             two_threads: bool = False, **thread) -> BaseException:
    """What ACT raises on a run of a thread that ends at once (threads on clusters 0 and 2
    with TWO_THREADS), before or after run.stop()."""
    if two_threads:
        p = km.Program("errors", kernels=KERNELS)
        p.thread(cluster=0, sources=[c_file(tmp_path)])
        p.thread(cluster=2, sources=[c_file(tmp_path)])
    else:
        p = program(tmp_path, **thread)
    with km.Session() as session:
        run = session.load(p)
        try:
            if stop_first:
                run.stop()
            return raised(lambda: act(run))
        finally:
            run.stop()


FOREVER = "    for (;;) {\n    }\n    return 0;\n"


def forever(tmp_path: Path, act: Callable[[km.Run], Any]) -> BaseException:
    with km.Session() as session:
        run = session.load(program(tmp_path, FOREVER))
        try:
            return act(run)
        finally:
            run.stop()


# -- the cases --------------------------------------------------------------------------------


@dataclass
class Case:
    id: str
    key: str  # a piece of text found in exactly one ```text block of the page
    trigger: Callable[[Path, pytest.MonkeyPatch], Any]
    values: dict[str, str] | Callable[[Path], dict[str, str]] = field(default_factory=dict)
    variant: tuple[str, str] | None = None  # (in the block, instead): an ending the page gives in words


def _agent_ok(noc):
    return None


def _agent_twice(tmp_path, _):
    p = program(tmp_path)
    p.noc_agent("a", _agent_ok, cluster=1)
    return raised(lambda: p.noc_agent("a", _agent_ok, cluster=1))


def _agent_too_many(tmp_path, _):
    p = program(tmp_path)
    for name in "abcd":
        p.noc_agent(name, _agent_ok, cluster=1)
    return raised(lambda: p.noc_agent("e", _agent_ok, cluster=1))


class _GeneratorCall:
    def __call__(self, noc):
        yield noc.read("r", 0, 4)


async def _agent_async(noc):
    return None


@functools.wraps(_agent_async)
def _agent_wrapped(noc):
    return _agent_async(noc)


def _agent_made_a_coroutine(tmp_path, _):
    p = program(tmp_path, regions={"r": 64})
    p.noc_agent("a", _agent_wrapped, cluster=1)
    _, run = run_to_end(p, 60.0)
    return run.agent("a").error


# a thread that waits until word 0 of region "r" is 1 in DRAM (ENDED: returns at once)
_WAITS = "    volatile uint32_t* r = kmx_region(0, 0);\n    do kmx_invalidate(0); while (r[0] != 1);\n    return 0;\n"


def _noc_error(tmp_path, call, regions=None, ended=False) -> BaseException:
    """What CALL(noc) raises in a stand-in (which then lets the thread end)."""
    def agent(noc):
        try:
            call(noc)
        except Exception as error:  # noqa: BLE001 - the case checks it
            return error
        finally:
            if not ended:
                noc.write("r", 0, np.uint32([1]))

    p = program(tmp_path, "    return 0;\n" if ended else _WAITS, regions=regions or {"r": 64})
    p.noc_agent("a", agent, cluster=1)
    _, run = run_to_end(p, 60.0)
    return run.agent("a").result


def _agent_failed_timeout(tmp_path, _):
    def agent(noc):
        raise ValueError("no frames today")

    p = program(tmp_path, _WAITS, regions={"r": 64})
    p.noc_agent("a", agent, cluster=1)
    with km.Session() as session:
        run = session.load(p)
        try:
            return raised(lambda: run.thread_result(timeout=0.5))
        finally:
            run.stop()


def _source_gone(tmp_path, _):
    p = program(tmp_path)
    (tmp_path / "thread.c").unlink()
    with km.Session() as session:
        return raised(lambda: session.load(p))


def _closed(tmp_path, _):
    session = km.Session()
    session.close()
    return raised(lambda: session.load(program(tmp_path)))


def _gdb_port_taken(tmp_path, monkeypatch):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with km.Session(gdb=port) as session:
            error = raised(lambda: session.load(program(tmp_path)))
    assert f"127.0.0.1:{port}" in str(error)
    return error


def _gdb_kill(tmp_path, monkeypatch):
    """A thread that never ends, killed from gdb (its protocol, by hand)."""
    import io
    import socket

    from komorebi.sim.debug import remote

    said = io.StringIO()
    monkeypatch.setattr(sys, "stderr", said)  # (where load says how to attach)
    loaded: list = []
    with km.Session(gdb=0) as session:
        loading = threading.Thread(target=lambda: loaded.append(session.load(program(tmp_path, FOREVER))))
        loading.start()
        for _ in range(600):
            found = re.search(r"target remote :(\d+)", said.getvalue())
            if found:
                break
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", int(found[1])), timeout=30) as sock:
            sock.sendall(remote.frame("vKill;1"))
            sock.recv(64)
        loading.join(60)
        return raised(lambda: loaded[0].thread_result(timeout=30.0))


def _broken(*_args, **_kwargs):
    raise ValueError("broken on purpose")


def _simulator_fails_in_a_turn(tmp_path, monkeypatch):
    """A bug of the simulator's in a turn (a kmx_print's line reaches a broken console)."""
    from komorebi.sim.machine.cluster import Cluster

    monkeypatch.setattr(Cluster, "print", _broken)
    got = fault(tmp_path, '    kmx_print("hello\\n");\n    return 0;\n')
    assert "stopped at" in str(got) and "crashed" not in str(got)
    return got


def _simulator_fails_as_the_thread_ends(tmp_path, monkeypatch):
    """A bug of the simulator's as the thread ends (its hand-back), after its last result:
    run.stop() raises it."""
    from komorebi.sim.machine.cluster import Cluster

    monkeypatch.setattr(Cluster, "hand_back", _broken)
    with km.Session() as session:
        run = session.load(program(tmp_path, regions={"r": 64}))
        assert raised(lambda: run.thread_result(timeout=10.0)).category is km.Category.SIMULATOR
        error = raised(run.stop)
        monkeypatch.undo()
        return error


def _load(p_or_value):
    with km.Session() as session:
        return raised(lambda: session.load(p_or_value))


def _compile(tmp_path, monkeypatch, text, **env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "thread.c"
    path.write_text(text)
    p = km.Program("errors", kernels=KERNELS)
    p.thread(cluster=1, sources=[path])
    return _load(p)


def _kernel_that_does_something(tmp_path, _):
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    (kernels / "compute.cpp").write_text("void kernel_main() {\n    int x = 1;\n    (void)x;\n}\n")
    return warned(lambda: km.Program("errors", kernels=kernels), km.NotSimulatedWarning)


def _read_before_invalidate(tmp_path, _):
    body = "    uint64_t bytes;\n    uint32_t* data = (uint32_t*)kmx_region(0, &bytes);\n    return (int)data[0];\n"

    def run():
        with km.Session() as session:
            r = session.load(program(tmp_path, body, regions={"data": np.arange(16, dtype=np.uint32)}))
            r.thread_result(timeout=10.0)
            r.stop()

    return warned(run, km.CoherenceWarning)


def _compile_warning(tmp_path, _):
    body = '    kmx_print("%d\\n", "text");\n    return 0;\n'

    def run():
        with km.Session() as session:
            r = session.load(program(tmp_path, body))
            r.thread_result(timeout=10.0)
            r.stop()

    return warned(run, km.CompileWarning)


def _slow_compiler(tmp_path: Path, monkeypatch, sleep: float) -> None:
    monkeypatch.setenv("KMX_CC", str(zig_wrapper(tmp_path, before=f"sleep {sleep}")))
    monkeypatch.setenv("KMX_CACHE_DIR", str(tmp_path / "cache"))


def _closed_while_loading(tmp_path, monkeypatch):
    # the compiler says it has begun, and ends only when told: the close comes while it runs
    began, go = tmp_path / "began", tmp_path / "go"
    waits = f"touch {began}; n=0; while [ ! -e {go} ] && [ $n -lt 60000 ]; do sleep 0.01; n=$((n+1)); done"
    monkeypatch.setenv("KMX_CC", str(zig_wrapper(tmp_path, before=waits)))
    monkeypatch.setenv("KMX_CACHE_DIR", str(tmp_path / "cache"))
    session = km.Session()
    got = {}
    loader = threading.Thread(target=lambda: got.setdefault("error", raised(lambda: session.load(program(tmp_path)))))
    loader.start()
    try:
        wait_for(began.exists, "the compiler began")
        session.close()
    finally:
        go.touch()  # (whatever happened: the compiler ends, not ten minutes later)
        loader.join(600)
    return got["error"]


def _compile_timeout(tmp_path, monkeypatch):
    _slow_compiler(tmp_path, monkeypatch, 30)
    monkeypatch.setenv("KMX_COMPILE_TIMEOUT", "0.5")
    return _load(program(tmp_path))


def _cache_is_a_file(tmp_path, monkeypatch):
    blocker = tmp_path / "afile"
    blocker.write_text("")
    monkeypatch.setenv("KMX_CACHE_DIR", str(blocker))
    return _load(program(tmp_path))


def _no_home(tmp_path, monkeypatch):
    for name in ("KMX_CACHE_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)

    def no_home():  # what Path.home does for a user with no password entry
        raise KeyError("getpwuid(): uid not found: 54321")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    return _load(program(tmp_path))


def _zig_cache_is_a_file(tmp_path, monkeypatch):
    blocker = tmp_path / "afile"
    blocker.write_text("")
    monkeypatch.setenv("KMX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ZIG_GLOBAL_CACHE_DIR", str(blocker))
    return _load(program(tmp_path))


def _library_manifest_damaged(tmp_path, monkeypatch):
    import shutil

    from komorebi.sim.build import libc

    copy = tmp_path / "libc"
    shutil.copytree(libc.folder(), copy)
    monkeypatch.setattr(libc, "folder", lambda: copy)
    (copy / "x280" / libc.MANIFEST).write_text("[]")
    return _load(program(tmp_path))


def _library_manifest_values(tmp_path) -> dict[str, str]:
    from komorebi.sim.build import libc

    return {"cpu": "-mcpu=sifive_x280", "python": sys.executable, "seconds": str(libc.BUILD_SECONDS),
            "why": f"its manifest {tmp_path / 'libc' / 'x280' / libc.MANIFEST} is damaged: it holds a JSON "
                   f"array, not an object (a manifest is {libc.MANIFEST_SHAPE})"}


def _forked_child(tmp_path, _):
    """The message a forked child gets from its parent's run (through a pipe)."""
    with km.Session() as session:
        run = session.load(program(tmp_path))
        run.thread_result(timeout=10.0)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: say what run.thread_result raised, and leave at once
            try:
                run.thread_result(timeout=0)
                os.write(write_end, b"nothing raised")
            except BaseException as error:  # noqa: BLE001 - reported to the parent
                os.write(write_end, f"{type(error).__name__}: {error}".encode())
            os._exit(0)
        os.close(write_end)
        said = b""
        while chunk := os.read(read_end, 4096):
            said += chunk
        os.close(read_end)
        os.waitpid(pid, 0)
        run.stop()
    kind, message = said.decode().split(": ", 1)
    return {"RuntimeError": RuntimeError}.get(kind, Exception)(message)


class _BrokenPipe:
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        pass


def _output_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _BrokenPipe())

    def run():
        with km.Session() as session:
            r = session.load(program(tmp_path, '    kmx_print("one line\\n");\n    return 0;\n'))
            r.thread_result(timeout=10.0)
            r.stop()

    return warned(run, km.OutputWarning)


def _no_such_host_memory(tmp_path, monkeypatch):
    from komorebi.sim.memory import host

    monkeypatch.setenv("KMX_HOST_MEMORY", "fast")
    host.way.cache_clear()
    try:
        return raised(lambda: bad_thread(tmp_path, regions={"a": np.zeros(4, np.uint8)})())
    finally:
        monkeypatch.undo()
        host.ask(os.environ.get(host.VARIABLE, ""))  # (what the suite asked for: tests/conftest.py)
        host.way.cache_clear()


def _unicorn_first(tmp_path, _):
    """A process that imports unicorn, then komorebi's machine (in a child: this one has it)."""
    import subprocess

    script = "import unicorn\ntry:\n    import komorebi.sim.hart.engine\nexcept ImportError as e:\n    print(e)\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return ImportError(done.stdout.strip())


def _unicorn_first_values(_):
    from komorebi.sim.hart import engine

    return {"folder": str(engine.LIBRARY_FOLDER)}


def _thread_file(tmp_path: Path) -> str:
    return str((tmp_path / "thread.c").resolve())


DEEP = "static int deep(volatile int n) {\n    volatile char pad[4000];\n    pad[0] = (char)n;\n    return n == 0 ? pad[0] : deep(n - 1) + pad[0];\n}\n"
PRINT_17 = '    kmx_print("' + " ".join(["%d"] * 17) + '\\n", ' + ", ".join(str(i) for i in range(17)) + ");\n    return 0;\n"
REGION = "    uint64_t bytes;\n    uint8_t* r = (uint8_t*)kmx_region(0, &bytes);\n"

CASES = [
    # 1. km.Program
    Case("program-name-not-str", "TypeError: name must be a str",
         lambda t, m: raised(lambda: km.Program(3, kernels=KERNELS)), {"type": "int"}),
    Case("program-name-none", "TypeError: name must be a str",
         lambda t, m: raised(lambda: km.Program(None, kernels=KERNELS)), {"type": "NoneType"}),
    Case("program-name-empty", "ValueError: name must not be empty",
         lambda t, m: raised(lambda: km.Program("", kernels=KERNELS))),
    Case("program-kernels-type", "kernels must be a path",
         lambda t, m: raised(lambda: km.Program("p", kernels=3)), {"type": "int"}),
    Case("program-kernels-missing", "kernels: the folder",
         lambda t, m: raised(lambda: km.Program("p", kernels=t / "nowhere")),
         lambda t: {"path": str(t / "nowhere")}),
    Case("program-kernels-a-file", "is a file, not a folder",
         lambda t, m: raised(lambda: km.Program("p", kernels=c_file(t))),
         lambda t: {"path": str(t / "thread.c")}),
    # program.thread
    Case("thread-cluster-type", "cluster must be an int, not",
         lambda t, m: raised(bad_thread(t, cluster="1")), {"type": "str"}),
    Case("thread-cluster-bool", "cluster must be an int, not",
         lambda t, m: raised(bad_thread(t, cluster=True)), {"type": "bool"}),
    Case("thread-cluster-range", "cluster must be 0 to 3",
         lambda t, m: raised(bad_thread(t, cluster=4)), {"cluster": "4"}),
    Case("thread-cluster-twice", "already has a thread",
         lambda t, m: raised(lambda: program(t).thread(cluster=1, sources=[c_file(t)])),
         {"cluster": "1", "program": "errors"}),
    Case("thread-cores-type", "cores must be an int",
         lambda t, m: raised(bad_thread(t, cores=1.0)), {"type": "float"}),
    Case("thread-cores-range", "cores must be 1 to 4",
         lambda t, m: raised(bad_thread(t, cores=5)), {"cores": "5"}),
    Case("thread-sources-one-path", "sources must be a list",
         lambda t, m: raised(bad_thread(t, sources=c_file(t))), {}),
    Case("thread-sources-empty", "sources must name at least one",
         lambda t, m: raised(bad_thread(t, sources=[])), {}),
    Case("thread-sources-item-type", "sources[{index}] must be a path",
         lambda t, m: raised(bad_thread(t, sources=[3])), {"index": "0", "type": "int"}),
    Case("thread-sources-missing", "sources[{index}]: the file",
         lambda t, m: raised(bad_thread(t, sources=[c_file(t), t / "gone.c"])),
         lambda t: {"index": "1", "path": str(t / "gone.c")}),
    Case("thread-sources-a-folder", "is a folder, not a file",
         lambda t, m: raised(bad_thread(t, sources=[c_file(t), t])),
         lambda t: {"index": "1", "path": str(t)}),
    Case("thread-regions-type", "regions must be a dict",
         lambda t, m: raised(bad_thread(t, regions=[("a", 4)])), {"type": "list"}),
    Case("thread-regions-too-many", "a thread has at most 16",
         lambda t, m: raised(bad_thread(t, regions={f"r{i}": 4 for i in range(17)})), {"count": "17"}),
    Case("thread-regions-name", "a region name must be a str",
         lambda t, m: raised(bad_thread(t, regions={3: 4})), {"value": "3"}),
    Case("thread-regions-name-empty", "a region name must not be empty",
         lambda t, m: raised(bad_thread(t, regions={"a": 4, "": 4}))),
    Case("thread-regions-size", "must be a byte count > 0",
         lambda t, m: raised(bad_thread(t, regions={"a": 0})), {"name": "a", "size": "0"}),
    Case("thread-regions-empty-array", "the array is empty",
         lambda t, m: raised(bad_thread(t, regions={"a": np.zeros(0, np.uint32)})), {"name": "a"}),
    Case("thread-regions-objects", "an array of Python objects",
         lambda t, m: raised(bad_thread(t, regions={"a": np.array([1, "x"], dtype=object)})), {"name": "a"}),
    Case("thread-regions-content-type", "must be a byte count (int) or a numpy array",
         lambda t, m: raised(bad_thread(t, regions={"a": [1, 2, 3]})), {"name": "a", "type": "list"}),
    Case("thread-words-type", "words must be a sequence of ints, not {type}",
         lambda t, m: raised(bad_thread(t, words=7)), {"type": "int"}),
    Case("thread-words-zero-dimensions", "dimensional numpy array",
         lambda t, m: raised(bad_thread(t, words=np.array(7))), {"dimensions": "0"}),
    Case("thread-words-too-many", "a thread takes at most 64",
         lambda t, m: raised(bad_thread(t, words=[0] * 65)), {"count": "65"}),
    Case("thread-words-item-type", "words[{index}] must be an int",
         lambda t, m: raised(bad_thread(t, words=[1, 2.5])), {"index": "1", "type": "float"}),
    Case("thread-words-negative", "must be 0 <= w < 2**32",
         lambda t, m: raised(bad_thread(t, words=[-1])), {"index": "0", "word": "-1"}),
    Case("thread-words-too-big", "must be 0 <= w < 2**32",
         lambda t, m: raised(bad_thread(t, words=[1, 2**32])), {"index": "1", "word": str(2**32)}),
    Case("host-memory", "the ways are 'linux' and 'portable'", _no_such_host_memory, {"value": "'fast'"}),
    # program.noc_agent
    Case("agent-no-thread", "an agent plays the Tensix side",
         lambda t, m: raised(lambda: program(t).noc_agent("a", _agent_ok, cluster=2)),
         {"cluster": "2", "program": "'errors'", "has": "its threads are on clusters [1]"}),
    Case("agent-name-twice", "each agent's name is its own", _agent_twice, {"program": "'errors'", "name": "'a'"}),
    Case("agent-too-many", "the most a cluster may have", _agent_too_many, {"cluster": "1"}),
    Case("agent-function-type", "function must be a callable taking the noc",
         lambda t, m: raised(lambda: program(t).noc_agent("a", "f", cluster=1)), {"type": "str"}),
    Case("agent-function-generator", "function must be a plain function taking the noc",
         lambda t, m: raised(lambda: program(t).noc_agent("a", _GeneratorCall(), cluster=1)),
         {"kind": "an object whose __call__ is a generator function"}),
    Case("agent-function-returned-a-coroutine", "without making a noc call", _agent_made_a_coroutine,
         {"name": "'a'", "made": "a coroutine"}),
    # a stand-in's noc calls
    Case("noc-region", "its regions are {regions}",
         lambda t, m: _noc_error(t, lambda noc: noc.read("nope", 0, 4)),
         {"call": "read", "name": "'nope'", "cluster": "1", "regions": "'r' (64 bytes)"}),
    Case("noc-outside", "are outside region",
         lambda t, m: _noc_error(t, lambda noc: noc.write("r", 60, b"12345678")),
         {"call": "write", "first": "60", "last": "67", "name": "'r'", "size": "64", "end": "63"}),
    Case("noc-dtype", "does not divide region",
         lambda t, m: _noc_error(t, lambda noc: noc.wait("odd", 0, 1), regions={"r": 64, "odd": 6}),
         {"dtype": "uint32", "size": "4", "name": "'odd'", "bytes": "6"}),
    Case("noc-wait-value-int", "noc.wait: value {value} is not one",
         lambda t, m: _noc_error(t, lambda noc: noc.wait("r", 0, 2**70)),
         {"value": str(2**70), "dtype": "uint32", "what it holds": "a whole number 0 to 4294967295"}),
    Case("noc-wait-value-float", "noc.wait: value {value} is not one",
         lambda t, m: _noc_error(t, lambda noc: noc.wait("r", 0, 1e300, dtype=np.float32)),
         {"value": "1e+300", "dtype": "float32", "what it holds": "a number of magnitude 1.4e-45 to 3.4028e+38, 0, inf or nan"}),
    Case("noc-wait-timeout", "within the timeout",
         lambda t, m: _noc_error(t, lambda noc: noc.wait("r", 8, 3, timeout=0.1)),
         {"value": "3", "offset": "8", "name": "'r'", "now": "0"}),
    Case("noc-wait-never", "no other stand-in is left to write it",
         lambda t, m: _noc_error(t, lambda noc: noc.wait("r", 8, 3), ended=True),
         {"value": "3", "offset": "8", "name": "'r'"}),
    Case("timeout-agent-failed", "a core waiting for what it would have written", _agent_failed_timeout,
         {"cluster": "1", "timeout": "0.5", "name": "'a'", "error": "ValueError('no frames today')"}),
    # km.Session
    Case("session-coherence-type", "coherence must be a str",
         lambda t, m: raised(lambda: km.Session(coherence=1)), {"type": "int"}),
    Case("session-coherence-value", "coherence must be 'card' or 'strict', not",
         lambda t, m: raised(lambda: km.Session(coherence="loose")), {"value": "'loose'"}),
    Case("session-quantum-type", "quantum must be an int",
         lambda t, m: raised(lambda: km.Session(quantum=1.5)), {"type": "float"}),
    Case("session-quantum-range", "quantum must be 1 to 2**31",
         lambda t, m: raised(lambda: km.Session(quantum=0)), {"quantum": "0"}),
    Case("session-seed-type", "schedule_seed must be",
         lambda t, m: raised(lambda: km.Session(schedule_seed="7")), {"type": "str"}),
    Case("session-output-limit-type", "output_limit must be an int",
         lambda t, m: raised(lambda: km.Session(output_limit=1.5)), {"type": "float"}),
    Case("session-output-limit-negative", "output_limit must be >= 0",
         lambda t, m: raised(lambda: km.Session(output_limit=-3)), {"value": "-3"}),
    Case("session-gdb-type", "gdb must be a port number (an int",
         lambda t, m: raised(lambda: km.Session(gdb="1234")), {"type": "str"}),
    Case("session-gdb-environment", "KMX_GDB must be a port number",
         lambda t, m: (m.setenv("KMX_GDB", "soon"), raised(lambda: km.Session()))[1], {"value": "'soon'"}),
    Case("session-gdb-port-taken", "gdb: cannot serve on", _gdb_port_taken),
    Case("session-profile-type", "profile must be True or False",
         lambda t, m: raised(lambda: km.Session(profile="yes")), {"type": "str"}),
    Case("session-trace-folder", "trace: the folder",
         lambda t, m: raised(lambda: km.Session(trace=t / "nowhere" / "run.json")), lambda t: {"folder": str(t / "nowhere")}),
    # session.load
    Case("load-closed", "the session is closed", _closed),
    Case("load-closed-while-loading", "was closed while the program loaded", _closed_while_loading),
    Case("load-image-too-big", "the thread's image (its code, data and .bss)",
         lambda t, m: _load(program(t, "    huge[kmx_word(0)] = 1;\n    return huge[5];\n", cluster=2, words=[0],
                                    prelude="static uint8_t huge[3u << 30];\n")),
         {"cluster": "2", "bank": "D7", "share": "2 GiB"}),
    Case("load-not-a-program", "program must be a km.Program",
         lambda t, m: _load("program.py"), {"type": "str"}),
    Case("load-no-thread", "has no thread; add one",
         lambda t, m: _load(km.Program("empty", kernels=KERNELS)), {"program": "empty"}),
    Case("load-region-too-big-cluster-0", "left after the image, the stacks",
         lambda t, m: _load(program(t, cluster=0, regions={"big": 5 * GiB})),
         {"name": "big", "size": "5 GiB", "cluster": "0", "bank": "D5", "share": "4 GiB"}),
    Case("load-region-too-big-cluster-3", "left after the image, the stacks",
         lambda t, m: _load(program(t, cluster=3, regions={"small": 64, "big": 2 * GiB})),
         {"name": "big", "size": "2 GiB", "cluster": "3", "bank": "D7", "share": "2 GiB"}),
    Case("load-source-gone", "no longer exists", _source_gone,
         lambda t: {"path": str((t / "thread.c").resolve()), "cluster": "1"}),
    # run.thread, run.threads
    Case("run-thread-several", "the program has threads on clusters",
         lambda t, m: on_a_run(t, lambda run: run.thread, two_threads=True), {"clusters": "0, 2"}),
    Case("thread-result-several", "the program has threads on clusters",
         lambda t, m: on_a_run(t, lambda run: run.thread_result(timeout=10.0), two_threads=True),
         {"clusters": "0, 2"}),
    Case("run-threads-no-thread", "the threads are on clusters",
         lambda t, m: on_a_run(t, lambda run: run.threads[3]), {"cluster": "3", "clusters": "1"}),
    Case("run-threads-no-thread-two", "the threads are on clusters",
         lambda t, m: on_a_run(t, lambda run: run.threads[1], two_threads=True),
         {"cluster": "1", "clusters": "0, 2"}),
    # run.thread_result
    Case("thread-result-timeout-type", "timeout must be a number of seconds or None",
         lambda t, m: on_a_run(t, lambda run: run.thread_result(timeout="10")), {"type": "str"}),
    Case("thread-dot-result-timeout-bool", "timeout must be a number of seconds or None",
         lambda t, m: on_a_run(t, lambda run: run.thread.result(timeout=True)), {"type": "bool"}),
    Case("thread-result-timeout-negative", "timeout must be a number of seconds >= 0",
         lambda t, m: on_a_run(t, lambda run: run.thread_result(timeout=-1)), {"timeout": "-1"}),
    Case("thread-result-timeout-nan", "timeout must be a number of seconds >= 0",
         lambda t, m: on_a_run(t, lambda run: run.thread_result(timeout=float("nan"))), {"timeout": "nan"}),
    Case("thread-result-timeout-negative-fraction", "timeout must be a number of seconds >= 0",
         lambda t, m: on_a_run(t, lambda run: run.thread_result(timeout=Fraction(-1, 2))), {"timeout": "-1/2"}),
    Case("thread-dot-result-timeout-negative", "timeout must be a number of seconds >= 0",
         lambda t, m: on_a_run(t, lambda run: run.thread.result(timeout=-0.5)), {"timeout": "-0.5"}),
    Case("thread-result-cluster-type", "cluster must be an int (0 to 3) or None",
         lambda t, m: on_a_run(t, lambda run: run.thread_result(timeout=10.0, cluster="0")), {"type": "str"}),
    Case("thread-result-cluster-missing", "the threads are on clusters",
         lambda t, m: on_a_run(t, lambda run: run.thread_result(timeout=10.0, cluster=1), two_threads=True),
         {"cluster": "1", "clusters": "0, 2"}),
    # run.thread.read
    Case("read-name-type", "name must be a region name",
         lambda t, m: on_a_run(t, lambda run: run.thread.read(0), stop_first=True, regions={"a": 8}), {"type": "int"}),
    Case("read-before-stop", "regions are read after run.stop()",
         lambda t, m: on_a_run(t, lambda run: run.thread.read("a"), regions={"a": 8})),
    Case("read-unknown-name", "no region '{name}'",
         lambda t, m: on_a_run(t, lambda run: run.thread.read("b"), stop_first=True, regions={"a": 8, "c": 8}),
         {"name": "b", "cluster": "1", "names": "'a', 'c'"}),
    # run.cache_report, run.cache_map
    Case("cache-report-before-stop", "comes after run.stop()",
         lambda t, m: on_a_run(t, lambda run: run.cache_report()), {"call": "run.cache_report()"}),
    Case("cache-map-before-stop", "comes after run.stop()",
         lambda t, m: on_a_run(t, lambda run: run.cache_map(t / "map.svg")), {"call": "run.cache_map()"}),
    Case("cache-map-path-type", "path must be a file path",
         lambda t, m: on_a_run(t, lambda run: run.cache_map(3), stop_first=True), {"type": "int"}),
    Case("cache-map-not-svg", "path must end in .svg",
         lambda t, m: on_a_run(t, lambda run: run.cache_map(t / "map.png"), stop_first=True), {"file name": "map.png"}),
    Case("cache-map-no-folder", "No such file or directory",
         lambda t, m: on_a_run(t, lambda run: run.cache_map(t / "nowhere" / "map.svg"), stop_first=True),
         lambda t: {"path": str(t / "nowhere" / "map.svg")}),
    Case("profile-not-profiled", "needs a profiled run",
         lambda t, m: on_a_run(t, lambda run: run.profile(), stop_first=True)),
    Case("story-not-html", "path must end in .html",
         lambda t, m: on_a_run(t, lambda run: run.cache_story(t / "story.svg"), stop_first=True), {"file name": "story.svg"}),
    # km.explore
    Case("explore-verdict-type", "check must return True, False or None",
         lambda t, m: raised(lambda: km.explore(lambda: program(t), lambda run: np.zeros(2) == 0, schedules=1, workers=1)),
         {"type": "ndarray"}),
    # 2. build
    Case("compile-error", "error: {what the compiler says}",
         lambda t, m: _load(program(t, "    return 0\n")),
         lambda t: {"file": _thread_file(t), "line": "5"}),
    Case("compile-undefined-symbol", "undefined symbol",
         lambda t, m: _compile(t, m, '#include "kmx.h"\nint frobnicate(int);\nint kmx_main(int core) { return frobnicate(core); }\n'),
         {"symbol": "frobnicate"}),
    Case("compile-no-kmx-main", "the thread has no kmx_main",
         lambda t, m: _compile(t, m, '#include "kmx.h"\nint kmx_mian(int core) { return core; }\nint main(void) { return 0; }\n'),
         lambda t: {"files": "thread.c", "near names": "kmx_mian, main"}),
    Case("compile-timeout", "past the time limit", _compile_timeout,
         lambda t: {"what": "start.S", "limit": "0.5", "more": "600"}),
    Case("compile-timeout-bad", "is not a time limit",
         lambda t, m: (m.setenv("KMX_COMPILE_TIMEOUT", "soon"), _load(program(t)))[1], {"value": "'soon'"}),
    Case("compile-target-vlen", "vector registers of at least {bits} bits",
         lambda t, m: _compile(t, m, '#include "kmx.h"\nint kmx_main(int core) { return core; }\n',
                               KMX_CFLAGS="-march=rv64gcv_zvl1024b"),
         {"flag": "-march=rv64gcv_zvl1024b", "extension": "zvl1024b", "bits": "1024"}),
    Case("compile-target-lacking", "the extension {extension}, which",
         lambda t, m: _compile(t, m, '#include "kmx.h"\nint kmx_main(int core) { return core; }\n',
                               KMX_CFLAGS="-O1 -march=rv64gc_zbs"),
         {"flag": "-march=rv64gc_zbs", "extension": "zbs (single-bit instructions)"}),
    Case("compile-target-lacking-vector", "the extension {extension}, which",
         lambda t, m: _compile(t, m, '#include "kmx.h"\nint kmx_main(int core) { return core; }\n',
                               KMX_CFLAGS="-mcpu=sifive_x280+zvbb"),
         {"flag": "-mcpu=sifive_x280+zvbb", "extension": "zvbb (vector basic bit manipulation)"}),
    Case("cache-cannot-be-written", "cannot be written", _cache_is_a_file,
         lambda t: {"folder": repr(str(t / "afile")), "why": "a file is in the way where a folder must be"}),
    Case("cache-no-home", "the build cache has no folder", _no_home),
    Case("unicorn-imported-first", "imported `unicorn` before the simulator loaded", _unicorn_first, _unicorn_first_values),
    Case("library-manifest-damaged", "C library for {cpu} cannot be linked", _library_manifest_damaged,
         _library_manifest_values),
    Case("cache-zig", "zig could not use its cache folder", _zig_cache_is_a_file,
         lambda t: {"folder": str(t / "afile")}),
    Case("compile-no-compiler", "was not found (KMX_CC=",
         lambda t, m: _compile(t, m, '#include "kmx.h"\nint kmx_main(int core) { return core; }\n',
                               KMX_CC="no-such-compiler-for-kmx"),
         {"command": "no-such-compiler-for-kmx", "KMX_CC": "no-such-compiler-for-kmx"}),
    Case("image-fixed-address", "was built, but the simulator cannot run it",
         lambda t, m: _compile(t, m, '#include "kmx.h"\nint kmx_main(int core) { return core; }\n',
                               KMX_CFLAGS="-no-pie"),
         {"cluster": "1"}),
    # 3. km.ThreadFault
    Case("fault-as-printed", "crashed at {file}:{line}",
         lambda t, m: fault(t, "    kmx_result(48, 0, 1);\n    return 0;\n"),
         lambda t: {"category": "the thread's mistake", "cluster": "1", "core": "0", "file": _thread_file(t), "line": "5"}),
    Case("fault-null-store", "which is a null pointer (kmx_region",
         lambda t, m: fault(t, "    uint64_t bytes;\n    uint32_t* p = (uint32_t*)kmx_region(5, &bytes);\n    p[1] = 3;\n    return 0;\n",
                            regions={"r": 64}),
         {"access": "a store to", "address": "0x4"}),
    Case("fault-null-load", "which is a null pointer (kmx_region",
         lambda t, m: fault(t, "    uint64_t bytes;\n    volatile uint32_t* p = (uint32_t*)kmx_region(1, &bytes);\n    return (int)p[2];\n"),
         {"access": "a load from", "address": "0x8"}),
    Case("fault-past-the-end", "{offset} bytes past the end of region",
         lambda t, m: fault(t, "    uint64_t bytes;\n    volatile uint32_t* p = (uint32_t*)kmx_region(0, &bytes);\n    return (int)p[bytes / 4 + 2];\n",
                            regions={"r": 100}),
         {"access": "a load from", "offset": "8", "name": "r", "id": "0", "size": "100"}),
    Case("fault-one-byte-past-the-end", "the first byte past the end of region",
         lambda t, m: fault(t, REGION + "    for (uint64_t i = 0; i <= bytes; i++) r[i] = 1;\n    return 0;\n",
                            regions={"first": 8, "second": 4097}),
         {"access": "a store to", "name": "first", "id": "0", "size": "8"}),
    Case("fault-wild-pointer", "{access} {address}, which is not in the thread's memory",
         lambda t, m: fault(t, "    volatile uint32_t* p = (uint32_t*)0x123456789000;\n    return (int)*p;\n"),
         {"access": "a load from", "address": "0x123456789000"}),
    Case("fault-far-before-a-page-region", "{access} {address}, which is not in the thread's memory",
         lambda t, m: fault(t, REGION + "    r[-4097] = 1;\n    return 0;\n", regions={"r": 4096}),
         {"access": "a store to"}),
    Case("fault-just-before-a-page-region", "bytes before the start of region",
         lambda t, m: fault(t, "    uint64_t bytes;\n    volatile uint32_t* p = (uint32_t*)kmx_region(1, &bytes);\n    return (int)p[-1];\n",
                            regions={"first": 8, "second": 8192}),
         {"access": "a load from", "offset": "4", "name": "second", "id": "1"}),
    Case("fault-4-kib-before-a-page-region", "bytes before the start of region",
         lambda t, m: fault(t, REGION + "    r[-4096] = 1;\n    return 0;\n", regions={"r": 4096}),
         {"access": "a store to", "offset": "4096", "name": "r", "id": "0"}),
    Case("fault-stack-overflow", "a stack overflow",
         lambda t, m: fault(t, "    return deep(100000);\n", prelude=DEEP), {"access": "a store to", "core": "0"}),
    Case("fault-fetch-null", "an instruction fetch from 0x0",
         lambda t, m: fault(t, "    int (*volatile f)(void) = 0;\n    return f();\n")),
    Case("fault-fetch-outside", "an instruction fetch from {address}, which is not",
         lambda t, m: fault(t, "    int (*volatile f)(void) = (int (*)(void))0x123456789abc;\n    return f();\n"),
         {"address": "0x123456789abc"}),
    Case("fault-fetch-stack", "an instruction fetch from {address}, which is in core",
         lambda t, m: fault(t, "    volatile int x = 0;\n    int (*volatile f)(void) = (int (*)(void))&x;\n    return f();\n"),
         {"core": "0"}),
    Case("fault-fetch-region", "an instruction fetch from {address}, byte {offset} of region",
         lambda t, m: fault(t, REGION + "    int (*volatile f)(void) = (int (*)(void))(r + 8);\n    return f();\n",
                            regions={"r": 64}),
         {"offset": "8", "name": "r", "id": "0"}),
    Case("fault-jump-into-data", "which is in the thread's static data",
         lambda t, m: fault(t, "    return ((int (*)(void))&buffer[4])();\n",
                            prelude="static uint32_t buffer[64];\n"),
         {"instruction": "instruction 0x0000", "symbol": "'buffer' + 16"}),
    Case("fault-uncached-alias", "DRAM's uncached alias",
         lambda t, m: fault(t, REGION + "    return ((volatile uint8_t*)((uint64_t)r - 0x400000000000ull))[4104];\n",
                            regions={"numbers": 4096}),
         {"access": "a load from"}),
    Case("fault-vector-vill", "while vtype is illegal",
         lambda t, m: fault(t, '    __asm__ volatile(".word 0x02001057"); /* vfadd.vv v0, v0, v0 */\n    return 0;\n'),
         {"bits": "0x02001057", "name": "vfadd.vv"}),
    Case("fault-vector-refused", "that the vector unit refuses",
         lambda t, m: fault(t, '    __asm__ volatile("vsetivli zero, 8, e32, m2, ta, ma\\n"\n'
                               '                     ".word 0x022200d7"); /* vadd.vv v1, v2, v4 */\n    return 0;\n'),
         {"bits": "0x022200d7", "name": "vadd.vv", "vl": "8", "vtype": "e32, m2, ta, ma"}),
    Case("fault-vector-frm", "while frm holds {frm}",
         lambda t, m: fault(t, '    __asm__ volatile("vsetivli zero, 4, e32, m1, ta, ma\\n"\n'
                               '                     "csrwi frm, 5\\n"\n'
                               '                     "vfadd.vv v4, v8, v8"); /* rounds by frm */\n    return 0;\n'),
         {"bits": "0x02841257", "name": "vfadd.vv", "frm": "5", "vl": "4", "vtype": "e32, m1, ta, ma"}),
    Case("fault-lacking-extension", "an instruction of {extension}",
         lambda t, m: fault(t, '    __asm__ volatile(".word 0x28b51533"); /* bset (Zbs) */\n    return 0;\n'),
         {"bits": "0x28b51533", "extension": "Zbs", "what": "single-bit instructions", "name": "bset"}),
    Case("fault-illegal-instruction", "an illegal instruction (instruction {bits})",
         lambda t, m: fault(t, '    __asm__ volatile(".word 0x0000000b"); /* custom-0 */\n    return 0;\n'),
         {"bits": "0x0000000b"}),
    Case("fault-builtin-trap", "a trap instruction",
         lambda t, m: fault(t, "    if (kmx_word_count() == 0) __builtin_trap();\n    return 0;\n"),
         {"bits": "0x0000"}),
    Case("fault-ebreak", "an ebreak",
         lambda t, m: fault(t, '    __asm__ volatile("ebreak");\n    return 0;\n'), {"bits": "0x9002"}),
    Case("fault-gdb-kill", "gdb killed the thread", _gdb_kill),
    Case("fault-misaligned-atomic-32", "a misaligned atomic access",
         lambda t, m: fault(t, REGION + "    __atomic_fetch_add((uint32_t*)(r + 2), 1, __ATOMIC_RELAXED);\n    return 0;\n",
                            regions={"r": 64}),
         {"offset": "2", "name": "r", "id": "0", "size": "4"}),
    Case("fault-misaligned-atomic-64", "a misaligned atomic access",
         lambda t, m: fault(t, REGION + "    __atomic_fetch_add((uint64_t*)(r + 4), 1, __ATOMIC_RELAXED);\n    return 0;\n",
                            regions={"r": 64}),
         {"offset": "4", "name": "r", "id": "0", "size": "8"}),
    Case("fault-kmx-result-index", "kmx_result: words",
         lambda t, m: fault(t, "    uint32_t w = 1;\n    kmx_result(48, &w, 1);\n    return 0;\n"),
         {"first": "48", "last": "48"}),
    Case("fault-kmx-result-count", "kmx_result: words",
         lambda t, m: fault(t, "    uint32_t w[2] = {1, 2};\n    kmx_result(47, w, 2);\n    return 0;\n"),
         {"first": "47", "last": "48"}),
    Case("fault-kmx-word", "argument word {index} does not exist",
         lambda t, m: fault(t, "    return (int)kmx_word(2);\n", words=[5, 6]), {"index": "2", "last": "1"}),
    Case("fault-kmx-word-none", "argument word {index} does not exist",
         lambda t, m: fault(t, "    return (int)kmx_word(0);\n"), {"index": "0"},
         variant=("the thread has words 0 to {last}", "the thread has no argument words")),
    Case("fault-kmx-invalidate-id", "region ID {id} does not exist",
         lambda t, m: fault(t, "    kmx_invalidate(2);\n    return 0;\n", regions={"a": 8, "b": 8}),
         {"call": "kmx_invalidate", "id": "2", "last": "1"}),
    Case("fault-kmx-flush-no-regions", "region ID {id} does not exist",
         lambda t, m: fault(t, "    kmx_flush(0);\n    return 0;\n"), {"call": "kmx_flush", "id": "0"},
         variant=("the thread has IDs 0 to {last}", "the thread has no regions")),
    Case("fault-kmx-result-null-pointer", "a pointer to {size} at {address}, {where}",
         lambda t, m: fault(t, "    kmx_result(0, 0, 1);\n    return 0;\n"),
         {"call": "kmx_result", "size": "4 bytes", "address": "0x0",
          "where": "which is a null pointer (kmx_region returns 0 for a region ID the thread does not have)"}),
    Case("fault-kmx-region-bad-pointer", "a pointer to {size} at {address}, {where}",
         lambda t, m: fault(t, "    kmx_region(0, (uint64_t*)0x1000);\n    return 0;\n", regions={"r": 8}),
         {"call": "kmx_region", "size": "8 bytes", "address": "0x1000", "where": "which is not in the thread's memory"}),
    Case("fault-kmx-print-bad-string", "a pointer to {size} at {address}, {where}",
         lambda t, m: fault(t, '    kmx_print("%s\\n", (const char*)0x1000);\n    return 0;\n'),
         {"call": "kmx_print", "size": "1 byte", "address": "0x1000", "where": "which is not in the thread's memory"}),
    Case("fault-kmx-result-before-a-region", "a pointer to {size} at {address}, {where}",
         lambda t, m: fault(t, "    uint64_t bytes;\n    uint32_t* r = (uint32_t*)kmx_region(0, &bytes);\n    kmx_result(0, r - 1, 1);\n    return 0;\n",
                            regions={"r": 4096}),
         {"call": "kmx_result", "size": "4 bytes", "where": "4 bytes before the start of region 'r' (ID 0)"}),
    Case("fault-kmx-result-runs-past", "which runs past the end of",
         lambda t, m: fault(t, "    uint64_t bytes;\n    uint32_t* r = (uint32_t*)kmx_region(0, &bytes);\n    kmx_result(0, r + 1, 4);\n    return 0;\n",
                            regions={"r": 8}),
         {"call": "kmx_result", "size": "16 bytes", "span": "region 'r'"}),
    Case("fault-kmx-result-runs-past-a-stack", "which runs past the end of",
         # (the aux vector's 16 random bytes are the last of the stack: sim.kmx.linux)
         lambda t, m: fault(t, "    unsigned long getauxval(unsigned long);\n"
                               "    kmx_result(0, (const uint32_t*)getauxval(25), 48);\n    return 0;\n"),
         {"call": "kmx_result", "size": "192 bytes", "span": "core 0's stack"}),
    Case("fault-kmx-print-float", "unsupported conversion",
         lambda t, m: fault(t, '    kmx_print("%f\\n", 1.5);\n    return 0;\n'), {"format": "%f\\n"}),
    Case("fault-kmx-print-precision", "unsupported conversion",
         lambda t, m: fault(t, '    kmx_print("%5.2d\\n", 1);\n    return 0;\n'), {"format": "%5.2d\\n"}),
    Case("fault-kmx-print-trailing-percent", "unsupported conversion",
         lambda t, m: fault(t, '    kmx_print("100%");\n    return 0;\n'), {"format": "100%"}),
    Case("fault-kmx-print-width", "is over 1000",
         lambda t, m: fault(t, '    kmx_print("%2000d\\n", 1);\n    return 0;\n'),
         {"width": "2000", "format": "%2000d\\n"}),
    Case("fault-kmx-print-17-arguments", "more conversions than its 16 arguments",
         lambda t, m: fault(t, PRINT_17)),
    Case("fault-kmx-print-no-end", "no 0 byte ends the string",
         lambda t, m: fault(t, "    uint64_t bytes;\n    char* r = (char*)kmx_region(0, &bytes);\n"
                               "    for (uint64_t i = 0; i < bytes; i++) r[i] = 'a';\n"
                               '    kmx_print("%s\\n", r);\n    return 0;\n', regions={"r": 8192})),
    Case("fault-unknown-call", "which is no kmx call",
         lambda t, m: fault(t, '    __asm__ volatile("li a7, 999\\n ecall" ::: "a0", "a7", "memory");\n    return 0;\n'),
         {"number": "999"}),
    Case("fault-assert", "assertion failed:",
         lambda t, m: fault(t, "    assert(kmx_word_count() > 0);\n    return 0;\n", prelude="#include <assert.h>\n"),
         {"expression": "kmx_word_count() > 0", "file": "thread.c"}),
    Case("fault-abort", "abort() was called",
         lambda t, m: fault(t, "    void abort(void);\n    if (kmx_word_count() == 0) abort();\n    return 0;\n"), {}),
    Case("fault-linux-call-not-served", "which the simulator does not serve",
         lambda t, m: fault(t, "    int fork(void);\n    if (kmx_word_count() == 0) fork();\n    return 0;\n"),
         {"number": "220", "name": "clone"}),
    Case("fault-barrier-one-core-gone", "kmx_barrier: core",
         lambda t, m: fault(t, "    if (core == 3) return 0;\n    kmx_barrier();\n    return 0;\n", cores=4),
         {"core": "0", "cores": "4", "who": "core 3"}),
    Case("fault-barrier-two-cores-gone", "kmx_barrier: core",
         lambda t, m: fault(t, "    if (core >= 2) return 0;\n    kmx_barrier();\n    return 0;\n", cores=4),
         {"core": "0", "cores": "4", "who": "cores 2, 3"}),
    # 4. results that do not come
    Case("timeout", "handed no result in {timeout} s\n...",
         lambda t, m: forever(t, lambda run: raised(lambda: run.thread_result(timeout=0.2))),
         {"cluster": "1", "timeout": "0.2"}),
    Case("after-the-final-result", "has ended and its final result",
         lambda t, m: on_a_run(t, lambda run: (run.thread_result(timeout=10.0), run.thread_result(timeout=10.0))),
         {"cluster": "1"}),
    Case("after-stop", "the run was stopped before",
         lambda t, m: forever(t, lambda run: (run.stop(), raised(lambda: run.thread_result(timeout=10.0)))[1]),
         {"cluster": "1"}),
    Case("forked-child", "a forked child process cannot use it", _forked_child),
    # 5. warnings
    Case("warning-output", "could not all be written to Python's standard output", _output_warning,
         {"cluster": "1", "error": "BrokenPipeError(32, 'Broken pipe')"}),
    Case("warning-not-simulated", "is not simulated: the simulator runs no Tensix code", _kernel_that_does_something, {"file": "compute.cpp"}),
    Case("warning-coherence", "before the thread invalidated it", _read_before_invalidate,
         {"core": "0", "name": "data", "which bytes": "all 64 bytes", "line": "7", "id": "0"}),
    Case("fault-sched-setaffinity", "cannot move to another",
         lambda t, m: fault(t, "    unsigned long cpus = 2;\n    syscall(SYS_sched_setaffinity, 0, 8, &cpus);\n    return 0;\n",
                            prelude="#include <unistd.h>\n#include <sys/syscall.h>\n", cores=3),
         {"core": "0", "CPUs": "CPU 1", "the thread's CPUs": "CPUs 0 to 2"}),
    Case("fault-signal", "a thread has no signal handlers",
         lambda t, m: fault(t, "    if (kmx_word_count() == 0) raise(SIGTERM);\n    return 0;\n",
                            prelude="#include <signal.h>\n"),
         {"signal": "SIGTERM"}),
    Case("fault-cache-register-not-modelled", "The simulator models only",
         lambda t, m: fault(t, "    return (int)*(volatile uint32_t*)0x02010000ull;\n"),
         {"access": "a 4-byte load from", "address": "0x2010000",
          "register": "CCACHE0_CONFIG (the L3's topology, read-only)",
          "block": "the L3 cache's register block CCACHE0 (0x0201_0000)"}),
    Case("fault-simulator-failed", "the simulator failed: {error}, raised at", _simulator_fails_in_a_turn,
         {"error": "ValueError('broken on purpose')", "file": "test_errors_doc.py", "function": "_broken"}),
    Case("stop-simulator-failed", "failed while the thread on cluster", _simulator_fails_as_the_thread_ends,
         {"cluster": "1", "error": "ValueError('broken on purpose')"}),
    Case("warning-compile", "warning: {what the compiler says}", _compile_warning,
         lambda t: {"file": _thread_file(t), "line": "5"}),
]

def the_block(key: str) -> str:
    found = [block for block in blocks() if key in block]
    assert len(found) == 1, f"{key!r} is in {len(found)} ```text blocks of docs/errors.md, not 1"
    return found[0]


# Section 3's headings, one a category: each message under one is of that category.
CATEGORY_HEADINGS = {
    "### The thread's mistake": km.Category.MISTAKE,
    "### Unpredictable on a card": km.Category.UNPREDICTABLE,
    "### Not simulated": km.Category.NOT_SIMULATED,
    "### A simulator failure": km.Category.SIMULATOR,
    "### Stopped on request": km.Category.STOPPED,
}


def category_of(block: str) -> km.Category | None:
    """The category whose heading BLOCK is under, in section 3; None outside it."""
    text = PAGE.read_text()
    before = text[: text.index(f"```text\n{block}\n```")]
    section = before[before.rindex("\n## ") :]
    headings = [line for line in section.split("\n") if line in CATEGORY_HEADINGS]
    return CATEGORY_HEADINGS[headings[-1]] if headings else None


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_page_shows_the_message(case: Case, tmp_path, monkeypatch):
    template = block = the_block(case.key)
    if case.variant is not None:
        part, instead = case.variant
        assert part in template
        assert f"`{instead}`" in PAGE.read_text(), f"the page does not give the ending {instead!r}"
        template = template.replace(part, instead)
    values = case.values(tmp_path) if callable(case.values) else case.values
    names = set(PLACEHOLDER.findall(template))
    assert set(values) <= names, f"no placeholders {set(values) - names} in {template!r}"

    got = case.trigger(tmp_path, monkeypatch)

    # (a fault's, a warning's, an internal error's category is the heading it is under)
    said = got.message if isinstance(got, warnings.WarningMessage) else got
    under = category_of(block)
    if "{category}" not in block and (isinstance(getattr(said, "category", None), km.Category) or under is not None):
        assert under is not None, f"{case.id}: the page shows it under no category"
        assert said.category is under, f"{case.id} is {said.category}, under {under}"
        assert str(said).startswith(f"{said.category.words}: ")
    first = template.split("\n", 1)[0]
    prefix = first.split(": ", 1)[0]
    if prefix in TYPES:  # TYPE: MESSAGE
        expected_type, template = TYPES[prefix], template[len(prefix) + 2 :]
        if isinstance(got, warnings.WarningMessage):
            assert issubclass(got.category, expected_type), f"{got.category.__name__}, not {prefix}"
            message = str(got.message)
        else:
            assert isinstance(got, expected_type), f"{type(got).__name__}: {got}; the page says {prefix}"
            message = str(got)
    else:  # the cause of a ThreadFault
        assert isinstance(got, km.ThreadFault), f"{type(got).__name__}: {got}; the page says km.ThreadFault"
        message = got.cause
    assert re.fullmatch(pattern(template, values), message), (
        f"the page says:\n{template}\nthe library says:\n{message}"
    )


def test_every_message_on_the_page_has_a_case():
    named = {the_block(case.key) for case in CASES}
    missing = [block for block in blocks() if block not in named]
    assert missing == []


def test_a_fault_carries_what_the_page_says(tmp_path):
    got = fault(tmp_path, "    uint32_t w = 1;\n    kmx_result(48, &w, 1);\n    return 0;\n")
    assert isinstance(got, km.ThreadFault) and isinstance(got, km.KomorebiError)
    assert (got.cluster, got.core) == (1, 0)
    assert got.file == _thread_file(tmp_path) and got.line == 6
    assert got.cause.startswith("kmx_result: ")
    # pc is inside kmx.h, the call's own code; the message shows the pc of the line.
    assert got.backtrace[0].startswith(str(ROOT / "kmx_runtime" / "kmx.h"))
    assert got.backtrace[1].startswith(f"{got.file}:{got.line} (pc ")
    assert f"(pc {got.pc:#x})" in got.backtrace[0]
    shown = re.search(r"\(pc (0x[0-9a-f]+)\)", str(got)).group(1)
    assert int(shown, 16) != got.pc and f"(pc {shown})" in got.backtrace[1]
    assert got.line_pc == int(shown, 16)
    assert str(got).split("\n")[1:] == ["  backtrace:", *(f"    {frame}" for frame in got.backtrace)]


def test_a_fault_is_raised_again_and_the_session_goes_on(tmp_path):
    with km.Session() as session:
        run = session.load(program(tmp_path, "    return (int)kmx_word(0);\n", regions={"r": 8}))
        first = raised(lambda: run.thread_result(timeout=10.0))
        assert isinstance(first, km.ThreadFault)
        assert raised(lambda: run.thread_result(timeout=10.0)) is first
        run.stop()
        assert raised(lambda: run.thread_result(timeout=10.0)) is first
        assert run.thread.read("r").size == 8
        (tmp_path / "next").mkdir()
        next_run = session.load(program(tmp_path / "next", "    return 3;\n"))
        assert next_run.thread_result(timeout=10.0).code == 3
        next_run.stop()


def test_a_compile_error_carries_the_messages_and_the_command(tmp_path):
    got = _load(program(tmp_path, "    return 0\n"))
    assert isinstance(got, km.CompileError) and isinstance(got, km.KomorebiError)
    assert got.messages == str(got) and f"{_thread_file(tmp_path)}:5:" in got.messages
    assert isinstance(got.command, list) and str(tmp_path / "thread.c") in " ".join(got.command)


def test_keyerror_messages_print_in_quotes(tmp_path):
    got = on_a_run(tmp_path, lambda run: run.thread.read("b"), stop_first=True, regions={"a": 8})
    assert str(got).startswith('"no region') and got.args[0].startswith("no region")
