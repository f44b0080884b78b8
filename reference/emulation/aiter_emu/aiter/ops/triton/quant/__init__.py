"""aiter.ops.triton.quant: only the MXFP4 quantizer is emulated."""
from .quant import _mxfp4_quant_op, dynamic_mxfp4_quant

__all__ = ["dynamic_mxfp4_quant", "_mxfp4_quant_op"]
