"""Kernels through the simulator, on bare Unicorn, and on qemu-riscv64; built for RV64GC and
for the card's X280 (with its vector unit).

Kernels (bench/kernels/, one C file each, the kernel a `noinline` function):

- stream: lesson 35's loop, tripled[i] = 3 * numbers[i], over 64 MiB of uint32 into
  64 MiB (in the simulator build the invalidate of the input and the flush of the output
  are part of the timed kernel);
- alu: a xorshift loop in registers, 12,000,000 iterations (about 100M instructions);
- chase: 8M dependent loads along one random cycle through a 32 MiB array of uint32
  indices (Sattolo's shuffle, fixed LCG seed, made by the same C code in every build,
  outside the timed part);
- matmul: C = A * B, 256 x 256 float32, the naive triple loop (inputs made in C, outside
  the timed part; in the simulator build the flush of C is timed);
- popcount: the set bits of 32 MiB of uint64 (Zbb's `cpop` in the card build without V;
  with V, clang vectorises the bit-counting arithmetic instead);
- hdot: half-precision dot products over 4M halves, blocks of 64 summed in `_Float16`
  (Zfh's `flh` and `fmadd.h` in the card build without V; with V, Zvfh's `vfmul.vv` and
  `vfredosum.vs`; the inputs are multiples of 1/16, so that every product is exact and
  the fused and unfused sums agree).

Two builds of each: **RV64GC** (`KMX_CFLAGS=-march=rv64gc`, what the engine runs by
itself) and **card** (the simulator's default, `-mcpu=sifive_x280+zvfbfmin+xsfvfnrclipxfqf`:
the X280 with its vector unit, RVV 1.0 with VLEN 512, whose Zba and Zbb the loader rewrites
into RV64GC stubs and whose other new instructions, the vector unit's among them, run in C:
sim/native/isa.c and sim/native/vector/). The first table compares the RV64GC builds of the four first
kernels three ways, as before; the second the card builds of all six: through the
simulator against the simulator's RV64GC build, and against qemu-riscv64 running the
card build (`-cpu rv64,v=true,vlen=512,elen=64,vext_spec=v1.0,zba=true,zbb=true,Zfh=true`;
QEMU 7.2 has no zvfh property, but runs vector floating point at SEW 16, hdot's, with F).
bench/vector.py measures vectorised kernels on their own, with this script's machinery.

Setups:

- sim: a komorebi thread (bench/kernels/sim_timed.c) through the public API, every datum
  in a region, so through the cache model (and the checker). The thread calls kmx_submit
  right before the timed part and right after; Python timestamps (perf_counter) the
  arrival of the two results from run.thread_result(): kernel time = the difference.
- bare: the same ELF at the same addresses on a plain Unicorn engine (bench/_bare.py):
  `mem_map`, no hook but the ecall one, timed between the two submit ecalls inside that
  hook. Four variants are tried (the engine's default TLB or UC_TLB_VIRTUAL with no fill
  hook, stack and regions mapped with or without execute, and one whose ecall hook drops
  the engine's TLB at kmx_invalidate and kmx_flush as the simulator does, which lets the
  engine's TLB grow as the simulator's does: see bench/_bare.py); each kernel's figure is
  its fastest variant, named in the table.
- qemu: a static riscv64-linux-musl program (bench/kernels/linux_main.c, the same kernel
  files) under qemu-riscv64, data in malloc'd memory, timed by clock_gettime around the
  kernel. When qemu-riscv64 is absent the column is skipped (apt-get install qemu-user).

The simulator and Linux builds of one target compile the kernel files with
sim/build/thread.py's compiler (ziglang's clang) and code-generation flags (-O2, the -mcpu
of the target, ...), so each kernel function is the same machine code in both; the script
checks this, byte for byte (before the loader's rewrites, which happen at load). Instructions are counted
once per kernel, in the simulator, by a build that calls kmx_cycles (exact: one cycle an
instruction) around the timed part (bench/kernels/sim_counted.c), and that one count
gives the MIPS of all three setups. It includes the sim build's invalidate and flush calls
(a few dozen instructions of ecalls), which the QEMU build does not make.

Times are best of --repeat runs (default 3), interleaved; the ratios are also given from
the medians, which move less on a noisy machine. Each setup's checksum must agree with
the others, or the script exits with status 1. Targets (issue 6): sim / bare <= 1.15
and sim / qemu <= 3 on every RV64GC kernel; (issue 13) card / RV64GC <= 2 on the simulator
on each of the four first kernels (moonshot 1.3), and card sim / card qemu <= 3 on popcount
and hdot. The last line printed is one JSON object.

    python bench/vs_qemu.py [--repeat 3] [--quick] [--kernels stream,alu,chase,matmul,popcount,hdot]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np
from elftools.elf.elffile import ELFFile

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import komorebi as km  # noqa: E402
from bench._bare import BareRun, Layout, place  # noqa: E402
from komorebi.sim.build.thread import COMPILE_FLAGS, build_thread, toolchain_in_use  # noqa: E402
from komorebi.sim.image.elf import ThreadImage, load_image  # noqa: E402

KERNELS = Path(__file__).resolve().parent / "kernels"
TENSIX = KERNELS / "tensix"  # the program's (empty) folder of Tensix kernels
KERNEL_SOURCES = [KERNELS / name for name in ("stream.c", "alu.c", "chase.c", "matmul.c", "popcount.c", "hdot.c",
                                              "saxpy.c", "dot.c", "bytecopy.c", "common.c")]  # (vector.py's too)
RV64GC, CARD = "-march=rv64gc", ""  # KMX_CFLAGS of the two builds (the card's: the default)
QEMU_CARD_CPU = "rv64,v=true,vlen=512,elen=64,vext_spec=v1.0,zba=true,zbb=true,Zfh=true"  # (QEMU 7.2: no zvfh property)
FIRST_FOUR = ("stream", "alu", "chase", "matmul")
SIM_TIMED = [KERNELS / "sim_timed.c", *KERNEL_SOURCES]
SIM_COUNTED = [KERNELS / "sim_counted.c", *KERNEL_SOURCES]
LINUX_MAIN = KERNELS / "linux_main.c"
TIMEOUT = 600.0  # seconds for any one result

BARE_VARIANTS = {  # name: bench/_bare.py's keywords; every one with mem_map
    "cpu TLB": {"tlb": "cpu"},
    "cpu TLB, data exec": {"tlb": "cpu", "exec_data": True},
    "virtual TLB": {"tlb": "virtual"},
    "virtual TLB, data exec": {"tlb": "virtual", "exec_data": True},
    "virtual TLB, TLB flushes": {"tlb": "virtual", "flush_tlb": True},
}
TARGET_BARE, TARGET_QEMU = 1.15, 3.0
TARGET_CARD, MOONSHOT_CARD, TARGET_CARD_QEMU = 2.0, 1.3, 3.0


@dataclass
class Kernel:
    """One kernel at one size: how each setup is told to run it."""

    name: str
    number: int  # word 0 of the komorebi thread (kernels.h)
    size: int  # word 1 of the thread; the Linux program's SIZE (or steps, below)
    regions: dict[str, np.ndarray | int] = field(default_factory=dict)
    linux_args: list[int] = field(default_factory=list)

    @property
    def words(self) -> list[int]:
        return [self.number, self.size]

    def contents(self) -> dict[int, bytes]:
        """Python's region contents, for the bare run: region index -> bytes."""
        return {i: c.tobytes() for i, c in enumerate(self.regions.values()) if not isinstance(c, int)}

    def region_sizes(self) -> list[int]:
        return [c if isinstance(c, int) else c.nbytes for c in self.regions.values()]


