"""The machine's numbers the API checks arguments against and takes its defaults from.

They are the card's (docs/api.md), and the simulator has them too (komorebi.sim.layout,
.schedule, .kmx.console); they are written here again so that `import komorebi`, a
`km.Program` and a `km.Schedule` import no part of the simulator. The simulator's side of
the seam (komorebi._simulator) checks, when it is first imported, that both say the same.
"""

PAGE = 4096  # bytes
CLUSTERS = 4
CORES_PER_CLUSTER = 4
MAX_REGIONS = 16
MAX_WORDS = 64
DEFAULT_HEAP_BYTES = 64 << 20  # bytes
DEFAULT_QUANTUM = 2_000  # instructions a turn, while several cores are ready (docs/simulator.md)
MAX_QUANTUM = 2**31  # the longest turn a quantum can ask for
MAX_AGENTS = 4  # Tensix stand-ins (Program.noc_agent) a cluster may have
OUTPUT_KEPT = 1 << 20  # characters of a thread's latest output lines kept, by default
TIMING_MODELS = ("x280",)  # km.Session(timing=...): the timing models there are (docs/timing.md)
DEFAULT_CLOCK_MHZ = 1750  # the X280's clock in the timing model, by default (the card's after reset)
