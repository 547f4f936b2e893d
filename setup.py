"""Builds the compiled core, ``uno_mk_env.compiled._core`` (docs/compiled.md); everything else
about the package is declared in ``pyproject.toml``.

The extension is optional: when it cannot be built (no C compiler, an unusual platform, numpy or
Cython missing from a build without isolation) the build warns and goes on without it, and the
package runs on its Python engine. ``UNO_MK_REQUIRE_COMPILED=1`` makes such a failure an error
(the release wheels are built so, ``[tool.cibuildwheel]``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
CORE = Path("uno_mk_env", "compiled")
SOURCES = ["uno_rng.c", "uno_core.c", "uno_encode.c", "uno_determinize.c", "uno_agents.c",
           "uno_batch.c", "uno_search.c", "uno_tree.c"]
HEADERS = ["uno_core.h", "uno_agents.h", "uno_batch.h", "uno_search.h", "uno_tree.h"]


def _required() -> bool:
    return os.environ.get("UNO_MK_REQUIRE_COMPILED", "") == "1"


def _warn(reason: str) -> None:
    print(f"warning: uno_mk_env.compiled is not built ({reason}); the package will use its "
          "Python engine", file=sys.stderr)


class OptionalBuildExt(build_ext):
    """``build_ext`` that warns and skips the core when compiling fails (unless required)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as e:  # a compiler missing or refusing: distutils' errors and OSError
            if _required():
                raise
            _warn(f"{type(e).__name__}: {e}")

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as e:
            if _required():
                raise
            _warn(f"{type(e).__name__}: {e}")


def _extensions() -> list[Extension]:
    try:
        import numpy as np
        from Cython.Build import cythonize
    except ImportError as e:  # a build without isolation that lacks them
        if _required():
            raise
        _warn(f"{e.name} is not installed")
        return []
    include = Path(np.get_include())  # numpy/_core/include (numpy/core/include before 2.0)
    random_lib = include.parent.parent / "random" / "lib"  # libnpyrandom: numpy's distributions
    unix = sys.platform != "win32"
    extension = Extension(
        "uno_mk_env.compiled._core",
        sources=[str(CORE / "_core.pyx"), *(str(CORE / "src" / name) for name in SOURCES)],
        # rebuilt when a header changes; the sdist ships them (setuptools adds `depends`)
        depends=[str(CORE / "src" / name) for name in HEADERS],
        include_dirs=[str(include), str(CORE / "src")],
        library_dirs=[str(random_lib)],
        libraries=["npyrandom", "m"] if unix else ["npyrandom"],
        # Bit-exactness with the Python engine needs each float operation rounded on its own, as
        # Python rounds it: no fused multiply-add (the default of GCC and Clang where the target
        # has one, e.g. aarch64).
        extra_compile_args=["-ffp-contract=off"] if unix else [],
    )
    return cythonize([extension], quiet=True, language_level=3)


os.chdir(HERE)  # the source paths above are relative to the project
setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