def kernels(quick: bool) -> list[Kernel]:
    stream_count = (1 if quick else 64) * 2**20 // 4
    iterations = 1_000_000 if quick else 12_000_000
    chase_count, steps = ((1 if quick else 32) * 2**20 // 4), (200_000 if quick else 8_000_000)
    n = 64 if quick else 256
    matrix = 4 * n * n
    words = (1 if quick else 32) * 2**20 // 8
    halves = (1 if quick else 8) * 2**20 // 2
    return [
        Kernel("stream", 0, stream_count,
               {"numbers": np.arange(stream_count, dtype=np.uint32), "tripled": 4 * stream_count}, [stream_count]),
        Kernel("alu", 1, iterations, {}, [iterations]),
        Kernel("chase", 2, steps, {"next": 4 * chase_count}, [chase_count, steps]),
        Kernel("matmul", 3, n, {"a": matrix, "b": matrix, "c": matrix}, [n]),
        Kernel("popcount", 4, words, {"words": 8 * words}, [words]),
        Kernel("hdot", 5, halves, {"a": 2 * halves, "b": 2 * halves}, [halves]),
    ]


# -- building ----------------------------------------------------------------------------


def zig(*args: str | Path) -> None:
    command = [sys.executable, "-m", "ziglang", "cc", *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"compile failed: {' '.join(command)}\n{done.stderr}{done.stdout}")


class target:
    """KMX_CFLAGS = FLAGS while inside (the simulator compiles at load)."""

    def __init__(self, flags: str) -> None:
        self.flags = flags

    def __enter__(self) -> None:
        self.saved = os.environ.get("KMX_CFLAGS")
        os.environ["KMX_CFLAGS"] = self.flags

    def __exit__(self, *_) -> None:
        if self.saved is None:
            os.environ.pop("KMX_CFLAGS", None)
        else:
            os.environ["KMX_CFLAGS"] = self.saved


def build_linux(folder: Path, flags: str) -> Path:
    """The static riscv64 Linux program for the target of FLAGS: the kernel files with the
    simulator build's code-generation flags (its -O level, -mcpu, -mcmodel, ...; not its
    linker flags), the driver with plain ones."""
    with target(flags):
        codegen = toolchain_in_use().compile_flags()
    mcpu = [flag for flag in codegen if flag.startswith("-mcpu")]
    optimise = [flag for flag in COMPILE_FLAGS if flag.startswith("-O")]
    linux = ["-target", "riscv64-linux-musl"]
    objects = []
    for source in KERNEL_SOURCES:
        objects.append(folder / (source.stem + ".o"))
        zig(*linux, *codegen, "-c", source, "-o", objects[-1])
    elf = folder / "vs_qemu.elf"
    zig(*linux, *mcpu, *optimise, "-static", LINUX_MAIN, *objects, "-o", elf)
    return elf


def function_code(elf: Path, name: str) -> bytes:
    """The machine code of function NAME in ELF."""
    with open(elf, "rb") as f:
        e = ELFFile(f)
        symbol = e.get_section_by_name(".symtab").get_symbol_by_name(name)[0]
        address, size = symbol["st_value"], symbol["st_size"]
        for segment in e.iter_segments():
            start = segment["p_vaddr"]
            if segment["p_type"] == "PT_LOAD" and start <= address < start + segment["p_filesz"]:
                return segment.data()[address - start : address - start + size]
    raise SystemExit(f"{name} is not in {elf}")


# -- the three setups ----------------------------------------------------------------------


def sim_program(kernel: Kernel, sources: list[Path]) -> km.Program:
    program = km.Program("vs_qemu", kernels=TENSIX)
    program.thread(cluster=1, sources=sources, regions=kernel.regions, words=kernel.words)
    return program


def sim_run(program: km.Program, flags: str = RV64GC) -> tuple[float, np.ndarray]:
    """(seconds between the two submitted results, the final result's words), built for
    the target of FLAGS."""
    with target(flags), km.Session() as session:
        run = session.load(program)
        run.thread_result(timeout=TIMEOUT)  # the kernel begins
        start = time.perf_counter()
        run.thread_result(timeout=TIMEOUT)  # the kernel is done
        seconds = time.perf_counter() - start
        final = run.thread_result(timeout=TIMEOUT)
        run.stop()
    if not final.final or final.code != 0:
        raise SystemExit(f"the simulator's run failed: {final}")
    return seconds, final.words


def bare_run(image: ThreadImage, layout: Layout, kernel: Kernel, variant: dict) -> tuple[float, np.ndarray]:
    bare = BareRun(image, layout, words=tuple(kernel.words), contents=kernel.contents(), **variant)
    bare.run()
    if bare.code != 0 or len(bare.submitted) != 2:
        raise SystemExit(f"the bare run of {kernel.name} failed: code {bare.code}")
    seconds, words = bare.between_submits(), bare.result.copy()
    bare.close()
    return seconds, words


def qemu_run(qemu: str, elf: Path, kernel: Kernel, cpu: str | None = None) -> tuple[float, int]:
    """(the kernel's seconds, its checksum) under qemu-riscv64 (with -cpu CPU)."""
    command = [qemu, *(["-cpu", cpu] if cpu else []), str(elf), kernel.name, *map(str, kernel.linux_args)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr}")
    checksum, nanoseconds = map(int, done.stdout.split())
    return nanoseconds / 1e9, checksum


def find_qemu() -> str | None:
    """qemu-riscv64's path, or None (and a line saying so)."""
    qemu = shutil.which("qemu-riscv64")
    if qemu is None:
        print("qemu-riscv64 was not found: the QEMU column is skipped. It comes with QEMU's "
              "user-mode emulators: `apt-get install qemu-user` (Debian, Ubuntu).")
    return qemu


def build_both(folder: Path, flags: str) -> tuple[Path, Path]:
    """(the komorebi thread's timed ELF, the Linux program) for the target of FLAGS; the
    Linux build in FOLDER (made)."""
    folder.mkdir()
    linux_elf = build_linux(folder, flags)
    with target(flags):
        sim_elf = build_thread(SIM_TIMED).elf
    return sim_elf, linux_elf


def check_same_code(label: str, ours: Path, theirs: Path, names: list[str]) -> None:
    """Say whether the functions NAMES are the same machine code in the two ELFs."""
    differ = [name for name in names if function_code(ours, name) != function_code(theirs, name)]
    print(f"{label}: the kernels' machine code is the same in both builds" if not differ else
          f"warning: {label}: the machine code of {', '.join(differ)} differs between the two builds; "
          "the instruction counts are the simulator build's")


def bare_runs(image: ThreadImage, layout: Layout, kernel: Kernel, times: dict[str, list[float]],
              found: dict[str, int], variants: Iterable[str] = tuple(BARE_VARIANTS)) -> None:
    """One run of KERNEL in each of VARIANTS (of BARE_VARIANTS): its seconds appended to
    TIMES[variant], its checksum in FOUND["bare (variant)"]."""
    for variant in variants:
        seconds, words = bare_run(image, layout, kernel, BARE_VARIANTS[variant])
        times[variant].append(seconds)
        found[f"bare ({variant})"] = checksum(words)


def best_and_median(times: dict[str, dict[str, list[float]]]) -> tuple[dict, dict]:
    """TIMES (kernel -> setup -> seconds of each run): the best and the median of each
    (None where a setup did not run)."""
    best = {k: {setup: min(t) if t else None for setup, t in setups.items()} for k, setups in times.items()}
    middle = {k: {setup: statistics.median(t) if t else None for setup, t in setups.items()}
              for k, setups in times.items()}
    return best, middle


def best_variant(times: dict[str, float | None]) -> str:
    """The fastest of BARE_VARIANTS in TIMES (setup -> seconds; None: not run)."""
    return min((v for v in BARE_VARIANTS if times[v] is not None), key=lambda v: times[v])


def over(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a / b


def rounded(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(x, digits)


def checksum(words: np.ndarray) -> int:
    return int(words[0]) | int(words[1]) << 32


def count_instructions(kernel: Kernel, flags: str = RV64GC) -> tuple[int, int]:
    """(instructions of the timed part, checksum), from the kmx_cycles build."""
    words = sim_run(sim_program(kernel, SIM_COUNTED), flags)[1]
    return int(words[2]) | int(words[3]) << 32, checksum(words)


# -- reporting -----------------------------------------------------------------------------


def mips(instructions: int, seconds: float | None) -> float | None:
    return None if seconds is None else instructions / seconds / 1e6


def cell(value: float | None, width: int, digits: int = 1) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width},.{digits}f}"


def print_variants(names: list[str], variant_times: dict[str, dict[str, float]]) -> None:
    print("bare Unicorn variants, best ms (mem_map; the ecall hook only):")
    print(f"  {'variant':<26}" + "".join(f"{name:>11}" for name in names))
    for variant in BARE_VARIANTS:
        print(f"  {variant:<26}" + "".join(cell(variant_times[name][variant] * 1e3, 11) for name in names))


def print_table(rows: list[dict]) -> None:
    header = (f"{'kernel':<8}{'instructions':>14}{'sim ms':>10}{'sim MIPS':>10}{'bare ms':>10}{'bare MIPS':>10}"
              f"{'qemu ms':>10}{'qemu MIPS':>10}{'sim/bare':>10}{'sim/qemu':>10}  bare variant")
    print(header)
    for r in rows:
        ms = lambda s: None if s is None else s * 1e3  # noqa: E731
        print(f"{r['kernel']:<8}{r['instructions']:>14,}{cell(ms(r['sim']), 10)}{cell(r['sim_mips'], 10)}"
              f"{cell(ms(r['bare']), 10)}{cell(r['bare_mips'], 10)}{cell(ms(r['qemu']), 10)}{cell(r['qemu_mips'], 10)}"
              f"{cell(r['sim_over_bare'], 10, 2)}{cell(r['sim_over_qemu'], 10, 2)}  {r['bare_variant']}")


def agree(kernel: str, sums: dict[str, int]) -> None:
    if len(set(sums.values())) != 1:
        listed = ", ".join(f"{setup} {value:#x}" for setup, value in sums.items())
        print(f"{kernel}: the checksums differ: {listed}", file=sys.stderr)
        raise SystemExit(1)


def print_card_table(rows: list[dict]) -> None:
    print(f"{'kernel':<10}{'card instr':>14}{'card ms':>10}{'rv64gc ms':>11}{'card/rv64gc':>13}"
          f"{'qemu card ms':>14}{'card/qemu':>11}")
    for r in rows:
        ms = lambda s: None if s is None else s * 1e3  # noqa: E731
        print(f"{r['kernel']:<10}{r['instructions']:>14,}{cell(ms(r['card']), 10)}{cell(ms(r['rv64gc']), 11)}"
              f"{cell(r['card_over_rv64gc'], 13, 2)}{cell(ms(r['qemu_card']), 14)}{cell(r['card_over_qemu'], 11, 2)}")


def prepare(todo: list[Kernel], image: ThreadImage) -> tuple[dict, dict, dict, dict, dict]:
    """Each kernel's instructions in the two builds (counted), its checksum (the two must
    agree), its program for the timed runs and its bare layout, by name."""
    counts, card_counts, sums, programs, layouts = {}, {}, {}, {}, {}
    for k in todo:
        start = time.perf_counter()
        counts[k.name], sums[k.name] = count_instructions(k, RV64GC)
        card_counts[k.name], card_sum = count_instructions(k, CARD)
        agree(k.name, {"rv64gc": sums[k.name], "card": card_sum})
        print(f"{k.name}: {counts[k.name]:,} instructions, {card_counts[k.name]:,} in the card build "
              f"(counted in {time.perf_counter() - start:.1f} s)")
        programs[k.name] = sim_program(k, SIM_TIMED)
        layouts[k.name] = place(image, k.region_sizes())
    return counts, card_counts, sums, programs, layouts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each setup, best taken (default 3)")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument("--kernels", default="stream,alu,chase,matmul,popcount,hdot",
                        help="which kernels, comma-separated")
    args = parser.parse_args()
    chosen = args.kernels.split(",")
    todo = [k for k in kernels(args.quick) if k.name in chosen]
    if not todo:
        raise SystemExit(f"--kernels: none of {chosen} is stream, alu, chase, matmul, popcount or hdot")
    TENSIX.mkdir(exist_ok=True)
    plain = [k for k in todo if k.name in FIRST_FOUR]  # (the three-way table's)

    qemu = find_qemu()
    scratch = tempfile.TemporaryDirectory(prefix="vs_qemu-")
    sim_elf, linux_elf = build_both(Path(scratch.name) / "rv64gc", RV64GC)
    card_elf, card_linux_elf = build_both(Path(scratch.name) / "card", CARD)
    image = load_image(sim_elf)
    for label, ours, theirs in (("RV64GC", sim_elf, linux_elf), ("card", card_elf, card_linux_elf)):
        check_same_code(label, ours, theirs, [k.name for k in todo])

    counts, card_counts, sums, programs, layouts = prepare(todo, image)

    setups = ("sim", "qemu", "card", "qemu_card", *BARE_VARIANTS)
    times = {k.name: {setup: [] for setup in setups} for k in todo}
    for _ in range(args.repeat):
        for k in todo:
            found = {"counted": sums[k.name]}
            seconds, words = sim_run(programs[k.name], RV64GC)
            times[k.name]["sim"].append(seconds)
            found["sim"] = checksum(words)
            seconds, words = sim_run(programs[k.name], CARD)
            times[k.name]["card"].append(seconds)
            found["card"] = checksum(words)
            if k in plain:
                bare_runs(image, layouts[k.name], k, times[k.name], found)
            if qemu is not None:
                seconds, found["qemu"] = qemu_run(qemu, linux_elf, k)
                times[k.name]["qemu"].append(seconds)
                seconds, found["qemu card"] = qemu_run(qemu, card_linux_elf, k, QEMU_CARD_CPU)
                times[k.name]["qemu_card"].append(seconds)
            agree(k.name, found)
    scratch.cleanup()

    best, middle = best_and_median(times)
    rows, variant_times = [], {}
    for k in plain:
        b = best[k.name]
        variant_times[k.name] = {v: b[v] for v in BARE_VARIANTS}
        bare_variant = best_variant(b)
        m, n = middle[k.name], counts[k.name]
        rows.append({
            "median_sim_over_bare": m["sim"] / m[bare_variant], "median_sim_over_qemu": over(m["sim"], m["qemu"]),
            "kernel": k.name, "instructions": n, "sim": b["sim"], "bare": b[bare_variant], "qemu": b["qemu"],
            "sim_mips": mips(n, b["sim"]), "bare_mips": mips(n, b[bare_variant]), "qemu_mips": mips(n, b["qemu"]),
            "sim_over_bare": b["sim"] / b[bare_variant], "sim_over_qemu": over(b["sim"], b["qemu"]),
            "bare_variant": bare_variant,
        })
    card_rows = []
    for k in todo:
        b, m = best[k.name], middle[k.name]
        card_rows.append({
            "kernel": k.name, "instructions": card_counts[k.name], "card": b["card"], "rv64gc": b["sim"],
            "qemu_card": b["qemu_card"], "card_over_rv64gc": over(b["card"], b["sim"]),
            "card_over_qemu": over(b["card"], b["qemu_card"]),
            "median_card_over_rv64gc": over(m["card"], m["sim"]), "median_card_over_qemu": over(m["card"], m["qemu_card"]),
        })
    if rows:
        print()
        print_variants([k.name for k in plain], variant_times)
        print()
        print("RV64GC builds:")
        print_table(rows)
        print("the same ratios from the medians of the runs (the machine is noisy; best-of and median can differ):")
        for r in rows:
            print(f"  {r['kernel']:<8} sim/bare {r['median_sim_over_bare']:.2f}"
                  + ("" if r["median_sim_over_qemu"] is None else f"  sim/qemu {r['median_sim_over_qemu']:.2f}"))
        missed = [r["kernel"] for r in rows if r["sim_over_bare"] > TARGET_BARE
                  or (r["sim_over_qemu"] is not None and r["sim_over_qemu"] > TARGET_QEMU)]
        print(f"targets (sim/bare <= {TARGET_BARE}, sim/qemu <= {TARGET_QEMU:g}): "
              + (f"missed on {', '.join(missed)}" if missed else "met on every kernel"))
    print()
    print("card builds (the X280, -mcpu=sifive_x280+zvfbfmin+xsfvfnrclipxfqf, with its vector unit), against the simulator's RV64GC build "
          "and qemu-riscv64's card build:")
    print_card_table(card_rows)
    print("from the medians:")
    for r in card_rows:
        print(f"  {r['kernel']:<8} card/rv64gc {r['median_card_over_rv64gc']:.2f}"
              + ("" if r["median_card_over_qemu"] is None else f"  card/qemu {r['median_card_over_qemu']:.2f}"))
    missed = [r["kernel"] for r in card_rows if r["kernel"] in FIRST_FOUR and r["card_over_rv64gc"] > TARGET_CARD]
    missed += [r["kernel"] for r in card_rows if r["kernel"] not in FIRST_FOUR and r["card_over_qemu"] is not None
               and r["card_over_qemu"] > TARGET_CARD_QEMU]
    print(f"targets (card/rv64gc <= {TARGET_CARD:g} on the four first, moonshot {MOONSHOT_CARD}; card/qemu <= "
          f"{TARGET_CARD_QEMU:g} on popcount and hdot): " + (f"missed on {', '.join(missed)}" if missed else "met"))
    print(json.dumps({
        "benchmark": "vs_qemu", "quick": args.quick, "repeat": args.repeat,
        "kernels": {r["kernel"]: {
            "instructions": r["instructions"],
            "sim_mips": rounded(r["sim_mips"]), "qemu_mips": rounded(r["qemu_mips"]),
            "bare_mips": rounded(r["bare_mips"]), "bare_variant": r["bare_variant"],
            "sim_over_bare": rounded(r["sim_over_bare"], 3), "sim_over_qemu": rounded(r["sim_over_qemu"], 3),
            "median_sim_over_bare": rounded(r["median_sim_over_bare"], 3),
            "median_sim_over_qemu": rounded(r["median_sim_over_qemu"], 3),
        } for r in rows},
        "card": {r["kernel"]: {
            "instructions": r["instructions"],
            "card_over_rv64gc": rounded(r["card_over_rv64gc"], 3), "card_over_qemu": rounded(r["card_over_qemu"], 3),
            "median_card_over_rv64gc": rounded(r["median_card_over_rv64gc"], 3),
            "median_card_over_qemu": rounded(r["median_card_over_qemu"], 3),
        } for r in card_rows},
    }))


if __name__ == "__main__":
    main()
