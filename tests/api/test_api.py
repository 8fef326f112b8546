"""The public surface, and arguments checked where they enter."""

import types

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT

TRIPLE = ROOT / "tutorial" / "35_sharing_memory" / "thread" / "triple.c"


def test_all_is_sorted_and_exported():
    assert km.__all__ == sorted(km.__all__)
    assert all(hasattr(km, name) for name in km.__all__)
    # (km.sim and km.kmx_runtime are the machine and the thread's runtime, not the API)
    public = {name for name in dir(km) if not name.startswith("_") and not isinstance(getattr(km, name), types.ModuleType)}
    assert public - set(km.__all__) <= {"annotations"}


def test_error_tree():
    assert issubclass(km.CompileError, km.KomorebiError)
    assert issubclass(km.ThreadFault, km.KomorebiError)


def test_program_checks_its_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="kernels"):
        km.Program("p", kernels=tmp_path / "missing")
    with pytest.raises(TypeError, match="kernels"):
        km.Program("p", kernels=3)
    with pytest.raises(ValueError, match="name must not be empty"):
        km.Program("", kernels=tmp_path)
    with pytest.raises(TypeError, match="name must be a str"):
        km.Program(b"p", kernels=tmp_path)
    (tmp_path / "file.txt").write_text("")
    with pytest.raises(FileNotFoundError, match="is a file, not a folder"):
        km.Program("p", kernels=tmp_path / "file.txt")


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(cluster=4), ValueError, "cluster must be 0 to 3"),
        (dict(cluster="1"), TypeError, "cluster must be an int"),
        (dict(cores=0), ValueError, "cores must be 1 to 4"),
        (dict(sources=[]), ValueError, "sources"),
        (dict(sources="triple.c"), TypeError, "sources"),
        (dict(sources=["/no/such/file.c"]), FileNotFoundError, r"sources\[0\]"),
        (dict(regions={1: 64}), TypeError, "region name"),
        (dict(regions={"": 64}), ValueError, "region name must not be empty"),
        (dict(sources=["."]), FileNotFoundError, "is a folder, not a file"),
        (dict(regions={"r": 0}), ValueError, "byte count > 0"),
        (dict(regions={"r": np.zeros(0)}), ValueError, "empty"),
        (dict(regions={"r": "abc"}), TypeError, "byte count"),
        (dict(regions=[("r", 4)]), TypeError, "regions must be a dict"),
    ],
)
def test_thread_checks_its_arguments(tmp_path, kwargs, error, words):
    program = km.Program("p", kernels=tmp_path)
    arguments = dict(cluster=1, sources=[TRIPLE], regions={"r": 64})
    arguments.update(kwargs)
    with pytest.raises(error, match=words):
        program.thread(**arguments)


def test_one_thread_per_cluster(tmp_path):
    program = km.Program("p", kernels=tmp_path)
    program.thread(cluster=1, sources=[TRIPLE])
    with pytest.raises(ValueError, match="cluster 1 already has a thread"):
        program.thread(cluster=1, sources=[TRIPLE])


def test_session_checks_coherence():
    with pytest.raises(ValueError, match="'card' or 'strict'"):
        km.Session(coherence="loose")
    with pytest.raises(TypeError, match="coherence must be a str"):
        km.Session(coherence=1)
    assert km.Session(coherence="strict").coherence == "strict"


def test_load_needs_a_program_with_a_thread(tmp_path):
    with km.Session() as session:
        with pytest.raises(TypeError, match="km.Program"):
            session.load("program")
        with pytest.raises(ValueError, match="no thread"):
            session.load(km.Program("p", kernels=tmp_path))


def test_a_kernel_that_does_something_is_named(tmp_path):
    (tmp_path / "empty.cpp").write_text("// nothing\nvoid kernel_main() {}\n")
    (tmp_path / "busy.cpp").write_text("void kernel_main() { int x = 1; (void)x; }\n")
    with pytest.warns(km.NotSimulatedWarning, match="busy.cpp is not simulated") as record:
        km.Program("p", kernels=tmp_path)
    assert len(record) == 1


def test_read_checks_its_name(tmp_path):
    program = km.Program("p", kernels=tmp_path)
    program.thread(cluster=1, sources=[TRIPLE], regions={"numbers": 64, "tripled": 64})
    with km.Session() as session:
        run = session.load(program)
        run.thread_result(timeout=30)
        run.stop()
        with pytest.raises(KeyError, match=r"\['numbers', 'tripled'\]"):
            run.thread.read("other")
        with pytest.raises(TypeError, match="region name"):
            run.thread.read(0)
        with pytest.raises(TypeError, match="timeout"):
            run.thread_result(timeout="1")


