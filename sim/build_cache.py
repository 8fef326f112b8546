"""Where compiled things are kept: the threads' ELFs (komorebi._build) and the simulator's
own hooks built for the host (sim.hooks). `KMX_CACHE_DIR`, or ~/.cache/komorebi-sim
(under XDG_CACHE_HOME when that is set)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    configured = os.environ.get("KMX_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "komorebi-sim"
