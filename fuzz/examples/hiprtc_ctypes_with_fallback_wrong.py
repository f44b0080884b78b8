#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, wrong twin of hiprtc_ctypes_with_fallback: the same HIPRTC loading, but A's scales
go to gemm_a4w4 unshuffled (the (M, K/32) rows, not e8m0_shuffle's layout), so most rows of A are
scaled by other rows' scales. The runner fails it; so must every tier, whichever path serves."""
import aiter
from aiter import dtypes
from aiter.ops.triton.quant import dynamic_mxfp4_quant
from hiprtc_ctypes_with_fallback import HIP  # noqa: F401  (the same HIPRTC load at import)
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    a_q, a_scale = dynamic_mxfp4_quant(A)
    return aiter.gemm_a4w4(a_q.view(dtypes.fp4x2), B_shuffle, a_scale.view(dtypes.fp8_e8m0), B_scale_sh,
                           dtype=dtypes.bf16, bpreshuffle=True)
