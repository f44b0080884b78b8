"""aiter.ops.quant: the quantizer lookups. Only the per-1x32 MXFP4 (and the no-op) quantizers are emulated:
get_triton_quant's (fp4_utils.dynamic_mxfp4_quant: the reference's scale rule, ties-up elements) and
get_torch_quant's (per_1x32_f4_quant: pure torch, RNE elements, but a scale of its own, below)."""
import functools

import torch

from ..utility import dtypes, fp4_utils
from .enum import QuantType


def per_1x32_f4_quant_triton(x, scale=None, quant_dtype=dtypes.fp4x2, shuffle=False):
    """fp4_utils.dynamic_mxfp4_quant (ties-up elements in the competition era), codes viewed as quant_dtype."""
    assert quant_dtype == dtypes.fp4x2
    y, scale = fp4_utils.dynamic_mxfp4_quant(x, shuffle=shuffle)
    return y.view(quant_dtype), scale


def per_1x32_f4_quant(x, scale=None, quant_dtype=dtypes.fp4x2, shuffle=False):
    """aiter's pure-torch per-1x32 MXFP4 quantizer (``scale`` ignored: always dynamic). Each block of 32 along
    the last dim gets the E8M0 byte f32_to_e8m0(amax / 4): amax rounded to a power of two, up when its
    significand is >= 1.5 (the reference's rule rounds up from 1.75: one block in five gets a scale twice as
    large here, its other elements a coarser grid). Elements: x / scale, RNE e2m1 (saturating at 6); a block
    holding Inf or NaN gets byte 0xFF, a NaN scale, and every element a NaN's code. Codes (…, K/2) fp4x2, scales
    (M, K/32) fp8_e8m0 (e8m0_shuffle'd and padded with shuffle=True). Needs K % 32 == 0 and a view-compatible x."""
    assert quant_dtype == dtypes.fp4x2
    block = 32
    shape = x.shape
    rows = x.view(-1, shape[-1]).shape[0]
    blocks = x.view(-1, block).float()  # raises for a non-contiguous x or 32 not dividing its elements, as aiter's
    amax = blocks.abs().amax(dim=-1, keepdim=True)
    scale_bytes = fp4_utils.f32_to_e8m0(amax / 4.0)
    y = blocks / fp4_utils.e8m0_to_f32(scale_bytes)
    codes = fp4_utils.f32_to_mxfp4(y).view(torch.uint8).view(*shape[:-1], -1).view(quant_dtype)
    scales = scale_bytes.view(torch.uint8).view(rows, -1)
    if shuffle:
        scales = fp4_utils.e8m0_shuffle(scales)
    return codes, scales.view(dtypes.fp8_e8m0)


@functools.lru_cache()
def get_torch_quant(qType):
    emulated = {QuantType.No: lambda *a, **k: (a[0], None), QuantType.per_1x32: per_1x32_f4_quant}
    if qType in emulated:
        return emulated[qType]

    def not_emulated(*args, **kwargs):
        raise NotImplementedError(f"{qType} torch quantization is not emulated (real aiter has it)")
    return not_emulated


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
