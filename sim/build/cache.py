"""The build cache: where compiled things are kept, and when a kept one may be used.

Threads' objects and ELFs (sim.build.thread) and the simulator's own hooks built for the
host (sim.native.hooks) live in `KMX_CACHE_DIR`, or ~/.cache/komorebi-sim (under XDG_CACHE_HOME
when that is set).

An entry is a folder named by a key, a hash of what the build was asked to do. Its
manifest keeps a SHA-256 of every output it holds and of every file the build read (for
a compile, each file the compiler's depfile names: headers anywhere, `.inl` and `.def`
files, an included `.c`), and the paths where a file would change the build if one
appeared (sim.build.depends: a header that would shadow one it read, a name it probed
with `__has_include` and did not find). An entry is used only while every output is
intact, every input is as it was and none of those paths holds a file: an edited header, a truncated ELF or a library cut short is built
again, never run. Outputs are named by their own hash, so a process that reads an entry
while another replaces it sees one build or the other, whole.

A cache that can be read but not written still serves what it holds; a build that must
write raises BuildError, which names the folder and the variable to set.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Iterable, Iterator

MANIFEST = "manifest.json"
FORMAT = 1  # the manifest's layout; an entry of another layout is built again


class BuildError(Exception):
    """A build could not be carried out for a reason outside the code being built: the
    cache folder, the compiler's own folders, a time limit. The message says what to do."""


def cache_dir() -> Path:
    """The cache's folder (not created here: a read-only cache still serves)."""
    configured = os.environ.get("KMX_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "komorebi-sim"
    home = home_folder()
    if home is None:
        raise BuildError(
            "the build cache has no folder: HOME is not set and the user has no home "
            "directory in the password database. Set KMX_CACHE_DIR to a folder you can "
            "write (for example KMX_CACHE_DIR=/tmp/komorebi-cache)"
        )
    return home / ".cache" / "komorebi-sim"


def home_folder() -> Path | None:
    """The user's home folder, or None when there is none to be found."""
    try:
        home = Path.home()
    except (KeyError, RuntimeError):  # no HOME and no password entry
        return None
    return home if str(home) not in ("", "~") else None


def _variable() -> str:
    """The variable that names the cache's folder now."""
    if os.environ.get("KMX_CACHE_DIR"):
        return "KMX_CACHE_DIR"
    return "XDG_CACHE_HOME" if os.environ.get("XDG_CACHE_HOME") else "HOME"


@contextlib.contextmanager
def writing(folder: Path) -> Iterator[None]:
    """Turn a failure to write under the cache FOLDER into a BuildError that names it."""
    try:
        yield
    except BuildError:
        raise
    except OSError as error:
        top = cache_dir()
        why = error.strerror or str(error)
        if isinstance(error, (NotADirectoryError, FileExistsError)):
            why = "a file is in the way where a folder must be"
        variable = _variable()
        raise BuildError(
            f"the build cache {str(top)!r} cannot be written ({why}: "
            f"{error.filename or folder}). Set KMX_CACHE_DIR to a folder you can write"
            + ("" if variable == "KMX_CACHE_DIR" else f" (the folder comes from {variable} now)")
        ) from None


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def key_of(parts: Iterable[str | bytes]) -> str:
    """A key from PARTS, each kept apart from the next."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()[:32]


def input_hashes(paths: Iterable[Path], started_ns: int) -> dict[Path, str] | None:
    """A hash of each of PATHS, the files a build that started at STARTED_NS (time.time_ns)
    read; None when one is gone, or was changed since the build started: the build may
    have read it before the change, so what it made must not be kept as made from it."""
    hashes = {}
    for path in set(paths):
        try:
            before = os.stat(path).st_mtime_ns
            hashes[path] = file_hash(path)
            if max(before, os.stat(path).st_mtime_ns) >= started_ns:
                return None
        except OSError:
            return None
    return hashes


def lookup(kind: str, key: str) -> tuple[dict[str, Path], dict] | None:
    """The outputs (name -> path) and the manifest of entry KEY of KIND, when it can be
    used: every output intact, every input unchanged, and no file there where one would
    shadow an input or answer a probe (sim.build.depends). None: build it."""
    try:
        folder = cache_dir() / kind / key
        manifest = json.loads((folder / MANIFEST).read_text())
        if manifest.get("format") != FORMAT:
            return None
        for path, digest in manifest["inputs"]:
            if file_hash(Path(path)) != digest:
                return None
        if any(os.path.lexists(path) for path in manifest.get("absent", ())):
            return None
        outputs = {}
        for name, (file, digest) in manifest["outputs"].items():
            output = folder / file
            if file_hash(output) != digest:
                return None
            outputs[name] = output
    except (OSError, ValueError, KeyError, TypeError):  # missing, unreadable or damaged
        return None
    return outputs, manifest


def store(
    kind: str,
    key: str,
    outputs: dict[str, Path],
    inputs: dict[Path, str],
    absent: Iterable[Path] = (),
    elsewhere: dict[str, tuple[Path, str]] | None = None,
    **extra,
) -> dict[str, Path]:
    """Keep OUTPUTS (name -> a file, moved in) as entry KEY of KIND, to be used while the
    files INPUTS still have their hashes (`input_hashes`) and no file is at any of ABSENT.
    ELSEWHERE names outputs kept in other entries (name -> their path and hash). EXTRA
    goes into the manifest. Returns the kept outputs' paths."""
    folder = cache_dir() / kind / key
    with writing(folder):
        folder.mkdir(parents=True, exist_ok=True)
        kept, recorded = {}, {}
        for name, path in outputs.items():
            digest = file_hash(path)
            file = f"{name}-{digest[:16]}{path.suffix}"
            os.replace(path, folder / file)  # the same bytes under the same name: harmless
            kept[name] = folder / file
            recorded[name] = [file, digest]
        for name, (path, digest) in (elsewhere or {}).items():
            kept[name] = path
            recorded[name] = [str(path), digest]  # (absolute: the folder / it is itself)
        _prune(folder, keep=set(kept.values()))
        manifest = {
            "format": FORMAT,
            "outputs": recorded,
            "inputs": sorted([str(p), digest] for p, digest in inputs.items()),
            "absent": sorted(map(str, absent)),
            **extra,
        }
        import tempfile  # (only a build needs it: not imported for a hit)

        with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False) as f:
            json.dump(manifest, f)
        os.replace(f.name, folder / MANIFEST)
    return kept


