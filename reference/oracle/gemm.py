"""The exact MXFP4 product and the bound a correct fp32-accumulating kernel must meet.

``exact_gemm`` quantizes A like the task (aiter ``dynamic_mxfp4_quant``), dequantizes both operands
and multiplies in float64. Every product a_k * b_k of two MXFP4 values has at most 4 significant
bits, so float64 holds each product exactly; the float64 sums are exact unless a row's scales span
more than ~50 binades, and the fp64 summation error is added to the bound anyway.

The bound (written down once, used by the fuzz oracle). A kernel that forms each product exactly,
adds them in fp32 in any order, optionally in S split-K partials that are summed in fp32, and rounds
once to bf16 returns y = round_bf16(v) for some fp32 v with

    |v - exact| <= E = gamma(h, u) * sum_k |a_k * b_k| + tiny
    h     = ceil(K / S) - 1 + (S - 1)     additions on the longest chain (any order within a chain)
    gamma = h*u / (1 - h*u)               (Higham, Accuracy and Stability, Thm 4.4 / eq. 4.4)
    u     = 2^-24 for IEEE fp32 adds (round to nearest); 2^-23 covers any faithful rounding
            (e.g. tensor-core accumulators that truncate)
    tiny  = 2 * K * 2^-126                underflow ("ftz"): each product and each add may lose < 2^-126
                                          when fp32 denormals are flushed (unknown for GPU matrix units)
          = 2 * K * 2^-149                underflow ("gradual"): IEEE denormals kept (numpy, the
                                          Triton interpreter), each operation loses < 2^-149
plus the fp64 reference's own error gamma(K, 2^-53) * sum|a*b|.

Rounding is monotone, so y is acceptable iff round(exact - E) <= y <= round(exact + E), with the
rounding of the backend: RNE on GPUs, truncation (RTZ) in the Triton interpreter, whose fp32->bf16
conversion truncates. Elements where an fp32 intermediate can overflow (a dequantized operand or the
magnitude sum reaching 2^128) are flagged: there a correct kernel may return +-Inf or NaN.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from reference.oracle.layouts import e8m0_unshuffle
from reference.oracle.quant import check_matrix, dequantize_mxfp4, quantize_mxfp4

FP32_OVERFLOW = 2.0**128
BF16_MAX = 255.0 * 2.0**120
BF16_ROUNDINGS = ("rne", "rtz")


@dataclass(frozen=True)
class ExactProduct:
    value: torch.Tensor  # fp64 [M, N], the exact product of the quantized operands
    abs_sum: torch.Tensor  # fp64 [M, N], sum_k |a_k * b_k|
    overflow_risk: torch.Tensor  # bool [M, N], an fp32 intermediate may overflow here
    a_q: torch.Tensor  # uint8 [M, K/2], A's codes
    a_scales: torch.Tensor  # uint8 [M, K/32], A's scale bytes
    k: int


SCALE_BYTE0 = ("ocp", "zero")


def exact_gemm(A: torch.Tensor, B_q: torch.Tensor, B_scale: torch.Tensor, scale_rule="even", rounding="rne",
               nan="payload", byte0="ocp", scale127="kept"):
    """A bf16 [M, K]; B_q packed [N, K/2] (unshuffled); B_scale [N, >= K/32] (unshuffled) -> ExactProduct.

    ``nan``: the code a NaN element of A gets (reference.oracle.quant's NAN_RESULTS). ``byte0``: what E8M0 byte 0
    multiplies by in the product: "ocp" 2^-127 (the OCP MX spec, aiter, gfx950's MFMA-scale); "zero" 0, as
    Triton's software lowering of ``tl.dot_scaled`` (GPUs without MX matrix instructions) decodes it: it
    builds the bf16 scale by shifting the byte into the exponent field. ``scale127``: what A's quantizer
    makes of 2^-127 (reference.oracle.quant.SCALE127). Runs on A's device; the result
    does not depend on it (fp64 products are exact, the sums' error is in the bound)."""
    if byte0 not in SCALE_BYTE0:
        raise ValueError(f"byte0 must be one of {SCALE_BYTE0}, got {byte0!r}")
    check_matrix(A, "A", (torch.bfloat16, torch.float16, torch.float32), 32)
    k = A.shape[1]
    if B_q.dim() != 2 or B_q.shape[1] * 2 != k:
        raise ValueError(f"B_q must be [N, K/2] = [N, {k // 2}] for A with K={k}, got {tuple(B_q.shape)}")
    if B_scale.dim() != 2 or B_scale.shape[0] < B_q.shape[0] or B_scale.shape[1] < k // 32:
        raise ValueError(f"B_scale must cover [N, K/32] = [{B_q.shape[0]}, {k // 32}], got {tuple(B_scale.shape)}")
    a_q, a_scales = quantize_mxfp4(A, scale_rule, rounding, nan, scale127)
    b_scales = B_scale[: B_q.shape[0], : k // 32]
    a = dequantize_mxfp4(a_q, a_scales)
    b = dequantize_mxfp4(B_q, b_scales)
    if byte0 == "zero":
        a = a * (a_scales.view(torch.uint8) != 0).repeat_interleave(32, dim=1)
        b = b * (b_scales.view(torch.uint8) != 0).repeat_interleave(32, dim=1)
    value = a @ b.T
    abs_sum = a.abs() @ b.abs().T
    big_a = (a.abs() >= FP32_OVERFLOW).any(dim=1, keepdim=True)
    big_b = (b.abs() >= FP32_OVERFLOW).any(dim=1, keepdim=True)
    overflow_risk = big_a | big_b.T | (abs_sum >= FP32_OVERFLOW)
    return ExactProduct(value, abs_sum, overflow_risk, a_q, a_scales, k)


def exact_gemm_from_inputs(data, **kw) -> ExactProduct:
    """ExactProduct for the task tuple (A, B, B_q, B_shuffle, B_scale_sh); uses B_q and unshuffles the scales."""
    A, _, B_q, _, B_scale_sh = data
    k = A.shape[1]
    scales = e8m0_unshuffle(B_scale_sh, B_q.shape[0], k // 32)
    return exact_gemm(A, B_q, scales, **kw)


def gamma(h: int, u: float) -> float:
    if h * u >= 1:
        raise ValueError(f"gamma undefined for h={h}, u={u}")
    return h * u / (1 - h * u)


UNDERFLOW_STEP = {"ftz": 2.0**-126, "gradual": 2.0**-149}


BF16_UNIT_ROUNDOFF = 2.0**-8  # RNE to 8 significand bits: |fl(x) - x| <= 2^-8 |x| (normal range)
BF16_MIN_NORMAL = 2.0**-126  # a flushed or subnormal bf16 result is off by less than this


def accumulation_bound(exact: ExactProduct, splits: int = 1, unit_roundoff: float = 2.0**-24,
                       underflow: str = "ftz", bf16_atomic_adds: int = 0) -> torch.Tensor:
    """E [M, N] (fp64): how far a correct fp32-accumulating kernel's pre-rounding value may be from exact.

    ``bf16_atomic_adds`` = c >= 2: each output element was built by c read-modify-write adds into a bf16
    buffer (split-K with bf16 atomics), in any order. Each add rounds its fp32 partial to bf16 (together
    at most 2^-8 x sum|partial| <= 2^-8 x abs_sum) and each of the first c - 1 running sums too (the last
    rounding is the one ``acceptable_range`` applies). A running sum is at most abs_sum grown by the earlier
    roundings, and an add computed in fp32 and then rounded to bf16 (a CAS loop, the interpreter) rounds
    twice: 2^-8 + 2^-23 per sum. Every rounding may also flush or round a subnormal (< 2^-126)."""
    k = exact.k
    if splits < 1:
        raise ValueError(f"splits must be >= 1, got {splits}")
    if underflow not in UNDERFLOW_STEP:
        raise ValueError(f"underflow must be one of {tuple(UNDERFLOW_STEP)}, got {underflow!r}")
    if bf16_atomic_adds < 0:
        raise ValueError(f"bf16_atomic_adds must be >= 0, got {bf16_atomic_adds}")
    h = math.ceil(k / splits) - 1 + (splits - 1)
    tiny = 2 * k * UNDERFLOW_STEP[underflow]
    fp32 = gamma(h, unit_roundoff) + gamma(k, 2.0**-53)
    bound = fp32 * exact.abs_sum + tiny
    c = bf16_atomic_adds
    if c >= 2:
        grown = (1 + fp32) * (1 + 2 * BF16_UNIT_ROUNDOFF) ** c
        relative = (BF16_UNIT_ROUNDOFF + (c - 1) * (BF16_UNIT_ROUNDOFF + 2.0**-23)) * grown
        bound = bound + relative * exact.abs_sum + (2 * c - 1) * BF16_MIN_NORMAL
    return bound


def round_to_bf16(x: torch.Tensor, mode: str = "rne") -> torch.Tensor:
    """fp64 -> the nearest (rne) or toward-zero (rtz) bf16 value, returned as fp64; one rounding."""
    if mode not in BF16_ROUNDINGS:
        raise ValueError(f"mode must be one of {BF16_ROUNDINGS}, got {mode!r}")
    x = x.to(torch.float64)
    _, e = torch.frexp(x)  # x = m * 2^e, 0.5 <= |m| < 1
    ulp = torch.exp2((e.to(torch.float64) - 8).clamp(min=-133))  # 8 significand bits; denormal step 2^-133
    q = x / ulp
    r = (torch.round(q) if mode == "rne" else torch.trunc(q)) * ulp
    if mode == "rne":
        r = torch.where(r.abs() >= FP32_OVERFLOW, torch.copysign(torch.full_like(r, math.inf), x), r)
    else:
        r = r.clamp(-BF16_MAX, BF16_MAX)
    return torch.where(torch.isfinite(x), r, x)


def acceptable_range(exact: ExactProduct, bound: torch.Tensor, mode: str = "rne"):
    """(lo, hi) fp64 [M, N]: a correct bf16 output y satisfies lo <= y <= hi (outside overflow_risk)."""
    return round_to_bf16(exact.value - bound, mode), round_to_bf16(exact.value + bound, mode)


def reference_output(A: torch.Tensor, B_q: torch.Tensor, B_scale: torch.Tensor, **kw) -> torch.Tensor:
    """The exact product rounded once (RNE) to bf16: what an infinitely precise kernel returns."""
    value = exact_gemm(A, B_q, B_scale, **kw).value
    return round_to_bf16(value, "rne").to(torch.bfloat16)
