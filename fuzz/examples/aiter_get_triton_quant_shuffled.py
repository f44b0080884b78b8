#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission: A quantized through aiter.get_triton_quant(QuantType.per_1x32)(A, shuffle=True),
then gemm_a4w4 with the preshuffled B: a recipe real files use.

At the runner's aiter commit (f3be04a12a0c) that quantizer is aiter.utility.fp4_utils.dynamic_mxfp4_quant:
its scales come out already in e8m0_shuffle's layout (what gemm_a4w4 reads), but its e2m1 conversion is the
pre-#975 one, ties rounded away from zero. The task's reference quantizes A with
aiter.ops.triton.quant.dynamic_mxfp4_quant (round to nearest even) since reference-kernels 1ad45bb
(2026-03-11), so at every official shape a few A elements sit on a tie and the output misses the 1e-2
check: FAIL, with the card naming the ties-up quantizer. (Against the reference of 2026-03-04..03-11,
which quantized with this same function, it was bit-exact.)
"""
import aiter
from aiter import dtypes
from task import input_t, output_t

_QUANT = aiter.get_triton_quant(aiter.QuantType.per_1x32)


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    A_q, A_scale_sh = _QUANT(A, shuffle=True)
    return aiter.gemm_a4w4(A_q, B_shuffle, A_scale_sh, B_scale_sh, dtype=dtypes.bf16, bpreshuffle=True)
