"""The X280's vector unit: vectorised kernels through the simulator, against the same kernels
built for RV64GC, on bare Unicorn, and on qemu-riscv64 (issue 14).

Kernels (bench/kernels/, one C file each, the kernel a `noinline` function; sizes without
--quick, then with it):

- stream: lesson 35's loop, tripled[i] = 3 * numbers[i], 64 MiB of uint32 into 64 MiB
  (1 MiB); the invalidate of the input and the flush of the output are timed, as in
  bench/vs_qemu.py;
- saxpy: y[i] = a * x[i] + y[i] over 16M float32 (256K), the flush of y timed;
- dot: the dot product of two vectors of 16M float32 (256K), summed in order (a
  reduction: the ordered vfredosum in the card's build); its checksum is the float's bits;
- matmul: C = A * B, 256 x 256 float32 (64 x 64), the naive triple loop, the flush of C
  timed;
- bytecopy: a loop copying 64 MiB of bytes (1 MiB), not a call to memcpy; the flush of
  the copy timed.

Inputs are made in C outside the timed part (stream's by Python), with values chosen so
that every float product is exact: a fused multiply-add (RV64GC's fmadd.s) and a multiply
then an add (the vector code's vfmul.vv and vfredosum.vs) give the same bits, so every
setup's checksum must agree (else the script exits with status 1).

Two builds of each, as in bench/vs_qemu.py, whose machinery this script imports: **card**
(the simulator's default target, `-mcpu=sifive_x280+zvfbfmin+xsfvfnrclipxfqf`: the X280 with
its vector unit, RVV 1.0 with VLEN 512, which clang vectorises these loops for; the script
lists the vector instructions of each kernel's machine code and says when one has none) and **RV64GC**
(`KMX_CFLAGS=-march=rv64gc`). Setups:

- card sim and RV64GC sim: a komorebi thread through the public API, every datum in a
  region, so through the cache model and the checker (vs_qemu.py's sim setup);
- bare RV64GC: the RV64GC thread's ELF on a plain Unicorn engine, the fastest of
  vs_qemu.py's bare variants (bench/_bare.py), named in the table: all of them are run in
  the first round, and each kernel's fastest of that round in the others (a bare run
  also makes the inputs and the checksum in the engine, which takes longer than the
  kernel);
- qemu card and qemu RV64GC: the same kernel files as a static riscv64 Linux program
  under qemu-riscv64, the card's build with `-cpu rv64,v=true,vlen=512,elen=64,
  vext_spec=v1.0,zba=true,zbb=true,Zfh=true` (QEMU 7.2 has no zvfh property, though it
  runs vector floating point at SEW 16 with F; none of these kernels uses it, and the
  script says if one does). Skipped when qemu-riscv64 is absent.

The host's own limit for the two streaming kernels, measured in the same rounds: numpy's
`3 * x` over stream's input, and numpy's copy of bytecopy's bytes, each into memory already
written once (*touched*) and into fresh zeros allocated as the simulator allocates a
region's DRAM (*fresh*: sim.memory.host.anonymous, in huge pages where the system allows),
whose first write costs the kernel's page faults, as the simulated thread's does; the
table gives card sim over each.

Instructions are counted once per kernel and build, in the simulator, by the kmx_cycles
build (one cycle an instruction; a vector instruction is one). Times are the best of
--repeat runs (default 3), interleaved; the ratios are also given from the medians.
Targets: card sim / qemu card <= 1.0 and card sim / RV64GC sim <= 1.0 on every kernel.
The last line printed is one JSON object.

    python bench/vector.py [--repeat 3] [--quick] [--kernels stream,saxpy,dot,matmul,bytecopy]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import vs_qemu  # noqa: E402
from bench.vs_qemu import (  # noqa: E402
    BARE_VARIANTS,
    CARD,
    QEMU_CARD_CPU,
    RV64GC,
    TENSIX,
    Kernel,
    agree,
    bare_runs,
    best_and_median,
    best_variant,
    build_both,
    cell,
    check_same_code,
    checksum,
    find_qemu,
    function_code,
    over,
    prepare,
    qemu_run,
    rounded,
    sim_run,
)
from komorebi.sim.image.elf import load_image  # noqa: E402
from komorebi.sim.memory import host  # noqa: E402

NAMES = ("stream", "saxpy", "dot", "matmul", "bytecopy")
TARGET_QEMU, TARGET_RV64GC = 1.0, 1.0  # card sim / qemu card, card sim / RV64GC sim


def kernels(quick: bool) -> list[Kernel]:
    theirs = {k.name: k for k in vs_qemu.kernels(quick)}  # stream (64 MiB) and matmul (256)
    floats = (1 if quick else 64) * 2**20 // 4  # 16M float32: 64 MiB a vector
    count = (1 if quick else 64) * 2**20
    return [
        theirs["stream"],
        Kernel("saxpy", 6, floats, {"x": 4 * floats, "y": 4 * floats}, [floats]),
        Kernel("dot", 7, floats, {"x": 4 * floats, "y": 4 * floats}, [floats]),
        theirs["matmul"],
        Kernel("bytecopy", 8, count, {"from": count, "to": count}, [count]),
    ]


# -- the host's own limit ------------------------------------------------------------------

HOST_LIMITS = {"stream": "numpy 3 * x", "bytecopy": "numpy copy"}


def host_limit(kernel: Kernel, fresh: bool) -> float:
    """Seconds the host takes for KERNEL's bytes (stream: 3 * x into an output; bytecopy: a
    copy), into FRESH zeros (as the simulator's DRAM: its first write faults the pages in)
    or into memory written before."""
    if kernel.name == "stream":
        source = kernel.regions["numbers"]
    else:
        source = np.random.default_rng(8).integers(0, 256, kernel.size, dtype=np.uint8)
    block = host.anonymous(source.nbytes, huge=True)
    out = block.array.view(source.dtype)
    if not fresh:
        out[:] = 1
    start = time.perf_counter()
    if kernel.name == "stream":
        np.multiply(source, np.uint32(3), out=out)
    else:
        np.copyto(out, source)
    seconds = time.perf_counter() - start
    del out, block
    return seconds


# -- the card build's vector instructions --------------------------------------------------

# OP-V's funct6 by funct3 kind (i: OPIVV/OPIVX/OPIVI, m: OPMVV/OPMVX, f: OPFVV/OPFVF), for
# the instructions these kernels use; others are named by kind and funct6.
OPV_NAMES = {
    ("i", 0x00): "vadd", ("i", 0x02): "vsub", ("i", 0x0e): "vslideup",
    ("i", 0x0f): "vslidedown", ("i", 0x09): "vand", ("i", 0x0a): "vor",
    ("i", 0x0b): "vxor", ("i", 0x25): "vsll", ("i", 0x28): "vsrl", ("i", 0x18): "vmseq",
    ("m", 0x25): "vmul", ("m", 0x2d): "vmacc", ("m", 0x00): "vredsum",
    ("m", 0x30): "vwaddu", ("m", 0x38): "vwmulu",
    ("f", 0x00): "vfadd", ("f", 0x02): "vfsub", ("f", 0x24): "vfmul", ("f", 0x2c): "vfmacc",
    ("f", 0x28): "vfmadd", ("f", 0x01): "vfredusum", ("f", 0x03): "vfredosum", ("f", 0x12): "vfcvt",
}
KINDS = {0: ("i", ".vv"), 1: ("f", ".vv"), 2: ("m", ".vv"), 3: ("i", ".vi"), 4: ("i", ".vx"), 5: ("f", ".vf"),
         6: ("m", ".vx")}
EEW = {0: 8, 5: 16, 6: 32, 7: 64}  # a vector load's or store's width field


def vector_instructions(code: bytes) -> tuple[Counter, int]:
    """The vector instructions in CODE (RISC-V machine code, compressed or not), by name,
    and how many are floating point at SEW 16 (Zvfh), judged by the vsetvli before each
    in address order."""
    found, zvfh, sew, at = Counter(), 0, None, 0
    while at + 2 <= len(code):
        if code[at] & 3 != 3:  # a compressed instruction
            at += 2
            continue
        word = int.from_bytes(code[at : at + 4], "little")
        at += 4
        opcode, funct3 = word & 0x7F, (word >> 12) & 7
        if opcode in (0x07, 0x27) and funct3 in EEW:  # LOAD-FP / STORE-FP with a vector width
            mop, lumop = (word >> 26) & 3, (word >> 20) & 0x1F
            way = {0: "", 1: "ux", 2: "s", 3: "ox"}[mop]
            if mop == 0 and lumop == 8:
                name = f"v{'l' if opcode == 0x07 else 's'}{(word >> 29) + 1}r.v"
            elif mop == 0 and lumop == 0x0B:
                name = "vlm.v" if opcode == 0x07 else "vsm.v"
            else:
                ff = "ff" if opcode == 0x07 and mop == 0 and lumop == 0x10 else ""
                name = f"v{'l' if opcode == 0x07 else 's'}{way}e{'i' if mop & 1 else ''}{EEW[funct3]}{ff}.v"
            found[name] += 1
        elif opcode == 0x57 and funct3 == 7:  # vsetvli, vsetivli, vsetvl
            if word >> 31 == 0:
                found["vsetvli"] += 1
                sew = 8 << ((word >> 23) & 7)
            elif (word >> 30) == 3:
                found["vsetivli"] += 1
                sew = 8 << ((word >> 23) & 7)
            else:
                found["vsetvl"] += 1
                sew = None
        elif opcode == 0x57:
            kind, suffix = KINDS[funct3]
            funct6, masked, field = word >> 26, not (word >> 25) & 1, (word >> 15) & 0x1F
            name = OPV_NAMES.get((kind, funct6), f"OP{kind.upper()}V funct6 {funct6:#04x}") + suffix
            if (kind, funct6) in {("f", 0x01), ("f", 0x03), ("m", 0x00)}:
                name = name[:-3] + ".vs"
            elif (kind, funct6) == ("i", 0x17):
                name = ("vmerge.v" if masked else "vmv.v.") + suffix[2:] + ("m" if masked else "")
            elif (kind, funct6) == ("f", 0x17):
                name = "vfmerge.vfm" if masked else "vfmv.v.f"
            elif (kind, funct6) == ("i", 0x27) and funct3 == 3:
                name = f"vmv{field + 1}r.v"
            elif (kind, funct6) == ("f", 0x10):
                name = "vfmv.f.s" if funct3 == 1 else "vfmv.s.f"
            elif (kind, funct6) == ("m", 0x10):
                name = "vmv.s.x" if funct3 == 6 else {0: "vmv.x.s", 0x10: "vcpop.m", 0x11: "vfirst.m"}.get(
                    field, "OPMVV funct6 0x10")
            found[name] += 1
            if kind == "f" and sew == 16:
                zvfh += 1
    return found, zvfh


def vector_report(elf: Path, names: list[str]) -> dict[str, dict]:
    """Per kernel of NAMES in the card build's ELF: its vector instructions, printed."""
    report = {}
    print("the card build's vector instructions (each kernel's machine code, decoded):")
    for name in names:
        found, zvfh = vector_instructions(function_code(elf, name))
        report[name] = {"instructions": sorted(found), "zvfh": zvfh}
        listed = ", ".join(sorted(found)) if found else "none: the kernel is not vectorised"
        print(f"  {name:<9} {listed}" + (f"  ({zvfh} floating point at SEW 16: Zvfh)" if zvfh else ""))
    if "bytecopy" in report and not {"vle8.v", "vse8.v"} <= set(report["bytecopy"]["instructions"]):
        print("warning: the card's bytecopy has no vle8.v and vse8.v")
    return report


# -- reporting -----------------------------------------------------------------------------


def print_table(rows: list[dict]) -> None:
    print(f"{'kernel':<10}{'card instr':>13}{'rv64gc instr':>14}{'card ms':>10}{'rv64gc ms':>11}{'bare ms':>10}"
          f"{'qemu card':>11}{'qemu rv64gc':>13}{'card/qemu':>11}{'card/rv64gc':>13}  bare variant")
    ms = lambda s: None if s is None else s * 1e3  # noqa: E731
    for r in rows:
        print(f"{r['kernel']:<10}{r['card_instructions']:>13,}{r['rv64gc_instructions']:>14,}{cell(ms(r['card']), 10)}"
              f"{cell(ms(r['rv64gc']), 11)}{cell(ms(r['bare']), 10)}{cell(ms(r['qemu_card']), 11)}"
              f"{cell(ms(r['qemu_rv64gc']), 13)}{cell(r['card_over_qemu'], 11, 2)}{cell(r['card_over_rv64gc'], 13, 2)}"
              f"  {r['bare_variant']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each setup, best taken (default 3)")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument("--kernels", default=",".join(NAMES), help="which kernels, comma-separated")
    args = parser.parse_args()
    chosen = args.kernels.split(",")
    todo = [k for k in kernels(args.quick) if k.name in chosen]
    if not todo:
        raise SystemExit(f"--kernels: none of {chosen} is {', '.join(NAMES)}")
    TENSIX.mkdir(exist_ok=True)

    qemu = find_qemu()
    scratch = tempfile.TemporaryDirectory(prefix="vector-")
    sim_elf, linux_elf = build_both(Path(scratch.name) / "rv64gc", RV64GC)
    card_elf, card_linux_elf = build_both(Path(scratch.name) / "card", CARD)
    for label, ours, theirs in (("RV64GC", sim_elf, linux_elf), ("card", card_elf, card_linux_elf)):
        check_same_code(label, ours, theirs, [k.name for k in todo])
    vectors = vector_report(card_elf, [k.name for k in todo])
    image = load_image(sim_elf)

    counts, card_counts, sums, programs, layouts = prepare(todo, image)

    setups = ("card", "rv64gc", "qemu_card", "qemu_rv64gc", "host_touched", "host_fresh", *BARE_VARIANTS)
    times = {k.name: {setup: [] for setup in setups} for k in todo}
    chosen_variant: dict[str, list[str]] = {k.name: list(BARE_VARIANTS) for k in todo}
    for _ in range(args.repeat):
        for k in todo:
            found = {"counted": sums[k.name]}
            for setup, flags in (("card", CARD), ("rv64gc", RV64GC)):
                seconds, words = sim_run(programs[k.name], flags)
                times[k.name][setup].append(seconds)
                found[f"{setup} sim"] = checksum(words)
            bare_runs(image, layouts[k.name], k, times[k.name], found, chosen_variant[k.name])
            chosen_variant[k.name] = [best_variant({v: min(times[k.name][v], default=None) for v in BARE_VARIANTS})]
            if qemu is not None:
                seconds, found["qemu card"] = qemu_run(qemu, card_linux_elf, k, QEMU_CARD_CPU)
                times[k.name]["qemu_card"].append(seconds)
                seconds, found["qemu rv64gc"] = qemu_run(qemu, linux_elf, k)
                times[k.name]["qemu_rv64gc"].append(seconds)
            if k.name in HOST_LIMITS:
                times[k.name]["host_touched"].append(host_limit(k, fresh=False))
                times[k.name]["host_fresh"].append(host_limit(k, fresh=True))
            agree(k.name, found)
    scratch.cleanup()

    best, middle = best_and_median(times)
    rows = []
    for k in todo:
        b, m = best[k.name], middle[k.name]
        variant = best_variant(b)
        rows.append({
            "kernel": k.name, "card_instructions": card_counts[k.name], "rv64gc_instructions": counts[k.name],
            "card": b["card"], "rv64gc": b["rv64gc"], "bare": b[variant], "bare_variant": variant,
            "qemu_card": b["qemu_card"], "qemu_rv64gc": b["qemu_rv64gc"],
            "card_over_qemu": over(b["card"], b["qemu_card"]), "card_over_rv64gc": over(b["card"], b["rv64gc"]),
            "median_card_over_qemu": over(m["card"], m["qemu_card"]),
            "median_card_over_rv64gc": over(m["card"], m["rv64gc"]),
            "host_touched": b["host_touched"], "host_fresh": b["host_fresh"],
            "card_over_host_touched": over(b["card"], b["host_touched"]),
            "card_over_host_fresh": over(b["card"], b["host_fresh"]),
            "median": {setup: m[setup] for setup in ("card", "rv64gc", "qemu_card", "qemu_rv64gc")} | {"bare": m[variant]},
        })
    print()
    print(f"best of {args.repeat}, ms (card: -mcpu=sifive_x280+zvfbfmin+xsfvfnrclipxfqf, vectorised; rv64gc: -march=rv64gc; bare: the RV64GC "
          "build on bare Unicorn; qemu card: -cpu with V, VLEN 512):")
    print_table(rows)
    print("medians, ms, and the ratios from them (the machine is noisy; best-of and median can differ):")
    for r in rows:
        med = r["median"]
        line = "  ".join(f"{setup} {cell(None if t is None else t * 1e3, 0).strip()}" for setup, t in med.items())
        ratios = f"card/rv64gc {r['median_card_over_rv64gc']:.2f}"
        if r["median_card_over_qemu"] is not None:
            ratios = f"card/qemu {r['median_card_over_qemu']:.2f}  " + ratios
        print(f"  {r['kernel']:<9} {line}  ->  {ratios}")

    limited = [r for r in rows if r["host_touched"] is not None]
    if limited:
        print("the host's own limit, ms (best of the same rounds), and card sim over it:")
        for r in limited:
            print(f"  {r['kernel']:<9} {HOST_LIMITS[r['kernel']]}: into touched memory {r['host_touched'] * 1e3:.2f} "
                  f"(card sim {r['card_over_host_touched']:.1f}x), into fresh zeros {r['host_fresh'] * 1e3:.2f} "
                  f"(card sim {r['card_over_host_fresh']:.1f}x); card sim over QEMU RV64GC "
                  + (f"{over(r['card'], r['qemu_rv64gc']):.2f}" if r["qemu_rv64gc"] else "not measured"))
    missed = []
    for label, key, limit in (("card sim / qemu card", "card_over_qemu", TARGET_QEMU),
                              ("card sim / RV64GC sim", "card_over_rv64gc", TARGET_RV64GC)):
        measured = [r for r in rows if r[key] is not None]
        met = [r["kernel"] for r in measured if r[key] <= limit]
        miss = [r["kernel"] for r in measured if r[key] > limit]
        missed += [f"{r} ({label})" for r in miss]
        if not measured:
            print(f"target {label} <= {limit:g}: not measured")
            continue
        print(f"target {label} <= {limit:g}: " + (f"met on {', '.join(met)}" if met else "met on none")
              + (f"; missed on {', '.join(miss)}" if miss else ""))
    unvectorised = [name for name, v in vectors.items() if not v["instructions"]]
    if unvectorised:
        print(f"warning: not vectorised in the card build: {', '.join(unvectorised)}")
    print(json.dumps({
        "benchmark": "vector", "quick": args.quick, "repeat": args.repeat,
        "kernels": {r["kernel"]: {
            "card_instructions": r["card_instructions"], "rv64gc_instructions": r["rv64gc_instructions"],
            "card_ms": rounded(r["card"] * 1e3), "rv64gc_ms": rounded(r["rv64gc"] * 1e3),
            "bare_ms": rounded(r["bare"] * 1e3), "bare_variant": r["bare_variant"],
            "qemu_card_ms": rounded(None if r["qemu_card"] is None else r["qemu_card"] * 1e3),
            "qemu_rv64gc_ms": rounded(None if r["qemu_rv64gc"] is None else r["qemu_rv64gc"] * 1e3),
            "card_over_qemu": rounded(r["card_over_qemu"], 3), "card_over_rv64gc": rounded(r["card_over_rv64gc"], 3),
            "host_touched_ms": rounded(None if r["host_touched"] is None else r["host_touched"] * 1e3),
            "host_fresh_ms": rounded(None if r["host_fresh"] is None else r["host_fresh"] * 1e3),
            "median_card_over_qemu": rounded(r["median_card_over_qemu"], 3),
            "median_card_over_rv64gc": rounded(r["median_card_over_rv64gc"], 3),
            "vector": vectors[r["kernel"]]["instructions"],
        } for r in rows},
        "missed": missed,
    }))


if __name__ == "__main__":
    main()
