"""Exact conversions on bit patterns (numpy): the model of what compiled code does when it converts
between bf16, fp16, fp32 and fp64. Shared by the interpreter patches and gfx950's casts."""
from __future__ import annotations

import numpy as np


def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """bf16 bit patterns -> fp32 values, exactly (subnormals, NaN payloads and all)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16_bits(values: np.ndarray, rounding: str = "rtne") -> np.ndarray:
    """fp32 -> bf16 bit patterns: round to nearest even (or toward zero), subnormals kept, Inf on
    overflow; a NaN stays a quiet NaN with its sign and top payload bits."""
    u = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    if rounding == "rtz":
        out = u >> 16
    else:
        out = (u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    out = np.where(nan, (u >> 16) | np.uint32(0x40), out)
    return out.astype(np.uint16)


def _to_f32_round_to_odd(values: np.ndarray) -> np.ndarray:
    """float64 -> fp32 rounded to odd: a later rounding to bf16 (8 bits) is then a correct single
    rounding of the float64 value (fp32 has 24 >= 8 + 2 bits)."""
    x = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = x.astype(np.float32)
        back = f.astype(np.float64)
    inexact = (back != x) & ~np.isnan(x)
    bits = f.view(np.uint32).copy()
    # round toward zero first (step the magnitude down where fp32 rounded away), then force the last bit
    away = inexact & (np.abs(back) > np.abs(x))
    bits[away] -= np.uint32(1)
    bits[inexact] |= np.uint32(1)
    return bits.view(np.float32)


def _to_bf16_bits_from_any(data: np.ndarray, src_is_bf16: bool = False) -> np.ndarray:
    if src_is_bf16:
        return data.astype(np.uint16)
    if data.dtype in (np.float32, np.float16):
        return f32_to_bf16_bits(data.astype(np.float32))
    return f32_to_bf16_bits(_to_f32_round_to_odd(data.astype(np.float64)))
