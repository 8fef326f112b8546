"""When the flush is missing: lesson 35's thread without kmx_flush(1), in the "card" and
the "strict" coherence modes, then with the flush put back."""
import textwrap
import warnings
from pathlib import Path

import numpy as np

import komorebi as km

HERE = Path(__file__).resolve().parent

numbers = np.arange(1024, dtype=np.uint32)


def run_thread(source, coherence):
    """Run the thread in SOURCE in a session of the COHERENCE mode; return the stopped run."""
    program = km.Program("when_the_flush_is_missing", kernels=HERE / "kernels")
    program.thread(
        cluster=1,
        sources=[HERE / "thread" / source],
        regions={"numbers": numbers, "tripled": 4096},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", km.CoherenceWarning)  # the program prints them itself
        with km.Session(coherence=coherence) as session:
            run = session.load(program)
            result = run.thread_result(timeout=10.0)
            run.stop()
    assert result.code == 0
    return run


def show(title, run):
    """Print what Python read from TRIPLED, and the checker's findings in one line each."""
    tripled = run.thread.read("tripled").view(np.uint32)
    print(f"{title}:")
    print(f"  first five tripled: {tripled[:5].tolist()}")
    print(f"  all 1024 right: {bool((tripled == 3 * numbers).all())}")
    for f in run.findings:
        place = f"{Path(f.file).name}:{f.line}"
        print(f"  finding: {f.kind} in region {f.region!r}, bytes {f.start} to {f.end - 1}, at {place}")
    if not run.findings:
        print("  no findings")


show("card mode, without the flush", run_thread("no_flush.c", "card"))
strict = run_thread("no_flush.c", "strict")
show("strict mode, without the flush", strict)

finding = strict.findings[0]
print()
print(f"what the checker says, at {Path(finding.file).name}:{finding.line}:")
print(textwrap.fill(finding.message, width=88, initial_indent="  ", subsequent_indent="  ",
                    break_on_hyphens=False))

print()
print("the cache report, strict mode:")
print(strict.cache_report())

print()
fixed = run_thread("triple.c", "strict")
show("strict mode, with the flush", fixed)
assert (fixed.thread.read("tripled").view(np.uint32) == 3 * numbers).all()
assert fixed.findings == []
