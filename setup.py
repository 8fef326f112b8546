"""The package's build: pyproject.toml says everything but one step. The card's C library
(musl for the X280, sim/build/libc.py) is target code, the same bytes on every host, so it
is built here, once, when a wheel, an sdist or an editable install is made, into
kmx_runtime/libc/, and shipped; a user's first compile then compiles only their own files.
A library already there and matching its manifest is kept (an sdist brings it built)."""

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


class BuildPy(build_py):
    def run(self):
        _build_the_c_library()
        super().run()


class Sdist(sdist):
    def run(self):
        _build_the_c_library()
        super().run()


setup(cmdclass={"build_py": BuildPy, "sdist": Sdist})
