#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
# Example submission, correct on gfx950, NOT RUN on the CPU tier: the hip_mfma_gemm kernel built with
# -DWAVE_LOCAL_A=1 -DBARRIER_AFTER_LDS=0, where each wave stages its own copy of A's tile in LDS and reads it with no barrier,
# relying on the lockstep of a wave (every lane's write lands before any lane's read). The CPU model runs a
# wave's lanes one after another between lane operations, so lane 0 reads words lane 1 has not written; the
# suite re-runs the call with the lanes reversed, sees the output change exactly where it is wrong, and says
# NOT RUN (the runner decides) instead of a false FAIL.
from hip_mfma_gemm import build, gemm

from task import input_t, output_t

_LIB = build(["WAVE_LOCAL_A=1", "BARRIER_AFTER_LDS=0"])


def custom_kernel(data: input_t) -> output_t:
    return gemm(_LIB, data)
