"""Host memory (sim.memory.host): the linux way and the portable way keep the same
promises, each tested here whatever KMX_HOST_MEMORY chose for the rest of the suite."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from komorebi.sim.memory import host

WAYS = ["portable"] + (["linux"] if sys.platform.startswith("linux") else [])
SIZE = 3 * 4096


@pytest.fixture(params=WAYS)
def way(request):
    return host.WAY[request.param]


def test_anonymous_memory_is_zeros_page_aligned_and_forgets_to_zeros(way):
    block = way.anonymous(SIZE)
    assert block.size == SIZE and block.address % 4096 == 0 and not block.array.any()
    block.array[:] = 7
    block.forget(4096, 4096)
    assert not block.array[4096:8192].any() and (block.array[:4096] == 7).all() and (block.array[8192:] == 7).all()


def test_a_file_shared_and_private(way):
    file = way.new_file("test", SIZE)
    file.write(100, np.arange(10, dtype=np.uint8))
    shared, private = file.shared(), file.private()
    assert shared.array[100:110].tolist() == list(range(10)) == private.array[100:110].tolist()
    private.array[100] = 99  # copy-on-write: the file keeps its byte
    assert shared.array[100] == 0 and file.read_only()[100] == 0
    shared.array[200] = 5  # shared: the file takes it
    assert file.read_only()[200] == 5 and file.private().array[200] == 5
    private.forget(0, 4096)  # the private block shows the file again
    assert private.array[100] == 0 and private.array[200] == 5
    shared.evict()  # a shared block keeps what it holds
    assert shared.array[200] == 5 and shared.array[100:110].tolist() == [0] + list(range(1, 10))


def test_read_only_is_read_only(way):
    file = way.new_file("test", SIZE)
    with pytest.raises(ValueError):
        file.read_only()[0] = 1


def test_a_way_that_is_not_there_is_named():
    script = ("import numpy as np\nfrom komorebi import _simulator\nfrom komorebi.sim.memory import host\n"
              "try:\n    _simulator.snapshot(np.zeros(4, np.uint8))\nexcept host.HostMemoryError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", script], env={"KMX_HOST_MEMORY": "fast", "PATH": ""},
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "KMX_HOST_MEMORY='fast': the ways are 'linux' and 'portable'"


def _mapped(address: int) -> bool:
    with open("/proc/self/maps") as maps:
        for line in maps:
            low, high = (int(part, 16) for part in line.split()[0].split("-"))
            if low <= address < high:
                return True
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_a_linux_block_is_unmapped_when_it_and_its_arrays_go():
    """No cycle keeps a mapping: once the block and every array over it are gone, the
    memory goes back to the system (a 64 MiB region read six times grew the process by
    330 MiB a run when the block and its buffer referred to each other)."""
    if host.way() != "linux":
        pytest.skip("the linux way only")
    block = host.anonymous(1 << 22)
    kept, address = block.array[10:20], block.address
    del block
    assert _mapped(address)  # the array still holds it
    del kept
    assert not _mapped(address)
    private = host.new_file("unmapped", 1 << 20).private()
    address = private.address
    del private
    assert not _mapped(address)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_writes_only_its_own_copy(way):
    """Anonymous memory is the process's own in both ways (Python's mmap is MAP_SHARED
    unless told otherwise, which a child would share with its parent)."""
    import os

    block = way.anonymous(4096)
    private = way.new_file("forked", 4096).private()
    pid = os.fork()
    if pid == 0:  # (the child leaves whatever happens: else it would run the rest of the suite)
        wrote = False
        try:
            block.array[0] = 9
            private.array[0] = 9
            wrote = True
        finally:
            os._exit(0 if wrote else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child could not write its copies"
    assert block.array[0] == 0 and private.array[0] == 0
