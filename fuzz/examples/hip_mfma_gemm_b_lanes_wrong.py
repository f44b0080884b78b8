#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, wrong twin of hip_mfma_gemm: the same HIP kernel built with -DB_HALF_SWAP=1, which
reads B's two K halves from the wrong lane halves (lanes 0-31 take K block 1, lanes 32-63 K block 0), so every product pairs A's K block with B's other one. The CPU tier runs the HIP code itself and fails it."""
from hip_mfma_gemm import build, gemm
from task import input_t, output_t

_LIB = build(["B_HALF_SWAP=1"])


def custom_kernel(data: input_t) -> output_t:
    return gemm(_LIB, data)
