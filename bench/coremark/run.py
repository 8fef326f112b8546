"""EEMBC CoreMark as a komorebi thread: build it from our port and CoreMark's own sources,
run it on one X280 core of a km.Session, and hand back its figures.

CoreMark's sources are not in this repository (README.md here): give the folder that
holds them (coremark.h, core_main.c, core_list_join.c, core_matrix.c, core_state.c,
core_util.c; a clone of github.com/eembc/coremark is one), or set KMX_COREMARK.

    python -m bench.coremark.run /path/to/coremark 200          # from the repository root
    python -c 'from bench.coremark.run import coremark; print(coremark("/tmp/coremark", 200, {}))'

CoreMark/MHz is iterations / (cycles / 1e6): the iterations per second at a clock of f MHz
are iterations / (cycles / (f * 1e6)), divided by f.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shlex
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping

import komorebi as km

HERE = Path(__file__).resolve().parent
ENVIRONMENT = "KMX_COREMARK"  # the folder of CoreMark's sources, when none is given

# CoreMark's own files (none of them is in this repository), and ours.
COREMARK_SOURCES = ("core_main.c", "core_list_join.c", "core_matrix.c", "core_state.c", "core_util.c")
COREMARK_FILES = ("coremark.h", *COREMARK_SOURCES)
PORT_FILES = ("core_portme.h", "core_portme.c")
CONFIG = "kmx_coremark_config.h"

TOTAL_DATA_SIZE = 2000  # coremark.h's default: the "2K" runs, whose CRCs CoreMark knows
DEFAULT_HZ = 1_000_000_000  # the X280's clock, as tt-bh-linux's x280.dts gives it (1 GHz)

# The seeds of CoreMark's standard runs (core_portme.c sets them by the run's name).
RUNS = {
    "performance": "PERFORMANCE_RUN",  # seeds 0, 0, 0x66
    "validation": "VALIDATION_RUN",  # seeds 0x3415, 0x3415, 0x66
    "profile": "PROFILE_RUN",  # seeds 8, 8, 8
}
# What core_main.c knows: (seed1, seed2, seed3, size per algorithm) -> the run's name and
# the CRCs of its list, matrix and state benchmarks (its list_known_crc and the others).
KNOWN = {
    (0x0, 0x0, 0x66, 666): ("2K performance run", 0xE714, 0x1FD7, 0x8E3A),
    (0x3415, 0x3415, 0x66, 666): ("2K validation run", 0xE3C1, 0x0747, 0x8D84),
    (0x0, 0x0, 0x66, 2000): ("6k performance run", 0xD4B0, 0xBE52, 0x5E47),
    (0x3415, 0x3415, 0x66, 2000): ("6k validation run", 0x3340, 0x1199, 0x39BF),
    (0x8, 0x8, 0x8, 400): ("Profile generation run", 0x6A79, 0x5608, 0xE5A4),
}

# The result words the thread ends with: core_portme.h's KMX_COREMARK_WORD_*.
MAGIC = 0x434D4B31
WORD = {
    "magic": 0, "cycles_lo": 1, "cycles_hi": 2, "instret_lo": 3, "instret_hi": 4,
    "iterations": 5, "seed1": 6, "seed2": 7, "seed3": 8, "size": 9, "crc": 10,
    "crclist": 11, "crcmatrix": 12, "crcstate": 13, "finished": 14, "hz_lo": 15, "hz_hi": 16,
}  # fmt: skip


def source_folder(source_dir: str | os.PathLike | None = None) -> Path:
    """The folder of CoreMark's sources: SOURCE_DIR, else $KMX_COREMARK. Raises
    FileNotFoundError, saying how to fetch them, when a file is missing."""
    if source_dir is None:
        source_dir = os.environ.get(ENVIRONMENT)
    if not source_dir:
        raise FileNotFoundError(
            f"CoreMark's sources: give their folder (--coremark DIR) or set {ENVIRONMENT}; "
            "they are not in this repository: git clone https://github.com/eembc/coremark"
        )
    folder = Path(source_dir).expanduser().resolve()
    missing = [name for name in COREMARK_FILES if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"CoreMark's sources: {folder} lacks {', '.join(missing)} (the folder of a clone of "
            "https://github.com/eembc/coremark holds them all; see bench/coremark/README.md)"
        )
    return folder


def compiler_flags() -> str:
    """The flags komorebi compiles a thread's files with, as CoreMark's report names them."""
    try:
        from komorebi.sim.build import thread as build  # the build's own list

        return " ".join(shlex.quote(flag) for flag in build.toolchain_in_use().compile_flags())
    except Exception:  # (an internal API: the report's string is all it is for)
        extra = os.environ.get("KMX_CFLAGS", "")
        return f"komorebi's default thread flags (-O2 -g){' ' + extra if extra else ''}"


def config_text(iterations: int, run: str, hz: int, flags: str) -> str:
    flags = flags.replace("\\", "\\\\").replace('"', '\\"')
    return (
        "/* Written by bench/coremark/run.py: the defines a -D would give (a thread's build\n"
        " * takes no flags from Python). */\n"
        f"#define ITERATIONS {iterations}\n"
        f"#define {RUNS[run]} 1\n"
        f"#define KMX_COREMARK_HZ {hz}ull\n"
        f'#define COMPILER_FLAGS "{flags}"\n'
    )


def stage(source_dir: str | os.PathLike | None, iterations: int, *, run: str = "performance",
          hz: int = DEFAULT_HZ, folder: str | os.PathLike | None = None) -> Path:
    """A build folder outside the repository with CoreMark's files, our port and the
    configuration header, side by side (coremark.h includes "core_portme.h" from its own
    folder). It is named after what it holds, so an unchanged build is found again in the
    build cache. Returns the folder."""
    if run not in RUNS:
        raise ValueError(f"run must be one of {', '.join(RUNS)}, not {run!r}")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or not 0 <= iterations < 2**31:
        raise ValueError(f"iterations must be an int, 0 <= iterations < 2**31, not {iterations!r}")
    sources = source_folder(source_dir)
    contents = {name: (sources / name).read_bytes() for name in COREMARK_FILES}
    contents.update({name: (HERE / name).read_bytes() for name in PORT_FILES})
    contents[CONFIG] = config_text(iterations, run, hz, compiler_flags()).encode()
    digest = hashlib.sha256()
    for name in sorted(contents):
        digest.update(name.encode() + b"\0" + contents[name] + b"\0")
    if folder is None:
        folder = Path(tempfile.gettempdir()) / "komorebi-coremark" / digest.hexdigest()[:16]
    folder = Path(folder)
    (folder / "kernels").mkdir(parents=True, exist_ok=True)  # (the program's: no Tensix kernel)
    for name, data in contents.items():
        path = folder / name
        if not path.is_file() or path.read_bytes() != data:
            partial = path.with_name(f".{name}.{os.getpid()}")  # (whole, for a build beside)
            partial.write_bytes(data)
            os.replace(partial, path)
    return folder


def program(source_dir: str | os.PathLike | None, iterations: int, *, run: str = "performance",
            hz: int = DEFAULT_HZ, cluster: int = 0) -> km.Program:
    """CoreMark as a km.Program: one thread, one core, on CLUSTER."""
    folder = stage(source_dir, iterations, run=run, hz=hz)
    p = km.Program("coremark", kernels=folder / "kernels")
    p.thread(cluster=cluster, sources=[folder / name for name in (*COREMARK_SOURCES, "core_portme.c")])
    return p


def parse_output(text: str) -> dict[str, Any]:
    """What CoreMark's report says, from the thread's printed text."""
    report: dict[str, Any] = {}
    for key, pattern in (("seedcrc", r"seedcrc\s*:\s*0x([0-9a-fA-F]+)"),
                         ("crclist", r"\[0\]crclist\s*:\s*0x([0-9a-fA-F]+)"),
                         ("crcmatrix", r"\[0\]crcmatrix\s*:\s*0x([0-9a-fA-F]+)"),
                         ("crcstate", r"\[0\]crcstate\s*:\s*0x([0-9a-fA-F]+)"),
                         ("crcfinal", r"\[0\]crcfinal\s*:\s*0x([0-9a-fA-F]+)")):
        found = re.search(pattern, text)
        report[key] = int(found.group(1), 16) if found else None
    found = re.search(r"^(.* run) parameters for coremark\.$", text, re.MULTILINE)
    report["known_run"] = found.group(1) if found else None
    report["validated"] = "Correct operation validated." in text
    report["errors"] = [line for line in text.splitlines() if "ERROR" in line]
    report["crc_errors"] = [line for line in report["errors"] if " crc " in line]
    found = re.search(r"^CoreMark 1\.0 : (.*)$", text, re.MULTILINE)
    report["score_line"] = found.group(0) if found else None
    return report


def coremark(source_dir: str | os.PathLike | None, iterations: int,
             session_kwargs: Mapping[str, Any] | None = None, *, run: str = "performance",
             hz: int | None = None, cluster: int = 0, timeout: float | None = None,
             echo: bool = False) -> dict[str, Any]:
    """Build CoreMark from our port and the sources in SOURCE_DIR ($KMX_COREMARK when None),
    run ITERATIONS of it on one core in km.Session(**SESSION_KWARGS), and return:

    - iterations, cycles (kmx_cycles() over the timed part), instructions (rdinstret over
      the same part: the same count when the session counts a cycle an instruction);
    - coremark_per_mhz: iterations * 1e6 / cycles;
    - valid: CoreMark knew the seeds and size (the performance run's: 0, 0, 0x66, 2000)
      and the list, matrix and state CRCs are the ones it knows for them (checked here
      from the result words, and CoreMark printed no CRC error);
    - validated: CoreMark itself printed "Correct operation validated", which it does only
      when, besides, the timed part ran for at least 10 seconds at HZ (1e10 cycles at
      1 GHz), as its run rules require of a reported score. HZ (what CoreMark's
      time_in_secs divides by; CoreMark/MHz does not depend on it) is the session's clock
      when it models one (its `timing` and `clock_mhz`), else 1 GHz, the X280's
      clock-frequency in tt-bh-linux's x280.dts;
    - the CRCs, the seeds, the output text, and the wall-clock seconds of the build (the
      session's load) and of the run.

    ECHO lets the thread's lines reach standard output as well (komorebi prints each
    thread's lines as they come; without ECHO they are kept quiet and returned)."""
    kwargs = dict(session_kwargs or {})
    started = time.perf_counter()
    with km.Session(**kwargs) as session:
        if hz is None:  # the session's clock when it models one (km.Session(timing=..., clock_mhz=...))
            clock_mhz = getattr(session, "clock_mhz", None) if getattr(session, "timing", None) else None
            hz = round(clock_mhz * 1e6) if clock_mhz else DEFAULT_HZ
        p = program(source_dir, iterations, run=run, hz=hz, cluster=cluster)
        with contextlib.nullcontext() if echo else _quiet():
            loaded = session.load(p)
            built = time.perf_counter()
            try:
                result = loaded.thread_result(timeout=timeout, cluster=cluster)
            finally:
                loaded.stop()
        ran = time.perf_counter()
        output = loaded.threads[cluster].output
    words = [int(w) for w in result.words]
    if words[WORD["magic"]] != MAGIC or words[WORD["finished"]] != 1:
        raise RuntimeError(
            f"CoreMark's thread ended (code {result.code}) without its figures; it printed:\n{output}"
        )
    cycles = words[WORD["cycles_lo"]] | words[WORD["cycles_hi"]] << 32
    instructions = words[WORD["instret_lo"]] | words[WORD["instret_hi"]] << 32
    done_iterations = words[WORD["iterations"]]
    seeds = (words[WORD["seed1"]], words[WORD["seed2"]], words[WORD["seed3"]])
    size = words[WORD["size"]]
    crcs = {name: words[WORD[name]] for name in ("crclist", "crcmatrix", "crcstate", "crc")}
    report = parse_output(output)
    known = KNOWN.get((*seeds, size))
    crcs_known = known is not None and (crcs["crclist"], crcs["crcmatrix"], crcs["crcstate"]) == known[1:]
    valid = bool(
        result.code == 0
        and crcs_known
        and report["known_run"] == known[0]
        and not report["crc_errors"]
        and report["crclist"] == crcs["crclist"]
        and report["crcmatrix"] == crcs["crcmatrix"]
        and report["crcstate"] == crcs["crcstate"]
    )
    return {
        "iterations": done_iterations,
        "cycles": cycles,
        "instructions": instructions,
        "valid": valid,
        "coremark_per_mhz": done_iterations * 1e6 / cycles if cycles else None,
        "validated": report["validated"],
        "run": known[0] if known else None,
        "seeds": seeds,
        "size": size,
        "crcs": crcs,
        "seedcrc": report["seedcrc"],
        "errors": report["errors"],
        "hz": words[WORD["hz_lo"]] | words[WORD["hz_hi"]] << 32,
        "code": result.code,
        "output": output,
        "build_seconds": built - started,
        "run_seconds": ran - built,
    }


def _quiet() -> contextlib.AbstractContextManager:
    """Keep the thread's lines off the terminal (komorebi writes each to sys.stdout as it
    comes, from the cluster's host thread); they are still in Thread.output."""
    return contextlib.redirect_stdout(io.StringIO())


def main(argv: list[str] | None = None) -> None:
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("coremark", nargs="?", help=f"the folder of CoreMark's sources (default: ${ENVIRONMENT})")
    parser.add_argument("iterations", nargs="?", type=int, default=200)
    parser.add_argument("--run", choices=sorted(RUNS), default="performance")
    parser.add_argument("--timeout", type=float, default=None, help="wall-clock seconds to wait for the thread")
    options = parser.parse_args(argv)
    figures = coremark(options.coremark, options.iterations, {}, run=options.run, timeout=options.timeout, echo=True)
    figures.pop("output")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
