#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Hazard example: A reused as scratch memory for its own dequantized values.

The result is right (re-quantizing MXFP4 values gives them back), but the caller's A has changed.
The official harness calls custom_kernel on a clone and checks against the original, so it cannot
see it. Expected verdicts: input immutability fails, everything else passes.
"""
import torch

from correct_reference_style import decode, dequantize_weights, quantize_activations
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    codes, exponents = quantize_activations(A)
    A.copy_(decode(codes, exponents))  # MXFP4 values are exact in bf16: "no extra buffer needed"
    return (A.float() @ dequantize_weights(B_q, B_scale_sh).T).to(torch.bfloat16)
