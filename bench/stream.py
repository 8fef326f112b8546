"""The lesson's kernel (tripled[i] = 3 * numbers[i]) over a 16 MiB region, twice in one
process: through the simulator (cache model on), and on bare Unicorn (plain mapped memory,
no cache model, no hook but the ecall one), the same ELF at the same addresses. A third
setup, bare Unicorn in virtual-TLB mode with an identity fill hook, isolates what the
cache model itself costs (`ratio_vs_vtlb`). In every setup the stack and the regions are
mapped without execute permission, as in the simulator: a store to a page the engine may
execute takes its slow path (measured here: 2x slower over the whole kernel).

The ELF is built for RV64GC (`KMX_CFLAGS=-march=rv64gc`), which bare Unicorn runs by itself;
the card's build (Zba, Zbb, Zfh) is measured against it in bench/vs_qemu.py.

Times are the kernel's alone: from the start of emulation to the final result (for the
simulator that includes its fills, the flush and the hand-back), best of --repeat runs,
interleaved. Instructions are counted once, in a separate run with a block hook.
The last line printed is one JSON object.

    python bench/stream.py [--mib 16] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["KMX_CFLAGS"] = "-march=rv64gc"  # (bare Unicorn runs RV64GC only)

from bench._bare import BareRun, Layout, layout_of  # noqa: E402
from komorebi.sim.build.thread import build_thread  # noqa: E402
from komorebi.sim.machine.card import Card  # noqa: E402
from komorebi.sim.image.elf import ThreadImage, load_image  # noqa: E402
from unicorn import UC_HOOK_BLOCK  # noqa: E402  (after bench._bare: the simulator's build of the engine)

TRIPLE = ROOT / "tutorial" / "35_sharing_memory" / "thread" / "triple.c"


def simulator_run(image: ThreadImage, numbers: np.ndarray) -> tuple[float, Layout]:
    card = Card()
    cluster = card.place_thread(1, image, [("numbers", numbers.view(np.uint8)), ("tripled", numbers.nbytes)], [], 1)
    layout = layout_of(cluster)
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


def bare_run(image: ThreadImage, numbers: np.ndarray, layout: Layout, **variant) -> BareRun:
    """The same ELF on a plain Unicorn engine (bench/_bare.py), the input in region 0."""
    return BareRun(image, layout, contents={0: numbers.tobytes()}, **variant)


def count_instructions(image: ThreadImage, numbers: np.ndarray, layout: Layout) -> int:
    bare = bare_run(image, numbers, layout, memory="ptr")
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
    bare.close()
    return executed[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=16, help="region size in MiB (default 16)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each, best taken (default 5)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: --mib 1, --repeat 1 (the tests' form)")
    args = parser.parse_args()
    if args.quick:
        args.mib = 1
        args.repeat = 1
    numbers = np.arange(args.mib * 2**20 // 4, dtype=np.uint32)
    image = load_image(build_thread([TRIPLE]).elf)
    _, layout = simulator_run(image, numbers)  # warm-up, and the addresses to reuse
    instructions = count_instructions(image, numbers, layout)
    setups = {  # name: the variant (bench/_bare.py)
        "bare Unicorn, mem_map": {"memory": "map"},
        "bare Unicorn, mem_map_ptr": {"memory": "ptr"},
        "bare Unicorn, identity TLB hook": {"memory": "ptr", "tlb": "identity hook"},
    }
    sim_times, times = [], {name: [] for name in setups}
    for _ in range(args.repeat):
        sim_times.append(simulator_run(image, numbers)[0])
        for name, variant in setups.items():
            bare = bare_run(image, numbers, layout, **variant)
            times[name].append(bare.run())
            if not (np.frombuffer(bare.read(1), dtype=np.uint32) == 3 * numbers).all():
                raise SystemExit("the bare run computed wrong numbers")
            bare.close()
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