def keep_unindexed(kind: str, path: Path) -> Path:
    """Keep the file PATH under its own hash only, in no entry: a build's output that
    must not be found again by its key (`input_hashes` said None), but that this build
    goes on using (a thread's object, until it is linked)."""
    folder = cache_dir() / kind / "unindexed"
    with writing(folder):
        folder.mkdir(parents=True, exist_ok=True)
        kept = folder / f"{file_hash(path)[:32]}{path.suffix}"
        os.replace(path, kept)
        _prune(folder, keep={kept})
    return kept


LEFTOVER_SECONDS = 24 * 3600  # a build folder or an output this old, no manifest naming it, goes


def _prune(folder: Path, keep: set[Path]) -> None:
    """Remove the outputs of FOLDER's earlier builds, once old enough that no other
    process can still be using them."""
    now = time.time()
    for path in folder.iterdir():
        if path in keep or path.name == MANIFEST or path.suffix == ".tmp":
            continue
        try:
            if now - path.stat().st_mtime > LEFTOVER_SECONDS:
                path.unlink()
        except OSError:
            pass


@contextlib.contextmanager
def scratch(kind: str) -> Iterator[Path]:
    """A new empty folder in the cache for a build's files, removed afterwards (on the
    same file system as the entries, so that outputs move in without a copy). Folders
    left by builds that were killed are removed once they are old."""
    import shutil
    import tempfile

    parent = cache_dir() / kind
    with writing(parent):
        parent.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(dir=parent, prefix="build-"))
    for old in parent.glob("build-*"):
        try:
            if old != folder and time.time() - old.stat().st_mtime > LEFTOVER_SECONDS:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            pass
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
