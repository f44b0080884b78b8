#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, wrong twin of triton_fused_quant_shuffle: the same fused quant + shuffle kernel
with the rank-0 group index, but its shuffled offset exchanges two factors of e8m0_shuffle's layout
(the 16-row half and the 4-group half), so most rows read another row's scale. The runner fails it."""
from task import input_t, output_t
from triton_fused_quant_shuffle import gemm


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    return gemm(A.contiguous(), B_shuffle, B_scale_sh, swap=True)
