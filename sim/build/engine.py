"""The engine, built for the host: Unicorn with the simulator's patches.

Unicorn 2.1 runs RV64GC with QEMU 5.0's code, which differs from the X280 where the F
extension says otherwise (F 2.2, which the X280 follows): it left single-precision results
in the 64-bit f registers without their NaN-boxing (upper 32 bits 0 where F puts ones),
read a single operand's low 32 bits whatever its upper bits held (F: an operand that is
not boxed is the canonical NaN), and gave `fmin`/`fmax` of a number and a signalling NaN
the canonical NaN (F 2.2: the number). A fix outside the engine would cost a trap or a
jump to a stub at every single-precision instruction; inside it costs nothing. So the
simulator runs its own build of Unicorn: the published source of VERSION (the sdist on
PyPI, checked against SOURCE_SHA256), with the patches in sim/build/engine_patches/
applied, built by cmake and ninja (the PyPI packages) with the system's C compiler, or
zig's where there is none (the `ziglang` package, which builds the hooks too), and loaded by the `unicorn` binding of
the same version in place of the library it ships (sim.hart.engine).

- When: at the install, as the card's C library is (setup.py builds it into BUILT_FOLDER,
  beside this file; about a minute on two cores), so a session starts with it. Where
  the install has none (a checkout used without installing, or a build that failed
  there, or one that cannot be loaded here: a wheel made where the system's C library is
  newer), the first use builds it into the build cache (`KMX_CACHE_DIR`), announced on
  stderr, one process at a time (a lock file beside it; the others wait and use it).
  Either copy is checked by its SHA-256, and loaded once, before it is used.
- Where the source comes from: the install downloads it with pip (SOURCE_FOLDER keeps
  it, and an sdist ships it); a build on first use without it downloads it into the
  build cache.
- The patches (each a unified diff against the source, with its reasons in its header):
  `01-nan-boxing-and-fmin-fmax.patch`: every single-precision result NaN-boxed, every
  single-precision operand checked (the canonical NaN when not boxed), `fmv.w.x` boxing,
  `fsgnj*.s` checking, and `fmin`/`fmax` (`.s` and `.d`) as F 2.2 says, as QEMU 5.2 and
  later do.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shlex
import sys
from pathlib import Path
from typing import Iterator

from . import toolchain
from .cache import BuildError, cache_dir, key_of, writing
from .cache import file_hash as _hash

VERSION = "2.1.4"  # the unicorn binding's version (pyproject.toml pins it): the library must match it
SOURCE = f"unicorn-{VERSION}.tar.gz"
SOURCE_SHA256 = "00567a70e323f749b419cd86bee4f9115beab7ebba32194581c090cbb7c59cff"
PATCHES_FOLDER = Path(__file__).resolve().parent / "engine_patches"
SOURCE_FOLDER = Path(__file__).resolve().parent / "engine_source"  # (the install puts SOURCE here)
BUILT_FOLDER = Path(__file__).resolve().parent / "engine_built"  # (and the library it builds here)
LIBRARY = {"darwin": "libunicorn.2.dylib", "win32": "unicorn.dll"}.get(sys.platform, "libunicorn.so.2")
# How it is configured (in the build's key: a change builds it again).
CONFIGURE = ("-DCMAKE_BUILD_TYPE=Release", "-DUNICORN_ARCH=riscv", "-DUNICORN_BUILD_TESTS=off")
# The compiler: the system's C compiler where there is one (cc, gcc or clang, as cmake
# finds it), as Unicorn's own wheels are built; else zig's cc. Measured on a scalar
# single-precision loop, the zig-built engine ran it about 1.4 times as long as the system gcc's
# (docs/simulator.md). zig's cc adds UndefinedBehaviorSanitizer's checks to a build that
# does not optimise; this one does, and says no sanitizer, as Unicorn's own builds have
# none; and it is told the processor family's baseline (-mcpu=baseline), where it would
# build for this machine's own processor, so that a wheel made here runs on any processor
# of the family (gcc's and clang's default is the baseline already).
SYSTEM_COMPILERS = ("cc", "gcc", "clang")
ZIG_FLAGS = "-DCMAKE_C_FLAGS=-fno-sanitize=undefined -mcpu=baseline"
BUILD_TIMEOUT = 1800.0  # seconds: the least limit for this build (on a busy 2-core machine, about 3 minutes)
ANNOUNCE = "the simulator's engine (Unicorn with the X280's floating-point rules) for this machine, once (about a minute)"


def patches() -> list[Path]:
    return sorted(PATCHES_FOLDER.glob("*.patch"))


def _key() -> str:
    """What the build is made from, and for: the source, the patches, the host. (Not the
    compiler: a build by the system's or by zig's serves every process of the host.)"""
    return key_of(["engine", VERSION, SOURCE_SHA256, *(p.read_bytes() for p in patches()), *CONFIGURE,
                   sys.platform, platform.machine()])


def library_folder() -> Path:
    """The folder holding the patched engine's library (named as the binding looks for it):
    the install's, else the build cache's, built now if neither is intact and loads here
    (a wheel made on a machine with a newer C library than this one's brings one that
    does not: this machine then builds its own)."""
    key = _key()
    if _intact(BUILT_FOLDER, key) and _loads(BUILT_FOLDER) is None:
        return BUILT_FOLDER
    folder = cache_dir() / "engine" / key
    if not _intact(folder, key):
        with _lock(folder.parent / f"{key}.lock"):  # (one build at a time; the others wait for it)
            if not _intact(folder, key):
                build_into(folder)
    problem = _loads(folder)
    if problem is not None:
        raise BuildError(f"the simulator's engine, built for this machine in {folder}, cannot be loaded: "
                         f"{problem}. Remove the folder to build it again")
    return folder


def _loads(folder: Path) -> str | None:
    """Why FOLDER's library cannot be loaded in this process, or None when it can."""
    import ctypes

    try:
        ctypes.CDLL(str(folder / LIBRARY))
    except OSError as error:
        return str(error)
    return None


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    """Hold the lock file PATH (POSIX: flock; elsewhere no lock, and two processes may
    build at once, each into a folder of its own, the last one's kept)."""
    with writing(path.parent):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a")
    try:
        try:
            import fcntl
        except ImportError:
            fcntl = None
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        handle.close()  # (releases the lock)


