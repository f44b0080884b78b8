"""The official input tuple ``(A, B, B_q, B_shuffle, B_scale_sh)`` on any device.

Draw order as in reference-kernels' ``generate_input``: one generator seeded with ``seed``; A = randn
bf16 [m, k] first, then B = randn bf16 [n, k]. B is quantized (aiter semantics), B_q shuffled (16, 16),
its scales ``e8m0_shuffle``d. randn streams differ between CPU and CUDA generators, so the values are
the official ones only on the device the official harness uses.
"""
from __future__ import annotations

import torch

from reference.oracle.layouts import e8m0_shuffle, shuffle_weight
from reference.oracle.quant import quantize_mxfp4

FP4X2 = getattr(torch, "float4_e2m1fn_x2", torch.uint8)
E8M0 = getattr(torch, "float8_e8m0fnu", torch.uint8)


def generate_input(m: int, n: int, k: int, seed: int, device="cpu", scale_pad_fill: int = 0):
    """Official tuple; ``scale_pad_fill`` stands in for the uninitialised padding of B_scale_sh."""
    for name, v in (("m", m), ("n", n), ("k", k)):
        if not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    if k % 64:
        raise ValueError(f"k={k} must be a multiple of 64 (the official generate_input asserts it)")
    if n % 16:
        raise ValueError(f"n={n} must be a multiple of 16 (shuffle_weight's 16-row tiles)")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    A = torch.randn((m, k), dtype=torch.bfloat16, device=device, generator=gen)
    B = torch.randn((n, k), dtype=torch.bfloat16, device=device, generator=gen)
    return quantize_weights(A, B, scale_pad_fill)


def quantize_weights(A: torch.Tensor, B: torch.Tensor, scale_pad_fill: int = 0):
    """Build the task tuple from given A and B (used by generate_input and by the fuzz strategies)."""
    B_q, B_scale = quantize_mxfp4(B)
    B_shuffle = shuffle_weight(B_q)
    B_scale_sh = e8m0_shuffle(B_scale, fill=scale_pad_fill)
    return A, B, B_q.view(FP4X2), B_shuffle.view(FP4X2), B_scale_sh.view(E8M0)
