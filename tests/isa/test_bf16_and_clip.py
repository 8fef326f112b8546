"""The X280's two vector extensions beyond RVV 1.0 and Zvfh, measured on a P300 and run by
the vector unit (sim/native/vector/float.c): Zvfbfmin's conversions between bfloat16 and
binary32 (vfwcvtbf16.f.f.v, vfncvtbf16.f.f.w) and SiFive's Xsfvfnrclipxfqf
(sf.vfnrclip.x.f.qf, sf.vfnrclip.xu.f.qf: binary32 times a scalar, rounded and clipped to
int8 or uint8), run by compiled threads on the simulator against a plain model of each
instruction written here: every legal SEW and LMUL, masked and not, vstart and tails, every
rounding mode, NaNs, infinities, ties, overflow, subnormals and the clip's edges, the
destination's bytes and fflags compared whole. Then what the unit refuses.

The model's arithmetic is tests/isa/test_softfloat.py's oracle (exact rationals): a binary32
product rounded by frm, a value rounded to bfloat16 or binary32. What the clip does where
SiFive's description leaves it open is docs/simulator.md's (Xsfvfnrclipxfqf): the product
rounded to binary32 by frm, then converted by frm and clipped as a RISC-V conversion to a
narrower integer saturates, a NaN to 127 or 255, with fflags NV for a NaN or a clipped value;
vxsat untouched."""

from __future__ import annotations

import math
import random
import struct
from fractions import Fraction

import numpy as np
import pytest

import komorebi as km
from tests.isa.test_softfloat import NV, NX, RDN, RMM, RNE, RTZ, RUP, Fmt, converted, expected
from tests.threads import program_for, run_to_end

WIDEN, NARROW, CLIP, CLIPU = range(4)
NAMES = {WIDEN: "vfwcvtbf16.f.f.v v8, v16", NARROW: "vfncvtbf16.f.f.w v8, v16",
         CLIP: "sf.vfnrclip.x.f.qf v8, v16, fa0", CLIPU: "sf.vfnrclip.xu.f.qf v8, v16, fa0"}
SEW = {WIDEN: 16, NARROW: 16, CLIP: 8, CLIPU: 8}
VLENB = 64
LMULS = {0: 1, 1: 2, 2: 4, 3: 8, 5: Fraction(1, 8), 6: Fraction(1, 4), 7: Fraction(1, 2)}  # vlmul -> LMUL
LEGAL = {  # the LMULs each takes (the wide side's EMUL, 2 or 4 times LMUL, at most 8; SEW <= LMUL * 64)
    WIDEN: (6, 7, 0, 1, 2), NARROW: (6, 7, 0, 1, 2), CLIP: (5, 6, 7, 0, 1), CLIPU: (5, 6, 7, 0, 1)}
FIELDS = 8  # uint32 a case: op, vtype, avl, vstart, frm, masked, the scale's bits, (unused)

