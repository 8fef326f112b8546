"""The thread's C library: built once for the card, shipped in the package, checked at link.

A thread links musl as the `ziglang` package builds it for `riscv64-linux-musl`, static and
position-independent: zig's start file (rcrt1.o), musl (libc.a), zig's own C parts
(libzigc.a), compiler-rt, and the UB sanitizer's runtime (which only a thread built with
-fsanitize pulls in). That is target code, the same bytes on every host OS, so it is built
when the package is built (setup.py: a wheel, an sdist, an editable install) into
kmx_runtime/libc/NAME/, one folder for each CPU a link can pick (CPUS), and a user's first
compile compiles only the user's files and the runtime's few sources.

Each folder has a manifest: the ziglang version that built it, the recipe (the flags, and
FORMAT), and each file's SHA-256. A link uses the files only while the manifest matches the
ziglang installed, this file's recipe and the files' bytes; otherwise `shipped` raises
LibraryError, which says what differs and how to build it again:

    python -m komorebi.sim.build.libc            # build what is missing or out of date
    python -m komorebi.sim.build.libc --check    # say what is there, build nothing
    python -m komorebi.sim.build.libc --force    # build all of it again

The library is built without debug information (zig's -s): the simulator names the C
library's frames by function, never by line (sim.image.dwarf), and so no file holds a path
of the machine that built it: the same ziglang builds the same bytes anywhere
(tests/build/test_libc.py builds it again and compares).

This module imports nothing of the package, so that setup.py can load it by its path
before the package is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Mapping, Sequence

FORMAT = 2  # the recipe's and the manifest's layout; a library of another is built again
# (2: archive members named by their file alone, not by zig's cache folder: _canonical_archive)
MANIFEST = "manifest.json"
# The CPUs a link can pick (sim.isa.target.library_cpu): the X280's own, vector unit and
# all, for a thread built for all of the X280; plain RV64GC, which every other target
# includes, for the rest. So the library never has an instruction the thread's target lacks.
CPUS: Mapping[str, str] = {"x280": "-mcpu=sifive_x280", "rv64gc": "-mcpu=baseline_rv64"}
TARGET = ("-target", "riscv64-linux-musl")
# How the thread is linked (sim.build.thread: static, position-independent, no -O, so that
# every optimisation level links this one build), less the debug information.
RECIPE = ("-static", "-fPIE", "-s", "-fno-sanitize=all", "-Wl,--no-dynamic-linker")
# What zig's own link line names, in its order: before the thread's objects, and after.
BEFORE = ("rcrt1.o",)
AFTER = ("libubsan_rt.a", "libc.a", "libzigc.a", "libcompiler_rt.a")
BUILD_SECONDS = 60  # about how long the build takes on a 2-core machine (both CPUs at once: 44 s)
TIME_LIMIT = 3600.0  # seconds: a build past this is stopped


class LibraryError(Exception):
    """The shipped C library is missing or does not match what would be built now."""


def folder() -> Path:
    """Where the library's folders are: kmx_runtime/libc (in a checkout or installed)."""
    # (in a checkout this file is sim/build/libc.py beside kmx_runtime/; installed, it is
    # komorebi/sim/build/libc.py beside komorebi/kmx_runtime/)
    return Path(__file__).resolve().parent.parent.parent / "kmx_runtime" / "libc"


def name_of(cpu: str) -> str:
    """The folder name of CPU (an -mcpu flag of CPUS)."""
    for name, flag in CPUS.items():
        if flag == cpu:
            return name
    raise ValueError(f"{cpu!r} is not a CPU the C library is built for: {', '.join(CPUS.values())}")


def ziglang_version() -> str:
    """The installed ziglang package's version."""
    from importlib import metadata

    try:
        return metadata.version("ziglang")
    except metadata.PackageNotFoundError:
        raise LibraryError("the ziglang package is not installed: pip install ziglang") from None


def _wanted_ziglang() -> str:
    """The ziglang version the installed package asks for (its requirement), or '...'."""
    from importlib import metadata

    try:
        for requirement in metadata.requires("komorebi-sim") or []:
            if requirement.startswith("ziglang=="):
                return requirement.split("==", 1)[1].split(";")[0].strip()
    except metadata.PackageNotFoundError:
        pass
    return "..."


