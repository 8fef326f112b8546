"""The lesson's kernel (tripled[i] = 3 * numbers[i]) over a 16 MiB region, twice in one
process: through the simulator (cache model on), and on bare Unicorn (plain mapped memory,
no cache model, no hook but the ecall one), the same ELF at the same addresses. A third
setup, bare Unicorn in virtual-TLB mode with an identity fill hook, isolates what the
cache model itself costs (`ratio_vs_vtlb`). In every setup the stack and the regions are
mapped without execute permission, as in the simulator: a store to a page the engine may
execute takes its slow path (measured here: 2x slower over the whole kernel).

Times are the kernel's alone: from the start of emulation to the final result (for the
simulator that includes its fills, the flush and the hand-back), best of --repeat runs,
interleaved. Instructions are counted once, in a separate run with a block hook.
The last line printed is one JSON object.

    python bench/stream.py [--mib 16] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
import time
from pathlib import Path

import numpy as np
from unicorn import (
    UC_ARCH_RISCV,
    UC_HOOK_BLOCK,
    UC_HOOK_INTR,
    UC_HOOK_TLB_FILL,
    UC_MODE_RISCV64,
    UC_PROT_ALL,
    UC_PROT_READ,
    UC_PROT_WRITE,
    UC_TLB_VIRTUAL,
    Uc,
)
from unicorn.riscv_const import (
    UC_RISCV_REG_A0,
    UC_RISCV_REG_A1,
    UC_RISCV_REG_A2,
    UC_RISCV_REG_A7,
    UC_RISCV_REG_MSTATUS,
    UC_RISCV_REG_SP,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from komorebi._build import build_thread  # noqa: E402
from sim.card import Card  # noqa: E402
from sim.loader import ThreadImage, load_image  # noqa: E402
from sim.memory import host_buffer  # noqa: E402
from sim.traps import Call  # noqa: E402

TRIPLE = ROOT / "tutorial" / "35_sharing_memory" / "thread" / "triple.c"


def simulator_run(image: ThreadImage, numbers: np.ndarray) -> tuple[float, dict]:
    card = Card()
    cluster = card.place_thread(1, image, [("numbers", numbers.view(np.uint8)), ("tripled", numbers.nbytes)], [], 1)
    layout = {
        "image": (cluster.image_base, image.size),
        "stack": (cluster.stacks[0].base, cluster.stacks[0].size),
        "regions": [(r.address, r.size, r.span.base, r.span.size) for r in cluster.regions],
    }
    start = time.perf_counter()
    card.start()
    item = cluster.outbox.take(None)
    elapsed = time.perf_counter() - start
    card.stop()
    if item.fault is not None or item.code != 0:
        raise SystemExit(f"the simulator's run failed: {item.fault or item.code}")
    tripled = cluster.regions[1].dram_bytes().view(np.uint32)
    if not (tripled == 3 * numbers).all():
        raise SystemExit("the simulator's run computed wrong numbers")
    return elapsed, layout


class BareRun:
    """The same ELF on a plain Unicorn engine: memory mapped once, no TLB hook, and an
    ecall hook that answers just what the lesson's thread asks."""

    def __init__(
        self, image: ThreadImage, numbers: np.ndarray, layout: dict, *, host_memory: bool, virtual_tlb: bool = False
    ) -> None:
        uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
        self._buffers = []

        def mem_map(address: int, size: int, perms: int) -> None:
            if host_memory:  # memory the host maps, as the simulator's spans are
                buffer, _, pointer = host_buffer(size)
                self._buffers.append(buffer)
                uc.mem_map_ptr(address, size, perms, pointer)
            else:  # memory Unicorn allocates itself
                uc.mem_map(address, size, perms)

        if virtual_tlb:  # the engine's TLB filled by an identity hook: one Python call a page
            uc.ctl_set_tlb_mode(UC_TLB_VIRTUAL)
            uc.hook_add(UC_HOOK_TLB_FILL, self._identity)
        base, size = layout["image"]
        mem_map(base, size, UC_PROT_ALL)
        memory = bytearray(size)
        image.place(np.frombuffer(memory, dtype=np.uint8), base)
        uc.mem_write(base, bytes(memory))
        stack, stack_size = layout["stack"]
        self.data_start = stack  # code below, data (never run) from here on
        mem_map(stack, stack_size, UC_PROT_READ | UC_PROT_WRITE)
        self.regions = []
        for address, region_size, span, span_size in layout["regions"]:
            mem_map(span, span_size, UC_PROT_READ | UC_PROT_WRITE)
            self.regions.append((address, region_size))
        uc.mem_write(self.regions[0][0], numbers.tobytes())
        uc.reg_write(UC_RISCV_REG_MSTATUS, uc.reg_read(UC_RISCV_REG_MSTATUS) | 0x6000)
        uc.reg_write(UC_RISCV_REG_SP, stack + stack_size)
        uc.reg_write(UC_RISCV_REG_A0, 0)
        uc.hook_add(UC_HOOK_INTR, self._ecall)
        self.uc, self.entry, self.halt = uc, base + image.entry, base + image.halt
        self.words = None

    def _identity(self, uc, address, access, entry, _data) -> bool:
        entry.paddr = address
        entry.perms = UC_PROT_ALL if address < self.data_start else UC_PROT_READ | UC_PROT_WRITE
        return True

    def _ecall(self, uc, number, _data) -> None:
        call, a0, a1, a2 = (uc.reg_read(r) for r in (UC_RISCV_REG_A7, UC_RISCV_REG_A0, UC_RISCV_REG_A1, UC_RISCV_REG_A2))
        if call == Call.REGION:
            address, size = self.regions[a0] if a0 < len(self.regions) else (0, 0)
            uc.mem_write(a1, struct.pack("<Q", size))
            uc.reg_write(UC_RISCV_REG_A0, address)
        elif call == Call.RESULT:
            self.words = struct.unpack(f"<{a2}I", uc.mem_read(a1, 4 * a2))
        elif call == Call.EXIT:
            self.code = a0

    def run(self) -> float:
        start = time.perf_counter()
        self.uc.emu_start(self.entry, self.halt)
        return time.perf_counter() - start

    def tripled(self) -> np.ndarray:
        address, size = self.regions[1]
        return np.frombuffer(bytes(self.uc.mem_read(address, size)), dtype=np.uint32)