@pytest.mark.parametrize(
    "timeout, error, words",
    [
        (float("nan"), ValueError, "number of seconds >= 0"),
        (-1, ValueError, "number of seconds >= 0"),
        ("1", TypeError, "number of seconds or None"),
        (True, TypeError, "number of seconds or None"),
    ],
)
def test_timeouts_are_checked_on_both_ways_in(tmp_path, timeout, error, words):
    program = km.Program("p", kernels=tmp_path)
    program.thread(cluster=1, sources=[TRIPLE], regions={"numbers": 4, "tripled": 4})
    with km.Session() as session:
        run = session.load(program)
        with pytest.raises(error, match=words):
            run.thread_result(timeout=timeout)
        with pytest.raises(error, match=words):
            run.thread.result(timeout=timeout)
        # Forever, said with a number: no overflow, and a fraction works too.
        from fractions import Fraction

        assert run.thread_result(timeout=float("inf")).final
        run.stop()
    with km.Session() as session:
        run = session.load(program)
        assert run.thread_result(timeout=Fraction(30, 1)).final
        with pytest.raises(KeyError, match=r"no thread on cluster 3; the threads are on clusters \[1\]"):
            run.threads[3]
        run.stop()


def test_a_source_deleted_before_load_is_named(tmp_path):
    source = tmp_path / "gone.c"
    source.write_text(TRIPLE.read_text())
    (tmp_path / "kernels").mkdir()
    program = km.Program("p", kernels=tmp_path / "kernels")
    program.thread(cluster=2, sources=[source], regions={"numbers": 4, "tripled": 4})
    source.unlink()
    with km.Session() as session:
        with pytest.raises(FileNotFoundError, match="of the thread on cluster 2 no longer exists"):
            session.load(program)


def test_session_close_stops_every_run_when_a_warning_is_an_error(tmp_path):
    import warnings

    bad = tmp_path / "thread" / "bad.c"
    bad.parent.mkdir()
    bad.write_text(TRIPLE.read_text().replace("    kmx_flush(1);\n", ""))
    forever = ROOT / "tests" / "threads" / "forever.c"
    first = km.Program("first", kernels=tmp_path)
    first.thread(cluster=1, sources=[bad], regions={"numbers": np.ones(4, np.uint32), "tripled": 16})
    second = km.Program("second", kernels=tmp_path)
    second.thread(cluster=2, sources=[forever])
    session = km.Session()
    runs = [session.load(first), session.load(second)]
    runs[0].thread_result(timeout=30)
    with warnings.catch_warnings():
        warnings.simplefilter("error", km.CoherenceWarning)
        with pytest.raises(km.CoherenceWarning):
            session.close()
    assert session.closed and all(run.stopped for run in runs)


def test_exiting_without_stop_does_not_crash_the_interpreter(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "exit.py"
    script.write_text(
        "import komorebi as km\n"
        f"program = km.Program('p', kernels={str(tmp_path)!r})\n"
        f"program.thread(cluster=2, sources=[{str(ROOT / 'tests' / 'threads' / 'forever.c')!r}])\n"
        "run = km.Session().load(program)\n"
        "print('leaving')\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "leaving\n"


@pytest.mark.parametrize("words", [np.array(5), np.array([[1, 2], [3, 4]])])
def test_words_as_an_array_that_is_not_a_list_says_so(tmp_path, words):
    program = km.Program("p", kernels=ROOT / "tutorial" / "35_sharing_memory" / "kernels")
    with pytest.raises(TypeError, match=f"words must be a sequence of ints, not a {words.ndim}-dimensional numpy array"):
        program.thread(cluster=0, sources=[TRIPLE], words=words)


def test_a_folder_or_a_pipe_named_like_a_kernel_is_not_read(tmp_path):
    import os
    import warnings

    (tmp_path / "sub.cpp").mkdir()
    os.mkfifo(tmp_path / "k.cpp")  # reading it would wait for a writer for ever
    with warnings.catch_warnings():
        warnings.simplefilter("error", km.NotSimulatedWarning)
        km.Program("p", kernels=tmp_path)
