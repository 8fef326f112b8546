"""The native IEEE arithmetic (sim/native/softfloat.c) in binary16, binary32 and binary64
(and the conversions to and from bfloat16, Zvfbfmin's), called directly, against an oracle written here in exact rationals (fractions).

The oracle rounds the exact result of each operation to the format in each RISC-V rounding
mode, and derives the flags from their definitions: NX when the rounded result differs from
the exact one, OF when the result rounded with an unbounded exponent is past the largest
finite number, UF when it is inexact and tiny after rounding (RISC-V's way), NV and DZ for
the invalid cases. For RNE in binary64 Python's own floats are a second, independent check.
"""

from __future__ import annotations

import ctypes
import math
import struct
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from komorebi.sim.native import hooks

FORMATS = {0: (10, 5), 1: (23, 8), 2: (52, 11), 3: (7, 8)}  # FP_HALF, FP_SINGLE, FP_DOUBLE, FP_BFLOAT: fraction, exponent bits
RNE, RTZ, RDN, RUP, RMM = range(5)
NX, UF, OF, DZ, NV = 1, 2, 4, 8, 16


def _lib():
    lib = hooks.library()
    u64, i, flags = ctypes.c_uint64, ctypes.c_int, ctypes.POINTER(ctypes.c_uint32)
    for name, args in (("fp_add", [i, u64, u64, i, flags]), ("fp_sub", [i, u64, u64, i, flags]),
                       ("fp_mul", [i, u64, u64, i, flags]), ("fp_div", [i, u64, u64, i, flags]),
                       ("fp_sqrt", [i, u64, i, flags]), ("fp_fma", [i, u64, u64, u64, i, i, i, flags]),
                       ("fp_convert", [i, i, u64, i, flags]),
                       ("fp_to_integer", [i, u64, i, i, i, flags])):
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = u64
    return lib


def call(name, *args):
    flags = ctypes.c_uint32(0)
    result = getattr(_lib(), name)(*args, ctypes.byref(flags))
    return result, flags.value


class Fmt:
    def __init__(self, which):
        self.frac, self.expbits = FORMATS[which]
        self.bias = (1 << (self.expbits - 1)) - 1
        self.emin = 1 - self.bias
        self.inf = ((1 << self.expbits) - 1) << self.frac
        self.sign = 1 << (self.frac + self.expbits)
        self.nan = self.inf | 1 << (self.frac - 1)

    def value(self, bits):
        """None for a NaN, else a Fraction, or +-inf as a float; -0 as (0, sign)."""
        e, m = (bits >> self.frac) & ((1 << self.expbits) - 1), bits & ((1 << self.frac) - 1)
        s = -1 if bits & self.sign else 1
        if e == (1 << self.expbits) - 1:
            return None if m else s * math.inf
        if e == 0:
            return s * Fraction(m, 1) * Fraction(2) ** (self.emin - self.frac)
        return s * Fraction(m | 1 << self.frac) * Fraction(2) ** (e - self.bias - self.frac)

    def is_snan(self, bits):
        return self.value(bits) is None and not bits >> (self.frac - 1) & 1

    def round(self, x: Fraction, rm, negative_zero=False):
        """X rounded to the format: (bits, flags)."""
        if x == 0:
            return (self.sign if negative_zero else 0), 0
        sign = self.sign if x < 0 else 0
        a = abs(x)
        e = a.numerator.bit_length() - a.denominator.bit_length()
        if Fraction(2) ** e > a:
            e -= 1
        def at(unit):  # a rounded to a multiple of 2^unit, as an integer count of units
            q = a / Fraction(2) ** unit
            n = q.numerator // q.denominator
            rest = q - n
            up = {RNE: rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n & 1), RTZ: False,
                  RDN: rest > 0 and bool(sign), RUP: rest > 0 and not sign, RMM: rest >= Fraction(1, 2)}[rm]
            return n + up, rest != 0
        unbounded, _ = at(e - self.frac)
        if unbounded * Fraction(2) ** (e - self.frac) >= Fraction(2) ** (self.bias + 1):
            largest = rm == RTZ or (rm == RDN and not sign) or (rm == RUP and sign)
            return sign | (self.inf - 1 if largest else self.inf), OF | NX
        unit = max(e, self.emin) - self.frac
        n, inexact = at(unit)
        flags = NX if inexact else 0
        if inexact and unbounded * Fraction(2) ** (e - self.frac) < Fraction(2) ** self.emin:
            flags |= UF
        return sign | (((unit - (self.emin - self.frac)) << self.frac) + n), flags