def _intact(folder: Path, key: str) -> bool:
    """FOLDER holds the library built from KEY's recipe, whole."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
        return manifest.get("key") == key and manifest.get("sha256") == _hash(folder / LIBRARY)
    except (OSError, ValueError, AttributeError):
        return False


def build_in_package() -> None:
    """The install's build (setup.py): into BUILT_FOLDER, unless it holds this recipe's."""
    fetch(SOURCE_FOLDER)
    if not _intact(BUILT_FOLDER, _key()):
        build_into(BUILT_FOLDER)


def source() -> Path:
    """The engine's source: the install's copy, or one downloaded into the build cache."""
    if (SOURCE_FOLDER / SOURCE).is_file() and _hash(SOURCE_FOLDER / SOURCE) == SOURCE_SHA256:
        return SOURCE_FOLDER / SOURCE
    return fetch(cache_dir() / "engine" / "source")


def fetch(folder: Path) -> Path:
    """SOURCE (Unicorn's sdist) in FOLDER, checked: downloaded with pip if it is not there."""
    import subprocess

    import shutil
    import tempfile

    path = folder / SOURCE
    if path.is_file() and _hash(path) == SOURCE_SHA256:
        return path
    with writing(folder):
        folder.mkdir(parents=True, exist_ok=True)
        download = Path(tempfile.mkdtemp(dir=folder, prefix="download-"))  # (then moved in whole)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", f"unicorn=={VERSION}", "--no-binary", "unicorn",
             "--no-deps", "--quiet", "--dest", str(download)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
        )
        got = download / SOURCE
        if done.returncode != 0 or not got.is_file():
            raise BuildError(
                f"the simulator's engine is built from Unicorn {VERSION}'s source, which is not in the "
                f"install ({SOURCE_FOLDER}) and could not be downloaded with pip "
                f"(`pip download unicorn=={VERSION} --no-binary unicorn --no-deps`):\n{done.stdout.strip()}\n"
                f"Download it where there is a network and put {SOURCE} in {folder}."
            )
        if _hash(got) != SOURCE_SHA256:
            raise BuildError(f"the downloaded {SOURCE} is not Unicorn {VERSION}'s published source "
                             f"(its SHA-256 differs from {SOURCE_SHA256}); it was removed")
        os.replace(got, path)
    finally:
        shutil.rmtree(download, ignore_errors=True)
    return path


