"""Build of the evaluator's C kernel; everything else about the package is in pyproject.toml.

The extension is optional: where no C compiler is at hand the install still succeeds and
the evaluator uses its NumPy path (same results, slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pooling.evaluation._kernel",
            ["pooling/evaluation/_kernel.c"],
            extra_compile_args=["-O3", "-std=c11", "-D_GNU_SOURCE"],
            optional=True,
        )
    ]
)
