#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Hazard example: an in-place clamp of A to the fp16 range, written through a view meant to be a copy.

The activations are quantized first, so the result is right; then ``A.reshape(-1)`` (a view of a
contiguous A, as the harness passes it; the author meant ``A.flatten().clone()``) is clamped to +-60000 for an fp16 epilogue, which rewrites the caller's A
wherever |A| > 60000 or A is +-Inf. randn never goes there, so plain inputs never see it; the official
harness calls on a clone. Expected verdicts: immutability fails (on inputs with values far above 60000
or Inf), everything else passes.
"""
import torch

from correct_reference_style import decode, dequantize_weights, quantize_activations
from task import input_t, output_t

FP16_SAFE = 60000.0


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    codes, exponents = quantize_activations(A)
    staged = A.reshape(-1)  # meant: a copy to stage for the fp16 epilogue (a view of A when A is contiguous)
    staged.clamp_(-FP16_SAFE, FP16_SAFE)
    return (decode(codes, exponents) @ dequantize_weights(B_q, B_scale_sh).T).to(torch.bfloat16)
