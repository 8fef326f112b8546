"""The card's C library comes built with the package (sim/build/libc.py): a first compile on
a fresh machine, from any folder, builds none of it; a stale or damaged one is refused with
what to do; the one shipped is the one the current recipe builds."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import komorebi as km
from komorebi.sim.build import libc
from komorebi.sim.isa import target
from tests.conftest import ROOT

LESSON = ROOT / "tutorial" / "35_sharing_memory"
EXPECTED = (
    "the thread went through 1024 numbers\n"
    "first five tripled: [0, 3, 6, 9, 12]\n"
    "last five tripled: [3057, 3060, 3063, 3066, 3069]\n"
)


def _fresh_environment(tmp_path: Path) -> dict[str, str]:
    """A new user's: an empty HOME, no build cache, no zig cache."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("KMX_CACHE_DIR", "ZIG_GLOBAL_CACHE_DIR", "XDG_CACHE_HOME", "KMX_PROGRESS")}
    return {**env, "HOME": str(home)}


def _zig_built_a_c_library(home: Path) -> list[Path]:
    """What zig's own cache holds of a C library: it builds one only when a link needs it."""
    return sorted(p for p in (home / ".cache" / "zig").rglob("*") if p.name in ("libc.a", "crt1.o", "rcrt1.o"))


def test_both_cpus_libraries_are_shipped_and_intact():
    for cpu in libc.CPUS.values():
        assert libc.problem(cpu) is None, libc.problem(cpu)
        before, after = libc.shipped(cpu)
        assert [p.name for p in before + after] == [*libc.BEFORE, *libc.AFTER]


def test_the_library_cpus_are_the_targets():
    """The X280's build is zig's CPU sifive_x280 (without the measured extensions, which a C
    library has no use for), and the default target, which has them, links it: adding them
    to the default built no third library."""
    assert target.LIBRARY_CPUS[0] == target.zig_cpu(target.X280_CPU) == "-mcpu=sifive_x280"
    assert target.library_cpu(target.X280) == target.library_cpu(target.X280_CPU) == libc.CPUS["x280"]
    assert target.library_cpu(target.target([])[0]) == libc.CPUS["x280"]
    assert target.library_cpu(target.target(["-march=rv64gc_zba_zbb_zfh"])[0]) == libc.CPUS["rv64gc"]


