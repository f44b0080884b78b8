"""E8M0 block scales: decoding and the named rules that pick a block's exponent.

A byte b means 2^(b-127); byte 0 is 2^-127 (an fp32 denormal, as aiter's ``e8m0_to_f32`` gives) and
byte 255 is NaN. The rules turn a block's amax into the exponent s (clamped to [-127, 127]):

| rule    | s                                                  | who uses it                           |
|---------|----------------------------------------------------|---------------------------------------|
| even    | e-2 if amax's mantissa < 1.75 else e-1 (bit trick)  | aiter dynamic_mxfp4_quant (default)   |
| floor   | floor(log2(amax)) - 2                              | OCP MX spec                           |
| ceil    | ceil(log2(amax)) - 2                               | torchao CEIL                          |
| rceil   | ceil(log2(amax / 6))                               | NVIDIA cvt.rp / aiter HEAD "RoundUp"  |

amax = m * 2^e with 1 <= m < 2. "even" is computed with aiter's exact bit trick, so its quirks are
kept: amax in [1.75*2^127, 2^128) rounds to Inf and gives s = 127; Inf and all-NaN blocks give 127;
zero and subnormal amax give -127 (byte 0).
"""
from __future__ import annotations

import torch

SCALE_RULES = ("even", "floor", "ceil", "rceil")
E8M0_NAN = 255


def decode_e8m0(scale_bytes: torch.Tensor) -> torch.Tensor:
    """uint8 (or float8_e8m0fnu) bytes -> float32 2^(b-127); 0 -> 2^-127, 255 -> NaN."""
    b = _as_uint8(scale_bytes).to(torch.int32)
    bits = torch.where(b == 0, torch.full_like(b, 0x00400000), b << 23)
    bits = torch.where(b == E8M0_NAN, torch.full_like(b, 0x7FC00000), bits)
    return bits.view(torch.float32)


def scale_exponent(amax: torch.Tensor, rule: str = "even") -> torch.Tensor:
    """Block amax (fp32, >= 0 or NaN) -> unbiased scale exponent s (int32, in [-127, 127])."""
    if rule not in SCALE_RULES:
        raise ValueError(f"scale rule must be one of {SCALE_RULES}, got {rule!r}")
    amax = amax.to(torch.float32)
    if rule == "even":
        bits = amax.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
        rounded = ((bits + 0x200000) & 0xFF800000) & 0x7FFFFFFF
        field = (rounded >> 23).to(torch.int32)
        s = field - 127 - 2
        s = torch.where(field == 0, torch.full_like(s, -127), s)  # zero or subnormal amax
        s = torch.where(field == 255, torch.full_like(s, 127), s)  # Inf, NaN, or rounding overflow
        return s.clamp(-127, 127)
    a = amax.to(torch.float64)
    if rule == "floor":
        exp = torch.floor(torch.log2(a)) - 2
    elif rule == "ceil":
        exp = torch.ceil(torch.log2(a)) - 2
    else:
        exp = torch.ceil(torch.log2(a / 6.0))
    exp = torch.nan_to_num(exp, nan=127.0, posinf=127.0, neginf=-127.0)
    return exp.clamp(-127, 127).to(torch.int32)


def encode_scale(s: torch.Tensor) -> torch.Tensor:
    """Unbiased exponent in [-127, 127] -> E8M0 byte (uint8)."""
    return (s.to(torch.int32) + 127).to(torch.uint8)


def _as_uint8(t: torch.Tensor) -> torch.Tensor:
    if t.dtype == torch.uint8:
        return t
    if t.element_size() == 1 and not t.dtype.is_floating_point or "e8m0" in str(t.dtype):
        return t.view(torch.uint8)
    raise TypeError(f"E8M0 scales must be uint8 or float8_e8m0fnu, got {t.dtype}")
