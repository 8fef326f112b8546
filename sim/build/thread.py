"""Compiling a thread: the compiler driver over the build cache (sim.build.cache).

The default compiler is the `ziglang` package's clang (`python -m ziglang cc`), for the
X280 itself, vector unit and all (sim.isa.target:
`-mcpu=sifive_x280+zvfbfmin+xsfvfnrclipxfqf`). `KMX_CC` names another command that takes
clang's or gcc's flags; `KMX_CFLAGS` adds flags (for example `-O0`) to the compile of each
of the thread's own files and to the link; the runtime's files get only its target
(-march, -mcpu, -mabi). The ELF keeps its debug info, so faults and findings can name
source lines.

A thread is built as a C toolchain builds a program: each source (the runtime's and the
thread's) compiled to an object, then the objects linked. Each step is an entry of the
build cache:

- an object's key is the compiler, its flags and the source (path and bytes); its
  manifest holds every file the compile read, from the compiler's depfile (`-MD -MF`),
  the paths where a new file would change the compile (sim.build.depends: a shadowing
  header, a name probed with `__has_include`), and the compiler's messages;
- an ELF's key is the compiler, the link flags, the linker script and the objects.

So an unchanged thread is never compiled twice, an edit to any file a compile read
(wherever it is) compiles that source again, and the compiler's warnings are shown at
every load that uses the build.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ... import kmx_runtime
from ..isa import target
from . import cache as build_cache
from . import depends, libc, toolchain
from .cache import BuildError


class CompileFailed(BuildError):
    """The compiler refused the thread's code: `messages` are its own, with file:line,
    `command` the command that ran."""

    def __init__(self, messages: str, *, command: Sequence[str] = ()) -> None:
        super().__init__(messages)
        self.messages = messages
        self.command = list(command)

RUNTIME = Path(kmx_runtime.__file__).resolve().parent
# The runtime a thread links: the start code, the C library's start on each core and what
# C++ needs beyond it (with the default compiler, whose C library it is: musl,
# sim.kmx.linux), or the little a freestanding build needs (KMX_CC); and kmx_print.
RUNTIME_SOURCES = ("start.S", "process.c", "cxx.c", "print.c")
FREESTANDING_RUNTIME_SOURCES = ("start.S", "freestanding.c", "print.c")
LINKER_SCRIPT = RUNTIME / "kmx.ld"

# zig's clang builds for Linux with musl, and links musl, the thread's C library, built
# for the card when the package was built (sim.build.libc). Static: no dynamic linker.
ZIG_TARGET = ["-target", "riscv64-linux-musl"]  # and the -mcpu of sim.isa.target
COMPILE_FLAGS = [
    "-O2",
    "-g",
    "-UNDEBUG",  # zig's cc defines NDEBUG when it optimises; C's assert is on unless the user says
    # The warnings a C programmer expects (tt-metal's own RISC-V builds use -Wall too);
    # KMX_CFLAGS come after, so -Wno-... or -w there turns them off, -Werror makes them errors.
    "-Wall",
    "-mcmodel=medany",
    "-fPIE",
    "-fno-omit-frame-pointer",
    "-fno-optimize-sibling-calls",  # every caller keeps its frame: whole backtraces
    "-fno-asynchronous-unwind-tables",
    "-fno-unwind-tables",
    "-fno-sanitize=all",
]
# A frame bigger than a page is probed a page at a time as it is made, so that a stack
# overflow meets the guard below the stack, whatever the frame's size (sim.layout). clang's
# driver takes -fstack-clash-protection only for Linux targets; its front end takes it for
# any RISC-V target (LLVM 20 and later). Shrink-wrapping is off: LLVM 22's RISC-V probe
# uses t1 and t2 as scratch, and a prologue that shrink-wrap moves past code holding live
# values in them clobbers them (llvm/llvm-project#198699).
ZIG_PROBES = ["-Xclang", "-fstack-clash-protection", "-mllvm", "-enable-shrink-wrap=false"]
# C++ sources: no exceptions and no RTTI, whose runtime (libc++abi) a thread does not link
# (kmx_runtime/cxx.c has what the rest of C++ needs). A user's flags come after these.
CXX_SUFFIXES = (".cpp", ".cc", ".cxx", ".C")
CXX_FLAGS = ["-fno-exceptions", "-fno-rtti"]
LINK_FLAGS = [
    "-g",  # keep the symbols and the DWARF (zig strips them at -Os without it)
    "-fPIE",
    "-Wl,--gc-sections",  # (the C library's unused functions go; kmx.ld starts the code a page in)
    "-Wl,--no-dynamic-linker",
    "-Wl,-z,norelro",
]

# The flags of KMX_CFLAGS that choose the target, which the runtime's files get too.
TARGET_FLAGS = ("-march=", "-mcpu=", "-mabi=", "--target=")
OPTIMISATION = re.compile(r"-O(\d|s|z|g|fast)?")

compiler_runs = 0  # how many builds this process compiled (the tests look)


@dataclass(frozen=True)
class Toolchain:
    command: tuple[str, ...]  # the compiler and the target flags it needs
    identity: str  # what stands for its version in the keys
    custom: bool  # KMX_CC
    own_folders: tuple[Path, ...] = ()  # the compiler's own headers are under these

    def owns(self, path: Path) -> bool:
        """PATH is one of the compiler's own files (its headers)."""
        return any(path.is_relative_to(folder) for folder in self.own_folders)

    @property
    def clang_like(self) -> bool:
        return not self.custom or "clang" in Path(self.command[0]).name

    def compile_flags(self) -> list[str]:
        """The flags of the user's files: the driver's, then all of KMX_CFLAGS."""
        return [*self._driver_flags(), *self.target_flags()]

    def runtime_compile_flags(self) -> list[str]:
        """The flags of the runtime's own files: the driver's, and of KMX_CFLAGS only the
        target (-march, -mcpu, -mabi: the runtime runs on the same core and links with the
        user's objects). The rest is for the user's files: -std=c11 hides what musl's
        internal headers need, and -Wextra or -Werror would judge code the user cannot
        change (issue 38)."""
        # (-fmacro-prefix-map: the runtime's __FILE__ names kmx_runtime/, not the folder the
        # package is installed in, so that where it is installed does not change the image)
        return [*self._driver_flags(), *(f for f in self.target_flags() if f.startswith(TARGET_FLAGS)),
                f"-fmacro-prefix-map={RUNTIME}=kmx_runtime"]

    def _driver_flags(self) -> list[str]:
        return [*COMPILE_FLAGS, *(["-ffreestanding"] if self.custom else ZIG_PROBES)]

    def link_flags(self) -> list[str]:
        # KMX_CFLAGS go to the link too (a -mcpu or -march picks the libraries); clang
        # would warn of the ones only a compile uses.
        quiet = ["-Qunused-arguments"] if self.clang_like else []
        if self.custom:
            return [*LINK_FLAGS, "-nostdlib", "-T", str(LINKER_SCRIPT), *quiet, *self.target_flags()]
        # (the shipped C library is linked by name, so zig builds none: -nostdlib. The
        # user's -O goes to the compiles only, as zig would build the library at the link's
        # level)
        flags = [flag for flag in self.target_flags(library=True) if not OPTIMISATION.fullmatch(flag)]
        return [*LINK_FLAGS, "-static", "-nostdlib", "-T", str(LINKER_SCRIPT), *quiet, *flags]

    def library_cpu(self) -> str | None:
        """The -mcpu of the shipped C library the thread links (None: KMX_CC's own)."""
        if self.custom:
            return None
        extensions, _ = target.target(_user_flags())
        return target.library_cpu(extensions)

    def library_identity(self) -> bytes | str:
        """What stands for the linked C library in the keys: its manifest (every file's hash)."""
        cpu = self.library_cpu()
        if cpu is None:
            return ""
        try:
            # (bytes: a damaged manifest is the link's to refuse, in words: libc.problem)
            return (libc.folder() / libc.name_of(cpu) / libc.MANIFEST).read_bytes()
        except OSError:
            return "absent"  # (the link says why: libc.shipped)

    @property
    def runtime_sources(self) -> list[Path]:
        names = FREESTANDING_RUNTIME_SOURCES if self.custom else RUNTIME_SOURCES
        return [RUNTIME / name for name in names]

    def is_runtime(self, source: Path) -> bool:
        return source in self.runtime_sources

    def flags_for(self, source: Path) -> list[str]:
        """The compile flags of SOURCE: the runtime's files get the runtime's, process.c
        as a part of musl is compiled, with its internal headers."""
        if source == RUNTIME / "process.c":
            # (no stack protector: core 0's start sets the canary, as musl's own start does)
            flags = [*musl_internal_flags(), *self.runtime_compile_flags(), "-fno-stack-protector"]
            if self.library_has_vectors():
                flags.append("-DKMX_LIBRARY_VECTORS=1")  # (its start ran vector code)
            return flags
        if self.is_runtime(source):
            return self.runtime_compile_flags()
        if source.suffix in CXX_SUFFIXES:
            return [*CXX_FLAGS, *self.compile_flags()]
        return self.compile_flags()

    def library_has_vectors(self) -> bool:
        """The C library linked is the X280's own build, vector code and all."""
        return self.library_cpu() == target.LIBRARY_CPUS[0]

    def target_flags(self, library: bool = False) -> list[str]:
        """KMX_CFLAGS, with the target the simulated X280 runs (sim.isa.target): for zig's
        clang an -mcpu (which it takes in place of gcc's -march), the default one when they
        name none; a custom compiler (KMX_CC) gets its -march or -mcpu as given, checked.
        Raises CompileFailed for a target the simulator does not run."""
        flags = _user_flags()
        try:
            extensions, rest = target.target(flags)
        except target.TargetError as error:
            raise CompileFailed(str(error)) from None
        if self.custom:
            return flags
        # (LIBRARY: the link's, whose -mcpu picks the build of the C library it links)
        return [target.library_cpu(extensions) if library else target.zig_cpu(extensions), *rest]


