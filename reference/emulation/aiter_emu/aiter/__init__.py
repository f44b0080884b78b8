"""An importable emulation of the aiter surface that amd-mxfp4-mm submissions use, at the runner's
aiter commit (f3be04a12a0c; the same files as the competition-era snapshot bd02afb526) on gfx950.
Put the directory above this package on sys.path (see reference/emulation/select.py).
docs/aiter_emulation.md lists what differs from aiter, and why.

Importing it needs no GPU: the ASM GEMM is computed with torch, the Triton kernels run wherever Triton
runs (the interpreter on a CPU).
"""
import logging

from . import _emulation  # noqa: F401  (marks the package as the emulation)
from .ops.enum import ActivationType, QuantType  # noqa: F401
from .ops.gemm_op_a4w4 import gemm_a4w4, gemm_a4w4_asm  # noqa: F401
from .ops.quant import get_torch_quant, get_triton_quant, per_1x32_f4_quant, per_1x32_f4_quant_triton  # noqa: F401
from .utility import dtypes, fp4_utils  # noqa: F401  (aiter's top level has fp4_utils, through ops.quant's imports)
from .ops import triton as _ops_triton  # noqa: F401  (aiter imports its Triton package with the top level)

logger = logging.getLogger("aiter")

from . import _not_emulated  # noqa: E402

_not_emulated.install()


def __getattr__(name):
    raise _not_emulated.missing_attribute(name)
