#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: aiter's ``gemm_a16wfp4_preshuffle`` with the scales sliced to the N real
rows and viewed as (N // 32, 32 * K_groups_padded) bytes, as real files pass them, instead of the whole
256-row padded buffer. aiter reads the scales through the strides it is given and never looks at their
row count, so the runner accepts this; the emulation must too. K % 256 != 0 (which aiter's preshuffle
kernel cannot compile) goes to gemm_a4w4."""
import torch
import aiter
from aiter import dtypes
from aiter.ops.triton.gemm.basic.gemm_a16wfp4 import gemm_a16wfp4_preshuffle
from aiter.ops.triton.quant import dynamic_mxfp4_quant
from aiter.utility.fp4_utils import e8m0_shuffle
from task import input_t, output_t


def scales_as_passed(B_scale_sh: torch.Tensor, n: int) -> torch.Tensor:
    return B_scale_sh[:n].view(torch.uint8).view(n // 32, -1)


def gemm(data: input_t, scales=scales_as_passed) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    m, k = A.shape
    n = B_shuffle.shape[0]
    if k % 256 or n % 32:
        a_q, a_scale = dynamic_mxfp4_quant(A)
        return aiter.gemm_a4w4(a_q.view(dtypes.fp4x2), B_shuffle, e8m0_shuffle(a_scale).view(dtypes.fp8_e8m0),
                               B_scale_sh, dtype=dtypes.bf16, bpreshuffle=True)
    weights = B_shuffle.view(torch.uint8).reshape(n // 16, k * 8)
    return gemm_a16wfp4_preshuffle(A, weights, scales(B_scale_sh, n), prequant=True, dtype=torch.bfloat16)


def custom_kernel(data: input_t) -> output_t:
    return gemm(data)
