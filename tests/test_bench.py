"""Every benchmark runs, at a small size: bench/ keeps up with the code it measures. (The
figures are not looked at: tests never judge wall-clock time.)"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

SMALL = {
    "vs_qemu.py": ["--quick", "--repeat", "1", "--kernels", "stream,alu"],
    "stream.py": ["--mib", "1", "--repeat", "1"],
    "cores.py": ["--iterations", "20000", "--mib", "1", "--repeat", "1"],
    "bigregion.py": ["--mib", "8"],
    "startup.py": ["--repeat", "1"],
    "isa.py": ["--repeat", "1", "--mib", "1", "--passes", "20000"],
    "vector.py": ["--quick", "--repeat", "1"],
    "cache_modes.py": ["--quick", "--repeat", "1"],
    "observing.py": ["--quick", "--repeat", "1"],
    "first_run.py": ["--quick"],
    "races.py": ["--seeds", "1", "--schedules", "20", "--rate-schedules", "10", "--bugs", "2"],
}


@pytest.mark.parametrize("script", sorted(SMALL))
def test_the_benchmark_runs_and_ends_with_its_json(script):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *SMALL[script]],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    json.loads(done.stdout.strip().splitlines()[-1])


def test_all_runs_every_benchmark_of_the_readme():
    from importlib import util

    spec = util.spec_from_file_location("bench_all", ROOT / "bench" / "all.py")
    module = util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert {script for script, *_ in module.RUNS.values()} == set(SMALL)
