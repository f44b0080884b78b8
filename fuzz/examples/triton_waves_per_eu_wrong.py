#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, wrong twin of triton_waves_per_eu: the same launch with AMD-only options, but
its grid stops one 256-wide K block short, so the last K block of A is never quantized (codes and
scales stay 0): the product loses those terms. The runner fails it."""
from task import input_t, output_t
from triton_waves_per_eu import gemm


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    return gemm(A.contiguous(), B_shuffle, B_scale_sh, k_blocks_short=1)