def finite_or_special(which):
    f = Fmt(which)
    width = f.frac + f.expbits + 1
    edges = [0, f.sign, f.inf, f.inf | f.sign, f.nan, f.inf | 1, 1, f.sign | 1, (1 << f.frac) - 1,
             1 << f.frac, f.inf - 1, f.sign | (f.inf - 1), f.bias << f.frac, (f.bias + 1) << f.frac]
    few_bits = st.builds(  # mantissas of a few leading bits, or all ones: sums and products that tie or
        lambda sign, e, top, ones: sign * f.sign | e << f.frac | (((1 << f.frac) - 1) if ones else top << (f.frac - 4)),
        st.integers(0, 1), st.one_of(st.integers(0, 2 * f.bias), st.integers(0, f.frac + 2),
                                     st.integers(f.bias // 2 - f.frac, f.bias // 2 + 2).map(abs)),
        st.integers(0, 15), st.booleans())  # land just below the smallest normal
    return st.one_of(st.sampled_from(edges), st.integers(0, (1 << width) - 1),
                     st.integers(0, (1 << f.frac) * 4), few_bits, few_bits)


def expected(which, op, operands, rm):
    f = Fmt(which)
    values = [f.value(b) for b in operands]
    if any(v is None for v in values):
        def inf_times_zero(x, y):
            return isinstance(x, float) and y is not None and not isinstance(y, float) and y == 0
        invalid = any(f.is_snan(b) for b in operands) or (
            op == "fma" and (inf_times_zero(values[0], values[1]) or inf_times_zero(values[1], values[0])))
        return f.nan, NV if invalid else 0
    a, b = values[0], values[1] if len(values) > 1 else None
    inf = lambda v: isinstance(v, float) and math.isinf(v)  # noqa: E731
    neg = lambda bits: bool(bits & f.sign)  # noqa: E731
    if op == "sqrt":
        if a == 0:
            return operands[0], 0
        if a < 0:
            return f.nan, NV
        if inf(a):
            return operands[0], 0
        # the exact root rounded: bisect for the integer square root at enough precision
        e = a.numerator.bit_length() - a.denominator.bit_length()
        scale = 2 * (f.frac + 8) - e
        scale += scale & 1
        n = a * Fraction(2) ** scale
        r = math.isqrt(n.numerator // n.denominator)
        exact = Fraction(r) ** 2 == n
        root = Fraction(r) / Fraction(2) ** (scale // 2)
        if not exact:  # a sticky bit below every bit that matters
            root += Fraction(1, 2) ** (scale // 2 + 1)
        return f.round(root, rm)
    if op in ("add", "sub"):
        if op == "sub":
            b = -b if not inf(b) else -b
            sb = not neg(operands[1])
        else:
            sb = neg(operands[1])
        if inf(a) or inf(b):
            if inf(a) and inf(b) and (a > 0) != (b > 0):
                return f.nan, NV
            s = (a if inf(a) else b) < 0
            return f.inf | (f.sign if s else 0), 0
        x = a + b
        if x == 0:
            sa = neg(operands[0])
            both = sa == sb and a == 0 and b == 0
            return (f.sign if (sa if both else rm == RDN) else 0), 0
        return f.round(x, rm)
    if op == "mul":
        s = neg(operands[0]) != neg(operands[1])
        if inf(a) or inf(b):
            if a == 0 or b == 0:
                return f.nan, NV
            return f.inf | (f.sign if s else 0), 0
        x = a * b
        return f.round(x, rm, negative_zero=s) if x else ((f.sign if s else 0), 0)
    if op == "div":
        s = neg(operands[0]) != neg(operands[1])
        if inf(a):
            return (f.nan, NV) if inf(b) else (f.inf | (f.sign if s else 0), 0)
        if inf(b):
            return (f.sign if s else 0), 0
        if b == 0:
            return (f.nan, NV) if a == 0 else (f.inf | (f.sign if s else 0), DZ)
        x = a / b
        return f.round(x, rm, negative_zero=s) if x else ((f.sign if s else 0), 0)
    # fma
    c = values[2]
    sp = neg(operands[0]) != neg(operands[1])
    if (inf(a) and b == 0) or (inf(b) and a == 0):
        return f.nan, NV
    if inf(a) or inf(b):
        if inf(c) and (c < 0) != sp:
            return f.nan, NV
        return f.inf | (f.sign if sp else 0), 0
    if inf(c):
        return operands[2], 0
    x = a * b + c
    if x == 0:
        sc = neg(operands[2])
        both = a * b == 0 and c == 0 and sp == sc
        return (f.sign if (sp if both else rm == RDN) else 0), 0
    return f.round(x, rm)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(which=st.sampled_from([0, 1, 2]), op=st.sampled_from(["add", "sub", "mul", "div", "sqrt", "fma"]),
       rm=st.sampled_from([RNE, RTZ, RDN, RUP, RMM]), data=st.data())
def test_every_operation_rounds_exactly_and_raises_the_flags_riscv_says(which, op, rm, data):
    count = {"sqrt": 1, "fma": 3}.get(op, 2)
    operands = [data.draw(finite_or_special(which)) for _ in range(count)]
    if op == "fma":
        got = call("fp_fma", which, *operands, 0, 0, rm)
    else:
        got = call(f"fp_{op}", which, *operands, rm)
    want = expected(which, op, operands, rm)
    assert got == want, f"{op} {[hex(o) for o in operands]} rm {rm}: got {hex(got[0])} flags {got[1]}, want {hex(want[0])} flags {want[1]}"


@settings(max_examples=300, deadline=None)
@given(a=st.floats(allow_nan=False, allow_infinity=False), b=st.floats(allow_nan=False, allow_infinity=False))
def test_binary64_in_nearest_even_is_what_the_hosts_floats_say(a, b):
    bits = lambda x: struct.unpack("<Q", struct.pack("<d", x))[0]  # noqa: E731
    for name, want in (("fp_add", a + b), ("fp_sub", a - b), ("fp_mul", a * b)):
        if math.isfinite(want):
            assert call(name, 2, bits(a), bits(b), RNE)[0] == bits(want)
    if b != 0 and math.isfinite(a / b):
        assert call("fp_div", 2, bits(a), bits(b), RNE)[0] == bits(a / b)
    assert call("fp_sqrt", 2, bits(abs(a)), RNE)[0] == bits(math.sqrt(abs(a)))


def converted(f: "Fmt", g: "Fmt", a: int, rm: int) -> tuple[int, int]:
    """What converting A, of format F, to format G gives (bits, flags), by the exact value."""
    v = f.value(a)
    if v is None:
        return g.nan, NV if f.is_snan(a) else 0
    if isinstance(v, float):
        return g.inf | (g.sign if v < 0 else 0), 0
    if v == 0:
        return g.sign if a & f.sign else 0, 0
    return g.round(v, rm)


@settings(max_examples=500, deadline=None)
@given(which=st.sampled_from([0, 1, 2, 3]), to=st.sampled_from([0, 1, 2, 3]),
       rm=st.sampled_from([RNE, RTZ, RDN, RUP, RMM]), data=st.data())
def test_conversions_between_formats_round_once(which, to, rm, data):
    a = data.draw(finite_or_special(which))
    assert call("fp_convert", which, to, a, rm) == converted(Fmt(which), Fmt(to), a, rm)


@settings(max_examples=500, deadline=None)
@given(which=st.sampled_from([0, 1, 2]), bits=st.sampled_from([8, 16, 32, 64]), signed=st.booleans(),
       rm=st.sampled_from([RNE, RTZ, RDN, RUP, RMM]), data=st.data())
def test_conversions_to_integers_saturate_as_riscv_says(which, bits, signed, rm, data):
    a = data.draw(finite_or_special(which))
    f = Fmt(which)
    v = f.value(a)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if v is None or (isinstance(v, float) and v > 0):
        want = hi, NV
    elif isinstance(v, float):
        want = lo, NV
    else:
        n = math.floor(v)
        rest = v - n
        up = {RNE: rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n & 1), RTZ: n < 0 and rest > 0,
              RDN: False, RUP: rest > 0, RMM: rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n >= 0)}[rm]
        r = n + up
        want = (r, NX if rest else 0) if lo <= r <= hi else ((lo if v < 0 else hi), NV)
    got, flags = call("fp_to_integer", which, a, bits, int(signed), rm)
    got = got - (1 << 64) if signed and got >> 63 else got
    assert (got, flags) == want, f"{hex(a)} -> {bits} bits signed {signed} rm {rm}"


def single_bits(draw_source):
    """Normal binary32 numbers, many of few significant bits (sums and products that tie)."""
    return st.one_of(finite_or_special(1), st.builds(
        lambda sign, e, m: sign << 31 | e << 23 | m, st.integers(0, 1), st.integers(1, 254),
        st.one_of(st.integers(0, (1 << 23) - 1), st.integers(0, 15).map(lambda t: t << 19),
                  st.integers(0, 3).map(lambda t: (1 << 23) - 1 - t))))


FAST_OPS = {  # funct6: the softfloat call that means the same in format FMT (a: vs2's element, b: vs1's, c: vd's)
    0x00: lambda fmt, a, b, c: ("fp_add", fmt, a, b, RNE), 0x02: lambda fmt, a, b, c: ("fp_sub", fmt, a, b, RNE),
    0x27: lambda fmt, a, b, c: ("fp_sub", fmt, b, a, RNE), 0x24: lambda fmt, a, b, c: ("fp_mul", fmt, a, b, RNE),
    0x28: lambda fmt, a, b, c: ("fp_fma", fmt, b, c, a, 0, 0, RNE),
    0x29: lambda fmt, a, b, c: ("fp_fma", fmt, b, c, a, 1, 1, RNE),
    0x2A: lambda fmt, a, b, c: ("fp_fma", fmt, b, c, a, 0, 1, RNE),
    0x2B: lambda fmt, a, b, c: ("fp_fma", fmt, b, c, a, 1, 0, RNE),
    0x2C: lambda fmt, a, b, c: ("fp_fma", fmt, b, a, c, 0, 0, RNE),
    0x2D: lambda fmt, a, b, c: ("fp_fma", fmt, b, a, c, 1, 1, RNE),
    0x2E: lambda fmt, a, b, c: ("fp_fma", fmt, b, a, c, 0, 1, RNE),
    0x2F: lambda fmt, a, b, c: ("fp_fma", fmt, b, a, c, 1, 0, RNE),
}
HALF, SINGLE, DOUBLE = 0, 1, 2


def host_fast(funct6, fmt, a, b, c):
    """vector/float.c's host way: (result, flags), or None where it leaves the case to softfloat."""
    lib = _lib()
    lib.vector_host_fast.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
                                     ctypes.POINTER(ctypes.c_uint64)]
    lib.vector_host_fast.restype = ctypes.c_int
    out = (ctypes.c_uint64 * 2)()
    return (out[0], out[1]) if lib.vector_host_fast(funct6, fmt, a, b, c, out) else None


@pytest.mark.slow
@settings(max_examples=4000, deadline=None)
@given(funct6=st.sampled_from(sorted(FAST_OPS)), a=single_bits(None), b=single_bits(None), c=single_bits(None))
def test_the_hosts_binary32_way_is_softfloats_answer_wherever_it_answers(funct6, a, b, c):
    """vector/float.c does binary32 sums, products and multiply-adds under RNE in the host's
    binary64 where that is exact (hostfloat.h); where it answers, it must be softfloat's
    answer, flags and all."""
    got = host_fast(funct6, SINGLE, a, b, c)
    if got is not None:
        assert got == call(*FAST_OPS[funct6](SINGLE, a, b, c)), f"funct6 {funct6:#x} {a:#x} {b:#x} {c:#x}"


def _host_way_agrees(fmt, data, funct6):
    a, b, c = (data.draw(finite_or_special(fmt)) for _ in range(3))
    got = host_fast(funct6, fmt, a, b, c)
    if funct6 >= 0x28:
        assert got is None
    if got is not None:
        assert got == call(*FAST_OPS[funct6](fmt, a, b, c)), f"fmt {fmt} funct6 {funct6:#x} {a:#x} {b:#x} {c:#x}"


@pytest.mark.parametrize("fmt", [HALF, DOUBLE])
@settings(max_examples=500, deadline=None)
@given(data=st.data(), funct6=st.sampled_from(sorted(FAST_OPS)))
def test_the_hosts_binary16_and_binary64_way_is_softfloats_answer_wherever_it_answers(fmt, data, funct6):
    """Sums and products in binary16 (Zvfh) and binary64 go through the host too
    (hostfloat.h): where it answers, it is softfloat's answer, flags and all (and a
    multiply-add in these formats is softfloat's alone). (Its long form is slow.)"""
    _host_way_agrees(fmt, data, funct6)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", [HALF, DOUBLE])
@settings(max_examples=6000, deadline=None)
@given(data=st.data(), funct6=st.sampled_from(sorted(FAST_OPS)))
def test_the_hosts_binary16_and_binary64_way_agrees_long(fmt, data, funct6):
    """The same, twelve times as many draws."""
    _host_way_agrees(fmt, data, funct6)


def test_every_binary16_product_and_a_sweep_of_sums_the_host_answers_are_softfloats():
    """binary16 has 65,536 values: every product of one with each of a spread of others,
    and the sums of the same, against softfloat (all in C, through the library)."""
    lib = _lib()
    lib.vector_host_sweep.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint64)]
    lib.vector_host_sweep.restype = ctypes.c_int64
    found = (ctypes.c_uint64 * 4)()
    for funct6 in (0x00, 0x02, 0x24):
        answered = lib.vector_host_sweep(funct6, 0, 97, found)  # a over all 65,536, b over every 97th
        assert answered >= 0, f"funct6 {funct6:#x}: {found[0]:#06x}, {found[1]:#06x}: host {found[2]:#x}, softfloat {found[3]:#x}"
        assert answered > 65536 * (65536 // 97) // 4  # (most of them are the host's)


def test_the_hosts_way_answers_the_common_case():
    """(So that the tests above test something: ordinary numbers take the host's way.)"""
    one, three, half = 0x3F800000, 0x40400000, 0x3F000000
    assert host_fast(0x2C, SINGLE, one, three, half) == (0x40600000, 0)
    assert host_fast(0x00, SINGLE, one, 0x33800001, 0)[1] == NX  # 1 + (2^-24 + a bit)
    assert host_fast(0x24, HALF, 0x3E00, 0x3E00, 0) == (0x4080, 0)  # 1.5 * 1.5 = 2.25
    assert host_fast(0x00, HALF, 0x3C00, 0x0001, 0) == (0x3C00, NX)  # 1 + 2^-24
    assert host_fast(0x24, DOUBLE, 0x3FF8000000000000, 0x3FF8000000000000, 0) == (0x4002000000000000, 0)
    assert host_fast(0x00, DOUBLE, 0x3FF0000000000000, 0x3CA0000000000000, 0) == (0x3FF0000000000000, NX)  # 1 + 2^-53


def test_a_binary16_result_past_the_largest_finite_or_below_the_smallest_normal_is_left_to_softfloat():
    """Overflow and underflow are softfloat's to flag: 65504 * 2 and 2^-14 * 0.5."""
    assert host_fast(0x24, HALF, 0x7BFF, 0x4000, 0) is None
    assert host_fast(0x24, HALF, 0x0400, 0x3800, 0) is None
    assert host_fast(0x00, HALF, 0x7BFF, 0x5000, 0) is None  # 65504 + 32 is 2^16, past it


def test_an_exact_binary64_product_at_the_top_of_the_range_raises_no_inexact():
    """(2^53 - 1) * 2^941 * 2^30 is the largest finite binary64 exactly. Dekker's error term
    would overflow there (Veltkamp's halves round up), and came out infinite: an exact
    product flagged inexact (a review found it). Such products are softfloat's now."""
    x, y = 0x7E0FFFFFFFFFFFFF, 0x41D0000000000000
    assert call("fp_mul", DOUBLE, x, y, RNE) == (0x7FEFFFFFFFFFFFFF, 0)
    got = host_fast(0x24, DOUBLE, x, y, 0)
    assert got is None or got == (0x7FEFFFFFFFFFFFFF, 0)
    assert host_fast(0x24, DOUBLE, 0x6250000000000000, 0x5D8FFFFFFFFFFFFF, 0) in (
        None, call("fp_mul", DOUBLE, 0x6250000000000000, 0x5D8FFFFFFFFFFFFF, RNE))


def test_a_tie_that_the_rounding_to_binary64_made_is_left_to_softfloat():
    """(1 + 2^-12)^2 + 2^-60 is just above the binary32 tie 1 + 2^-11 + 2^-24: it rounds up.
    Rounded first to binary64 it is the tie itself, which would round to even, down."""
    a, tiny = 0x3F800800, 0x21800000  # 1 + 2^-12, 2^-60
    assert host_fast(0x2C, SINGLE, a, a, tiny) is None
    assert call("fp_fma", 1, a, a, tiny, 0, 0, RNE) == (0x3F801001, NX)  # 1 + 2^-11 + 2^-23

@pytest.mark.parametrize("rm", [RNE, RTZ, RDN, RUP, RMM])
def test_every_bfloat16_widens_exactly_and_every_binary32_of_a_sweep_narrows_to_bfloat16_once(rm):
    """Zvfbfmin's two conversions, FP_BFLOAT (3) to and from FP_SINGLE (1): all 65,536 bfloat16s
    widen exactly (a signalling NaN raises NV, every NaN becomes binary32's canonical NaN), and
    binary32s with every pattern of the 16 bits a narrowing drops (each top half of a stride)
    round once, by the oracle above, with its flags."""
    f, g = Fmt(3), Fmt(1)
    if rm == RNE:
        for a in range(1 << 16):
            v = f.value(a)
            want = (g.nan, NV if f.is_snan(a) else 0) if v is None else (a << 16, 0)
            assert call("fp_convert", 3, 1, a, RNE) == want, hex(a)
    for top in range(0, 1 << 16, 97):
        for low in (0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1234):
            a = top << 16 | low
            assert call("fp_convert", 1, 3, a, rm) == converted(g, f, a, rm), (hex(a), rm)
