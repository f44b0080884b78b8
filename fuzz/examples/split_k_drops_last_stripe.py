#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Hazard example: split-K whose stripe count is rounded down, so the last partial stripe is dropped.

From K >= 2048 (where real submissions switch to split-K) K is cut into 4 stripes of ceil(K / 4)
rounded up to a whole 256-wide K tile, and the stripe count is K // stripe instead of ceil(K / stripe).
Whenever the stripe does not divide K (K = 2112, 2304 + 64, ...), the terms past the last whole stripe
are missing. Every official shape is safe: K = 7168 (4 stripes of 1792) and 1536, 512 (no split).
Expected verdicts: correctness fails, and only at production K (>= 2048); everything else passes.
"""
import torch

from correct_reference_style import decode, dequantize_weights, quantize_activations
from task import input_t, output_t

SPLIT_K_FROM = 2048
SPLITS = 4
K_TILE = 256


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    codes, exponents = quantize_activations(A)
    a, b = decode(codes, exponents), dequantize_weights(B_q, B_scale_sh)
    k = a.shape[1]
    if k < SPLIT_K_FROM:
        return (a @ b.T).to(torch.bfloat16)
    stripe = -(-k // (SPLITS * K_TILE)) * K_TILE  # ceil(K / 4) rounded up to a whole K tile
    stripes = k // stripe  # should be ceil(k / stripe): a partial last stripe is never launched
    partials = torch.stack([a[:, s * stripe:(s + 1) * stripe] @ b[:, s * stripe:(s + 1) * stripe].T
                            for s in range(stripes)])
    return partials.sum(0).to(torch.bfloat16)