def apply_patch(root: Path, patch: str, name: str) -> None:
    """Apply the unified diff PATCH (NAME, for messages) to the tree at ROOT, each hunk
    where its context matches exactly (the source is one published version, so anything
    else is an error). Each hunk holds the lines its header counts (an empty line is a
    blank context line, as editors that strip trailing spaces leave it); text before the
    first `diff --git` line is the patch's description."""
    hunk_header = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@")
    files = re.split(r"^diff --git .*\n", patch, flags=re.M)[1:]
    if not files:
        raise BuildError(f"engine patch {name}: no `diff --git` line")
    for text in files:
        target = re.search(r"^\+\+\+ b/(\S+)", text, re.M)
        if target is None:
            raise BuildError(f"engine patch {name}: a file with no +++ line")
        path = root / target.group(1)
        lines = path.read_text().split("\n")
        body = text.split("\n")
        i, shift, hunks = 0, 0, 0
        while i < len(body):
            header = hunk_header.match(body[i])
            i += 1
            if not header:
                continue
            hunks += 1
            start, old_count, new_count = int(header.group(1)), int(header.group(2) or 1), int(header.group(3) or 1)
            old, new = [], []
            while len(old) < old_count or len(new) < new_count:
                if i >= len(body):
                    raise BuildError(f"engine patch {name}: the hunk at line {start} of {target.group(1)} "
                                     f"ends before the {old_count} and {new_count} lines its header counts")
                line = body[i]
                i += 1
                kind, rest = (line[0], line[1:]) if line else (" ", "")
                if kind == "\\":
                    continue
                if kind not in " +-":
                    raise BuildError(f"engine patch {name}: the hunk at line {start} of {target.group(1)} "
                                     f"has a line that is not context, + or -: {line!r}")
                if kind in " -":
                    old.append(rest)
                if kind in " +":
                    new.append(rest)
            if len(old) != old_count or len(new) != new_count:
                raise BuildError(f"engine patch {name}: the hunk at line {start} of {target.group(1)} does not "
                                 f"hold the lines its header counts")
            at = start - 1 + shift
            if lines[at:at + len(old)] != old:
                raise BuildError(f"engine patch {name}: a hunk at line {start} of {target.group(1)} "
                                 f"does not match Unicorn {VERSION}'s source")
            lines[at:at + len(old)] = new
            shift += len(new) - len(old)
        if not hunks:
            raise BuildError(f"engine patch {name}: no hunk for {target.group(1)}")
        path.write_text("\n".join(lines))


