"""Debugging a thread (docs/debugging.md): four cores scale numbers through a helper; one
forgets its flush. Run it as it is, or with KMX_GDB=0 to debug it in gdb; `profile`,
`trace` or `story` as its argument runs it with the profile, the trace or the cache's
story."""
import sys
from pathlib import Path

import numpy as np

import komorebi as km

HERE = Path(__file__).resolve().parent
(HERE / "kernels").mkdir(exist_ok=True)
numbers = np.arange(1024, dtype=np.uint32)

program = km.Program("debugging", kernels=HERE / "kernels")
program.thread(cluster=1, sources=[HERE / "thread" / "scale.c"], cores=4,
               regions={"numbers": numbers, "scaled": 4096})

asked = sys.argv[1] if len(sys.argv) > 1 else ""
options = {"profile": {"profile": True}, "trace": {"trace": HERE / "trace.json"}}.get(asked, {})
with km.Session(**options) as session:
    run = session.load(program)
    result = run.thread_result(timeout=None)
    run.stop()
    scaled = run.thread.read("scaled").view(np.uint32)

print(f"each core scaled {result.words[0]} numbers; the last: {scaled[-1]}")
for finding in run.findings:
    print(f"finding: {finding.kind} at line {finding.line}")
if asked == "profile":
    profile = run.profile()
    print(profile.table(top=5))
    profile.annotate(HERE / "annotated.txt")
    profile.flamegraph(HERE / "stacks.txt")
if asked == "story":
    print(run.cache_story(HERE / "story.html").name)
