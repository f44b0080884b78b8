"""Triton fallback for the split-K fold: same order of fp32 adds and same bf16 bits as fold_kernel.cu.

The bf16 rounding is done with integer ops rather than ``.to(tl.bfloat16)``: the Triton interpreter
truncates that cast while compiled code rounds to nearest even, and an explicit bit recipe gives both
(and the native kernel) identical bits, NaN included.
"""
from __future__ import annotations

import kernels  # noqa: F401  (sets TRITON_INTERPRET before the @triton.jit below)

import numpy as np
import torch
import triton
import triton.language as tl

from kernels.triton_blocks import bf16_bits_rne

BLOCK = 1024


@triton.jit
def _fold_kernel(p_ptr, out_ptr, n, slice_stride, S, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ptr = p_ptr + offs
    acc = tl.load(ptr, mask=mask, other=0.0)
    for _ in range(1, S):
        ptr += slice_stride
        acc += tl.load(ptr, mask=mask, other=0.0)
    tl.store(out_ptr + offs, bf16_bits_rne(acc), mask=mask)


def triton_fold(partials: torch.Tensor, out: torch.Tensor) -> None:
    """Fold validated ``partials`` [S, M, N] (each slice contiguous) into contiguous bf16 ``out`` [M, N]."""
    S, M, N = partials.shape
    n = M * N
    if n == 0:
        return
    grid = (triton.cdiv(n, BLOCK),)
    # The interpreter evaluates with numpy, which warns on IEEE overflow/NaN arithmetic that the GPU
    # does silently; those values are part of the fold's contract, not errors.
    with np.errstate(over="ignore", invalid="ignore"):
        _fold_kernel[grid](partials, out.view(torch.uint16), n, partials.stride(0), S, BLOCK=BLOCK)
