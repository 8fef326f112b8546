"""Compiling a thread: the compiler driver and its content-addressed build cache.

The default compiler is the `ziglang` package's clang (`python -m ziglang cc`), for
rv64gc. `KMX_CC` names another command that takes clang's or gcc's flags; `KMX_CFLAGS`
adds flags (for example `-O0`). The ELF keeps its debug info, so faults and findings can
name source lines.

The cache key is a hash of the compiler, the flags, the runtime (kmx_runtime/), and every
source file with every header beside it; an entry is the linked ELF. An unchanged thread is
never compiled twice. The cache lives in `KMX_CACHE_DIR`, or `~/.cache/komorebi-sim`.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
import warnings
from importlib import metadata
from pathlib import Path
from typing import Sequence

from komorebi._errors import CompileError, CompileWarning
from sim.build_cache import cache_dir

RUNTIME = Path(__file__).resolve().parent.parent / "kmx_runtime"
RUNTIME_SOURCES = ("start.S", "libc.c", "print.c")
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".inc")

ZIG_TARGET = ["-target", "riscv64-freestanding-none", "-mcpu=baseline_rv64"]
FLAGS = [
    "-O2",
    "-g",
    "-mcmodel=medany",
    "-ffreestanding",
    "-fPIE",
    "-fno-omit-frame-pointer",
    "-fno-optimize-sibling-calls",  # every caller keeps its frame: whole backtraces
    "-fno-asynchronous-unwind-tables",
    "-fno-unwind-tables",
    "-fno-sanitize=all",
    "-Wl,--no-gc-sections",  # a removed function keeps DWARF rows at address 0
    "-Wl,--no-dynamic-linker",
    "-Wl,-z,norelro",
]

compiler_runs = 0  # how many times this process ran the compiler (the tests look)


def compiler_command() -> list[str]:
    """The compiler and the target flags it needs."""
    custom = os.environ.get("KMX_CC")
    if custom:
        return shlex.split(custom)
    return [sys.executable, "-m", "ziglang", "cc", *ZIG_TARGET]


def _compiler_identity(command: list[str]) -> str:
    if not os.environ.get("KMX_CC"):
        return "ziglang " + metadata.version("ziglang")
    # A custom compiler: its resolved path, size and time stand for its version.
    from shutil import which

    found = which(command[0]) or command[0]
    try:
        stat = os.stat(found)
        return f"{found} {stat.st_size} {stat.st_mtime_ns}"
    except OSError:
        return found


def _inputs(sources: Sequence[Path]) -> list[Path]:
    """Every file a build reads: the runtime, the sources, and the headers beside them."""
    files = {RUNTIME / name for name in (*RUNTIME_SOURCES, "kmx.h", "kmx.ld")}
    for source in sources:
        files.add(source)
        files.update(p for p in source.parent.iterdir() if p.suffix in HEADER_SUFFIXES and p.is_file())
    return sorted(files)


def build_key(sources: Sequence[Path], command: list[str], flags: list[str]) -> str:
    digest = hashlib.sha256()
    for part in (_compiler_identity(command), *command, "--", *flags):
        digest.update(part.encode() + b"\0")
    for path in _inputs(sources):
        digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


def build_thread(sources: Sequence[Path]) -> Path:
    """The linked ELF of a thread made of SOURCES: from the cache, or compiled now.
    Raises CompileError with the compiler's own messages."""
    global compiler_runs
    sources = [Path(s).resolve() for s in sources]
    command = compiler_command()
    flags = FLAGS + shlex.split(os.environ.get("KMX_CFLAGS", ""))
    key = build_key(sources, command, flags)
    elf = cache_dir() / key / "thread.elf"
    said = elf.parent / "warnings.txt"
    if elf.exists():
        if said.exists():  # a cache hit says again what the compiler said
            _warn(said.read_text())
        return elf
    elf.parent.mkdir(parents=True, exist_ok=True)
    runtime = [str(RUNTIME / name) for name in RUNTIME_SOURCES]
    with tempfile.TemporaryDirectory(dir=elf.parent) as scratch:
        output = Path(scratch) / "thread.elf"
        argv = [
            *command,
            *flags,
            "-I",
            str(RUNTIME),
            "-T",
            str(RUNTIME / "kmx.ld"),
            *runtime,
            *map(str, sources),
            "-o",
            str(output),
        ]
        compiler_runs += 1
        try:
            done = subprocess.run(argv, capture_output=True, text=True)
        except FileNotFoundError:
            raise CompileError(
                f"the compiler {command[0]!r} was not found (KMX_CC={os.environ.get('KMX_CC')!r})",
                command=argv,
            ) from None
        if done.returncode != 0 or not output.exists():
            raise CompileError((done.stderr + done.stdout).strip(), command=argv)
        messages = (done.stderr + done.stdout).strip()
        if "warning:" in messages:
            said.write_text(messages)
            _warn(messages)
        os.replace(output, elf)
    return elf


def _warn(messages: str) -> None:
    # Point the warning at the caller's line (session.load), past komorebi's own frames.
    here = Path(__file__).resolve().parent
    frame, level = sys._getframe(1), 2
    while frame is not None and Path(frame.f_code.co_filename).resolve().parent == here:
        frame, level = frame.f_back, level + 1
    warnings.warn(CompileWarning(messages), stacklevel=level)