def build_into(folder: Path) -> None:
    """Build the engine from its source and patches into FOLDER (replaced whole)."""
    import shutil
    import tarfile
    import tempfile

    import cmake
    import ninja

    tarball = source()
    parent = folder.parent
    with writing(parent):
        parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=parent, prefix="build-"))
    try:
        with tarfile.open(tarball) as archive:
            members = [m for m in archive.getmembers() if m.name.startswith(f"unicorn-{VERSION}/src/")]
            try:
                archive.extractall(work, members=members, filter="data")
            except TypeError:  # (Python before 3.12 and its backports: no filter)
                archive.extractall(work, members=members)
        root = work / f"unicorn-{VERSION}" / "src"
        for patch in patches():
            apply_patch(root, patch.read_text(), patch.name)
        system = next((name for name in SYSTEM_COMPILERS if shutil.which(name)), None)
        if system is not None:
            compiler = [f"-DCMAKE_C_COMPILER={shutil.which(system)}"]
        else:
            wrappers = _compiler_wrappers(work)
            compiler = [ZIG_FLAGS, f"-DCMAKE_C_COMPILER={wrappers['cc']}", f"-DCMAKE_AR={wrappers['ar']}",
                        f"-DCMAKE_RANLIB={wrappers['ranlib']}"]
        build = work / "build"
        cmake_bin = Path(cmake.CMAKE_BIN_DIR) / ("cmake.exe" if os.name == "nt" else "cmake")
        configure = [str(cmake_bin), "-S", str(root), "-B", str(build), "-G", "Ninja",
                     f"-DCMAKE_MAKE_PROGRAM={Path(ninja.BIN_DIR) / ('ninja.exe' if os.name == 'nt' else 'ninja')}", *CONFIGURE, *compiler]
        compile_ = [str(cmake_bin), "--build", str(build), "--target", "unicorn", "-j", str(os.cpu_count() or 1)]
        limit = max(toolchain.time_limit(), BUILD_TIMEOUT)
        done = toolchain.run(configure, what="the simulator's engine (configuring)", kind="first", limit=limit)
        if done.returncode == 0:
            done = toolchain.run(compile_, what="the simulator's engine", announce=ANNOUNCE, kind="first", limit=limit)
        # (a build for Windows by cmake with a compiler other than MSVC names it libunicorn.dll)
        built = next((build / n for n in (LIBRARY, "libunicorn.dll") if (build / n).is_file()), build / LIBRARY)
        if done.returncode != 0 or not built.is_file():
            raise BuildError(f"building the simulator's engine (Unicorn {VERSION} with its patches) for the "
                             f"host failed:\n{done.output.strip()[-4000:]}")
        staged = work / "engine"
        staged.mkdir()
        os.replace(built.resolve(), staged / LIBRARY)
        (staged / "manifest.json").write_text(json.dumps(
            {"key": _key(), "sha256": _hash(staged / LIBRARY), "version": VERSION,
             "patches": [p.name for p in patches()], "compiler": system or "zig cc"}))
        with writing(parent):
            if _intact(folder, _key()):  # (another process's build, whole, came first: it stays)
                return
            if folder.exists():  # (damaged)
                shutil.rmtree(folder, ignore_errors=True)
            try:
                os.replace(staged, folder)
            except OSError:  # (another process put its build there first: use it if it is whole)
                if not _intact(folder, _key()):
                    raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _compiler_wrappers(folder: Path) -> dict[str, Path]:
    """cmake takes a compiler as one program: scripts that run zig's cc, ar and ranlib."""
    zig = [str(toolchain.zig_folder() / ("zig.exe" if os.name == "nt" else "zig"))]
    out = {}
    for tool in ("cc", "ar", "ranlib"):
        if os.name == "nt":
            path = folder / f"zig-{tool}.cmd"
            path.write_text("@echo off\r\n" + " ".join(f'"{p}"' for p in zig) + f" {tool} %*\r\n")
        else:
            path = folder / f"zig-{tool}"
            path.write_text("#!/bin/sh\nexec " + " ".join(shlex.quote(p) for p in zig) + f" {tool} \"$@\"\n")
            path.chmod(0o755)
        out[tool] = path
    return out


if __name__ == "__main__":  # (setup.py's step: python -m sim.build.engine [--source-only])
    if sys.argv[1:] == ["--source-only"]:
        fetch(SOURCE_FOLDER)
    else:
        build_in_package()
