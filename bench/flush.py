"""A kmx_flush's own cost: the cache model alone (no thread), a region of --mib MiB whose
every line was written, flushed; in card mode's holding (direct: the view is DRAM) and in
strict mode's (copy-on-write: the view is a mapping of DRAM of its own). Best of --repeat,
each a new region. The last line printed is one JSON object.

    python bench/flush.py [--mib 32] [--repeat 5] [--quick]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from komorebi.sim.cache.model import CachedRegion, Holding
from komorebi.sim.layout import LINE, PAGE
from komorebi.sim.memory.dram import Snapshot, Storage, View


def flush_seconds(size: int, holding: Holding) -> float:
    dram = np.random.default_rng(1).integers(0, 256, size, dtype=np.uint8)
    storage = Storage(size, Snapshot(dram))
    if holding is Holding.DIRECT:
        view = storage.dram
        model = CachedRegion(view, view, holding, storage=storage)
    else:
        memory = View(storage)
        view = memory.array
        model = CachedRegion(view, storage.dram, holding, memory=memory)
    try:
        for page in range(size // PAGE):  # each page written, as the fill hook sees a core's first store
            model.touch(page * PAGE, 0, True)
        view[::LINE] += 1  # every line dirty
        start = time.perf_counter()
        lines, _ = model.flush()
        seconds = time.perf_counter() - start
        assert lines.size == size // LINE, lines.size
        assert storage.dram[::LINE].tolist() == view[::LINE].tolist()
        return seconds
    finally:
        model.release()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="4 MiB, once (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.mib, args.repeat = 4, 1
    size = args.mib << 20
    out = {"benchmark": "flush", "mib": args.mib}
    for name, holding in (("direct", Holding.DIRECT), ("copy_on_write", Holding.COPY_ON_WRITE)):
        best = min(flush_seconds(size, holding) for _ in range(args.repeat))
        out[f"{name}_ms"] = round(best * 1e3, 2)
        print(f"{name:>14}: {best * 1e3:8.1f} ms ({size / best / 2**30:.1f} GiB/s of region)")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
