"""Every benchmark of bench/README.md, one after the other, each in a fresh interpreter,
with the arguments the README's figures were taken with. Prints each one's output as it
comes, then one JSON object (benchmark -> its last line's JSON) as the last line.

    python bench/all.py

It takes about fifteen minutes on a 2-CPU machine; qemu-riscv64 is used when installed
(apt-get install qemu-user), and skipped when not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

RUNS = {
    "vs_qemu": ["vs_qemu.py", "--repeat", "5"],
    "startup": ["startup.py"],
    "cores": ["cores.py"],
    "bigregion": ["bigregion.py", "--mib", "1024"],
    "stream": ["stream.py"],
    "isa": ["isa.py"],
    "vector": ["vector.py"],
    "cache_modes": ["cache_modes.py"],
    "observing": ["observing.py"],
    "races": ["races.py"],
    "noc": ["noc.py", "--spins", "200000"],
    "kmx": ["kmx.py"],
    "flush": ["flush.py"],
    "first_run": ["first_run.py"],
}


def main() -> None:
    found = {}
    for name, (script, *arguments) in RUNS.items():
        print(f"== {script} {' '.join(arguments)}", flush=True)
        done = subprocess.run([sys.executable, str(HERE / script), *arguments], capture_output=True, text=True)
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        if done.returncode != 0:
            raise SystemExit(f"{script} failed (exit status {done.returncode})")
        found[name] = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps(found))


if __name__ == "__main__":
    main()
