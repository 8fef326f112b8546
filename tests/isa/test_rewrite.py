"""The loader's RV64GC stubs for Zba and Zbb (sim.isa.rewrite) compute what the C emulation
(sim/native/isa.c, itself checked against qemu-riscv64 by test_vs_qemu_isa.py) computes,
for every instruction they stand for and every way its registers can coincide, leave every
other register as it was (the borrowed t2-t6 among them), and count as one instruction."""

from __future__ import annotations

import random

import numpy as np
import pytest

import komorebi as km
from komorebi.sim.isa import rewrite
from tests.isa.test_vs_qemu_isa import INTEGER, SHIFTS, UNARY

REGISTERS = (5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 28, 29, 30, 31)  # t0-t2, a0-a7, t3-t6
STUBBED = {name: encode for name, encode in {**INTEGER, **UNARY}.items() if rewrite.stub_body(encode(5, 6, 7)) is not None}


def _cases() -> list[tuple[str, int]]:
    """(assembly, encoding) of each case. Written as mnemonics, not `.word`: the assembler
    marks a `.word` as data, and the loader rewrites only instructions."""
    out = []
    for name, encode in sorted(STUBBED.items()):
        for rd, rs1, rs2 in ((10, 11, 12), (10, 10, 12), (10, 11, 10), (10, 10, 10), (0, 11, 12),
                             (31, 30, 29), (29, 31, 31), (31, 31, 30), (5, 31, 5)):
            text = f"{name} x{rd}, x{rs1}" if name in UNARY else f"{name} x{rd}, x{rs1}, x{rs2}"
            out.append((text, encode(rd, rs1, 0 if name in UNARY else rs2)))
    for name, (encode, bits) in sorted(SHIFTS.items()):
        for rd, rs1 in ((10, 11), (10, 10), (31, 31), (0, 5)):
            for k in sorted({0, 1, (1 << bits) - 1, bits * 3 // 2, 1 << (bits - 1)}):
                out.append((f"{name} x{rd}, x{rs1}, {k}", encode(rd, rs1, k)))
    return out


CASES = _cases()


def _assembly(cases) -> str:
    """A routine run_cases(in, out): for each case, the registers from IN, the instruction,
    the registers to OUT (s1 and s2 hold the pointers: no case names them)."""
    lines = ["    .text", "    .globl run_cases", "run_cases:", "    addi sp, sp, -32", "    sd s1, 0(sp)",
             "    sd s2, 8(sp)", "    mv s1, a0", "    mv s2, a1"]
    for i, (text, _) in enumerate(cases):
        lines.append(f"    li s3, {8 * i * len(REGISTERS)}\n    add s3, s3, s1")
        for j, r in enumerate(REGISTERS):
            lines.append(f"    ld x{r}, {8 * j}(s3)")
        lines.append(f"    {text}")
        lines.append(f"    li s3, {8 * i * (len(REGISTERS) + 1)}\n    add s3, s3, s2")
        for j, r in enumerate(REGISTERS):
            lines.append(f"    sd x{r}, {8 * j}(s3)")
        lines.append(f"    sd sp, {8 * len(REGISTERS)}(s3)")
    lines += ["    ld s1, 0(sp)", "    ld s2, 8(sp)", "    addi sp, sp, 32", "    ret"]
    return "\n".join(lines) + "\n"


THREAD = r"""
#include "kmx.h"
void run_cases(const uint64_t *in, uint64_t *out);
int kmx_main(int core) {
    (void)core;
    uint64_t in_bytes, out_bytes;
    const uint64_t *in = (const uint64_t *)kmx_region(0, &in_bytes);
    uint64_t *out = (uint64_t *)kmx_region(1, &out_bytes);
    kmx_invalidate(0);
    uint64_t start = kmx_cycles();
    run_cases(in, out);
    uint64_t spent = kmx_cycles() - start;
    uint32_t words[2] = {(uint32_t)spent, (uint32_t)(spent >> 32)};
    kmx_result(0, words, 2);
    kmx_flush(1);
    return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    # (s3 is a scratch pointer of the routine's: save it too)
    folder = tmp_path_factory.mktemp("rewrite")
    assembly = _assembly(CASES).replace("    sd s2, 8(sp)\n", "    sd s2, 8(sp)\n    sd s3, 16(sp)\n", 1)
    assembly = assembly.replace("    ld s2, 8(sp)\n    addi sp, sp, 32", "    ld s2, 8(sp)\n    ld s3, 16(sp)\n    addi sp, sp, 32")
    (folder / "cases.S").write_text(assembly)
    (folder / "thread.c").write_text(THREAD)
    kernels = folder / "kernels"
    kernels.mkdir()
    rng = random.Random(11)
    edges = [0, 1, (1 << 64) - 1, 1 << 63, (1 << 63) - 1, 0x8000_0000, 0xFFFF_FFFF, 0x80, 0xFF80, 63, 64, 33]
    values = [rng.choice(edges) if rng.random() < 0.4 else rng.getrandbits(64) for _ in CASES for _ in REGISTERS]
    p = km.Program("rewrite", kernels=kernels)
    p.thread(cluster=1, sources=[folder / "thread.c", folder / "cases.S"],
             regions={"in": np.array(values, np.uint64), "out": 8 * len(CASES) * (len(REGISTERS) + 1)})
    return p


def _run(program, monkeypatch, rewriting: bool):
    monkeypatch.setenv("KMX_REWRITE", "1" if rewriting else "0")
    with km.Session() as session:
        run = session.load(program)
        image = run._loaded.machine._card.clusters[1].image
        result = run.thread_result(timeout=60)
        run.stop()
        out = run.thread.read("out").view(np.uint64).reshape(len(CASES), len(REGISTERS) + 1)
    return out, int(result.words[0]) | int(result.words[1]) << 32, image


def test_the_stubs_compute_what_the_c_emulation_does(program, monkeypatch):
    stubbed, stub_cycles, image = _run(program, monkeypatch, True)
    assert len(image.stubs.sites) >= len(CASES)  # (every case ran as a stub: the test tests them)
    in_c, c_cycles, plain = _run(program, monkeypatch, False)
    assert not plain.stubs.sites
    for i, (name, _) in enumerate(CASES):
        assert stubbed[i].tolist() == in_c[i].tolist(), name
    assert stub_cycles == c_cycles  # each stub counts as the one instruction it stands for


def test_a_stub_that_borrows_a_register_needs_no_valid_sp(tmp_path):
    """The official tests use sp as a plain register (rol sp, ra, zero; then rol ra, zero,
    zero): a stub keeps what it borrows in the core's scratch page, not below sp."""
    source = tmp_path / "thread.c"
    source.write_text(r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t out;
    __asm__ volatile(
        "mv t0, sp\n"
        "li sp, 32\n"          /* sp is no stack now */
        "li t1, 0x8000000000000001\n"
        "li t2, 1\n"
        "rol t1, t1, t2\n"     /* a stub that borrows two registers */
        "mv sp, t0\n"
        "mv %0, t1\n"
        : "=r"(out) : : "t0", "t1", "t2", "memory");
    return (int)out + core;
}
""")
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    program = km.Program("sp", kernels=kernels)
    program.thread(cluster=1, sources=[source])
    with km.Session() as session:
        run = session.load(program)
        result = run.thread_result(timeout=30)
        image = run._loaded.machine._card.clusters[1].image
        run.stop()
    assert image.stubs.where  # (the rol ran as a stub)
    assert result.code == 3


def test_every_stub_that_borrows_uses_the_scratch_page():
    from komorebi.sim.isa.rewrite import ld, sd

    sh1add = INTEGER["sh1add"]
    body = rewrite.stub_body(sh1add(2, 2, 2))  # sh1add sp, sp, sp
    assert body is not None and body[0] == sd(31, 0, -8) and body[-1] == ld(31, 0, -8)
