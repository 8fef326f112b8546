"""C programs of RVV intrinsics, one class of instruction each (tests/vs_qemu/intrinsics.c:
integer, widening and narrowing, fixed point, masks, reductions, permutations, memory
accesses of every kind, floating point, conversions), built for the card (-mcpu=sifive_x280)
and run on qemu-riscv64 and on the simulator: every class's output must agree byte for
byte. The binary16 class (Zvfh), which QEMU 7.2 does not have, is checked against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests import qemu
from tests.isa.test_vs_qemu_vector import QEMU_CPU

pytestmark = [qemu.needed, pytest.mark.slow]  # (slow: CI runs it, .ci/run)
HERE = qemu.HERE
CLASS_BYTES = 4096
CLASSES = ["integer", "widening and narrowing", "fixed point", "masks", "reductions", "permutations",
           "memory accesses", "floating point", "conversions", "binary16"]
SOURCES = [HERE / "intrinsics.c"]


@pytest.fixture(scope="module")
def on_qemu(tmp_path_factory) -> bytes:
    elf = qemu.build(tmp_path_factory.mktemp("intrinsics") / "intrinsics.elf",
                     [HERE / "main_intrinsics.c", *SOURCES], "-mcpu=sifive_x280", flags=["-O2", f"-I{HERE}"])
    done = qemu.run(elf, QEMU_CPU)
    assert len(done) == len(CLASSES) * CLASS_BYTES  # (the last class left empty)
    return done


@pytest.fixture(scope="module")
def on_simulator(tmp_path_factory, monkeypatch_module) -> bytes:
    monkeypatch_module.setenv("KMX_CFLAGS", f"-I{HERE} -DWITH_ZVFH")
    return qemu.run_thread(tmp_path_factory.mktemp("kernels"), [HERE / "thread_intrinsics.c", *SOURCES],
                           len(CLASSES) * CLASS_BYTES)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.mark.parametrize("index", range(len(CLASSES) - 1), ids=CLASSES[:-1])
def test_each_class_of_intrinsics_gives_what_qemu_gives(on_qemu, on_simulator, index):
    theirs = on_qemu[index * CLASS_BYTES:(index + 1) * CLASS_BYTES]
    ours = on_simulator[index * CLASS_BYTES:(index + 1) * CLASS_BYTES]
    assert CLASS_BYTES - theirs.count(0) >= 16, "all but zeros: the class computed nothing"
    if ours != theirs:
        at = next(i for i in range(CLASS_BYTES) if ours[i] != theirs[i])
        pytest.fail(f"{CLASSES[index]}: first difference at byte {at}: simulator {ours[at:at + 8].hex()}, "
                    f"qemu {theirs[at:at + 8].hex()}")


def test_the_binary16_class_gives_what_numpy_gives(on_simulator):
    """vfadd.vv and vfmul.vv at SEW 16 round once (numpy's float16 arithmetic does too: it
    computes in float32, exact for one sum or product of halves, and rounds to nearest
    even), and vfwcvt.f.f.v widens exactly."""
    n = 100
    data = on_simulator[(len(CLASSES) - 1) * CLASS_BYTES:]
    a = np.frombuffer(data, np.float16, n, 0)
    b = np.frombuffer(data, np.float16, n, 2 * n)
    added = np.frombuffer(data, np.float16, n, 4 * n)
    multiplied = np.frombuffer(data, np.float16, n, 6 * n)
    wide = np.frombuffer(data, np.float32, n, 8 * n)
    assert (added.view(np.uint16) == (a + b).view(np.uint16)).all()
    assert (multiplied.view(np.uint16) == (a * b).view(np.uint16)).all()
    assert (wide == a.astype(np.float32)).all()
    assert np.isfinite(a).all() and len(set(a.tolist())) > 50  # (real data: the test tests something)