def count_instructions(image: ThreadImage, numbers: np.ndarray, layout: dict) -> int:
    bare = BareRun(image, numbers, layout, host_memory=True)
    per_block: dict[tuple[int, int], int] = {}
    executed = [0]

    def block(uc, address, size, _data):
        key = (address, size)
        n = per_block.get(key)
        if n is None:
            code = bytes(uc.mem_read(address, size))
            n, offset = 0, 0
            while offset < size:
                offset += 4 if code[offset] & 3 == 3 else 2
                n += 1
            per_block[key] = n
        executed[0] += n

    bare.uc.hook_add(UC_HOOK_BLOCK, block)
    bare.run()
    return executed[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=16, help="region size in MiB (default 16)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each, best taken (default 5)")
    args = parser.parse_args()
    numbers = np.arange(args.mib * 2**20 // 4, dtype=np.uint32)
    image = load_image(build_thread([TRIPLE]))
    _, layout = simulator_run(image, numbers)  # warm-up, and the addresses to reuse
    instructions = count_instructions(image, numbers, layout)
    setups = {  # name: (host_memory, virtual_tlb)
        "bare Unicorn, mem_map": (False, False),
        "bare Unicorn, mem_map_ptr": (True, False),
        "bare Unicorn, identity TLB hook": (True, True),
    }
    sim_times, times = [], {name: [] for name in setups}
    for _ in range(args.repeat):
        sim_times.append(simulator_run(image, numbers)[0])
        for name, (host_memory, virtual_tlb) in setups.items():
            bare = BareRun(image, numbers, layout, host_memory=host_memory, virtual_tlb=virtual_tlb)
            times[name].append(bare.run())
            if not (bare.tripled() == 3 * numbers).all():
                raise SystemExit("the bare run computed wrong numbers")
    sim = min(sim_times)
    best = {name: min(t) for name, t in times.items()}
    # "bare": the fastest setup with no hook but the ecall one
    bare_time = min(best["bare Unicorn, mem_map"], best["bare Unicorn, mem_map_ptr"])
    vtlb = best["bare Unicorn, identity TLB hook"]
    print(f"kernel: tripled[i] = 3 * numbers[i] over {args.mib} MiB, {instructions:,} instructions")
    print(f"{'setup':<34}{'best ms':>10}{'MIPS':>10}")
    print(f"{'simulator (cache model on)':<34}{sim * 1e3:>10.1f}{instructions / sim / 1e6:>10.1f}")
    for name, seconds in best.items():
        print(f"{name:<34}{seconds * 1e3:>10.1f}{instructions / seconds / 1e6:>10.1f}")
    print(
        json.dumps(
            {
                "benchmark": "stream",
                "mib": args.mib,
                "instructions": instructions,
                "sim_seconds": round(sim, 6),
                "bare_seconds": round(bare_time, 6),
                "sim_mips": round(instructions / sim / 1e6, 1),
                "bare_mips": round(instructions / bare_time / 1e6, 1),
                "ratio": round(sim / bare_time, 3),
                "bare_vtlb_mips": round(instructions / vtlb / 1e6, 1),
                "ratio_vs_vtlb": round(sim / vtlb, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
