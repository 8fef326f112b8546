"""The Tensix side: a stand-in for a Tensix kernel writes frames into DRAM while the
thread runs, and reads the thread's results back, a flag word each way; then the thread
with each of three mistakes."""
import textwrap
import warnings
from pathlib import Path

import numpy as np

import komorebi as km

HERE = Path(__file__).resolve().parent
FRAMES = 4
WORDS = 1024


def frame(n):
    return np.arange(WORDS, dtype=np.uint32) + 1000 * n


def tensix(noc):
    """The Tensix side of the exchange: each frame in, each frame's results out."""
    results = []
    for n in range(1, FRAMES + 1):
        noc.write("frame", 0, frame(n))
        noc.write("flags", 0, np.uint32([n]))
        noc.wait("flags", 64, n)
        results.append(noc.read("results", 0, 4 * WORDS).view(np.uint32))
    return results


def run_thread(source):
    """Run the thread in SOURCE with the stand-in; return the stopped run."""
    program = km.Program("the_tensix_side", kernels=HERE / "kernels")
    program.thread(
        cluster=1,
        sources=[HERE / "thread" / source],
        regions={"frame": 4 * WORDS, "flags": 128, "results": 4 * WORDS},
    )
    program.noc_agent("tensix", tensix, cluster=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", km.CoherenceWarning)  # the program prints them itself
        with km.Session() as session:
            run = session.load(program)
            result = run.thread_result(timeout=60.0)
            run.stop()
    assert result.code == 0
    return run


def show(title, run):
    """Print which frames came back right, and the findings, one line each."""
    results = run.agent("tensix").result
    right = [n for n, got in enumerate(results, 1) if (got == 2 * frame(n)).all()]
    print(f"{title}: {len(right)} of {FRAMES} frames came back right {right}")
    for f in run.findings:
        where = f"{Path(f.file).name}:{f.line}" if f.file else "no line"
        agent = f", agent {f.agent!r} at {Path(f.agent_file).name}:{f.agent_line}" if f.agent else ""
        print(f"  finding: {f.kind} in region {f.region!r}, at {where}{agent}")


def say(finding):
    """Print what the checker says, wrapped."""
    print(f"  what the checker says of {finding.kind}:")
    print(textwrap.fill(finding.message, width=88, initial_indent="    ", subsequent_indent="    ",
                        break_on_hyphens=False))


show("double.c", run_thread("double.c"))
stale = run_thread("no_invalidate.c")
show("no_invalidate.c", stale)
say(next(f for f in stale.findings if f.kind == "stale-read"))
unflushed = run_thread("no_flush.c")
show("no_flush.c", unflushed)
say(next(f for f in unflushed.findings if f.kind == "noc-read-unflushed"))
show("invalidate_not_flush.c", run_thread("invalidate_not_flush.c"))
