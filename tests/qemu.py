"""What the tests against qemu-riscv64 share: where it is, the rule that CI must have it,
and the build of a static riscv64 Linux program for it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import komorebi as km

HERE = Path(__file__).resolve().parent / "vs_qemu"
QEMU = shutil.which("qemu-riscv64")
if QEMU is None and os.environ.get("KMX_REQUIRE_QEMU"):  # (CI has it: .ci/run installs it)
    raise RuntimeError("KMX_REQUIRE_QEMU is set, but qemu-riscv64 is not installed (apt-get install qemu-user)")
needed = pytest.mark.skipif(QEMU is None, reason="qemu-riscv64 is not installed (apt-get install qemu-user)")


def build(out: Path, sources: list[Path], zig_cpu: str, flags: list[str] | None = None) -> Path:
    """A static riscv64-linux-musl program of SOURCES for zig's -mcpu ZIG_CPU (and FLAGS,
    by default -O1), at OUT."""
    done = subprocess.run(
        [sys.executable, "-m", "ziglang", "cc", "-target", "riscv64-linux-musl", zig_cpu, *(flags or ["-O1"]),
         "-static", *map(str, sources), "-o", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return out


def run(program: Path, cpu: str) -> bytes:
    """What PROGRAM writes to its standard output under qemu-riscv64 -cpu CPU."""
    done = subprocess.run([QEMU, "-cpu", cpu, str(program)], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def run_thread(kernels: Path, sources: list[Path], out_bytes: int) -> bytes:
    """Region 0 (of OUT_BYTES) after the thread of SOURCES ran in the simulator."""
    program = km.Program("vs_qemu", kernels=kernels)
    program.thread(cluster=1, sources=sources, regions={"out": out_bytes})
    with km.Session() as session:
        loaded = session.load(program)
        assert loaded.thread_result(timeout=120).code == 0
        loaded.stop()
        return loaded.thread.read("out").tobytes()


def on_qemu(program: Path, cpu: str, cases: list[bytes], state_size: int) -> list[bytes]:
    """Each case's state after PROGRAM ran it under qemu-riscv64 -cpu CPU (cases on its
    standard input, states of STATE_SIZE bytes on its output)."""
    done = subprocess.run([QEMU, "-cpu", cpu, str(program)], input=b"".join(cases), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    return [done.stdout[i * state_size:(i + 1) * state_size] for i in range(len(cases))]


def on_simulator(kernels: Path, sources: list[Path], cases: list[bytes], state_size: int) -> list[bytes]:
    """Each case's state after the thread of SOURCES ran it in the simulator (cases in
    region 0, states of STATE_SIZE bytes to region 1)."""
    program = km.Program("vs_qemu", kernels=kernels)
    program.thread(cluster=1, sources=sources,
                   regions={"cases": np.frombuffer(b"".join(cases), np.uint8), "states": state_size * len(cases)})
    with km.Session() as session:
        run = session.load(program)
        assert run.thread_result(timeout=120).code == 0
        run.stop()
        data = run.thread.read("states").tobytes()
    return [data[i * state_size:(i + 1) * state_size] for i in range(len(cases))]