@pytest.mark.slow
def test_a_first_run_on_a_fresh_machine_builds_no_c_library(tmp_path):
    """The cold case CI runs: lesson 35 with an empty HOME and empty caches, from a folder
    of its own. zig builds nothing of the C library, and the first build (the hooks) says
    so on stderr."""
    env = _fresh_environment(tmp_path)
    folder = tmp_path / "lesson"
    shutil.copytree(LESSON, folder)
    done = subprocess.run([sys.executable, "program.py"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED
    assert _zig_built_a_c_library(Path(env["HOME"])) == []
    assert "komorebi-sim: building the simulator's native hooks" in done.stderr
    assert "komorebi-sim: built the simulator's hooks" in done.stderr


@pytest.mark.slow
def test_progress_lines_can_be_turned_off(tmp_path):
    env = {**_fresh_environment(tmp_path), "KMX_PROGRESS": "0"}
    script = "from komorebi.sim.native import hooks; hooks.library()"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_nothing_depends_on_the_working_folder(tmp_path):
    """New threads compiled from five folders: zig builds no C library from any of them,
    and the same thread compiled from another folder is found in the cache, not built."""
    env = _fresh_environment(tmp_path)
    env["KMX_CACHE_DIR"] = str(tmp_path / "kmx-cache")
    sources = tmp_path / "sources"
    sources.mkdir()
    script = textwrap.dedent(
        f"""
        import os, sys
        from pathlib import Path
        from komorebi.sim.build import thread
        where = sys.argv[1:]
        for n, folder in enumerate(where):
            os.chdir(folder)
            new = Path({str(sources)!r}) / f"new{{n}}.c"
            new.write_text('#include "kmx.h"\\nint kmx_main(int core) {{ return ' + str(n) + '; }}\\n')
            thread.build_thread([new])
            same = Path({str(sources)!r}) / "same.c"
            same.write_text('#include "kmx.h"\\nint kmx_main(int core) {{ return 7; }}\\n')
            before = thread.compiler_runs
            thread.build_thread([same])
            print(folder, thread.compiler_runs - before)
        """
    )
    venv_side = tmp_path / "beside"
    venv_side.mkdir()
    folders = ["/", "/tmp", str(ROOT), str(LESSON), str(venv_side)]
    done = subprocess.run([sys.executable, "-c", script, *folders], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    compiled = [int(line.rsplit(" ", 1)[1]) for line in done.stdout.splitlines()]
    assert compiled == [1, 0, 0, 0, 0], done.stdout  # (the same thread: built once, then found)
    assert _zig_built_a_c_library(Path(env["HOME"])) == []


@pytest.fixture
def copied_library(tmp_path, monkeypatch) -> Path:
    """A copy of the shipped library that the link uses instead, to damage."""
    copy = tmp_path / "libc"
    shutil.copytree(libc.folder(), copy)
    monkeypatch.setattr(libc, "folder", lambda: copy)
    monkeypatch.setenv("KMX_CACHE_DIR", str(tmp_path / "kmx-cache"))
    return copy


def _load_message(tmp_path: Path, kernels: Path) -> str:
    source = tmp_path / "thread.c"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) { return 0; }\n')
    program = km.Program("p", kernels=kernels)
    program.thread(cluster=0, sources=[source])
    with km.Session() as session, pytest.raises(km.CompileError) as raised:
        session.load(program)
    return str(raised.value)


def test_a_library_built_by_another_ziglang_is_refused(tmp_path, kernels, copied_library):
    manifest = copied_library / "x280" / libc.MANIFEST
    data = json.loads(manifest.read_text())
    data["ziglang"] = "0.1.0"
    manifest.write_text(json.dumps(data))
    message = _load_message(tmp_path, kernels)
    assert "the card's C library for -mcpu=sifive_x280 cannot be linked" in message
    assert f"built by ziglang 0.1.0, and ziglang {libc.ziglang_version()} is installed" in message
    assert "-m komorebi.sim.build.libc" in message


def test_a_damaged_or_missing_library_is_refused(tmp_path, kernels, copied_library):
    archive = copied_library / "x280" / "libc.a"
    archive.write_bytes(archive.read_bytes()[:1000])
    assert "SHA-256 differs" in _load_message(tmp_path, kernels)
    shutil.rmtree(copied_library / "x280")
    assert "does not exist" in _load_message(tmp_path, kernels)


def _shipped_manifest(cpu_folder: str = "x280") -> dict:
    return json.loads((libc.folder() / cpu_folder / libc.MANIFEST).read_text())


@pytest.mark.parametrize(
    "damage, said",
    [
        (b"{not json", r"is not JSON \(Expecting property name"),
        (b'{"ziglang": "0.17\xff"}', r"is not UTF-8 text \(byte 0xff at 17\)"),
        (b"[]", r"holds a JSON array, not an object"),
        (lambda m: {k: v for k, v in m.items() if k != "files"}, r"has no 'files'"),
        (lambda m: {k: v for k, v in m.items() if k != "recipe"}, r"has no 'recipe'"),
        (lambda m: {**m, "ziglang": 17}, r"'ziglang' is a JSON number, not a string"),
        (lambda m: {**m, "files": ["libc.a"]}, r"'files' is a JSON array, not an object"),
        (lambda m: {**m, "recipe": "musl"}, r"'recipe' is a JSON string, not an object"),
        (lambda m: {**m, "files": {**m["files"], "libc.a": 5}}, r"'files' gives libc.a a JSON number, not a SHA-256"),
    ],
    ids=["not-json", "not-utf8", "array", "no-files", "no-recipe", "ziglang-number", "files-array",
         "recipe-string", "hash-number"],
)
def test_a_damaged_manifest_is_refused_with_what_to_do(tmp_path, kernels, copied_library, damage, said):
    """A manifest that is not JSON, not UTF-8, or JSON of another shape gets the same
    CompileError as a damaged libc.a: it names the file and the command that builds the
    library again (never a raw AttributeError or UnicodeDecodeError)."""
    manifest = copied_library / "x280" / libc.MANIFEST
    manifest.write_bytes(damage if isinstance(damage, bytes) else json.dumps(damage(_shipped_manifest())).encode())
    message = _load_message(tmp_path, kernels)
    assert "the card's C library for -mcpu=sifive_x280 cannot be linked: " in message
    assert re.search(f"its manifest {re.escape(str(manifest))} is damaged: (it )?" + said, message), message
    assert "-m komorebi.sim.build.libc" in message
    assert libc.main(["--check", "--into", str(copied_library)]) == 1


def test_a_library_of_another_recipe_is_refused(copied_library):
    manifest = copied_library / "rv64gc" / libc.MANIFEST
    data = json.loads(manifest.read_text())
    data["recipe"]["flags"] = ["-O2"]
    manifest.write_text(json.dumps(data))
    assert "built by another recipe" in libc.problem(libc.CPUS["rv64gc"])
    with pytest.raises(libc.LibraryError, match="cannot be linked"):
        libc.shipped(libc.CPUS["rv64gc"])


def test_the_check_command_says_what_is_there(copied_library):
    assert libc.main(["--check", "--into", str(copied_library)]) == 0
    (copied_library / "rv64gc" / "libzigc.a").unlink()
    assert libc.main(["--check", "--into", str(copied_library)]) == 1


def _member_names(archive: bytes) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "ziglang", "ar", "t", "/dev/stdin"], input=archive,
                         capture_output=True, check=True)
    return out.stdout.decode().split()


