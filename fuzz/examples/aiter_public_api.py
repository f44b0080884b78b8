#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission: aiter's public API, the same calls as the task's reference.

A is quantized per 1x32 block with the Triton dynamic_mxfp4_quant, its scales are shuffled into the
layout the ASM GEMM reads, and gemm_a4w4 multiplies with the preshuffled B.
"""
import aiter
from aiter import dtypes
from aiter.ops.triton.quant import dynamic_mxfp4_quant
from aiter.utility.fp4_utils import e8m0_shuffle
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    A_q, A_scale = dynamic_mxfp4_quant(A)
    A_scale_sh = e8m0_shuffle(A_scale)
    return aiter.gemm_a4w4(A_q.view(dtypes.fp4x2), B_shuffle, A_scale_sh.view(dtypes.fp8_e8m0), B_scale_sh,
                           dtype=dtypes.bf16, bpreshuffle=True)
