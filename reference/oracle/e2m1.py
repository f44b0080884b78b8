"""The OCP e2m1 (FP4) element codec: decode table, aiter's encoders, nibble packing.

A code is a nibble: bit 3 = sign, bits 0-2 index the magnitudes {0, .5, 1, 1.5, 2, 3, 4, 6}.
The encoders take values that are already divided by the block scale (aiter's ``qx``) and mirror
aiter's fp32 bit manipulations (aiter_semantics.md sections 1.3 and 1.4), so special values
(NaN, Inf, -0, denormals) come out exactly as aiter's kernels produce them.
"""
from __future__ import annotations

import torch

E2M1_MAGNITUDES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
E2M1_VALUES = E2M1_MAGNITUDES + tuple(-v for v in E2M1_MAGNITUDES)  # index = code; code 8 is -0.0
TIE_POINTS = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)  # midpoints: |x / scale| exactly between two codes
ROUNDINGS = ("rne", "ties_up")


def _fp32_bits(x: torch.Tensor) -> torch.Tensor:
    """fp32 bit patterns as non-negative int64 (no sign-extension surprises)."""
    return x.to(torch.float32).contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF


def _fp32_from_bits(bits: torch.Tensor) -> torch.Tensor:
    b = bits & 0xFFFFFFFF
    return torch.where(b >= 2**31, b - 2**32, b).to(torch.int32).view(torch.float32)


def decode_e2m1(codes: torch.Tensor) -> torch.Tensor:
    """Codes (uint8, low nibble used) -> float32 values; code 8 decodes to -0.0."""
    if codes.dtype != torch.uint8:
        raise TypeError(f"decode_e2m1 expects uint8 codes, got {codes.dtype}")
    # the 16-entry table is built on the device from the codes' bits, not copied there with torch.tensor: a
    # host-to-device copy is what a CUDA graph's capture refuses (real files capture aiter's API, which the
    # emulation serves with this codec); the lookup itself stays a gather (10x faster than decoding each code)
    c = torch.arange(16, dtype=torch.int64, device=codes.device)
    sign, exponent, mantissa = c >> 3, (c >> 1) & 3, c & 1
    magnitude = torch.where(exponent == 0, mantissa * 0x3F000000, ((exponent + 126) << 23) | (mantissa << 22))
    table = _fp32_from_bits(magnitude | (sign << 31))
    return table[(codes & 0xF).long()]


def encode_e2m1(qx: torch.Tensor, rounding: str = "rne") -> torch.Tensor:
    """Scaled values -> e2m1 codes (uint8 in 0..15), aiter's element conversion.

    ``rne``: post-#975 aiter (torchao algorithm): round to nearest, ties to even, saturate to 6,
    NaN takes the "normal" branch (quiet NaN -> 0x3 with NaN's sign), -0 -> 0x8.
    ``ties_up``: pre-#975 aiter (the bug other quantizers still have): one guard bit, no sticky
    bits, ties rounded away from zero, NaN/Inf -> 0x7. Shift counts >= 32 (|qx| < 2^-32) are taken
    as shifting everything out (AMD's 5-bit shift masking is not modelled).
    """
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {ROUNDINGS}, got {rounding!r}")
    if not qx.dtype.is_floating_point:
        raise TypeError(f"encode_e2m1 expects floating-point values, got {qx.dtype}")
    bits = _fp32_bits(qx)
    sign = bits & 0x80000000
    mag = bits ^ sign
    sign_nibble = (sign >> 28).to(torch.uint8)
    if rounding == "rne":
        code = _encode_rne(mag)
    else:
        code = _encode_ties_up(mag)
    return code | sign_nibble


def _encode_rne(mag: torch.Tensor) -> torch.Tensor:
    f = _fp32_from_bits(mag)
    saturate = f >= 6.0
    denormal = ~saturate & (f < 1.0)
    # |qx| < 1: adding 2^22 in fp32 rounds f to a multiple of 0.5 (ties to even); the low bits
    # of the sum are then the code 0, 1 or 2.
    magic = 2.0**22  # a Python float: the add stays fp32 (and makes no host-to-device copy)
    den = (_fp32_bits(f + magic) - 0x4A800000) & 0xFF
    # 1 <= |qx| < 6 (and NaN, for which every comparison is false): integer RNE on mantissa bit 22.
    odd = (mag >> 22) & 1
    nor = ((mag - (126 << 23) + 0x1FFFFF + odd) >> 22) & 0xFF
    code = torch.where(saturate, torch.full_like(mag, 7), torch.where(denormal, den, nor))
    return code.to(torch.uint8)


def _encode_ties_up(mag: torch.Tensor) -> torch.Tensor:
    e = (mag >> 23) & 0xFF
    m = mag & 0x7FFFFF
    shift = (126 - e).clamp(min=0)
    shifted = torch.where(shift >= 32, torch.zeros_like(m), (0x400000 | (m >> 1)) >> shift.clamp(max=31))
    m = torch.where(e < 127, shifted, m)
    e = e.clamp(min=126) - 126
    code = ((((e << 2) | (m >> 21)) + 1) >> 1).clamp(max=7)
    return code.to(torch.uint8)


def pack_e2m1(codes: torch.Tensor) -> torch.Tensor:
    """[..., K] codes -> [..., K/2] bytes; element 2j in the low nibble of byte j."""
    if codes.shape[-1] % 2:
        raise ValueError(f"packing needs an even number of codes along the last dim, got {codes.shape[-1]}")
    return (codes[..., 0::2] & 0xF) | ((codes[..., 1::2] & 0xF) << 4)


def unpack_e2m1(packed: torch.Tensor) -> torch.Tensor:
    """[..., K/2] bytes -> [..., K] codes (inverse of pack_e2m1)."""
    packed = packed.view(torch.uint8)
    low, high = packed & 0xF, packed >> 4
    return torch.stack((low, high), dim=-1).reshape(*packed.shape[:-1], packed.shape[-1] * 2)
