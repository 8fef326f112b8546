"""What a thread prints (sim.kmx.console): whole lines, bounded memory, and the host's own
trouble with its standard output kept apart from the thread's. (Issue 11, items 11 and
12.)"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pytest

import komorebi as km
from tests import processes
from tests.conftest import HANG, ROOT
from tests.threads import program_for

KERNELS = ROOT / "tutorial" / "35_sharing_memory" / "kernels"

PRINTS = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint32_t n = kmx_word(0), newline_every = kmx_word(1);
    for (uint32_t i = 1; i <= n; i++) {
        kmx_print("x");
        if (newline_every && i % newline_every == 0) kmx_print("\n");
    }
    return 0;
}
"""


def _printed(tmp_path, capsys, words, **session):
    with km.Session(**session) as s:
        run = s.load(program_for(PRINTS, tmp_path, words=words))
        assert run.thread_result(timeout=120).code == 0
        run.stop()
    return run.thread, capsys.readouterr().out


@pytest.mark.slow  # (12 s: a kmx call a character, twice the longest line)
def test_many_prints_without_a_newline_come_out_as_lines_of_a_bounded_length(tmp_path, capsys):
    from komorebi.sim.kmx.console import LONGEST_LINE

    count = 2 * LONGEST_LINE + 5
    thread, out = _printed(tmp_path, capsys, [count, 0])
    lines = out.splitlines()
    prefix = "[cluster 1, core 0] "
    assert [len(line) - len(prefix) for line in lines] == [LONGEST_LINE, LONGEST_LINE, 5]
    assert thread.output == "".join("x" * n + "\n" for n in (LONGEST_LINE, LONGEST_LINE, 5))


def test_the_output_kept_is_the_latest_lines_and_says_how_many_went(tmp_path, capsys):
    thread, out = _printed(tmp_path, capsys, [3000, 10], output_limit=1100)
    assert len(out.splitlines()) == 300  # all of it went to standard output
    assert thread.output == "xxxxxxxxxx\n" * 100  # 1,100 characters: the last 100 lines
    assert thread.output_dropped == 200


def test_output_limit_none_keeps_everything(tmp_path, capsys):
    thread, _ = _printed(tmp_path, capsys, [5000, 1], output_limit=None)
    assert thread.output == "x\n" * 5000 and thread.output_dropped == 0


def test_the_console_joins_an_unfinished_line_once():
    """Pieces of an unfinished line are kept apart until its newline: printing N pieces
    costs N appends, not N joins of a growing string."""
    from komorebi.sim.kmx.console import Console

    console = Console(0, 1, keep=None)
    for _ in range(10_000):
        console.print(0, "ab")
    assert len(console._pending[0]) == 10_000 and console.text == ""
    console.print(0, "\n")
    assert console.text == "ab" * 10_000 + "\n" and console._pending[0] == []


@pytest.mark.parametrize("bad", ["x", 1.5, True])
def test_a_bad_output_limit_says_what_it_takes(bad):
    with pytest.raises(TypeError, match="output_limit must be an int"):
        km.Session(output_limit=bad)


def test_a_negative_output_limit_is_refused():
    with pytest.raises(ValueError, match="output_limit must be >= 0"):
        km.Session(output_limit=-1)


def test_no_stdout_at_all_keeps_the_lines_and_fails_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", km.OutputWarning)  # Python's print is quiet then, too
        with km.Session() as s:
            run = s.load(program_for(PRINTS, tmp_path, words=[3, 1]))
            assert run.thread_result(timeout=30).code == 0
            run.stop()
    assert run.thread.output == "x\nx\nx\n"


def test_a_closed_pipe_on_stdout_is_the_hosts_trouble_not_the_threads(tmp_path):
    source = tmp_path / "thread.c"
    source.write_text(PRINTS)
    script = textwrap.dedent(f"""
        import sys, warnings
        sys.path.insert(0, {str(ROOT)!r})
        import komorebi as km
        p = km.Program("pipe", kernels={str(KERNELS)!r})
        p.thread(cluster=2, sources=[{str(source)!r}], words=[4000, 1])
        with km.Session() as s:
            run = s.load(p)
            code = run.thread_result(timeout=60).code
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                run.stop()
        kept = run.thread.output.count("x")
        print("CODE", code, "KEPT", kept, file=sys.stderr)
        for w in said:
            print("WARNING", w.category.__name__, w.message, file=sys.stderr)
    """)
    with processes.started([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True) as child:
        child.stdout.close()  # nobody reads: the first lines that fill the pipe, then a broken pipe
        err = child.stderr.read()
        child.wait(HANG)
    assert "CODE 0 KEPT 4000" in err, err
    assert "WARNING OutputWarning the lines the thread on cluster 2 printed could not all be written" in err
    assert "BrokenPipeError" in err and "run.threads[2].output" in err
    assert "ThreadFault" not in err and "simulator failed" not in err