THREAD = r"""
#include "kmx.h"
/* One instruction a case, all of it in one asm statement (the compiler, building for the
 * X280, uses vector registers itself between statements): v16-v23 and v8-v15 loaded whole,
 * v0 the mask, vl and vtype, frm, vstart, then the instruction, fflags read, v8-v15 stored. */
#define CASE(INSN)                                                                          \
    __asm__ volatile(".option push\n.option arch, +v, +zvfbfmin, +xsfvfnrclipxfqf\n"       \
                     "vl8re8.v v16, (%[src])\n vl8re8.v v8, (%[dst])\n vl1re8.v v0, (%[mask])\n" \
                     "vsetvl t0, %[avl], %[vtype]\n fmv.w.x fa0, %[scale]\n csrw frm, %[frm]\n" \
                     "csrw fflags, zero\n csrw vstart, %[vstart]\n" INSN "\n"               \
                     "csrr %[flags], fflags\n csrw frm, zero\n vs8r.v v8, (%[out])\n.option pop\n" \
                     : [flags] "=&r"(flags[i])                                              \
                     : [src] "r"(src + 512 * i), [dst] "r"(dst + 512 * i), [mask] "r"(mask + 64 * i), \
                       [avl] "r"((uint64_t)c[2]), [vtype] "r"((uint64_t)c[1]), [scale] "r"((uint64_t)c[6]), \
                       [frm] "r"((uint64_t)c[4]), [vstart] "r"((uint64_t)c[3]), [out] "r"(out + 512 * i) \
                     : "memory", "t0", "fa0", "v0", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", \
                       "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23")

int kmx_main(int core) {
    uint64_t bytes;
    const uint32_t *cases = (const uint32_t *)kmx_region(0, &bytes);
    const uint8_t *src = (const uint8_t *)kmx_region(1, 0), *dst = (const uint8_t *)kmx_region(2, 0);
    const uint8_t *mask = (const uint8_t *)kmx_region(3, 0);
    uint8_t *out = (uint8_t *)kmx_region(4, 0);
    uint32_t *flags = (uint32_t *)kmx_region(5, 0);
    for (int r = 0; r < 4; r++) kmx_invalidate(r);
    for (uint64_t i = 0; i < bytes / 32; i++) {
        const uint32_t *c = cases + 8 * i;
        switch (c[0] * 2 + c[5]) {
        case 0: CASE("vfwcvtbf16.f.f.v v8, v16"); break;
        case 1: CASE("vfwcvtbf16.f.f.v v8, v16, v0.t"); break;
        case 2: CASE("vfncvtbf16.f.f.w v8, v16"); break;
        case 3: CASE("vfncvtbf16.f.f.w v8, v16, v0.t"); break;
        case 4: CASE("sf.vfnrclip.x.f.qf v8, v16, fa0"); break;
        case 5: CASE("sf.vfnrclip.x.f.qf v8, v16, fa0, v0.t"); break;
        case 6: CASE("sf.vfnrclip.xu.f.qf v8, v16, fa0"); break;
        default: CASE("sf.vfnrclip.xu.f.qf v8, v16, fa0, v0.t"); break;
        }
    }
    kmx_flush(4);
    kmx_flush(5);
    return core;
}
"""

BF16, F32 = Fmt(3), Fmt(1)


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def narrow(a: int, rm: int) -> tuple[int, int]:
    """binary32 A to bfloat16, rounded by RM: (bits, flags)."""
    return converted(F32, BF16, a, rm)


def widen(a: int) -> tuple[int, int]:
    """bfloat16 A to binary32: exact; a NaN is binary32's canonical NaN (NV if signalling)."""
    if BF16.value(a) is None:
        return F32.nan, NV if BF16.is_snan(a) else 0
    return a << 16, 0


def clip(a: int, scale: int, signed: bool, rm: int) -> tuple[int, int]:
    """sf.vfnrclip.x[u].f.qf of one element: the binary32 product rounded by RM, then to an
    integer by RM, clipped to int8 or uint8 (a NaN as +infinity): (the byte, flags)."""
    product, flags = expected(1, "mul", [a, scale], rm)
    lo, hi = (-128, 127) if signed else (0, 255)
    v = F32.value(product)
    if v is None or (isinstance(v, float) and v > 0):
        return hi & 0xFF, flags | NV
    if isinstance(v, float):
        return lo & 0xFF, flags | NV
    n = math.floor(v)
    rest = v - n
    up = {RNE: rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n & 1), RTZ: n < 0 and rest > 0,
          RDN: False, RUP: rest > 0, RMM: rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n >= 0)}[rm]
    r = n + up
    if r < lo or r > hi:
        return (lo if r < lo else hi) & 0xFF, flags | NV
    return r & 0xFF, flags | (NX if rest else 0)