def musl_internal_flags() -> list[str]:
    """The include folders musl's own sources are compiled with, in the ziglang package
    (the order of musl's Makefile)."""
    musl = toolchain.zig_folder() / "lib" / "libc" / "musl"
    folders = [musl / "src" / "include", musl / "src" / "internal", musl / "arch" / "riscv64", musl / "arch" / "generic"]
    return [flag for folder in folders for flag in ("-I", str(folder))]


def _user_flags() -> list[str]:
    return shlex.split(os.environ.get("KMX_CFLAGS", ""))


def toolchain_in_use() -> Toolchain:
    custom = os.environ.get("KMX_CC")
    if not custom:
        return Toolchain(
            (*toolchain.zig(), "cc", *ZIG_TARGET), toolchain.zig_identity(), False, (toolchain.zig_folder(),)
        )
    command = tuple(shlex.split(custom))
    # A custom compiler: its resolved path, size and time stand for its version.
    from shutil import which

    found = which(command[0]) or command[0]
    try:
        stat = os.stat(found)
        identity = f"{found} {stat.st_size} {stat.st_mtime_ns}"
    except OSError:
        identity = found
    return Toolchain(command, identity, True)


@dataclass(frozen=True)
class Built:
    """A thread's linked ELF, and what the compiler said about it (its warnings, given
    again at every use of the build; empty when it said nothing)."""

    elf: Path
    messages: str

    @property
    def warned(self) -> bool:
        return "warning:" in self.messages


