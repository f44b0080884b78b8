#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct where it answers: the reference-style GEMM behind a guard that refuses
K % 256 != 0 (real files do this where their kernel has no masked K tail).

Every official and benchmark K is a multiple of 256, so the runner never sees the refusal; the contract
(K % 64 == 0) allows such K, so contract fails. The point of this file is the search: after a few refused
calls the later verdicts draw K as a multiple of 256 (fuzz/submission/steering.py) and their examples
are conclusive, instead of most of them being rejected.
"""
from correct_reference_style import gemm, dequantize_weights
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    if A.shape[1] % 256:
        raise ValueError(f"K={A.shape[1]}: this kernel needs K % 256 == 0")
    return gemm(A, dequantize_weights(B_q, B_scale_sh))