def recipe(cpu: str) -> dict:
    """What decides the library's bytes, besides zig itself."""
    return {"format": FORMAT, "target": list(TARGET), "cpu": cpu, "flags": list(RECIPE),
            "before": list(BEFORE), "after": list(AFTER)}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def problem(cpu: str, where: Path | None = None) -> str | None:
    """Why the library for CPU in WHERE (default: the shipped one) cannot be linked, or
    None when it can."""
    place = (where or folder()) / name_of(cpu)
    try:
        data = (place / MANIFEST).read_bytes()
    except FileNotFoundError:
        return f"it is not there ({place / MANIFEST} does not exist)"
    except OSError as error:
        return f"its manifest {place / MANIFEST} cannot be read ({error.strerror or error})"
    manifest, damage = _parse_manifest(data)
    if damage is not None:
        return f"its manifest {place / MANIFEST} is damaged: {damage} (a manifest is {MANIFEST_SHAPE})"
    wanted = recipe(cpu)
    if manifest["recipe"] != wanted:
        return f"it was built by another recipe ({manifest['recipe']}; this version builds it by {wanted})"
    try:
        version = ziglang_version()
    except LibraryError as error:
        return str(error)
    if manifest["ziglang"] != version:
        return f"it was built by ziglang {manifest['ziglang']}, and ziglang {version} is installed"
    files = manifest["files"]
    for name in (*BEFORE, *AFTER):
        path = place / name
        if name not in files:
            return f"its manifest names no {name}"
        if not path.is_file():
            return f"{path} is missing"
        if _sha256(path) != files[name]:
            return f"{path} is not the file its manifest names (SHA-256 differs)"
    return None


MANIFEST_SHAPE = "a JSON object: ziglang, a version; recipe, an object; files, each file's name and SHA-256"


def _parse_manifest(data: bytes) -> tuple[dict, None] | tuple[None, str]:
    """The manifest in DATA, or what is wrong with its shape (so that a damaged one is
    refused in words, as a damaged archive is, not with a Python error)."""
    try:
        text = data.decode()
    except UnicodeDecodeError as error:
        return None, f"it is not UTF-8 text (byte {data[error.start]:#04x} at {error.start})"
    try:
        manifest = json.loads(text)
    except (ValueError, RecursionError) as error:  # (RecursionError: nested past Python's limit)
        return None, f"it is not JSON ({error})"
    if not isinstance(manifest, dict):
        return None, f"it holds {_json_kind(manifest)}, not an object"
    for key, kind in (("ziglang", str), ("recipe", dict), ("files", dict)):
        if key not in manifest:
            return None, f"it has no {key!r}"
        if not isinstance(manifest[key], kind):
            return None, f"{key!r} is {_json_kind(manifest[key])}, not {'a string' if kind is str else 'an object'}"
    for name, digest in manifest["files"].items():
        if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
            shown = _json_kind(digest) if not isinstance(digest, str) else repr(digest[:80])
            return None, f"'files' gives {name} {shown}, not a SHA-256 (64 hexadecimal digits)"
    return manifest, None


def _json_kind(value) -> str:
    if isinstance(value, bool):  # (before int: a bool is one)
        return "a JSON boolean"
    kinds = {dict: "a JSON object", list: "a JSON array", str: "a JSON string", int: "a JSON number",
             float: "a JSON number", type(None): "JSON null"}
    return kinds.get(type(value), type(value).__name__)


def shipped(cpu: str) -> tuple[list[Path], list[Path]]:
    """The files a thread for CPU links (before its objects, after them), checked against
    their manifest. Raises LibraryError, with what to do, when they cannot be used."""
    why = problem(cpu)
    if why is not None:
        raise LibraryError(
            f"the card's C library for {cpu} cannot be linked: {why}. It is built when the "
            f"package is built: install the package again (from a checkout, pip install -e .), "
            f"or build it in place with `{sys.executable} -m komorebi.sim.build.libc` (about "
            f"{BUILD_SECONDS} s); when the ziglang versions differ, installing the one the "
            f"package asks for (pip install ziglang=={_wanted_ziglang()}) is enough"
        )
    place = folder() / name_of(cpu)
    return [place / n for n in BEFORE], [place / n for n in AFTER]


