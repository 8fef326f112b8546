"""What the public objects say of themselves: short reprs that say what they are (for a
terminal, a debugger and a notebook), and a stopped run's cache map as its picture in
Jupyter (_repr_svg_)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import komorebi as km
from tests.cache.test_checker import LESSON, TRIPLE, run_source


def test_a_run_its_thread_and_results_say_what_they_are(tmp_path):
    source = tmp_path / "thread.c"
    source.write_text(TRIPLE)
    program = km.Program("reprs", kernels=LESSON / "kernels")
    numbers = np.arange(1024, dtype=np.uint32)
    program.thread(cluster=2, sources=[source], regions={"numbers": numbers, "tripled": numbers.nbytes}, cores=2)
    with km.Session() as session:
        run = session.load(program)
        assert repr(run) == "<Run: thread on cluster 2, running>"
        assert run._repr_svg_() is None  # (a running run has no picture yet)
        result = run.thread_result(timeout=30)
        assert repr(result) == "ThreadResult(final, code 0, words [1024]; the other 47 are 0)"
        assert repr(run.thread) == "<Thread on cluster 2: 2 cores, ended, code 0>"
        run.stop()
        assert repr(run) == "<Run: thread on cluster 2, stopped>"
        svg = run._repr_svg_()
    assert ET.fromstring(svg).tag.endswith("svg")


def test_a_submitted_result_and_many_words_are_shown_short():
    words = np.zeros(48, np.uint32)
    words[:12] = np.arange(1, 13)
    assert repr(km.ThreadResult(words, final=False)) == (
        "ThreadResult(submitted, words [1, 2, 3, 4, 5, 6, 7, 8] and 4 more up to word 11; the other 36 are 0)")
    assert repr(km.ThreadResult(np.zeros(48, np.uint32), True, 3)) == (
        "ThreadResult(final, code 3, words []; the other 48 are 0)")


def test_a_crashed_thread_says_so(tmp_path):
    source = tmp_path / "thread.c"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) { return *(volatile int *)8; }\n')
    program = km.Program("crash", kernels=LESSON / "kernels")
    program.thread(cluster=0, sources=[source])
    with km.Session() as session:
        run = session.load(program)
        with pytest.raises(km.ThreadFault):
            run.thread_result(timeout=30)
        assert repr(run.thread) == "<Thread on cluster 0: 1 core, crashed>"
        run.stop()


def test_a_finding_says_what_and_where(tmp_path):
    text = TRIPLE.replace("    kmx_invalidate(0);\n", "")
    run, _, _ = run_source(tmp_path, text)
    [finding] = run.findings
    assert repr(finding).startswith("Finding(read-before-invalidate in region 'numbers', bytes 0 to 4095, at thread.c:")
    assert repr(finding).endswith(", core 0 of cluster 1)")
