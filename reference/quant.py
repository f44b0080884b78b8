"""MXFP4 block quantization with aiter ``dynamic_mxfp4_quant`` semantics, and its inverse.

One E8M0 scale per 32 consecutive elements along the last dim (K). Per block (section 1.2-1.3 of
aiter_semantics.md):

    amax = max |x| over the block, NaN ignored unless the whole block is NaN
    s    = scale_exponent(amax, rule)                  # "even" by default
    qx   = x * 2^-s  computed in fp32                  # a multiply, as aiter does
    code = encode_e2m1(qx, rounding)                   # RNE, saturate to +-6

Outputs are row-major: packed codes uint8 [M, K/2] (element 2j in the low nibble of byte j) and
scale bytes uint8 [M, K/32]. (aiter returns its scales column-major; that is a layout detail the
emulation reproduces, not part of the math.)
"""
from __future__ import annotations

import torch

from reference.e2m1 import decode_e2m1, encode_e2m1, pack_e2m1, unpack_e2m1
from reference.e8m0 import decode_e8m0, encode_scale, scale_exponent

BLOCK = 32
_FLOAT_INPUTS = (torch.bfloat16, torch.float16, torch.float32)


def check_matrix(x: torch.Tensor, name: str, dtypes: tuple, k_multiple: int) -> None:
    """Raise a clear TypeError/ValueError unless x is a 2-D tensor of an allowed dtype with K % k_multiple == 0."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 2:
        raise ValueError(f"{name} must be 2-D [rows, K], got {x.dim()}-D shape {tuple(x.shape)}")
    if x.dtype not in dtypes:
        raise TypeError(f"{name} must have dtype in {[str(d) for d in dtypes]}, got {x.dtype}")
    if x.shape[1] % k_multiple:
        raise ValueError(
            f"{name}: K={x.shape[1]} must be a multiple of {k_multiple} (one E8M0 scale per {BLOCK} elements)"
        )


def block_amax(x32: torch.Tensor) -> torch.Tensor:
    """[M, K] fp32 -> [M, K/32] max |x| per block; NaN elements ignored unless all 32 are NaN
    (Triton's tl.max lowers to maxnum)."""
    blocks = x32.abs().reshape(x32.shape[0], -1, BLOCK)
    nan = torch.isnan(blocks)
    amax = torch.where(nan, torch.zeros_like(blocks), blocks).amax(dim=-1)
    return torch.where(nan.all(dim=-1), torch.full_like(amax, float("nan")), amax)


def power_of_two(e: torch.Tensor) -> torch.Tensor:
    """Exact fp32 2^e for integer e in [-127, 127], built from its bits: torch.exp2 is not exact on
    every device (CUDA gives 2^-127 one ulp low)."""
    e = e.to(torch.int32)
    bits = torch.where(e == -127, torch.full_like(e, 0x00400000), (e + 127) << 23)
    return bits.view(torch.float32)


def quantize_mxfp4(x: torch.Tensor, scale_rule: str = "even", rounding: str = "rne"):
    """x [M, K] (bf16/fp16/fp32, any strides) -> (packed uint8 [M, K/2], scales uint8 [M, K/32])."""
    check_matrix(x, "x", _FLOAT_INPUTS, BLOCK)
    x32 = x.to(torch.float32)
    s = scale_exponent(block_amax(x32), scale_rule)
    quant_scale = power_of_two(-s)  # 2^127 .. 2^-127, exact
    qx = (x32.reshape(x32.shape[0], -1, BLOCK) * quant_scale[..., None]).reshape(x32.shape)
    codes = encode_e2m1(qx, rounding)
    return pack_e2m1(codes), encode_scale(s)


def dequantize_mxfp4(packed: torch.Tensor, scales: torch.Tensor, dtype=torch.float64) -> torch.Tensor:
    """(packed [M, K/2], scales [M, K/32]) -> values [M, K]; exact in float64 (fp32 can overflow:
    6 * 2^127 is not an fp32 number)."""
    packed = packed.view(torch.uint8)
    scales = scales.view(torch.uint8)
    if packed.dim() != 2 or scales.dim() != 2:
        raise ValueError(f"dequantize_mxfp4 expects 2-D inputs, got {tuple(packed.shape)} and {tuple(scales.shape)}")
    k = packed.shape[1] * 2
    if scales.shape != (packed.shape[0], k // BLOCK) or k % BLOCK:
        raise ValueError(
            f"scales shape {tuple(scales.shape)} does not match packed {tuple(packed.shape)}: "
            f"expected ({packed.shape[0]}, {k // BLOCK}) with K={k} a multiple of {BLOCK}"
        )
    values = decode_e2m1(unpack_e2m1(packed)).to(dtype)
    factors = decode_e8m0(scales).to(dtype).repeat_interleave(BLOCK, dim=1)
    return values * factors
