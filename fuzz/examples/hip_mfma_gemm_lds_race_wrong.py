#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, wrong twin of hip_mfma_gemm: the same HIP kernel built with -DBARRIER_AFTER_LDS=0, which
omits the barrier between staging A's tile in LDS and reading it, so waves read rows other waves have not written yet (on the GPU: whatever the LDS held). The CPU tier runs the HIP code itself and fails it."""
from hip_mfma_gemm import build, gemm
from task import input_t, output_t

_LIB = build(["BARRIER_AFTER_LDS=0"])


def custom_kernel(data: input_t) -> output_t:
    return gemm(_LIB, data)
