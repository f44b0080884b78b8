#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission: split-K partials added into an fp32 buffer from ``torch.empty`` (it should be
``torch.zeros``). A fresh allocation on a quiet CPU is often zero-filled, so the result looks right;
on the runner the caching allocator hands back whatever the last kernel left there. Expected verdicts:
uninitialised fails (naming the allocating line), correctness may pass by luck. Clean twin:
correct_reference_style (or this file with torch.zeros)."""
import torch

from correct_reference_style import decode, dequantize_weights, quantize_activations
from task import input_t, output_t

SPLITS = 2


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    codes, exponents = quantize_activations(A)
    a, b = decode(codes, exponents), dequantize_weights(B_q, B_scale_sh)
    k = a.shape[1]
    acc = torch.empty((a.shape[0], b.shape[0]), dtype=torch.float32, device=A.device)  # the bug: not zeros
    stripe = -(-k // SPLITS)
    for s in range(0, k, stripe):
        acc += a[:, s:s + stripe].float() @ b[:, s:s + stripe].float().T
    return acc.to(torch.bfloat16)
