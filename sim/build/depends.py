"""What a compile read, and what would change what it reads: for the build cache's
manifests (sim.build.cache, sim.build.thread).

- The files it read: the compiler's make-style depfile (`-MD -MF`), its first rule only
  (`-MP` adds empty rules for each header). A depfile that names a file that is not there
  (a name the compiler wrote in its own way, a file gone since) cannot be trusted, and
  the compile is not kept under its key.
- The files that would *shadow* them: an `#include` is looked up in a list of folders (the
  including file's own, then `-iquote`, `-I`, `-isystem`... folders), and a file put
  earlier in that list with the same name is read instead, although no file the compile
  read has changed. So for each file it read, each folder of the list is asked whether it
  holds a file of that name; those that do not are recorded, and an entry is used only
  while they still do not. (Files under the compiler's own folders are left out: they
  come with the compiler, which is in the key.)

- The files it looked for and did not find: `#if __has_include("cfg.h")` reads no cfg.h
  when there is none, so no depfile names it, and yet creating one changes what the
  compile does. So each file it read (the compiler's own apart) is scanned for the names
  it probes (`__has_include`, `__has_include_next`, `__has_embed`, comments left out), and
  each place in the search where such a name is not there now is recorded with the
  rivals. A probe whose operand is a macro (`__has_include(CFG)`) names no file a scan can
  see: such a compile is used, never kept under its key. (Names are looked for in every
  folder of the search, whichever kind of probe: a few more paths to look at than clang
  would try, never fewer.)

Not seen: a file an assembler reads with `.incbin` (no depfile names it).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable, Sequence

INCLUDE_FLAGS = ("-iquote", "-isystem", "-idirafter", "-I")  # the folders of a search
INCLUDE_VARIABLES = ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH")


def read_depfile(depfile: Path) -> list[Path] | None:
    """The files the depfile's first rule names after its target, as absolute paths
    (relative ones are the compiler's working folder's, which is ours). [] when there is
    no depfile (plain assembly), None when a named file is not there."""
    try:
        text = depfile.read_text()
    except FileNotFoundError:
        return []
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    rule = next((line for line in text.splitlines() if line.strip()), "")
    words, word, escaped = [], "", False
    for char in rule.replace("$$", "$"):
        if escaped:
            word += char if char in " #\\" else "\\" + char
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in " \t":
            if word:
                words.append(word)
            word = ""
        else:
            word += char
    if word:
        words.append(word)
    for i, word in enumerate(words):  # the target ends with ':' ("object.o:"), or ':' stands alone
        if word.endswith(":"):
            words = words[i + 1 :]
            break
    paths = [Path(os.path.abspath(w)) for w in words]
    return paths if all(p.is_file() for p in paths) else None


def search_folders(flags: Sequence[str], runtime: Path) -> list[Path]:
    """The folders an #include may be looked up in, besides each including file's own:
    those the flags and the include variables name, and the runtime's."""
    folders = [runtime]
    words = list(flags)
    for i, word in enumerate(words):
        flag = next((f for f in INCLUDE_FLAGS if word.startswith(f)), None)
        if flag is None:
            continue
        value = word[len(flag) :] or (words[i + 1] if i + 1 < len(words) else "")
        if value:
            folders.append(Path(value))
    for variable in INCLUDE_VARIABLES:
        folders += [Path(p or ".") for p in os.environ.get(variable, "").split(os.pathsep) if os.environ.get(variable)]
    return [Path(os.path.abspath(f)) for f in folders]


def unseen_rivals(inputs: Iterable[Path], folders: Sequence[Path], own: Sequence[Path]) -> list[Path]:
    """The paths, not there now, where a file would shadow one of INPUTS: each INPUT's
    name (relative to each folder that holds it) in each folder of the search, FOLDERS and
    the inputs' own. Inputs under OWN (the compiler's folders) are left out."""
    inputs = [p for p in inputs if not any(_under(p, o) for o in own)]
    search = list(dict.fromkeys([*(p.parent for p in inputs), *folders]))
    rivals = set()
    for path in inputs:
        names = {path.relative_to(f) for f in search if _under(path, f)}
        for folder in search:
            for name in names:
                candidate = folder / name
                if candidate != path:
                    rivals.add(candidate)
    return sorted(p for p in rivals if not p.exists())


def _under(path: Path, folder: Path) -> bool:
    return path != folder and path.is_relative_to(folder)


# A comment (left out), or a string or character literal (kept: a probe's "name" is one).
_COMMENT_OR_LITERAL = re.compile(rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)
_PROBE = re.compile(rb'\b__has_(?:include|include_next|embed)\s*\(\s*(?:"([^"\n]*)"|<([^>\n]*)>)?')


def probed_names(paths: Iterable[Path]) -> set[str] | None:
    """The names the files PATHS probe for (`__has_include("name")`, `<name>`, `_next`,
    `__has_embed`); None when one probes a name that a macro makes."""
    names = set()
    for path in paths:
        try:
            text = path.read_bytes().replace(b"\\\n", b"").replace(b"\\\r\n", b"")
        except OSError:
            return None
        text = _COMMENT_OR_LITERAL.sub(lambda m: b" " if m[0][:1] == b"/" else m[0], text)
        for match in _PROBE.finditer(text):
            name = match[1] if match[1] is not None else match[2]
            if name is None:
                return None
            names.add(os.fsdecode(name))
    return names


def unseen_probes(names: Iterable[str], inputs: Iterable[Path], folders: Sequence[Path]) -> list[Path]:
    """The paths, not there now, where a file of one of NAMES (probed by INPUTS) would be
    found: NAME in each folder of the search, FOLDERS and the inputs' own."""
    search = list(dict.fromkeys([*(p.parent for p in inputs), *folders]))
    candidates = set()
    for name in names:
        if os.path.isabs(name):
            candidates.add(Path(name))
        else:
            candidates.update(folder / name for folder in search)
    return sorted(p for p in candidates if not p.exists())