def build(cpu: str, where: Path) -> Path:
    """Build the library for CPU into WHERE/NAME, with its manifest; returns that folder.
    zig runs in a folder of its own with a cache of its own, which is removed after."""
    place = where / name_of(cpu)
    with tempfile.TemporaryDirectory(prefix="kmx-libc-") as scratch:
        process = _start(cpu, Path(scratch))
        _finish(cpu, process, Path(scratch), place)
    return place


def _start(cpu: str, scratch: Path) -> subprocess.Popen:
    # zig builds the C library to link a program: a program that does nothing, linked
    # with -v, names the library's files on its ld.lld line.
    (scratch / "main.c").write_text("int main(void) { return 0; }\n")
    argv = [sys.executable, "-m", "ziglang", "cc", *TARGET, cpu, *RECIPE, "main.c", "-o", "main.elf", "-v"]
    environment = {**os.environ, "ZIG_GLOBAL_CACHE_DIR": str(scratch / "zig-cache"),
                   "ZIG_LOCAL_CACHE_DIR": str(scratch / "zig-cache")}
    output = open(scratch / "output.txt", "wb")
    try:
        # (a process group of its own: a build stopped or interrupted takes zig's clangs with it)
        return subprocess.Popen(argv, cwd=scratch, stdout=output, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=environment, start_new_session=os.name == "posix")
    finally:
        output.close()


