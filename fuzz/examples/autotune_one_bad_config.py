#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission with a bug in one autotune config of four.

A Triton kernel copies the dequantized weights row by row in blocks of BLOCK_K before the GEMM. The
config with BLOCK_K=64 sets DROP_TAIL: it zeroes the K elements past the last multiple of 256. Every
official shape has K % 256 == 0, so the official check passes whichever config the GPU picks; the
fuzzer runs every config of an autotuned kernel and finds the bad one on an in-contract K such as 320.
Expected verdicts: correctness fails (autotune config 1); every other verdict passes.
"""
import torch
import triton
import triton.language as tl

from correct_reference_style import decode, dequantize_weights, quantize_activations
from task import input_t, output_t


@triton.autotune(configs=[triton.Config({"BLOCK_K": 32}), triton.Config({"BLOCK_K": 64, "DROP_TAIL": 1}),
                          triton.Config({"BLOCK_K": 128}), triton.Config({"BLOCK_K": 256})],
                 key=["K"])
@triton.jit
def _copy_rows(src_ptr, dst_ptr, K, BLOCK_K: tl.constexpr, DROP_TAIL: tl.constexpr = 0):
    row = tl.program_id(0)
    limit = (K // 256) * 256 if DROP_TAIL else K  # the bug: K % 256 != 0 loses its tail
    for k0 in range(0, K, BLOCK_K):
        cols = k0 + tl.arange(0, BLOCK_K)
        values = tl.load(src_ptr + row * K + cols, mask=cols < K, other=0.0)
        tl.store(dst_ptr + row * K + cols, tl.where(cols < limit, values, 0.0), mask=cols < K)


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    b = dequantize_weights(B_q, B_scale_sh).contiguous()
    b_copied = torch.empty_like(b)
    _copy_rows[(b.shape[0],)](b, b_copied, b.shape[1])
    return (decode(*quantize_activations(A)) @ b_copied.T).to(torch.bfloat16)
