"""The package's build: pyproject.toml says everything but one step. The card's C library
(musl for the X280, sim/build/libc.py) is target code, the same bytes on every host, so it
is built here, once, when a wheel, an sdist or an editable install is made, into
kmx_runtime/libc/, and shipped; a user's first compile then compiles only their own files.
A library already there and matching its manifest is kept (an sdist brings it built).

It also builds the simulator's engine (Unicorn with the X280's floating-point rules,
sim/build/engine.py) from Unicorn's published source, which it downloads with pip into
sim/build/engine_source/, into sim/build/engine_built/. That is host code: a wheel made
here runs on machines of the same system and processor; elsewhere the first use builds it
again. An sdist ships the source, and its install builds the engine."""

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent


def _build_the_c_library() -> None:
    spec = importlib.util.spec_from_file_location("_kmx_libc", HERE / "sim" / "build" / "libc.py")
    libc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(libc)
    libc.build_all(HERE / "kmx_runtime" / "libc")


def _build_the_engine(*options: str) -> None:
    import subprocess
    import sys

    # (in a process of its own, from the checkout: sim/build/engine.py imports its package)
    done = subprocess.run([sys.executable, "-m", "sim.build.engine", *options], cwd=HERE)
    if done.returncode != 0:  # (not fatal: the first use builds it into the build cache, or says why not)
        print("komorebi-sim: the simulator's engine was not built; the first use will build it", file=sys.stderr)


class BuildPy(build_py):
    def run(self):
        _build_the_c_library()
        _build_the_engine()
        super().run()


class Sdist(sdist):
    def run(self):
        _build_the_c_library()
        _build_the_engine("--source-only")  # (an sdist ships the source; its install builds the engine)
        super().run()


setup(cmdclass={"build_py": BuildPy, "sdist": Sdist})
