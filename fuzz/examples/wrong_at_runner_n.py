#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Hazard example: a per-shape table keyed on the runner's exact benchmark shapes, with one wrong entry.

Real files tune a config for each of the six benchmark shapes (or capture a CUDA graph for each) and fall
back to a general path elsewhere. Here the entry for (64, 7168, 2048) splits K in two and keeps only the
first half's partial sum. No official test shape is in the table, so the test mode passes; the benchmark
and leaderboard modes reach that shape and fail there. The CPU tier narrows the modes' N by 16 unless the
file writes the runner's N: narrowed, no call would reach the table. Clean twin: correct_reference_style."""
import torch

from correct_reference_style import custom_kernel as compute
from task import input_t, output_t

# (M, N, K) -> K splits, as a tuned table would hold them
K_SPLITS = {(4, 2880, 512): 1, (16, 2112, 7168): 1, (32, 4096, 512): 1, (32, 2880, 512): 1, (64, 7168, 2048): 2,
            (256, 3072, 1536): 1}


def custom_kernel(data: input_t) -> output_t:
    A = data[0]
    shape = (A.shape[0], data[1].shape[0], A.shape[1])
    splits = K_SPLITS.get(shape, 1)
    if splits == 1:
        return compute(data)
    # the bug: only the first split's columns of A reach the product (the second partial sum is dropped)
    half = A.shape[1] // splits
    first = A.clone()
    first[:, half:] = 0
    return compute((first, *data[1:])).to(torch.bfloat16)
