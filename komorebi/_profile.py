"""run.profile(): where each core's instructions went, by source line, by function and by
call stack, and what the cache did at each line. Counted exactly (an instruction a cycle,
as kmx_cycles counts), with km.Session(profile=True)."""

from __future__ import annotations

from collections import defaultdict
from os import PathLike
from pathlib import Path

# The profile's rows are the seam's (komorebi._records): the machine makes them. (Named
# here too, where they were defined before, so that one pickled then still loads.)
from komorebi._records import CacheEvents, CoreProfile, FunctionCount, LineCount  # noqa: F401


class Profile:
    """The profile of a run: `cores` (one CoreProfile each) and `cache` (CacheEvents by
    line). print() it for the top lines; `annotate` writes the source with the counts;
    `flamegraph` writes collapsed stacks."""

    def __init__(self, cores: list[CoreProfile], cache: list[CacheEvents]) -> None:
        self.cores = list(cores)
        self.cache = list(cache)

    def core(self, core: int, cluster: int | None = None) -> CoreProfile:
        """The profile of CORE (of CLUSTER's thread; None: the only thread's)."""
        found = [c for c in self.cores if c.core == core and (cluster is None or c.cluster == cluster)]
        clusters = sorted({c.cluster for c in found})
        if len(clusters) > 1:
            raise ValueError(f"core {core} is in the threads of clusters {clusters}: say which cluster")
        if not found:
            have = ", ".join(f"cluster {c.cluster} core {c.core}" for c in self.cores)
            raise KeyError(f"no profile of core {core}{'' if cluster is None else f' of cluster {cluster}'}; there are: {have}")
        return found[0]

    def lines(self) -> list[LineCount]:
        """Every core's counts, summed by line, most first."""
        total: dict[tuple, int] = defaultdict(int)
        cycles: dict[tuple, int] = defaultdict(int)
        names: dict[tuple, str] = {}
        for core in self.cores:
            for line in core.lines:
                key = (line.file, line.line) if line.file else (None, 0, line.function)
                total[key] += line.instructions
                cycles[key] += line.cycles
                names[key] = line.function
        out = [LineCount(key[0], key[1], names[key], count, cycles[key]) for key, count in total.items()]
        return sorted(out, key=lambda c: (-c.cycles, -c.instructions))

    def table(self, top: int = 10) -> str:
        """The TOP lines and functions of each core, and the cache's events by line."""
        out = []
        for core in self.cores:
            total = max(core.instructions, 1)
            if core.cycles:  # (timed: the lines by cycles, the ones that cost first)
                out.append(f"cluster {core.cluster} core {core.core}: {core.instructions:,} instructions, "
                           f"{core.cycles:,} cycles")
                out.append(f"  {'cycles':>14}  {'share':>6}  {'instructions':>14}  line")
                for line in core.lines[:top]:
                    out.append(f"  {line.cycles:>14,}  {100 * line.cycles / core.cycles:>5.1f}%  "
                               f"{line.instructions:>14,}  {line.where}" + (f" ({line.function})" if line.file else ""))
            else:
                out.append(f"cluster {core.cluster} core {core.core}: {core.instructions:,} instructions")
                out.append(f"  {'instructions':>14}  {'share':>6}  line")
            for line in core.lines[:top] if not core.cycles else ():
                out.append(f"  {line.instructions:>14,}  {100 * line.instructions / total:>5.1f}%  {line.where}"
                           + (f" ({line.function})" if line.file else ""))
            if core.cycles:  # (timed: the functions by cycles)
                out.append(f"  {'own cycles':>14}  {'with callees':>14}  {'calls':>8}  function")
                for function in core.functions[:top]:
                    out.append(f"  {function.own_cycles:>14,}  {function.inclusive_cycles:>14,}  {function.calls:>8,}  "
                               f"{function.name}")
            else:
                out.append(f"  {'own':>14}  {'with callees':>14}  {'calls':>8}  function")
                for function in core.functions[:top]:
                    out.append(f"  {function.own:>14,}  {function.inclusive:>14,}  {function.calls:>8,}  {function.name}")
            if core.dropped:
                out.append(f"  ({core.dropped:,} blocks or calls did not fit the simulator's tables: they count with their caller)")
        if self.cache:
            out.append("the cache, by line: pages filled, pages first written, bytes flushed, findings")
            for events in self.cache[:top]:
                out.append(f"  {events.pages_filled:>8,} {events.pages_first_written:>8,} {events.bytes_flushed:>12,} "
                           f"{events.findings:>4}  {events.where}")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        cores = ", ".join(f"cluster {c.cluster} core {c.core}: {c.instructions:,}" for c in self.cores)
        return f"<Profile of {len(self.cores)} core{'s' if len(self.cores) != 1 else ''} ({cores})>"

    def annotate(self, path: str | PathLike) -> Path:
        """Write each source file the cores ran, every line with the instructions run
        there (all cores) and the cache's events, into PATH (a text file); returns it."""
        path = _checked(path, None, "annotate")
        counts: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        for line in self.lines():
            if line.file:
                counts[line.file][line.line] += line.instructions
        events: dict[tuple[str, int], CacheEvents] = {(e.file, e.line): e for e in self.cache if e.file}
        for file, line in events:
            counts[file].setdefault(line, 0)
        total = max(sum(c.instructions for c in self.cores), 1)
        out = []
        for file in sorted(counts):
            try:
                text = Path(file).read_text(errors="replace").splitlines()
            except OSError:
                text = []
            out.append(f"==> {file} <==")
            out.append(f"{'instructions':>14} {'share':>6} | {'line':>5}  source   [cache: filled, first written, flushed bytes, findings]")
            for number in range(1, max(len(text), max(counts[file], default=0)) + 1):
                count = counts[file].get(number)
                source = text[number - 1] if number <= len(text) else ""
                left = f"{count:>14,} {100 * count / total:>5.1f}%" if count else " " * 21
                note = ""
                e = events.get((file, number))
                if e is not None:
                    note = f"   [cache: {e.pages_filled} filled, {e.pages_first_written} first written, {e.bytes_flushed} bytes flushed, {e.findings} findings]"
                out.append(f"{left} | {number:>5}  {source}{note}")
            out.append("")
        path.write_text("\n".join(out))
        return path

    def flamegraph(self, path: str | PathLike) -> Path:
        """Write the call stacks as collapsed stacks (Brendan Gregg's format, one
        `cluster N core M;caller;callee COUNT` a line, which flamegraph.pl and speedscope
        read) into PATH; returns it. COUNT is instructions, or with the timing model the
        modelled cycles."""
        path = _checked(path, None, "flamegraph")
        out = []
        for core in self.cores:
            for stack, count in core.stack_cycles if core.cycles else core.stacks:
                names = [f"cluster {core.cluster} core {core.core}", *stack]
                out.append(";".join(name.replace(";", ":").replace(" ", "_") if i else name.replace(";", ":")
                                    for i, name in enumerate(names)) + f" {count}")
        path.write_text("\n".join(out) + "\n")
        return path


def _checked(path, suffix: str | None, what: str) -> Path:
    if not isinstance(path, (str, PathLike)):
        raise TypeError(f"{what}: path must be a file path (str or Path), not {type(path).__name__}")
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{what}: {str(path)!r} is a folder; give a file's path")
    return path
