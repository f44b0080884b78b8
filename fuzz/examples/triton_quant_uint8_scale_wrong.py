#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, wrong twin of triton_quant_uint8_scale: the same quantizer and aiter's scale
idiom, but the exponent offset of e2m1's largest binade is 1 instead of 2, so every scale is twice too
large and half of each group's dynamic range is lost. The runner's 1e-2 check fails it."""
from task import input_t, output_t
from triton_quant_uint8_scale import gemm


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    return gemm(A.contiguous(), B_shuffle, B_scale_sh, offset=1)
