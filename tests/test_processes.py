"""The tests that interrupt a child with Ctrl-C pass, and leave nothing running, when the
suite runs with SIGINT ignored (as a background job of a script starts it): they once
failed after 30 s, and one's child spun at full CPU after pytest had exited."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from tests import processes
from tests.conftest import HANG, ROOT

MARK = "KMX_TEST_MARK"  # (the children's, inherited by theirs: what outlived the script)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds the processes left in /proc")
def test_the_ctrl_c_tests_pass_with_sigint_ignored_and_leave_nothing_running(tmp_path):
    script = textwrap.dedent(f"""
        import pathlib, signal, sys
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # (what every child of this process inherits)
        sys.path.insert(0, {str(ROOT)!r})
        from tests.api.test_faults_and_timeouts import test_ctrl_c_in_a_wait_raises_at_once_and_the_run_stops
        from tests.build.test_build_cache import test_an_interrupted_compile_leaves_no_compiler_running
        for n, test in enumerate([test_ctrl_c_in_a_wait_raises_at_once_and_the_run_stops,
                                  test_an_interrupted_compile_leaves_no_compiler_running]):
            folder = pathlib.Path(sys.argv[1]) / str(n)
            folder.mkdir()
            test(folder)
            print("PASSED", test.__name__, flush=True)
    """)
    mark = uuid.uuid4().hex
    left: list[int] = []
    try:
        with processes.started([sys.executable, "-c", script, str(tmp_path)], env={**os.environ, MARK: mark},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
            out, err = child.communicate(timeout=HANG)
            left = processes.marked(MARK, mark)  # (what runs on once the script has ended)
    finally:
        processes.kill(processes.marked(MARK, mark))
    assert left == [], f"processes {left} ran on after the tests had ended"
    assert out.split() == ["PASSED", "test_ctrl_c_in_a_wait_raises_at_once_and_the_run_stops",
                           "PASSED", "test_an_interrupted_compile_leaves_no_compiler_running"], err[-3000:]
    assert child.returncode == 0, err[-3000:]
