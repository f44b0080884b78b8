"""An independent scalar MXFP4 quantizer written from the spec text (aiter_semantics.md 1.2-1.3),
with Python floats and exact rationals instead of aiter's bit tricks. Tests compare the vectorised
reference against it; the two share no code."""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

GRID = [Fraction(v) for v in ("0", "0.5", "1", "1.5", "2", "3", "4", "6")]


def element_code(q, rounding: str = "rne") -> int:
    """|q| to the nearest grid value (ties: even code for rne, larger magnitude for ties_up)."""
    sign = 8 if math.copysign(1.0, q) < 0 else 0
    if math.isnan(q):
        if rounding == "ties_up":
            return 7 | sign
        # Spec: NaN fails every comparison and takes the normal branch, so its code depends on the
        # payload: quiet NaN 0x7FC00000 -> 3; bf16 signalling NaNs are quieted by the fp32 conversion.
        bits = int(np.array([q], dtype=np.float32).view(np.uint32)[0]) & 0x7FFFFFFF
        return ((bits - (126 << 23) + 0x1FFFFF + ((bits >> 22) & 1)) >> 22) & 0xF | sign
    return _finite_code(abs(float(q)), rounding) | sign


@functools.lru_cache(maxsize=None)
def _finite_code(magnitude: float, rounding: str) -> int:
    if magnitude >= 6:  # includes Inf: saturate
        return 7
    a = Fraction(magnitude)
    best = min(range(8), key=lambda i: abs(GRID[i] - a))
    dists = [i for i in range(8) if abs(GRID[i] - a) == abs(GRID[best] - a)]
    if len(dists) == 2:  # an exact tie between neighbours
        best = max(dists) if rounding == "ties_up" else next(i for i in dists if i % 2 == 0)
    return best


def even_scale_exponent(amax: float) -> int:
    if math.isnan(amax) or math.isinf(amax):
        return 127
    if amax < 2.0**-126:  # zero or subnormal
        return -127
    m, e = math.frexp(amax)  # amax = m * 2^e, 0.5 <= m < 1
    mant, exp = m * 2, e - 1  # 1 <= mant < 2
    if mant >= 1.75:
        s = 127 if exp == 127 else exp - 1  # the +2^21 carry overflows to Inf at the top binade
    else:
        s = exp - 2
    return max(-127, min(127, s))


def quantize_block(values: list[float], rounding: str = "rne"):
    """32 floats -> (codes, scale byte)."""
    finite_or_inf = [abs(v) for v in values if not math.isnan(v)]
    amax = max(finite_or_inf) if finite_or_inf else float("nan")
    s = even_scale_exponent(amax)
    factor = np.float32(2.0**-s)
    codes = [element_code(_fp32_product(v, factor), rounding) for v in values]
    return codes, s + 127


def _fp32_product(v: float, factor: np.float32):
    """v * factor in fp32; NaN passed through with its bits (Python floats would drop the payload)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.float32(v) * factor
