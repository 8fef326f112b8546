"""docs/debugging.md's worked examples, run: the program as it is, under gdb-multiarch
with the page's session, with the profile, the trace and the story. What the page shows
is what they print (paths shortened to `...`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests import processes
from tests.debug.test_gdb import GDB, attachable, needs_gdb

LESSON = ROOT / "tutorial" / "debugging"
PAGE = (ROOT / "docs" / "debugging.md").read_text()


@pytest.fixture
def here(tmp_path):
    """A copy of tutorial/debugging (what it writes goes there, not into the checkout)."""
    folder = tmp_path / "debugging"
    shutil.copytree(LESSON, folder, ignore=shutil.ignore_patterns("kernels", "*.json", "*.html", "*.txt"))
    return folder


def block_after(phrase: str) -> list[str]:
    """The lines of the first code block after PHRASE on the page."""
    rest = PAGE[PAGE.index(phrase):]
    body = rest.split("```", 2)[1]
    return [line for line in body.split("\n")[1:] if line.strip()]


def shortened(text: str) -> str:
    return re.sub(r"/\S*/(scale\.c)", r".../\1", text)


def run_program(here, *args: str, env=None, stderr: bool = False):
    """What the program prints (STDERR: and what it prints on standard error)."""
    done = subprocess.run([sys.executable, str(here / "program.py"), *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "KMX_GDB": "", **(env or {})})
    assert done.returncode == 0, done.stderr[-3000:]
    return (done.stdout, done.stderr) if stderr else done.stdout


def test_the_program_as_it_is(here):
    out, err = run_program(here, stderr=True)
    assert out.splitlines() == block_after("Run as it is")
    assert shortened(err).splitlines() == block_after("and, on standard error, the same finding")


def block_text(phrase: str) -> list[str]:
    """The first code block after PHRASE on the page, line by line, blank lines too."""
    rest = PAGE[PAGE.index(phrase):]
    return rest.split("```", 2)[1].split("\n")[1:-1]


@needs_gdb
def test_the_gdb_session(here):
    """The page's command (the line the program prints to attach with, and -batch -x
    session.gdb; -nx: no .gdbinit of this machine's) prints the page's lines, all of them,
    stdout and stderr as a terminal shows them. The breakpoint's address is the build's."""
    process, port, elf = attachable([sys.executable, str(here / "program.py")])
    try:
        done = subprocess.run([GDB, "-nx", "-ex", f"target remote :{port}", elf, "-batch", "-x", str(here / "session.gdb")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        out, _ = process.communicate(timeout=120)
    finally:
        processes.end(process)

    def lines(text: str) -> list[str]:
        text = re.sub(r"^(Breakpoint \d+ at )0x[0-9a-f]+:", r"\1ADDRESS:", text, flags=re.M)
        return [line.rstrip() for line in text.rstrip("\n").split("\n")]

    assert lines(shortened(done.stdout)) == lines("\n".join(block_text("In another, that line with")))
    assert out.splitlines() == block_after("Run as it is")


def test_the_profile(here):
    out = shortened(run_program(here, "profile"))
    for line in block_after("program.py profile` prints"):
        if line != "...":
            assert line in out.splitlines(), (line, out)
    annotated = (here / "annotated.txt").read_text()
    for line in block_after("`annotated.txt` shows the same"):
        assert line in annotated.splitlines(), line
    stacks = (here / "stacks.txt").read_text().splitlines()
    assert "cluster 1 core 3;kmx__start;kmx__start_core;kmx_main;scale 2816" in stacks


def test_the_trace(here):
    run_program(here, "trace")
    events = json.loads((here / "trace.json").read_text())["traceEvents"]
    shown = json.loads(shortened(" ".join(block_after("one\nof its events"))).replace(".../scale.c", "SCALE"))
    flush = next(e for e in events if e.get("name") == "kmx_flush" and e["tid"] == 0)
    flush["args"]["line"] = re.sub(r".*/scale\.c", "SCALE", flush["args"]["line"])
    assert flush == shown
    assert not [e for e in events if e.get("name") == "kmx_flush" and e["tid"] == 3]


def test_the_story(here):
    done = run_program(here, "story")
    assert done.strip().endswith("story.html")
    script = (
        "import runpy, sys, json\n"
        f"sys.argv = [{str(here / 'program.py')!r}, 'story']\n"
        f"g = runpy.run_path({str(here / 'program.py')!r})\n"
        "story = g['run']._loaded.machine.story()\n"
        "print(json.dumps([[s.core, s.what, s.line, len(s.changes)] for s in story.steps]))\n"
    )
    listed = subprocess.run([sys.executable, "-W", "ignore", "-c", script], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "KMX_GDB": ""})
    steps = json.loads(listed.stdout.strip().splitlines()[-1])
    assert len(steps) == 25 and "25 steps" in PAGE
    assert [s[1:3] for s in steps[:4]] == [["the start: kmx_barrier()", None]] * 4
    assert steps[5][:3] == [1, "kmx_invalidate(0)", 17] and steps[5][3] == 2
    assert steps[8][:3] == [0, "kmx_flush(1)", 21] and steps[8][3] == 1
    assert steps[23][:3] == [-1, "finding: unflushed-write", 19]
    assert steps[24][1] == "the thread ended: the library's hand-back"
    assert [s[0] for s in steps if s[1] == "kmx_flush(1)"] == [0, 1, 2]
