#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission with a latent bug below the contract's N: aiter's ``gemm_a16wfp4_preshuffle`` given
the scales as real files slice them, ``view(N_pad // 32, 32 * cols)[:N // 32]``, with no guard for N < 32.
There the slice has no rows, so its ``data_ptr()`` is 0 (torch's rule for a tensor without elements), and
aiter's kernel loads scale row 0 through that null pointer: a memory access fault on the GPU, where the
interpreter's raw read used to kill the CPU tier's worker (read as our stand-in crashing: NOT RUN).
Correct at every N the contract has (N % 64 == 0). K % 256 != 0, which aiter's preshuffle kernel cannot
compile, goes to gemm_a4w4."""
import torch
import aiter
from aiter import dtypes
from aiter.ops.triton.gemm.basic.gemm_a16wfp4 import gemm_a16wfp4_preshuffle
from aiter.ops.triton.quant import dynamic_mxfp4_quant
from aiter.utility.fp4_utils import e8m0_shuffle
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    m, k = A.shape
    n = B_shuffle.shape[0]
    if k % 256:
        a_q, a_scale = dynamic_mxfp4_quant(A)
        return aiter.gemm_a4w4(a_q.view(dtypes.fp4x2), B_shuffle, e8m0_shuffle(a_scale).view(dtypes.fp8_e8m0),
                               B_scale_sh, dtype=dtypes.bf16, bpreshuffle=True)
    weights = B_shuffle.view(torch.uint8).reshape(n // 16, k * 8)
    scales = B_scale_sh.view(torch.uint8)
    scales = scales.reshape(scales.shape[0] // 32, -1)[:n // 32, :k]
    # skip_reduce: the split-K partials come back and are summed here, as real files do (it also keeps the
    # call on aiter's Triton kernel)
    y = gemm_a16wfp4_preshuffle(A, weights, scales, prequant=True, dtype=torch.bfloat16, skip_reduce=True)
    return y.sum(dim=0).to(torch.bfloat16) if y.dim() == 3 else y
