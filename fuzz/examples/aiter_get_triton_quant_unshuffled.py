#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission: the twin of aiter_get_triton_quant_shuffled.py with shuffle=False (the default).

The scales come out row-major, but gemm_a4w4 reads A's scales in e8m0_shuffle's layout: most groups get
another row's or group's scale, and the padding bytes of the buffer (never written) are read as scales
too. Wrong on the runner as here, at every shape.
"""
import aiter
from aiter import dtypes
from task import input_t, output_t

_QUANT = aiter.get_triton_quant(aiter.QuantType.per_1x32)


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    A_q, A_scale = _QUANT(A)  # shuffle=False: row-major scales
    return aiter.gemm_a4w4(A_q, B_shuffle, A_scale, B_scale_sh, dtype=dtypes.bf16, bpreshuffle=True)
