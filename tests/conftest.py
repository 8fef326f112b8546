import os
from pathlib import Path

import pytest

from komorebi.sim.memory import host

ROOT = Path(__file__).resolve().parent.parent
# Seconds a test waits for a subprocess or a thread before calling it hung: a bound for a
# hang, far past what any machine's speed or load takes, never a speed to meet.
HANG = 1800.0

# The machine's own tests make host memory without komorebi: they hold it the way
# KMX_HOST_MEMORY asks, as komorebi does (CI runs the suite once with the portable way).
# Asked before any test module is read (test_memory_cost's skip asks for the way).
host.ask(os.environ.get(host.VARIABLE, ""))


@pytest.fixture(autouse=True, scope="session")
def _build_cache(tmp_path_factory):
    """One build cache for the whole run, apart from the user's."""
    os.environ["KMX_CACHE_DIR"] = str(tmp_path_factory.mktemp("kmx-cache"))
    yield


@pytest.fixture
def kernels(tmp_path) -> Path:
    folder = tmp_path / "kernels"
    folder.mkdir()
    return folder