def test_the_shipped_archives_name_no_build_folder():
    """zig names an archive's members by its cache folder (zig-cache/o/HASH/aio.o), a hash
    that differs from build to build; the shipped ones are named by file alone, and
    their symbol tables are the ones llvm's ranlib would write."""
    for name in ("libc.a", "libzigc.a"):
        archive = (libc.folder() / "x280" / name).read_bytes()
        names = _member_names(archive)
        assert names and not [n for n in names if "/" in n], names[:5]
        assert libc._canonical_archive(archive) == archive


def _zig_style_archive(members: list[tuple[str, bytes]], symbols: list[tuple[str, int]]) -> bytes:
    """A GNU archive as zig writes one: every member's name in the long names' member,
    a symbol table first (SYMBOLS: a name and the index of the member that defines it)."""
    def header(name: str, size: int) -> bytes:
        return f"{name:<16}{0:<12}{0:<6}{0:<6}{644:<8}{size:<10}`\n".encode()

    def pad(body: bytes) -> bytes:
        return body + b"\n" * (len(body) & 1)

    table = b"".join(name.encode() + b"/\n" for name, _ in members)
    names = b"".join(symbol.encode() + b"\0" for symbol, _ in symbols)
    index_size = 4 + 4 * len(symbols) + len(names)
    at = 8 + 60 + len(pad(b"x" * index_size)) + 60 + len(pad(table))
    places, offsets = [], []
    offset = 0
    for name, body in members:
        places.append(at)
        offsets.append(offset)
        offset += len(name) + 2
        at += 60 + len(pad(body))
    index = len(symbols).to_bytes(4, "big") + b"".join(places[i].to_bytes(4, "big") for _, i in symbols) + names
    out = [b"!<arch>\n", header("/", len(index)), pad(index), header("//", len(table)), pad(table)]
    for (name, body), offset in zip(members, offsets):
        out += [header(f"/{offset}", len(body)), pad(body)]
    return b"".join(out)


def test_an_archive_named_by_zigs_cache_becomes_the_same_bytes(tmp_path):
    """Two builds whose members differ only in zig's cache folders give one archive, the
    one llvm's ranlib writes (the symbol table's offsets follow the members)."""
    bodies = []
    for i, source in enumerate(["int first_function(void) { return 1; }",
                                "int a_function_with_a_long_name_here(void) { return 2; }"]):
        (tmp_path / f"s{i}.c").write_text(source + "\n")
        subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", "riscv64-linux-musl", "-c",
                        str(tmp_path / f"s{i}.c"), "-o", str(tmp_path / f"s{i}.o")], check=True)
        bodies.append((tmp_path / f"s{i}.o").read_bytes())
    stems = ["short.o", "a_member_name_longer_than_fifteen.o"]
    symbols = [("first_function", 0), ("a_function_with_a_long_name_here", 1)]
    built = [_zig_style_archive([(f"{folder}/{stem}", body) for stem, body in zip(stems, bodies)], symbols)
             for folder in ("zig-cache/o/0123456789abcdef", "zig-cache/o/fedcba98765432100123")]
    assert built[0] != built[1]
    assert _member_names(built[0])[0] == "zig-cache/o/0123456789abcdef/short.o"
    canonical = [libc._canonical_archive(a) for a in built]
    assert canonical[0] == canonical[1]
    assert _member_names(canonical[0]) == stems
    again = tmp_path / "ranlib.a"
    again.write_bytes(canonical[0])
    subprocess.run([sys.executable, "-m", "ziglang", "ranlib", str(again)], check=True)
    assert again.read_bytes() == canonical[0]


@pytest.mark.slow
def test_the_shipped_library_is_the_one_the_current_recipe_builds(tmp_path):
    """Built again, in another folder with another zig cache: the same bytes (no debug
    information, so no path of the machine that built it)."""
    cpu = libc.CPUS["x280"]
    place = libc.build(cpu, tmp_path)
    assert libc.problem(cpu, tmp_path) is None
    rebuilt = json.loads((place / libc.MANIFEST).read_text())
    shipped = json.loads((libc.folder() / "x280" / libc.MANIFEST).read_text())
    assert rebuilt == shipped


def test_a_compiler_that_cannot_start_prints_no_progress_line(tmp_path, monkeypatch, capfd):
    """The progress line starts with the compiler: a missing one is an error, and no
    'still compiling' comes after it."""
    from komorebi.sim.build import toolchain

    monkeypatch.setenv("KMX_PROGRESS", "1")
    monkeypatch.setattr(toolchain, "PROGRESS_AFTER", 0.0)
    with pytest.raises(FileNotFoundError):
        toolchain.run([str(tmp_path / "no-such-compiler")], what="thread.c")
    import threading

    assert [t for t in threading.enumerate() if isinstance(t, threading.Timer)] == []
    assert "still compiling" not in capfd.readouterr().err
