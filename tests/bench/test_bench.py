"""Every benchmark runs in its --quick form, a smoke test: bench/ keeps up with the code it
measures. Only that it runs and ends with its JSON is checked: the figures are not looked
at, and no time is asked of it (tests never judge wall-clock time). Slow: CI runs them."""

from __future__ import annotations

import json
import sys

import pytest

from tests import processes
from tests.conftest import HANG, ROOT

# Each benchmark's smoke run (its --quick form; vs_qemu.py: two of its kernels)
SMALL = {
    "vs_qemu.py": ["--quick", "--repeat", "1", "--kernels", "stream,alu"],
    "stream.py": ["--quick"],
    "cores.py": ["--quick"],
    "bigregion.py": ["--quick"],
    "startup.py": ["--quick"],
    "isa.py": ["--quick"],
    "vector.py": ["--quick", "--repeat", "1"],
    "cache_modes.py": ["--quick", "--repeat", "1"],
    "observing.py": ["--quick", "--repeat", "1"],
    "first_run.py": ["--quick"],
    "races.py": ["--quick"],
    "noc.py": ["--quick"],
    "kmx.py": ["--quick"],
    "flush.py": ["--quick"],
}


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(SMALL))
def test_the_benchmark_runs_and_ends_with_its_json(script):
    done = processes.run(  # (races.py's worker processes, vs_qemu.py's QEMU: ended with it)
        [sys.executable, str(ROOT / "bench" / script), *SMALL[script]],
        capture_output=True, text=True, timeout=HANG, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    json.loads(done.stdout.strip().splitlines()[-1])


def test_all_runs_every_benchmark_of_the_readme():
    from importlib import util

    spec = util.spec_from_file_location("bench_all", ROOT / "bench" / "all.py")
    module = util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert {script for script, *_ in module.RUNS.values()} == set(SMALL)