def vlmax(op: int, vlmul: int) -> int:
    return int(LMULS[vlmul] * VLENB * 8 // SEW[op])


def model(op, vtype, avl, vstart, rm, masked, scale, src: bytes, dst: bytes, mask: bytes):
    """What the X280 leaves in v8-v15 and fflags: the active body elements converted, the
    rest (prestart, masked off, tail) as they were."""
    vl = min(avl, vlmax(op, vtype & 7))
    out = bytearray(dst)
    flags = 0
    width = {WIDEN: (2, 4), NARROW: (4, 2), CLIP: (4, 1), CLIPU: (4, 1)}[op]
    for i in range(vstart, vl):
        if masked and not mask[i // 8] >> (i % 8) & 1:
            continue
        a = int.from_bytes(src[width[0] * i:width[0] * (i + 1)], "little")
        if op == WIDEN:
            r, f = widen(a)
        elif op == NARROW:
            r, f = narrow(a, rm)
        else:
            r, f = clip(a, scale, op == CLIP, rm)
        out[width[1] * i:width[1] * (i + 1)] = r.to_bytes(width[1], "little")
        flags |= f
    return bytes(out), flags


def _f32_values(rng: random.Random, count: int) -> list[int]:
    """binary32s of every kind: specials, ties and near-ties for bfloat16, subnormals, the
    largest, and plain numbers."""
    specials = [0, F32.sign, F32.inf, F32.inf | F32.sign, F32.nan, F32.inf | 1, F32.inf | F32.sign | 0x12345,
                0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 1, 0x8000, 0x807FFFFF, 0x007F8000, 0x00008000,
                0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001, 0xBF808000, 0x7FC12345]
    out = []
    for _ in range(count):
        kind = rng.randrange(4)
        if kind == 0:
            out.append(rng.choice(specials))
        elif kind == 1:  # the 16 bits a narrowing drops: a tie, just off one, nothing, all
            out.append(rng.getrandbits(16) << 16 | rng.choice([0x8000, 0x7FFF, 0x8001, 0, 0xFFFF]))
        else:
            out.append(rng.getrandbits(32))
    return out


def _clip_values(rng: random.Random, count: int) -> list[int]:
    """binary32s around the clip's edges and its ties (scaled by 1, 0.5 or 3), and specials."""
    edges = [127.0, 127.4, 127.5, 127.6, 128.0, -128.0, -128.4, -128.5, -128.6, -129.0, 255.0, 255.4, 255.5,
             255.6, 256.0, -0.4, -0.5, -0.6, -1.0, 0.5, 1.5, 2.5, -1.5, -2.5, 0.0, -0.0, 1e-40, 3e38, -3e38, 1e30]
    specials = [F32.inf, F32.inf | F32.sign, F32.nan, F32.inf | 1, F32.sign | F32.nan, 0x00000001]
    out = []
    for _ in range(count):
        kind = rng.randrange(4)
        if kind == 0:
            out.append(f32(rng.choice(edges)))
        elif kind == 1:
            out.append(rng.choice(specials))
        elif kind == 2:
            out.append(f32(rng.randrange(-600, 600) / 2 + rng.choice([0, 0, 1e-5, -1e-5])))
        else:
            out.append(f32(rng.uniform(-300, 300)))
    return out


def _cases(seed: int):
    """(case fields, source, destination, mask) for every op, legal LMUL, masked or not,
    vstart 0 or not, all of the group or a tail, the rounding modes in turn."""
    rng = random.Random(seed)
    scales = [f32(1.0), f32(0.5), f32(3.0), f32(-1.0), f32(2.0**-130), f32(1e30), F32.inf, F32.nan, 0, F32.inf | 1]
    cases = []
    for op in (WIDEN, NARROW, CLIP, CLIPU):
        for vlmul in LEGAL[op]:
            for masked in (0, 1):
                for vstart, tail in ((0, False), (3, True), (0, True), (5, False)):
                    top = vlmax(op, vlmul)
                    avl = top if not tail else max(1, top - rng.randrange(1, 5))
                    if op == WIDEN:  # source: bfloat16s (the upper halves of binary32s), 2 bytes each
                        words = _f32_values(rng, 256)
                        src = b"".join((w >> 16).to_bytes(2, "little") for w in words)
                    elif op == NARROW:
                        src = b"".join(w.to_bytes(4, "little") for w in _f32_values(rng, 128))
                    else:
                        src = b"".join(w.to_bytes(4, "little") for w in _clip_values(rng, 128))
                    rm = len(cases) % 5
                    scale = rng.choice(scales) if op in (CLIP, CLIPU) and len(cases) % 3 == 0 else f32(rng.choice(
                        [1.0, 0.5, 3.0, 1.0]))
                    vtype = vlmul | (1 if SEW[op] == 16 else 0) << 3 | rng.randrange(4) << 6  # (ta, ma: either)
                    fields = [op, vtype, avl, vstart, rm, masked, scale, 0]
                    cases.append((fields, src.ljust(512, b"\0"), rng.randbytes(512), rng.randbytes(64)))
    # the narrowing and the clip with frm 0 to 4 once more each at LMUL 1, and the exact widening with frm
    # holding a reserved mode (5): it does not round, so it runs
    for rm in range(5):
        for op in (NARROW, CLIP):
            words = _f32_values(rng, 128) if op == NARROW else _clip_values(rng, 128)
            src = b"".join(w.to_bytes(4, "little") for w in words)
            vtype = (1 if op == NARROW else 0) << 3
            cases.append(([op, vtype, 1000, 0, rm, 0, f32(1.0), 0], src, rng.randbytes(512), rng.randbytes(64)))
    src = b"".join((w >> 16).to_bytes(2, "little") for w in _f32_values(rng, 256))
    cases.append(([WIDEN, 1 << 3, 1000, 0, 5, 0, 0, 0], src, rng.randbytes(512), rng.randbytes(64)))
    # vstart at or past vl: no element is written, and no flag raised
    for op in (WIDEN, NARROW, CLIP, CLIPU):
        src = b"".join(w.to_bytes(4, "little") for w in _clip_values(rng, 128))
        vtype = (1 if SEW[op] == 16 else 0) << 3
        for vstart in (6, 9):
            cases.append(([op, vtype, 6, vstart, 0, 0, F32.nan, 0], src, rng.randbytes(512), rng.randbytes(64)))
    return cases


@pytest.mark.parametrize("seed", [1, 2])
def test_the_conversions_and_the_clip_give_what_the_model_says(tmp_path, seed):
    cases = _cases(seed)
    fields = np.array([c[0] for c in cases], dtype=np.uint32)
    regions = {
        "cases": fields,
        "src": np.frombuffer(b"".join(c[1] for c in cases), dtype=np.uint8),
        "dst": np.frombuffer(b"".join(c[2] for c in cases), dtype=np.uint8),
        "mask": np.frombuffer(b"".join(c[3] for c in cases), dtype=np.uint8),
        "out": 512 * len(cases),
        "flags": 4 * len(cases),
    }
    result, run = run_to_end(program_for(THREAD, tmp_path, regions=regions), timeout=120)
    assert result.code == 0
    out = run.thread.read("out").tobytes()
    flags = run.thread.read("flags").view(np.uint32)
    wrong = []
    for i, (f, src, dst, mask) in enumerate(cases):
        op, vtype, avl, vstart, rm, masked, scale, _ = f
        want, want_flags = model(op, vtype, avl, vstart, rm, masked, scale, src, dst, mask)
        got = out[512 * i:512 * (i + 1)]
        if got != want or int(flags[i]) != want_flags:
            at = next((k for k in range(512) if got[k] != want[k]), None)
            wrong.append(f"case {i}: {NAMES[op]}{', v0.t' if masked else ''} vtype {vtype:#x} avl {avl} "
                         f"vstart {vstart} frm {rm} scale {scale:#x}: first differing byte {at}, "
                         f"flags {int(flags[i])} (want {want_flags})")
    assert wrong == [], "\n".join(wrong[:10])
    assert len(cases) > 150


REFUSED = r"""
#include "kmx.h"
int kmx_main(int core) {
    __asm__ volatile(".option push\n.option arch, +v\n"
        "csrwi frm, FRM\n fmv.w.x fa0, zero\n vsetivli zero, 4, VTYPE\n .word INSTRUCTION\n .option pop\n"
        ::: "fa0", "v0", "v1", "v8", "v9", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23");
    return core;
}
"""


def encode(name: str, vd: int, vs2: int, masked: bool = False) -> int:
    """The instruction NAME with these registers (the clip's scalar is fa0), hand-encoded: the
    assembler would refuse some of the reserved forms this test needs."""
    vm = 0 if masked else 1
    if name.startswith("vf"):  # VFUNARY0 (funct6 0x12, OPFVV), vs1 13 or 29
        vs1 = {"vfwcvtbf16.f.f.v": 13, "vfncvtbf16.f.f.w": 29}[name]
        return 0x12 << 26 | vm << 25 | vs2 << 20 | vs1 << 15 | 1 << 12 | vd << 7 | 0x57
    funct6 = {"sf.vfnrclip.x.f.qf": 0x23, "sf.vfnrclip.xu.f.qf": 0x22}[name]  # (custom-2, OPFVF)
    return funct6 << 26 | vm << 25 | vs2 << 20 | 10 << 15 | 5 << 12 | vd << 7 | 0x5B


def test_the_encodings_are_the_assemblers():
    assert encode("vfncvtbf16.f.f.w", 1, 2) == 0x4A2E90D7  # (vfncvtbf16.f.f.w v1, v2, as the assembler has it)
    assert encode("sf.vfnrclip.x.f.qf", 1, 4) == 0x8E4550DB


@pytest.mark.parametrize("name, vd, vs2, masked, vtype, said", [
    ("vfwcvtbf16.f.f.v", 8, 16, False, "e32, m1, ta, ma", "e32"),  # (only SEW 16: the bfloat16 side's EEW)
    ("vfncvtbf16.f.f.w", 8, 16, False, "e8, m1, ta, ma", "e8"),
    ("vfwcvtbf16.f.f.v", 8, 16, False, "e16, m8, ta, ma", "e16, m8"),  # (a binary32 group of 16 registers)
    ("vfncvtbf16.f.f.w", 8, 16, False, "e16, m8, ta, ma", "e16, m8"),
    ("vfncvtbf16.f.f.w", 17, 16, False, "e16, m1, ta, ma", "e16, m1"),  # (into the source's upper register)
    ("vfwcvtbf16.f.f.v", 8, 8, False, "e16, m1, ta, ma", "e16, m1"),  # (over the destination's low register)
    ("vfwcvtbf16.f.f.v", 9, 16, False, "e16, m1, ta, ma", "e16, m1"),  # (a group of 2 at an odd register)
    ("vfwcvtbf16.f.f.v", 0, 16, True, "e16, m1, ta, ma", "e16, m1"),  # (masked, writing v0)
    ("sf.vfnrclip.x.f.qf", 8, 16, False, "e16, m1, ta, ma", "e16"),  # (only SEW 8: the destination's)
    ("sf.vfnrclip.xu.f.qf", 8, 16, False, "e32, m1, ta, ma", "e32"),
    ("sf.vfnrclip.x.f.qf", 8, 16, False, "e8, m4, ta, ma", "e8, m4"),  # (a source group of 16)
    ("sf.vfnrclip.x.f.qf", 17, 16, False, "e8, m1, ta, ma", "e8, m1"),  # (vs2 is v16-v19: v17 is inside)
    ("sf.vfnrclip.xu.f.qf", 0, 16, True, "e8, m1, ta, ma", "e8, m1"),  # (masked, writing v0)
    ("sf.vfnrclip.x.f.qf", 8, 18, False, "e8, m1, ta, ma", "e8, m1"),  # (a group of 4 not at a multiple of 4)
])
def test_a_reserved_encoding_is_refused_and_named(tmp_path, name, vd, vs2, masked, vtype, said):
    word = encode(name, vd, vs2, masked)
    source = REFUSED.replace("INSTRUCTION", hex(word)).replace("VTYPE", vtype).replace("FRM", "0")
    with pytest.raises(km.ThreadFault) as fault:
        run_to_end(program_for(source, tmp_path))
    message = str(fault.value)
    assert f"a vector instruction ({name}, instruction {word:#010x})" in message, message
    assert "that the vector unit refuses" in message and f"vtype {said}" in message, message


@pytest.mark.parametrize("name, vtype", [("vfncvtbf16.f.f.w", "e16, m1, ta, ma"), ("sf.vfnrclip.x.f.qf", "e8, m1, ta, ma"),
                                         ("sf.vfnrclip.xu.f.qf", "e8, mf2, ta, ma")])
def test_an_instruction_that_rounds_is_illegal_while_frm_is_reserved(tmp_path, name, vtype):
    word = encode(name, 8, 16)
    source = REFUSED.replace("INSTRUCTION", hex(word)).replace("VTYPE", vtype).replace("FRM", "5")
    with pytest.raises(km.ThreadFault) as fault:
        run_to_end(program_for(source, tmp_path))
    assert f"({name}, instruction {word:#010x})" in str(fault.value)
    assert "while frm holds 5, a reserved rounding mode" in str(fault.value)


OVERLAP = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    const float *in = (const float *)kmx_region(0, &bytes);
    int8_t *out = (int8_t *)kmx_region(1, 0);
    uint16_t *half = (uint16_t *)kmx_region(2, 0);
    uint64_t *sat = (uint64_t *)kmx_region(3, 0);
    kmx_invalidate(0);
    __asm__ volatile(".option push\n.option arch, +v, +zvfbfmin, +xsfvfnrclipxfqf\n"
        "csrwi vxsat, 0\n vsetivli zero, 16, e32, m4, ta, ma\n vle32.v v16, (%0)\n"
        "li t0, 0x40000000\n fmv.w.x fa0, t0\n"  /* 2.0 */
        "vsetivli zero, 16, e8, m1, ta, ma\n sf.vfnrclip.x.f.qf v16, v16, fa0\n vse8.v v16, (%1)\n"
        "csrr t0, vxsat\n sd t0, 0(%3)\n"
        "vsetivli zero, 16, e32, m4, ta, ma\n vle32.v v16, (%0)\n"
        "vsetivli zero, 16, e16, m2, ta, ma\n vfncvtbf16.f.f.w v16, v16\n vse16.v v16, (%2)\n"
        ".option pop\n" :: "r"(in), "r"(out), "r"(half), "r"(sat)
        : "memory", "t0", "fa0", "v16", "v17", "v18", "v19");
    kmx_flush(1);
    kmx_flush(2);
    kmx_flush(3);
    return core;
}
"""


def test_a_destination_over_the_sources_lowest_register_reads_every_source_element_first(tmp_path):
    """vd = vs2 is legal for a narrowing (RVV 1.0, 5.2): element 1's result lands on element
    0's source bytes, so each source element must be read before it is written over. (And
    the clip, which clips here, leaves vxsat alone: it is a floating-point instruction.)"""
    values = np.array([1.25, -3.75, 60.0, 100.0, -70.0, 0.5, 1.5, -0.5, 2.25, 63.5, -64.25, 33.0, 7.0, -7.0, 0.0, 1e9],
                      dtype=np.float32)
    program = program_for(OVERLAP, tmp_path, regions={"in": values, "out": 16, "half": 32, "sat": 8})
    _, run = run_to_end(program)
    want = np.clip(np.rint(values * np.float32(2.0)), -128, 127).astype(np.int8)
    assert (run.thread.read("out").view(np.int8) == want).all()
    assert int(run.thread.read("sat").view(np.uint64)[0]) == 0
    halves = run.thread.read("half").view(np.uint16)
    assert [int(h) for h in halves] == [narrow(f32(float(v)), RNE)[0] for v in values]


INTRINSICS = r"""
#include <riscv_vector.h>
#include <sifive_vector.h>
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    const float *x = (const float *)kmx_region(0, &bytes);
    __bf16 *rows = (__bf16 *)kmx_region(1, 0);
    int8_t *q = (int8_t *)kmx_region(2, 0);
    uint8_t *u = (uint8_t *)kmx_region(3, 0);
    float *back = (float *)kmx_region(4, 0);
    kmx_invalidate(0);
    size_t n = bytes / 4;
    for (size_t i = 0, vl; i < n; i += vl) {
        vl = __riscv_vsetvl_e32m4(n - i);
        vfloat32m4_t v = __riscv_vle32_v_f32m4(x + i, vl);
        __riscv_vse16_v_bf16m2(rows + i, __riscv_vfncvtbf16_f_f_w_bf16m2(v, vl), vl);
        __riscv_vse32_v_f32m4(back + i, __riscv_vfwcvtbf16_f_f_v_f32m4(__riscv_vle16_v_bf16m2(rows + i, vl), vl), vl);
        __riscv_vse8_v_i8m1(q + i, __riscv_sf_vfnrclip_x_f_qf_i8m1(v, 0.5f, vl), vl);
        __riscv_vse8_v_u8m1(u + i, __riscv_sf_vfnrclip_xu_f_qf_u8m1(v, 0.5f, vl), vl);
    }
    for (int r = 1; r < 5; r++) kmx_flush(r);
    return core;
}
"""


@pytest.mark.parametrize("flags", ["", "-march=rv64gcv_zba_zbb_zfh_zvfh_zvfbfmin_xsfvfnrclipxfqf",
                                   "-mcpu=sifive_x280+zvfbfmin+xsfvfnrclipxfqf"])
def test_the_intrinsics_compile_for_the_x280_and_run(tmp_path, monkeypatch, flags):
    """<riscv_vector.h>'s Zvfbfmin intrinsics and <sifive_vector.h>'s clip, for the default
    target and for it named in either spelling, against numpy: bfloat16 as binary32's upper
    half rounded to nearest even, the clip as float32's product, rint and clip."""
    monkeypatch.setenv("KMX_CFLAGS", flags)
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(0, 200, 300), [0.25, -0.25, 0.75, 254.9, 255.0, 300.0, -300.0, 1e-40]])
    x = x.astype(np.float32)
    n = len(x)
    program = program_for(INTRINSICS, tmp_path, regions={"x": x, "rows": 2 * n, "q": n, "u": n, "back": 4 * n})
    _, run = run_to_end(program)
    bits = x.view(np.uint32).astype(np.uint64)
    rne = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)  # (no NaN here)
    assert (run.thread.read("rows").view(np.uint16) == rne).all()
    assert (run.thread.read("back").view(np.uint32) == rne.astype(np.uint32) << 16).all()
    scaled = np.rint(x * np.float32(0.5))
    assert (run.thread.read("q").view(np.int8) == np.clip(scaled, -128, 127).astype(np.int8)).all()
    assert (run.thread.read("u").view(np.uint8) == np.clip(scaled, 0, 255).astype(np.uint8)).all()


