#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Hazard example: the K loop runs K // 256 iterations, dropping the last K % 256 columns.

Every official shape has K % 256 == 0 (7168, 1536, 512), so the official harness cannot see it.
Expected verdicts: correctness fails (K % 256 != 0), and so does the beyond-contract check (K = 32
mod 64 returns garbage instead of refusing); everything else passes, since the kernel is wrong the
same way every time.
"""
import torch

from correct_reference_style import dequantize_weights, gemm
from task import input_t, output_t

BLOCK_K = 256


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    covered = A.shape[1] // BLOCK_K * BLOCK_K
    if covered == 0:
        return torch.zeros((A.shape[0], B_q.shape[0]), dtype=torch.bfloat16, device=A.device)
    return gemm(A[:, :covered], dequantize_weights(B_q, B_scale_sh)[:, :covered])