def build_thread(sources: Sequence[Path]) -> Built:
    """The linked ELF of a thread made of SOURCES: from the cache, or built now. Raises
    CompileFailed with the compiler's own messages, or BuildError with what to do when the
    build could not run."""
    global compiler_runs
    tools = toolchain_in_use()
    every = tools.runtime_sources + [Path(s).resolve() for s in sources]
    # The whole thread first: one entry that names every file of every compile (made from
    # the objects' entries), so that a hit reads one manifest, not one a source.
    key = build_cache.key_of(
        ["thread", tools.identity, *tools.command, "--", *tools.compile_flags(), "--", *tools.link_flags(),
         tools.library_identity(), *_context(), LINKER_SCRIPT.read_bytes(),
         *(part for f in every for part in (str(f), f.read_bytes(), *tools.flags_for(f)))]
    )
    found = build_cache.lookup("programs", key)
    if found is not None:
        elf, said = found[0]["thread"], found[1].get("messages", "")
    else:
        compiled_before = _compiles
        objects = [_object(tools, source) for source in every]
        try:
            elf, link_messages = _link(tools, [built.path for built in objects])
        except CompileFailed as failed:
            said = _no_kmx_main(sources, [built.path for built in objects[len(tools.runtime_sources):]], failed.messages)
            if said is None:
                raise
            raise CompileFailed(said, command=failed.command) from None
        if _compiles != compiled_before:
            compiler_runs += 1
        said = "\n".join(m for m in [*(built.messages for built in objects), link_messages] if m)
        if all(built.inputs is not None for built in objects):
            inputs = {Path(p): d for built in objects for p, d in built.inputs.items()}
            absent = [Path(p) for built in objects for p in built.absent]
            build_cache.store("programs", key, {}, inputs, absent, elsewhere={"thread": (elf, build_cache.file_hash(elf))},
                              messages=said)
    return Built(elf, said)


_compiles = 0  # compiler processes this process ran