UNBOXED_SCALE = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    static const float src[4] = {1.0f, -2.0f, 3.5f, 100.0f};
    uint32_t words[10];
    const uint64_t scales[2] = {0xffffffff3f800000ull, 0x000000003f800000ull};  /* 1.0 boxed, and not */
    for (int k = 0; k < 2; k++) {
        int8_t out[4];
        uint64_t flags;
        __asm__ volatile(".option push\n.option arch, +v, +xsfvfnrclipxfqf\n"
                         "vsetivli t0, 4, e32, m4, ta, ma\n vle32.v v16, (%[src])\n"
                         "vsetivli t0, 4, e8, m1, ta, ma\n fmv.d.x fa0, %[scale]\n csrw fflags, zero\n"
                         "sf.vfnrclip.x.f.qf v8, v16, fa0\n csrr %[flags], fflags\n vse8.v v8, (%[out])\n"
                         ".option pop\n"
                         : [flags] "=&r"(flags) : [src] "r"(src), [scale] "r"(scales[k]), [out] "r"(out)
                         : "memory", "t0", "fa0", "v8", "v16", "v17", "v18", "v19");
        for (int i = 0; i < 4; i++) words[5 * k + i] = (uint32_t)(int32_t)out[i];
        words[5 * k + 4] = (uint32_t)flags;
    }
    kmx_result(0, words, 10);
    return 0;
}
"""


def test_a_scale_that_is_not_nan_boxed_is_the_canonical_nan(tmp_path):
    """f[rs1] is read as a single, NaN-boxed as the F extension asks: a value whose upper
    32 bits are not all ones is the canonical NaN, so every product is NaN, which clips to
    127 with NV."""
    result, _ = run_to_end(program_for(UNBOXED_SCALE, tmp_path), 60)
    words = [int(w) for w in result.words[:10]]
    signed = [w - (1 << 32) if w >> 31 else w for w in words]
    assert signed[:5] == [1, -2, 4, 100, NX]  # boxed 1.0: 3.5 rounds to even 4, inexactly
    assert signed[5:] == [127, 127, 127, 127, NV]
