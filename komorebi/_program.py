"""A program: its name, its Tensix kernels, and its X280 threads."""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import re
import warnings
from os import PathLike
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from komorebi._errors import NotSimulatedWarning
from komorebi._records import ThreadSpec
from komorebi._limits import CLUSTERS, CORES_PER_CLUSTER, DEFAULT_HEAP_BYTES, MAX_AGENTS, MAX_REGIONS, MAX_WORDS, PAGE

KERNEL_SUFFIXES = (".cpp", ".cc", ".c", ".cxx")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_EMPTY_KERNEL = re.compile(r"^(?:\s*#[^\n]*\n)*\s*(?:void\s+kernel_main\s*\(\s*(?:void)?\s*\)\s*\{\s*\}\s*)?$")


def _path(value: Any, parameter: str) -> Path:
    if not isinstance(value, (str, PathLike)):
        raise TypeError(f"{parameter} must be a path (str or pathlib.Path), not {type(value).__name__}")
    return Path(value)


def _int(value: Any, parameter: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{parameter} must be an int, not {type(value).__name__}")
    return int(value)


class Program:
    """A komorebi program: Tensix kernels and X280 threads.

    >>> program = km.Program("sharing_memory", kernels=HERE / "kernels")
    >>> program.thread(cluster=1, sources=[HERE / "thread" / "triple.c"],
    ...                regions={"numbers": numbers, "tripled": 4096})
    """

    def __init__(self, name: str, *, kernels: str | PathLike) -> None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        if not name:
            raise ValueError("name must not be empty")
        folder = _path(kernels, "kernels")
        if folder.exists() and not folder.is_dir():
            raise FileNotFoundError(
                f"kernels: {str(folder)!r} is a file, not a folder; kernels names the folder of "
                "the program's Tensix kernels"
            )
        if not folder.is_dir():
            raise FileNotFoundError(f"kernels: the folder {str(folder)!r} does not exist")
        self.name = name
        self.kernels = folder
        self.threads: dict[int, ThreadSpec] = {}
        for kernel in sorted(folder.iterdir()):
            # (a folder or a pipe named like a kernel is not one: is_file is False for both)
            if kernel.suffix in KERNEL_SUFFIXES and kernel.is_file() and not _is_empty_kernel(kernel):
                warnings.warn(
                    f"kernel {kernel.name} is not simulated: the simulator runs no Tensix code",
                    NotSimulatedWarning,
                    stacklevel=2,
                )

    def thread(
        self,
        *,
        cluster: int,
        sources: Sequence[str | PathLike],
        regions: Mapping[str, np.ndarray | int] | None = None,
        words: Sequence[int] = (),
        cores: int = 1,
        heap: int = DEFAULT_HEAP_BYTES,
    ) -> None:
        """Add an X280 thread on CLUSTER (0..3) built from SOURCES (C and assembly files).

        REGIONS maps a name to a byte count (a zeroed region) or a numpy array (its bytes,
        copied now: the caller's array is never changed); region IDs follow the mapping's
        order. WORDS are the argument words (at most 64, each 0 <= w < 2**32). CORES is how
        many of the cluster's cores run kmx_main. HEAP is the size in bytes of the heap the
        thread's malloc takes from (64 MiB by default; rounded up to whole 4 KiB pages), one
        for all its cores; when it is used up, malloc returns NULL.
        """
        cluster = _int(cluster, "cluster")
        if not 0 <= cluster < CLUSTERS:
            raise ValueError(f"cluster must be 0 to {CLUSTERS - 1}, not {cluster}")
        if cluster in self.threads:
            raise ValueError(f"cluster {cluster} already has a thread in program {self.name!r}; one thread per cluster")
        heap = _int(heap, "heap")
        if heap < PAGE:
            raise ValueError(
                f"heap must be a byte count of at least {PAGE} (one page: the C library's start "
                f"may map one), not {heap}"
            )
        heap = -(-heap // PAGE) * PAGE
        cores = _int(cores, "cores")
        if not 1 <= cores <= CORES_PER_CLUSTER:
            raise ValueError(f"cores must be 1 to {CORES_PER_CLUSTER}, not {cores}")
        if isinstance(sources, (str, PathLike)) or not isinstance(sources, Sequence):
            raise TypeError("sources must be a list of paths to C or assembly files")
        if not sources:
            raise ValueError("sources must name at least one C or assembly file")
        checked_sources = []
        for i, source in enumerate(sources):
            path = _path(source, f"sources[{i}]")
            if path.is_dir():
                raise FileNotFoundError(f"sources[{i}]: {str(path)!r} is a folder, not a file; sources names C and assembly files")
            if not path.is_file():
                raise FileNotFoundError(f"sources[{i}]: the file {str(path)!r} does not exist")
            checked_sources.append(path.resolve())
        regions = {} if regions is None else regions
        if not isinstance(regions, Mapping):
            raise TypeError(f"regions must be a dict of name to size or numpy array, not {type(regions).__name__}")
        if len(regions) > MAX_REGIONS:
            raise ValueError(f"regions: {len(regions)} regions; a thread has at most {MAX_REGIONS}")
        checked_regions = []
        for name, content in regions.items():
            if not isinstance(name, str):
                raise TypeError(f"regions: a region name must be a str, not {name!r}")
            if not name:
                raise ValueError("regions: a region name must not be empty")
            checked_regions.append((name, _region_content(name, content)))
        if isinstance(words, (str, bytes)) or not isinstance(words, (Sequence, np.ndarray)):
            raise TypeError(f"words must be a sequence of ints, not {type(words).__name__}")
        if isinstance(words, np.ndarray) and words.ndim != 1:
            raise TypeError(
                f"words must be a sequence of ints, not a {words.ndim}-dimensional numpy array "
                "(one number goes in a list: words=[7]; a table, flattened: words=table.ravel())"
            )
        if len(words) > MAX_WORDS:
            raise ValueError(f"words: {len(words)} words; a thread takes at most {MAX_WORDS}")
        checked_words = []
        for i, word in enumerate(words):
            word = _int(word, f"words[{i}]")
            if not 0 <= word < 2**32:
                raise ValueError(f"words[{i}] must be 0 <= w < 2**32, not {word}")
            checked_words.append(word)
        self.threads[cluster] = ThreadSpec(
            cluster, tuple(checked_sources), tuple(checked_regions), tuple(checked_words), cores, heap
        )

    def noc_agent(self, name: str, function: Callable, *, cluster: int) -> None:
        """Add a Tensix stand-in on CLUSTER: FUNCTION(noc), a Python function that plays a
        Tensix core's data-movement kernel against the cluster's DRAM while the thread
        runs. Its `noc.read`, `noc.write` and `noc.wait` reach the thread's regions, by
        name, past the X280's cache; each call is a step of the cluster's deterministic
        schedule. Simulator-only: on a card, real Tensix kernels stand here. NAME is how
        `run.agent(name)` finds what it returned or raised. Add the cluster's thread
        first; a cluster has at most 4 stand-ins.

        >>> def producer(noc):
        ...     noc.write("frames", 0, np.arange(1024, dtype=np.uint32))
        ...     noc.write("flags", 0, np.uint32([1]))
        >>> program.noc_agent("producer", producer, cluster=1)
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        if not name:
            raise ValueError("name must not be empty")
        if not callable(function):
            raise TypeError(f"function must be a callable taking the noc, not {type(function).__name__}")
        kind = _not_plain(function)
        if kind is not None:
            raise TypeError(
                f"function must be a plain function taking the noc, not {kind}: its body would never run. "
                "Call noc.read, noc.write and noc.wait from a plain def; each call waits for its step"
            )
        cluster = _int(cluster, "cluster")
        if not 0 <= cluster < CLUSTERS:
            raise ValueError(f"cluster must be 0 to {CLUSTERS - 1}, not {cluster}")
        if any(agent == name for spec in self.threads.values() for agent, _ in spec.agents):
            raise ValueError(f"program {self.name!r} has an agent named {name!r} already; each agent's name is its own")
        spec = self.threads.get(cluster)
        if spec is None:
            clusters = sorted(self.threads)
            has = f"its threads are on clusters {clusters}" if clusters else "it has no thread yet"
            raise ValueError(
                f"noc_agent: cluster {cluster} has no thread in program {self.name!r} ({has}); an agent "
                "plays the Tensix side of a thread's regions: add the thread with program.thread(cluster="
                f"{cluster}, ...) first"
            )
        if len(spec.agents) >= MAX_AGENTS:
            raise ValueError(f"noc_agent: cluster {cluster} has {MAX_AGENTS} agents already, the most a cluster may have")
        self.threads[cluster] = dataclasses.replace(spec, agents=(*spec.agents, (name, function)))

    def write_compile_commands(self, folder: str | PathLike | None = None) -> Path:
        """Write compile_commands.json for the program's thread sources into FOLDER (by
        default the folder that holds them all) and return its path: the command each
        source is compiled with, so that clangd (and the editors that use it) finds
        kmx.h and the C library's headers and knows the card's target."""
        sources = sorted({source for spec in self.threads.values() for source in spec.sources})
        if not sources:
            raise ValueError(f"program {self.name!r} has no thread; add one with program.thread(...)")
        if folder is None:
            folder = Path(os.path.commonpath([str(source.parent) for source in sources]))
        folder = _path(folder, "folder")
        if not folder.is_dir():
            raise FileNotFoundError(f"folder: {str(folder)!r} is not a folder")
        path = folder / "compile_commands.json"
        from komorebi._simulator import compile_commands  # (the compiler's flags are the machine's)

        path.write_text(json.dumps(compile_commands(sources), indent=2) + "\n")
        return path


def _not_plain(function: Callable) -> str | None:
    """What FUNCTION is when calling it only makes a generator or coroutine (or None): a
    generator or async function, or an object whose __call__ is one. (What a call returns
    is looked at again at the stand-in's first step: sim/noc/agent.py.)"""
    kind = _maker(function)
    if kind is None and not (inspect.isfunction(function) or inspect.ismethod(function)):
        kind = _maker(getattr(type(function), "__call__", None))
        return kind and f"an object whose __call__ is {kind}"
    return kind


def _maker(function: Any) -> str | None:
    if inspect.isgeneratorfunction(function):
        return "a generator function"
    if inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function):
        return "an async function"
    return None


def _region_content(name: str, content: Any) -> Any:
    if isinstance(content, np.ndarray):
        if content.size == 0 or content.nbytes == 0:
            raise ValueError(f"regions[{name!r}]: the array is empty; a region has at least 1 byte")
        if content.dtype.hasobject:
            raise TypeError(f"regions[{name!r}]: an array of Python objects has no bytes to share")
        # A private copy of the bytes, in C order, taken now: the caller's array is never
        # touched, and what the caller does to it later does not reach the region. (It is
        # made in the machine's host memory: the seam's import brings no engine.)
        from komorebi._simulator import snapshot

        return snapshot(content)
    if isinstance(content, (int, np.integer)) and not isinstance(content, bool):
        if content <= 0:
            raise ValueError(f"regions[{name!r}] must be a byte count > 0, not {content}")
        return int(content)
    raise TypeError(
        f"regions[{name!r}] must be a byte count (int) or a numpy array, not {type(content).__name__}"
    )


def _is_empty_kernel(path: Path) -> bool:
    text = _COMMENTS.sub("", path.read_text(errors="replace"))
    return bool(_EMPTY_KERNEL.match(text))
