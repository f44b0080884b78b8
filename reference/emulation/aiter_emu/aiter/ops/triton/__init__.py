"""aiter.ops.triton. The pre-2026-01 flat module names of the two FP4 GEMMs still resolve, as in aiter."""
import importlib

from . import quant  # noqa: F401  (aiter imports it with the package)

_FLAT_ALIASES = ("gemm_a16wfp4", "gemm_afp4wfp4")


def __getattr__(name):
    if name in _FLAT_ALIASES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
