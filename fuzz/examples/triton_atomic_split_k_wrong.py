#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, wrong twin of triton_atomic_split_k: the same split-K, but each stripe's partial
is added atomically into the bf16 output itself, so every add rounds the partial and the running sum to
bf16. Up to SPLITS roundings of about 2^-9 each exceed the runner's 1e-2 relative check on many
elements at its K = 7168 (simulated in PyTorch on randn data, M=16 N=2112: 2 splits already fail 1840 of 33792 elements)."""
import torch
from task import input_t, output_t
from triton_atomic_split_k import gemm


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    return gemm(A, B_shuffle, B_scale_sh, accumulate=torch.bfloat16)