def _finish(cpu: str, process: subprocess.Popen, scratch: Path, place: Path) -> None:
    try:
        returncode = process.wait(timeout=TIME_LIMIT)
    except BaseException:
        stop_group(process)
        raise
    said = (scratch / "output.txt").read_text(errors="replace")
    if returncode != 0:
        raise LibraryError(f"zig could not build the C library for {cpu}:\n{said.strip()}")
    links = [line for line in said.splitlines() if line.startswith("ld.lld ") and " -r " not in line]
    if not links:
        raise LibraryError(f"zig printed no link line for the C library for {cpu}:\n{said.strip()}")
    named = {Path(word).name: scratch / word for word in links[-1].split() if word.endswith((".o", ".a"))}
    missing = [n for n in (*BEFORE, *AFTER) if n not in named]
    if missing:
        raise LibraryError(f"zig's link for {cpu} named no {', '.join(missing)}: {links[-1]}")
    fresh = place.with_name(place.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    files = {}
    for name in (*BEFORE, *AFTER):
        if name.endswith(".a"):
            (fresh / name).write_bytes(_canonical_archive(named[name].read_bytes()))
        else:
            shutil.copyfile(named[name], fresh / name)
        files[name] = _sha256(fresh / name)
    manifest = {"ziglang": ziglang_version(), "recipe": recipe(cpu), "files": files}
    (fresh / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    shutil.rmtree(place, ignore_errors=True)
    fresh.rename(place)


def _canonical_archive(data: bytes) -> bytes:
    """The GNU archive DATA with each member named by its file name alone. zig names the
    members it archives by their place in its cache (zig-cache/o/HASH/aio.o), and the hash
    differs from one build to the next while the objects' bytes do not; so that the same
    ziglang builds the same library anywhere, the folders go. The symbol table's offsets
    follow the members; the members, their order and their bytes are kept."""
    if not data.startswith(b"!<arch>\n"):
        raise LibraryError("zig built an archive that is not a GNU archive")
    members = []  # (name, header's fields after the name, body, where it was in DATA)
    long_names = b""
    at = 8
    while at < len(data):
        header = data[at:at + 60]
        if len(header) < 60 or header[58:60] != b"`\n":
            raise LibraryError(f"zig built an archive with a damaged member header at byte {at}")
        size = int(header[48:58])
        body = data[at + 60:at + 60 + size]
        name = header[:16].decode().rstrip()
        if name == "//":
            long_names = body
        elif name in ("/", "/SYM64/"):
            members.append((name, header[16:58], body, at))
        else:
            if name.startswith("/"):  # "/OFFSET": the name is in the long names' member
                start = int(name[1:])
                name = long_names[start:long_names.index(b"/\n", start)].decode()
            else:
                name = name.rstrip("/")
            members.append((name.rsplit("/", 1)[-1], header[16:58], body, at))
        at += 60 + size + (size & 1)
    symbols = [m for m in members if m[0] in ("/", "/SYM64/")]
    objects = [m for m in members if m[0] not in ("/", "/SYM64/")]
    table = b"".join(name.encode() + b"/\n" for name, *_ in objects if len(name) > 15)

    def header(name: str, fields: bytes, size: int) -> bytes:
        return name.encode().ljust(16) + fields[:32] + str(size).encode().ljust(10) + b"`\n"

    def pad(body: bytes) -> bytes:
        return body + b"\n" * (len(body) & 1)

    # The objects' places in the new archive, for the symbol table.
    first = 8 + sum(60 + len(pad(body)) for _, _, body, _ in symbols)
    if table:
        first += 60 + len(pad(table))
    moved, where, offset = {}, first, 0  # an object's place in DATA -> in the new archive
    parts = []
    for name, fields, body, was in objects:
        if len(name) > 15:
            label = f"/{offset}"
            offset += len(name) + 2
        else:
            label = name + "/"
        moved[was] = where
        parts.append(header(label, fields, len(body)) + pad(body))
        where += len(parts[-1])
    out = [b"!<arch>\n"]
    for name, fields, body, _ in symbols:
        width = 8 if name == "/SYM64/" else 4
        count = int.from_bytes(body[:width], "big")
        offsets = [int.from_bytes(body[width * (1 + i):width * (2 + i)], "big") for i in range(count)]
        fixed = b"".join(moved[o].to_bytes(width, "big") for o in offsets)
        new = body[:width] + fixed + body[width * (1 + count):]
        out.append(header(name, fields, len(new)) + pad(new))
    if table:
        out.append(header("//", b" " * 32, len(table)) + pad(table))
    out.extend(parts)
    return b"".join(out)


def stop_group(process: subprocess.Popen) -> None:
    """Kill a compiler and everything it started (its process group). The group goes
    first, while the compiler is not yet reaped, so that its number still names this
    group. (sim.build.toolchain stops the thread's compilers with this too; it is here
    because setup.py loads this file alone.)"""
    if process.returncode is not None:
        return
    if os.name == "posix":
        import signal

        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        process.kill()
    except OSError:
        pass
    process.wait()


def build_all(where: Path | None = None, *, force: bool = False, say=None) -> list[str]:
    """Build every CPU's library that is missing or out of date in WHERE (default: the
    shipped folder), all at once (one zig each, in parallel). Returns the CPUs built."""
    where = where or folder()
    say = say or (lambda text: print(text, file=sys.stderr, flush=True))
    wanted = [cpu for cpu in CPUS.values() if force or problem(cpu, where) is not None]
    if not wanted:
        return []
    say(f"komorebi-sim: building the card's C library (musl, for {', '.join(wanted)}) once, "
        f"into {where}; about {BUILD_SECONDS} s on a 2-core machine...")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kmx-libc-") as scratch:
        scratches = {cpu: Path(scratch) / name_of(cpu) for cpu in wanted}
        processes = {}
        try:
            for cpu in wanted:
                scratches[cpu].mkdir()
                processes[cpu] = _start(cpu, scratches[cpu])
            for cpu in wanted:
                _finish(cpu, processes[cpu], scratches[cpu], where / name_of(cpu))
        finally:
            for process in processes.values():
                stop_group(process)
    say(f"komorebi-sim: the card's C library is built ({time.monotonic() - started:.0f} s)")
    return wanted


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m komorebi.sim.build.libc", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="say what is there; build nothing")
    parser.add_argument("--force", action="store_true", help="build every CPU's library again")
    parser.add_argument("--into", type=Path, help="build into this folder (default: the package's)")
    options = parser.parse_args(argv)
    where = options.into or folder()
    if options.check:
        bad = 0
        for cpu in CPUS.values():
            why = problem(cpu, where)
            bad += why is not None
            print(f"{cpu}: {'ready' if why is None else why}")
        return 1 if bad else 0
    build_all(where, force=options.force)
    for cpu in CPUS.values():
        print(f"{cpu}: {where / name_of(cpu)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
