"""What the simulated X280 runs, and the compiler's target for it.

The card's X280 cores run `rv64imafdcv_zicsr_zifencei_zfh_zba_zbb` (ISA_STRING: the
`riscv,isa` of the card's device tree, tt-bh-linux x280.dts). The simulator runs all of it
but the vector unit (V), which comes with its own issue: RV64GC in the engine, and Zba,
Zbb and Zfh (with Zfhmin) in C (sim/native/isa.c). So threads are compiled, by default,
for DEFAULT_MARCH: the X280 without V.

A thread's build may name its target in KMX_CFLAGS, in gcc's spelling (`-march=rv64gc_zba`)
or clang's and zig's (`-mcpu=sifive_x280`, `-mcpu=baseline_rv64+zbb`). zig's clang takes
only `-mcpu`, so `zig_cpu` translates `-march` for it; and a target that asks for what the
simulated X280 does not have is refused before anything is compiled (TargetError), naming
what it asked for and what the simulator runs.
"""

from __future__ import annotations

import re
from typing import Sequence

ISA_STRING = "rv64imafdcv_zicsr_zifencei_zfh_zba_zbb"
DEFAULT_MARCH = "rv64gc_zba_zbb_zfh"
RUNS = "rv64imafdc_zicsr_zifencei_zba_zbb_zfh_zfhmin"  # what the simulator runs (no V yet)

# Extensions the simulator runs, and the smaller ones they contain (which compilers also
# accept by name): M has Zmmul, A has Zaamo and Zalrsc, C has Zca and Zcd, Zfh has Zfhmin;
# the counters (Zicntr) run as stand-ins (sim.isa.stand_in).
SIMULATED = frozenset(
    "i m a f d c zicsr zifencei zicntr zmmul zaamo zalrsc zca zcd zba zbb zfh zfhmin".split()
)
# The X280's vector unit, not compiled for until it is simulated whole.
VECTOR = re.compile(r"^(v|zve\d+[xfd]|zvl\d+b|zvfh|zvfhmin|zvbb|zvkb|zvbc|zvk\w*)$")
EXPANDS = {"g": ("i", "m", "a", "f", "d", "zicsr", "zifencei")}
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
}

# -mcpu names of the X280 (clang's, zig's), and the extensions each gives.
X280_CPUS = {"sifive_x280", "sifive-x280"}
BASELINES = {"baseline_rv64": ("g", "c"), "generic_rv64": ("i",), "generic-rv64": ("i",), "generic": ("i",)}


class TargetError(ValueError):
    """KMX_CFLAGS names a target the simulated X280 does not run."""


def _runs_line() -> str:
    return (
        f"The simulated X280 runs {RUNS} (the card's {ISA_STRING} but the vector unit, "
        f"which is simulated only in part so far); the default target is -march={DEFAULT_MARCH}."
    )


def _refuse(flag: str, what: str) -> TargetError:
    return TargetError(f"KMX_CFLAGS asks for {flag}: {what}. {_runs_line()}")


def _check(flag: str, extensions: Sequence[str]) -> list[str]:
    """The EXTENSIONS (lower case, G expanded), checked against what the simulator runs."""
    out: list[str] = []
    for name in extensions:
        for part in EXPANDS.get(name, (name,)):
            if part in SIMULATED or part in HINTS:
                if part not in out:
                    out.append(part)
            elif VECTOR.match(part):
                raise _refuse(flag, f"the vector extension {part.upper() if len(part) == 1 else part}, "
                                    "and the simulator does not run the whole vector unit yet")
            else:
                named = NAMES.get(part)
                what = f"{part} ({named})" if named else part
                raise _refuse(flag, f"the extension {what}, which the X280 does not have")
    return out


def march_extensions(march: str) -> list[str]:
    """The extensions of a gcc-style -march string ("rv64gc_zba_zbb"), checked."""
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
    # zig's changes: +feature adds one, -feature takes one away (sifive_x280-v: no V)
    changes = [(c[0], c[1:].lower().replace("-", "_")) for c in re.findall(r"[+-][^+-]+", mcpu[len(name):])]
    features = ["g", "c", "v", "zba", "zbb", "zfh"] if name in X280_CPUS else list(BASELINES[name])
    for sign, feature in changes:
        if feature in TUNING:
            continue
        parts = EXPANDS.get(feature, (feature,))
        if sign == "+":
            features += [p for p in parts if p not in features]
        else:
            features = [f for f in (part for each in features for part in EXPANDS.get(each, (each,)))
                        if f not in parts and not (f == "v" and feature.startswith("zv"))]
    return _check(flag, features)


def zig_cpu(extensions: Sequence[str]) -> str:
    """zig's -mcpu for EXTENSIONS."""
    return "-mcpu=generic_rv64" + "".join(f"+{e}" for e in sorted(set(extensions) - {"i"}))


def target(flags: Sequence[str]) -> tuple[list[str], list[str]]:
    """The extensions FLAGS (KMX_CFLAGS, split) ask for, and FLAGS without them. As in gcc
    and clang, an -march names the instruction set whatever -mcpu says (the last -march
    of several); without an -march the last -mcpu names it; without either, the default.
    What names the instruction set is checked. (zig takes only the -mcpu the simulator
    makes of it, so an -mcpu beside an -march is dropped for zig.)"""
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
    return march_extensions(DEFAULT_MARCH), rest
