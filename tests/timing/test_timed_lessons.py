"""The timing mode changes time, not results: each lesson's program prints the same with
km.Session(timing="x280") as without (the lessons that print a count of instructions
print it the same way: their threads do not read kmx_cycles); and a fault, the cache's
registers (lesson 43) and Tensix stand-ins (lesson 45) work in it."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import write_thread

LESSONS = sorted(p.name for p in (ROOT / "tutorial").iterdir() if p.name[:2].isdigit() and p.name < "46")
QUICK = {"35_sharing_memory", "43_flushing_the_way_the_firmware_does", "45_the_tensix_side"}


def _output(folder) -> str:
    done = subprocess.run([sys.executable, "program.py"], cwd=folder, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("lesson", [pytest.param(name, marks=() if name in QUICK else pytest.mark.slow)
                                    for name in LESSONS])
def test_a_lessons_program_prints_the_same_timed(lesson, tmp_path):
    timed = tmp_path / lesson
    shutil.copytree(ROOT / "tutorial" / lesson, timed)
    program = (timed / "program.py").read_text()
    assert "km.Session(" in program
    program = program.replace("km.Session()", "km.Session(timing='x280')").replace(
        "km.Session(", "km.Session(timing='x280', ").replace("timing='x280', timing='x280')", "timing='x280')")
    (timed / "program.py").write_text(program)
    assert _output(timed) == _output(ROOT / "tutorial" / lesson)


def test_a_fault_in_the_timing_mode_is_a_fault(tmp_path, kernels):
    source = write_thread(tmp_path, "null.c", """\
#include "kmx.h"
int kmx_main(int core) {
    volatile uint32_t *nowhere = (uint32_t *)(uint64_t)kmx_word(0);
    return (int)*nowhere;
}
""")
    program = km.Program("null", kernels=kernels)
    program.thread(cluster=1, sources=[source], words=[0])
    with km.Session(timing="x280") as session:
        run = session.load(program)
        with pytest.raises(km.ThreadFault, match="null.c:4"):
            run.thread_result(timeout=60.0)
        run.stop()