def _no_kmx_main(sources: Sequence[Path], objects: list[Path], messages: str) -> str | None:
    """The linker's MESSAGES said in the thread's words when no file of SOURCES (compiled
    to OBJECTS) defines kmx_main: with the functions they define whose names are near, and
    the linker's complaints of any other symbol after it. None when kmx_main is not what
    is missing."""
    import difflib

    from elftools.elf.elffile import ELFFile

    if not re.search(r"undefined symbol: kmx_main$", messages, re.M):
        return None
    defined = set()
    for path in objects:
        with open(path, "rb") as f:
            table = ELFFile(f).get_section_by_name(".symtab")
            for symbol in table.iter_symbols() if table is not None else ():
                if (symbol["st_info"]["type"] == "STT_FUNC" and symbol["st_shndx"] != "SHN_UNDEF"
                        and symbol["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK")):
                    defined.add(symbol.name)
    if "kmx_main" in defined:
        return None
    near = difflib.get_close_matches("kmx_main", sorted(defined), n=3, cutoff=0.6)
    if "main" in defined and "main" not in near:
        near.append("main")
    files = ", ".join(Path(s).name for s in sources)
    message = (f"the thread has no kmx_main: no file of it ({files}) defines `int kmx_main(int core)`, "
               "the function each of its cores runs")
    if near:
        message += f". It defines {', '.join(near)}: {'is one of them' if len(near) > 1 else 'is it'} kmx_main misspelled?"
        if "main" in near:
            message += " (A thread's entry point is kmx_main, not main.)"
    # (the linker's other complaints, each an error of its own: "ld.lld: error: ..." and what follows it)
    others = [part for part in re.split(r"(?m)^(?=ld\.lld: error: )", messages)
              if part.strip() and not re.match(r"ld\.lld: error: undefined symbol: kmx_main\n", part)
              and "too many errors" not in part]
    if others:
        message += "\nThe linker also said:\n" + "".join(others).rstrip()
    return message


@dataclass(frozen=True)
class _Built:
    """An object: its file, the compiler's messages, and what it was made from (None:
    not known for sure, so it was kept unindexed)."""

    path: Path
    messages: str
    inputs: dict[str, str] | None
    absent: tuple[str, ...] = ()


def _object(tools: Toolchain, source: Path) -> _Built:
    """SOURCE compiled to an object."""
    global _compiles
    flags = tools.flags_for(source)
    key = build_cache.key_of(
        ["object", tools.identity, *tools.command, "--", *flags, *_context(tools.is_runtime(source)), str(source),
         source.read_bytes()]
    )
    found = build_cache.lookup("objects", key)
    if found is not None:
        manifest = found[1]
        return _Built(found[0]["object"], manifest.get("messages", ""), dict(manifest["inputs"]), tuple(manifest["absent"]))
    with build_cache.scratch("objects") as folder:
        output, depfile = folder / "object.o", folder / "object.d"
        argv = [*tools.command, *flags, "-I", str(RUNTIME), "-c", str(source), "-o", str(output),
                "-MD", "-MF", str(depfile)]
        _compiles += 1
        started = time.time_ns()
        done = _run(argv, source.name)
        messages = done.output.strip()
        if done.returncode != 0 or not output.exists():
            raise CompileFailed(toolchain.zig_cache_problem(messages) or messages, command=argv)
        read = depends.read_depfile(depfile)
        # The compiler's own headers come with it, and it is in the key.
        mine = None if read is None else {p for p in {source, *read} if not tools.owns(p)}
        hashes = None if mine is None else build_cache.input_hashes(mine, started)
        probed = None if hashes is None else depends.probed_names(hashes)
        if probed is None:  # what it read, or looked for, is not known for sure: used now, never found again
            return _Built(build_cache.keep_unindexed("objects", output), messages, None)
        folders = depends.search_folders(argv, RUNTIME)
        absent = sorted({*depends.unseen_rivals(hashes, folders, tools.own_folders),
                         *depends.unseen_probes(probed, hashes, folders)})
        kept = build_cache.store("objects", key, {"object": output}, hashes, absent, messages=messages)
    return _Built(kept["object"], messages, {str(p): d for p, d in hashes.items()}, tuple(map(str, absent)))


