"""aiter.ops.quant: the quantizer lookup. Only the per-1x32 MXFP4 (and the no-op) quantizers are emulated."""
import functools

from ..utility import dtypes, fp4_utils
from .enum import QuantType


def per_1x32_f4_quant_triton(x, scale=None, quant_dtype=dtypes.fp4x2, shuffle=False):
    """fp4_utils.dynamic_mxfp4_quant (ties-up elements in the competition era), codes viewed as quant_dtype."""
    assert quant_dtype == dtypes.fp4x2
    y, scale = fp4_utils.dynamic_mxfp4_quant(x, shuffle=shuffle)
    return y.view(quant_dtype), scale


def _not_emulated(qType):
    def quantize(*args, **kwargs):
        raise NotImplementedError(f"{qType} Triton quantization is not emulated (real aiter has it)")
    return quantize


@functools.lru_cache()
def get_triton_quant(qType):
    emulated = {
        QuantType.No: lambda *a, **k: (a[0], None),
        QuantType.per_1x32: per_1x32_f4_quant_triton,
    }
    if qType in emulated:
        return emulated[qType]
    if qType in (QuantType.per_Tensor, QuantType.per_Token, QuantType.per_1x128):
        return _not_emulated(qType)

    def unsupported(*a, **k):
        raise NotImplementedError(f"unsupported quant type {qType=}")
    return unsupported
