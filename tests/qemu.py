"""What the tests against qemu-riscv64 share: where it is, the rule that CI must have it,
and the build of a static riscv64 Linux program for it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "vs_qemu"
QEMU = shutil.which("qemu-riscv64")
if QEMU is None and os.environ.get("KMX_REQUIRE_QEMU"):  # (CI has it: .ci/run installs it)
    raise RuntimeError("KMX_REQUIRE_QEMU is set, but qemu-riscv64 is not installed (apt-get install qemu-user)")
needed = pytest.mark.skipif(QEMU is None, reason="qemu-riscv64 is not installed (apt-get install qemu-user)")


def build(out: Path, sources: list[Path], zig_cpu: str) -> Path:
    """A static riscv64-linux-musl program of SOURCES for zig's -mcpu ZIG_CPU, at OUT."""
    done = subprocess.run(
        [sys.executable, "-m", "ziglang", "cc", "-target", "riscv64-linux-musl", zig_cpu, "-O1", "-static",
         *map(str, sources), "-o", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return out
