#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Hazard example: two independent bugs that both fail the correctness verdict.

1. The K loop covers whole 256-wide K tiles only: the terms past K // 256 * 256 are missing.
2. Rows are computed in 8-row tiles into a NaN-filled buffer; the remainder tile is handled only in
   the single-tile case (M < 8), so for 8 < M with M % 8 != 0 the rows past the last full tile stay NaN.

Every official shape has K % 256 == 0 and M % 8 == 0, so the official check passes. Expected verdicts:
correctness fails with two distinct failures, K terms missing and NaN where the exact product is
finite, each shrunk on its own; contract_beyond fails too (K = 32 mod 64 is not refused); everything
else passes.
"""
import torch

from correct_reference_style import dequantize_weights, gemm
from task import input_t, output_t

K_TILE = 256
M_TILE = 8


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    m, k = A.shape
    b = dequantize_weights(B_q, B_scale_sh)
    covered = k // K_TILE * K_TILE
    y = torch.full((m, b.shape[0]), float("nan"), dtype=torch.bfloat16, device=A.device)
    rows = m if m < M_TILE else m // M_TILE * M_TILE  # the remainder tile is forgotten once M >= 8
    if covered == 0:
        y[:rows] = 0
    else:
        y[:rows] = gemm(A[:rows, :covered], b[:, :covered])
    return y