def _context(runtime: bool = False) -> list[str]:
    """What else decides which files a compile reads: the include variables, and the
    working folder that relative paths in them and in KMX_CFLAGS are taken from (for a
    user's file: a RUNTIME file gets only KMX_CFLAGS' target, which names no file)."""
    variables = [f"{name}={os.environ.get(name, '')}" for name in depends.INCLUDE_VARIABLES]
    relative = (not runtime and bool(_user_flags())) or any(os.environ.get(name) for name in depends.INCLUDE_VARIABLES)
    return [*variables, os.getcwd() if relative else ""]


def _link(tools: Toolchain, objects: list[Path]) -> tuple[Path, str]:
    """OBJECTS linked into a thread's ELF: (its path, the linker's messages)."""
    global _compiles
    flags = tools.link_flags()
    key = build_cache.key_of(
        # (an object's file is named by its own hash, checked when it was found)
        ["elf", tools.identity, *tools.command, "--", *flags, tools.library_identity(), LINKER_SCRIPT.read_bytes(),
         *(o.name for o in objects)]
    )
    found = build_cache.lookup("threads", key)
    if found is not None:
        return found[0]["thread"], found[1].get("messages", "")
    with build_cache.scratch("threads") as folder:
        output = folder / "thread.elf"
        before, after = _library(tools)
        argv = [*tools.command, *flags, *map(str, [*before, *objects, *after]), "-o", str(output)]
        _compiles += 1
        done = _run(argv, "the thread", kind="link")
        messages = done.output.strip()
        if done.returncode != 0 or not output.exists():
            raise CompileFailed(toolchain.zig_cache_problem(messages) or messages, command=argv)
        kept = build_cache.store("threads", key, {"thread": output}, {}, messages=messages)
    return kept["thread"], messages


def _library(tools: Toolchain) -> tuple[list[Path], list[Path]]:
    """The C library's files, linked before the objects and after them (none for KMX_CC)."""
    cpu = tools.library_cpu()
    if cpu is None:
        return [], []
    try:
        return libc.shipped(cpu)
    except libc.LibraryError as error:
        raise BuildError(str(error)) from None


def _run(argv: list[str], what: str, kind: str = "compile") -> toolchain.Done:
    try:
        return toolchain.run(argv, what=what, kind=kind)
    except FileNotFoundError:
        raise CompileFailed(
            f"the compiler {argv[0]!r} was not found (KMX_CC={os.environ.get('KMX_CC')!r})",
            command=argv,
        ) from None


# -- for the user's editor -----------------------------------------------------------------


def system_include_folders() -> list[Path]:
    """The folders zig's clang searches for <...> when it builds a thread: clang's own
    headers (riscv_vector.h, stddef.h), then musl's for riscv64."""
    lib = toolchain.zig_folder() / "lib"
    libc = lib / "libc" / "include"
    return [lib / "include", libc / "riscv64-linux-musl", libc / "generic-musl", libc / "riscv-linux-any",
            libc / "any-linux-any"]


def compile_commands(sources: Sequence[Path]) -> list[dict]:
    """compile_commands.json's entries for SOURCES (a thread's own files): the command
    each is compiled with, runnable as it is, with the compiler's system folders named
    (-isystem) so that clangd, which does not run the compiler, finds the C library's
    headers. The default compiler is named by a two-line script in the build cache
    (`kmx-clang`, `python -m ziglang cc`): clangd reads a command whose first word is a
    clang driver."""
    tools = toolchain_in_use()
    driver = list(tools.command) if tools.custom else [str(_driver_script()), *tools.command[len(toolchain.zig()) + 1:]]
    system = [] if tools.custom else [flag for folder in system_include_folders() for flag in ("-isystem", str(folder))]
    entries = []
    for source in sources:
        source = Path(source).resolve()
        arguments = [*driver, *tools.flags_for(source), *system, "-I", str(RUNTIME), "-c", str(source),
                     "-o", os.devnull]
        # (the folder the build runs in: relative paths in KMX_CFLAGS are taken from it)
        entries.append({"directory": os.getcwd(), "file": str(source), "arguments": arguments})
    return entries


def _driver_script() -> Path:
    """The build cache's `kmx-clang`: the ziglang package's clang, under a name editors
    take for a clang driver."""
    import sys

    folder = build_cache.cache_dir() / "bin"
    if os.name == "nt":
        script, text = folder / "kmx-clang.cmd", f'@"{sys.executable}" -m ziglang cc %*\r\n'
    else:
        script, text = folder / "kmx-clang", f'#!/bin/sh\nexec "{sys.executable}" -m ziglang cc "$@"\n'
    if not script.exists() or script.read_text() != text:
        folder.mkdir(parents=True, exist_ok=True)
        script.write_text(text)
        script.chmod(0o755)
    return script
