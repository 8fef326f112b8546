"""What the simulated X280 runs, and the compiler's target for it.

The card's X280 cores run `rv64imafdcv_zicsr_zifencei_zfh_zba_zbb` (ISA_STRING: the
`riscv,isa` of the card's device tree, tt-bh-linux x280.dts), and their vector unit is
RVV 1.0 with VLEN 512, ELEN 64 and Zvfh (half-precision vector floating point): the CPU
that clang and zig call `sifive_x280`. Probed on a P300 with guarded instructions, the
chip also runs two vector extensions that neither the device tree nor that CPU names
(MEASURED): Zvfbfmin (conversions between bfloat16 and binary32) and SiFive's
Xsfvfnrclipxfqf (binary32 to int8 or uint8, scaled, rounded and clipped); and it traps on
Zbs, Zicond, Zbc, Zfbfmin, Zvfbfwma, Zvkb, Zvbb, Zicbom and Zfa. The simulator runs all
the X280 has: RV64GC in the engine, Zba, Zbb and Zfh (with Zfhmin) in C
(sim/native/isa.c), and the vector unit, the two measured extensions with it, in C
(sim/native/vector/). So threads are compiled, by default, for the X280 itself:
DEFAULT_CPU, zig's `-mcpu=sifive_x280+zvfbfmin+xsfvfnrclipxfqf`, which tells the compiler
VLEN is 512, gives it the X280's scheduling model and lets it use the measured
extensions (DEFAULT_MARCH is the same target in gcc's spelling).

A thread's build may name its target in KMX_CFLAGS, in gcc's spelling (`-march=rv64gcv_zba`)
or clang's and zig's (`-mcpu=sifive_x280`, `-mcpu=baseline_rv64+zbb`). zig's clang takes
only `-mcpu`, so `zig_cpu` translates `-march` for it (to `-mcpu=sifive_x280`, with a
`+` for each measured extension named, when the extensions include all of that CPU's,
else to `generic_rv64+...`); and a target that asks for what the X280 does not have is
refused before anything is compiled (TargetError), naming what it asked for and what the
simulator runs.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from ..build import libc

ISA_STRING = "rv64imafdcv_zicsr_zifencei_zfh_zba_zbb"
# The X280's extensions that zig's and clang's CPU sifive_x280 lacks, measured on a P300.
MEASURED = ("zvfbfmin", "xsfvfnrclipxfqf")
DEFAULT_CPU = "sifive_x280+zvfbfmin+xsfvfnrclipxfqf"
DEFAULT_MARCH = "rv64gcv_zba_zbb_zfh_zvfh_zvfbfmin_zvl512b_xsfvfnrclipxfqf"  # (DEFAULT_CPU in gcc's spelling)
RUNS = "rv64imafdcv_zicsr_zifencei_zba_zbb_zfh_zfhmin_zvfbfmin_zvfh_zvfhmin_zvl512b_xsfvfnrclipxfqf"  # what it runs
VLEN = 512

# Extensions the simulator runs, and the smaller ones they contain (which compilers also
# accept by name): M has Zmmul, A has Zaamo and Zalrsc, C has Zca and Zcd, Zfh has Zfhmin,
# V has the Zve* subsets and Zvl128b, Zvfh has Zvfhmin; the counters (Zicntr) run as
# stand-ins (sim.isa.stand_in). ZVL matches Zvl32b to Zvl512b too (VLEN is at least so
# many bits: true of the X280's 512), and the Zvl1024b and up it is refused for.
SIMULATED = frozenset(
    "i m a f d c zicsr zifencei zicntr zmmul zaamo zalrsc zca zcd zba zbb zfh zfhmin "
    "v zve32x zve32f zve64x zve64f zve64d zvfh zvfhmin zvfbfmin xsfvfnrclipxfqf".split()
)
ZVL = re.compile(r"^zvl(\d+)b$")
EXPANDS = {"g": ("i", "m", "a", "f", "d", "zicsr", "zifencei")}
# What each extension brings with it (RISC-V's "implies", as LLVM has them), for comparing
# a target with the X280's and for what taking one away takes with it.
IMPLIES = {
    "g": ("i", "m", "a", "f", "d", "zicsr", "zifencei"),
    "m": ("zmmul",), "a": ("zaamo", "zalrsc"), "c": ("zca",), "f": ("zicsr",), "d": ("f",),
    "zfh": ("zfhmin",), "zfhmin": ("f",),
    "v": ("zve64d", "zvl128b"), "zve64d": ("zve64f", "d"), "zve64f": ("zve64x", "zve32f"),
    "zve64x": ("zve32x", "zvl64b"), "zve32f": ("zve32x", "f"), "zve32x": ("zvl32b", "zicsr"),
    "zvfh": ("zvfhmin", "zfhmin"), "zvfhmin": ("zve32f",),
    "zvfbfmin": ("zve32f",), "xsfvfnrclipxfqf": ("zve32f",),
}
# Extensions that are hints the engine runs as what they are encoded as (zihintpause's
# pause is a fence, zihintntl's hints are adds to x0): accepted, and passed on. LLVM
# features that are not instructions at all: accepted, and left out.
HINTS = frozenset({"zihintpause", "zihintntl"})
TUNING = frozenset({"relax", "save_restore", "unaligned_scalar_mem", "unaligned_vector_mem", "fast_unaligned_access",
                    "no_default_unroll", "short_forward_branch_opt"})  # (zig's names; clang's have - for _)

# What each extension a compiler knows, that the X280 lacks, is called (for the message).
NAMES = {
    "zbs": "single-bit instructions",
    "zbc": "carry-less multiplication",
    "zbkb": "bit manipulation for cryptography",
    "zicond": "conditional zero",
    "zfa": "additional floating point",
    "zicbom": "cache-block management",
    "zicboz": "cache-block zero",
    "zicbop": "cache-block prefetch",
    "zcb": "more compressed instructions",
    "zacas": "compare-and-swap",
    "zawrs": "wait on reservation set",
    "q": "quad precision",
    "h": "the hypervisor",
    "e": "the embedded base (16 registers)",
    "zvbb": "vector basic bit manipulation",
    "zvbc": "vector carry-less multiplication",
    "zvkb": "vector bit manipulation for cryptography",
    "zvkg": "vector GCM and GMAC",
    "zvkned": "vector AES",
    "zvknha": "vector SHA-256",
    "zvknhb": "vector SHA-256 and SHA-512",
    "zvksed": "vector SM4",
    "zvksh": "vector SM3",
    "zvkt": "vector data-independent execution latency",
    "zvkn": "the vector NIST cryptography",
    "zvknc": "the vector NIST cryptography with carry-less multiplication",
    "zvkng": "the vector NIST cryptography with GCM",
    "zvks": "the vector ShangMi cryptography",
    "zvksc": "the vector ShangMi cryptography with carry-less multiplication",
    "zvksg": "the vector ShangMi cryptography with GCM",
    "zfbfmin": "scalar BF16 conversions",
    "zvfbfwma": "vector BF16 widening multiply-add",
}

# -mcpu names of the X280 (clang's, zig's), and the extensions the CPU gives (X280_CPU);
# the X280's own, which the simulator runs and compiles for by default, are those and
# the measured ones (X280).
X280_CPUS = {"sifive_x280", "sifive-x280"}
X280_CPU = ("g", "c", "v", "zba", "zbb", "zfh", "zvfh", "zvl512b")
X280 = (*X280_CPU, *MEASURED)
BASELINES = {"baseline_rv64": ("g", "c"), "generic_rv64": ("i",), "generic-rv64": ("i",), "generic": ("i",)}


class TargetError(ValueError):
    """KMX_CFLAGS names a target the simulated X280 does not run."""


def _runs_line() -> str:
    return (
        f"The simulated X280 runs {RUNS} (the card's {ISA_STRING}, whose vector unit has "
        f"VLEN {VLEN} and Zvfh, and, measured on a P300, Zvfbfmin and SiFive's Xsfvfnrclipxfqf); "
        f"the default target is the X280 itself, -mcpu={DEFAULT_CPU} (-march={DEFAULT_MARCH} in "
        f"gcc's spelling)."
    )


def _refuse(flag: str, what: str) -> TargetError:
    return TargetError(f"KMX_CFLAGS asks for {flag}: {what}. {_runs_line()}")


def _vector(name: str) -> bool:
    """NAME is of the vector unit (V, a Zve*, a Zvl*b, a Zv* the X280 runs or lacks, SiFive's
    Xsfv*)."""
    return name == "v" or name.startswith(("zv", "xsfv"))


def implied(extensions: Iterable[str]) -> frozenset[str]:
    """EXTENSIONS with every extension they imply (G as IMAFD, Zicsr and Zifencei; V is
    Zve64d and Zvl128b, and so on down; Zvl512b is Zvl256b and less; C with D is Zcd)."""
    out: set[str] = set()
    todo = list(extensions)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        todo += IMPLIES.get(name, ())
        if name in EXPANDS:
            continue
        out.add(name)
        bits = ZVL.match(name)
        if bits and int(bits.group(1)) > 32:
            todo.append(f"zvl{int(bits.group(1)) // 2}b")
    if "c" in out and "d" in out:
        out.add("zcd")
    return frozenset(out)


def _check(flag: str, extensions: Sequence[str]) -> list[str]:
    """The EXTENSIONS (lower case, G expanded), checked against what the simulator runs."""
    out: list[str] = []
    for name in extensions:
        for part in EXPANDS.get(name, (name,)):
            bits = ZVL.match(part)
            if part in SIMULATED or part in HINTS or (bits and 32 <= int(bits.group(1)) <= VLEN):
                if part not in out:
                    out.append(part)
            elif bits and int(bits.group(1)) > VLEN:
                raise _refuse(flag, f"the extension {part} (vector registers of at least {bits.group(1)} bits), "
                                    f"and the X280's vector registers are {VLEN} bits (VLEN {VLEN})")
            else:
                named = NAMES.get(part)
                what = f"{part} ({named})" if named else part
                raise _refuse(flag, f"the extension {what}, which the X280 does not have")
    return out


def march_extensions(march: str) -> list[str]:
    """The extensions of a gcc-style -march string ("rv64gcv_zba_zbb"), checked."""
    flag = f"-march={march}"
    text = march.lower()
    if text.startswith("rv32"):
        raise _refuse(flag, "a 32-bit target (RV32), and the X280 is a 64-bit core (RV64)")
    if not text.startswith("rv64") or len(text) < 5:
        raise _refuse(flag, "no RISC-V ISA string this simulator reads (it starts rv64i or rv64g)")
    parts = text[4:].split("_")
    singles = re.sub(r"\d+(p\d+)?", "", parts[0])  # (version numbers: rv64i2p1)
    if not singles or singles[0] not in "ieg":
        what = f"the base {singles[0]!r}" if singles else "no base"
        raise _refuse(flag, f"{what}: a RISC-V ISA string starts rv64i, rv64e or rv64g")
    names = list(singles)
    names += [re.sub(r"\d+p\d+$", "", part) for part in parts[1:] if part]
    return _check(flag, names)


def mcpu_extensions(mcpu: str) -> list[str]:
    """The extensions of a clang or zig -mcpu ("sifive_x280", "baseline_rv64+zbb-c"), checked."""
    flag = f"-mcpu={mcpu}"
    if "rv32" in mcpu.lower():
        raise _refuse(flag, "a 32-bit target (RV32), and the X280 is a 64-bit core (RV64)")
    known = sorted((*X280_CPUS, *BASELINES), key=len, reverse=True)  # (names with a hyphen: gcc's)
    name = next((k for k in known if mcpu == k or (mcpu.startswith(k) and mcpu[len(k)] in "+-")), None)
    if name is None:
        raise _refuse(flag, f"a CPU the simulator does not know ({re.split(r'[+]', mcpu)[0]}); name the "
                            f"extensions with -march, as -march={DEFAULT_MARCH}")
    # zig's changes: +feature adds one, -feature takes one away with what needs it
    # (sifive_x280-v: the X280 without its vector unit, so without any Zv* either)
    changes = [(c[0], c[1:].lower().replace("-", "_")) for c in re.findall(r"[+-][^+-]+", mcpu[len(name):])]
    features = list(X280_CPU) if name in X280_CPUS else list(BASELINES[name])
    for sign, feature in changes:
        if feature in TUNING:
            continue
        parts = EXPANDS.get(feature, (feature,))
        if sign == "+":
            features += [p for p in parts if p not in features]
        else:
            features = [f for f in (part for each in features for part in EXPANDS.get(each, (each,)))
                        if not (implied([f]) & set(parts)) and not (feature == "v" and _vector(f))]
    return _check(flag, features)


def zig_cpu(extensions: Sequence[str]) -> str:
    """zig's -mcpu for EXTENSIONS: the X280's own CPU when they include all of its
    extensions, with a + for each further one (the measured ones first: DEFAULT_CPU for
    the whole X280); else generic_rv64 and a + for each."""
    cpu = implied(X280_CPU)
    if implied(extensions) >= cpu:
        extra = sorted({e for e in extensions if e not in cpu and e not in EXPANDS},
                       key=lambda e: (MEASURED.index(e) if e in MEASURED else len(MEASURED), e))
        return "-mcpu=sifive_x280" + "".join(f"+{e}" for e in extra)
    return "-mcpu=generic_rv64" + "".join(f"+{e}" for e in sorted(set(extensions) - {"i"}))


# The C library a thread links is built for one of two CPUs (sim.build.libc, which ships
# both): the X280's own for a thread built for all of it, else plain RV64GC.
LIBRARY_CPUS = tuple(libc.CPUS.values())


def library_cpu(extensions: Sequence[str]) -> str:
    """zig's -mcpu for the C library a thread of EXTENSIONS links: the X280's own build
    (-mcpu=sifive_x280, without the measured extensions, which the library has no use for)
    for a thread built for all of that CPU, the X280's default among them; else RV64GC's."""
    return LIBRARY_CPUS[0] if implied(extensions) >= implied(X280_CPU) else LIBRARY_CPUS[1]


def target(flags: Sequence[str]) -> tuple[list[str], list[str]]:
    """The extensions FLAGS (KMX_CFLAGS, split) ask for, and FLAGS without them. As in gcc
    and clang, an -march names the instruction set whatever -mcpu says (the last -march
    of several); without an -march the last -mcpu names it; without either, the default
    (the X280). What names the instruction set is checked. (zig takes only the -mcpu the
    simulator makes of it, so an -mcpu beside an -march is dropped for zig.)"""
    marches, mcpus, rest = [], [], []
    for flag in flags:
        if flag.startswith("-march="):
            marches.append(flag.split("=", 1)[1])
        elif flag.startswith("-mcpu="):
            mcpus.append(flag.split("=", 1)[1])
        else:
            rest.append(flag)
    if marches:
        return march_extensions(marches[-1]), rest
    if mcpus:
        return mcpu_extensions(mcpus[-1]), rest
    return mcpu_extensions(DEFAULT_CPU), rest
