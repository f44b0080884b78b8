#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, wrong twin of hip_mfma_gemm: the same HIP kernel built with -DK_STEP_WHOLE=256, which
runs the K loop over whole 256-wide steps only, dropping the last K % 256 terms (every official K is a multiple of 256, so the official check cannot see it). The CPU tier runs the HIP code itself and fails it."""
from hip_mfma_gemm import build, gemm
from task import input_t, output_t

_LIB = build(["K_STEP_WHOLE=256"])


def custom_kernel(data: input_t) -> output_t:
    return gemm(_LIB, data)
