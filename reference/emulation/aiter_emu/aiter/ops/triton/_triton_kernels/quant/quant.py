"""aiter's MXFP4 quantizer kernels (``aiter/ops/triton/_triton_kernels/quant/quant.py``).

``_mxfp4_quant_op`` keeps aiter's name and argument order because GEMM kernels call it as a global of their
module and submissions patch it there. It wraps the project's shared quantizer block, which is aiter's
post-#975 arithmetic written without Python ``not`` on tensors (the interpreter does not apply it
elementwise; aiter's own source would saturate almost every element there).
"""
from kernels.triton_blocks import mxfp4_quant_portable  # imported first: it picks interpreter mode

import triton
import triton.language as tl


@triton.jit
def _mxfp4_quant_op(x, BLOCK_SIZE_N, BLOCK_SIZE_M, MXFP4_QUANT_BLOCK_SIZE):
    """[BLOCK_SIZE_M, BLOCK_SIZE_N] tile (any float dtype) -> (packed uint8 [BM, BN/2], E8M0 bytes [BM, BN/32])."""
    tl.static_assert(MXFP4_QUANT_BLOCK_SIZE == 32, "MXFP4 shares one scale per 32 elements")
    return mxfp4_quant_portable(x, BLOCK_SIZE_M, BLOCK_SIZE_N)


@triton.heuristics({
    "EVEN_M_N": lambda args: args["M"] % args["BLOCK_SIZE_M"] == 0
    and args["N"] % (args["BLOCK_SIZE_N"] * args["NUM_ITER"]) == 0,
})
@triton.jit
def _dynamic_mxfp4_quant_kernel(
    x_ptr, x_fp4_ptr, bs_ptr,
    stride_x_m_in, stride_x_n_in, stride_x_fp4_m_in, stride_x_fp4_n_in, stride_bs_m_in, stride_bs_n_in,
    M, N,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, NUM_ITER: tl.constexpr, NUM_STAGES: tl.constexpr,
    MXFP4_QUANT_BLOCK_SIZE: tl.constexpr, EVEN_M_N: tl.constexpr, SCALING_MODE: tl.constexpr,
):
    """Program (i, j) quantizes rows [i*BM, (i+1)*BM) over NUM_ITER column blocks of BN starting at block j*NUM_ITER."""
    pid_m = tl.program_id(0)
    first_block_n = tl.program_id(1) * NUM_ITER
    # int64 so that M*N beyond 2^31 addresses correctly.
    stride_x_m = tl.cast(stride_x_m_in, tl.int64)
    stride_x_n = tl.cast(stride_x_n_in, tl.int64)
    stride_x_fp4_m = tl.cast(stride_x_fp4_m_in, tl.int64)
    stride_x_fp4_n = tl.cast(stride_x_fp4_n_in, tl.int64)
    stride_bs_m = tl.cast(stride_bs_m_in, tl.int64)
    stride_bs_n = tl.cast(stride_bs_n_in, tl.int64)
    GROUPS_PER_BLOCK: tl.constexpr = BLOCK_SIZE_N // MXFP4_QUANT_BLOCK_SIZE

    rows = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    # aiter bounds the block index by N, the element count: harmless, kept for fidelity.
    for block_n in tl.range(first_block_n, min(first_block_n + NUM_ITER, N), num_stages=NUM_STAGES):
        cols = block_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        x_ptrs = x_ptr + rows[:, None] * stride_x_m + cols[None, :] * stride_x_n
        byte_cols = block_n * (BLOCK_SIZE_N // 2) + tl.arange(0, BLOCK_SIZE_N // 2)
        fp4_ptrs = x_fp4_ptr + rows[:, None] * stride_x_fp4_m + byte_cols[None, :] * stride_x_fp4_n
        scale_cols = block_n * GROUPS_PER_BLOCK + tl.arange(0, GROUPS_PER_BLOCK)
        bs_ptrs = bs_ptr + rows[:, None] * stride_bs_m + scale_cols[None, :] * stride_bs_n
        if EVEN_M_N:
            x = tl.load(x_ptrs, cache_modifier=".cg")
            packed, scales = _mxfp4_quant_op(x, BLOCK_SIZE_N, BLOCK_SIZE_M, MXFP4_QUANT_BLOCK_SIZE)
            tl.store(fp4_ptrs, packed)
            tl.store(bs_ptrs, scales)
        else:
            # aiter loads without `other` (undefined lanes, zeros in practice); zeros here.
            x = tl.load(x_ptrs, mask=(rows[:, None] < M) & (cols[None, :] < N), other=0.0, cache_modifier=".cg")
            packed, scales = _mxfp4_quant_op(x, BLOCK_SIZE_N, BLOCK_SIZE_M, MXFP4_QUANT_BLOCK_SIZE)
            tl.store(fp4_ptrs, packed, mask=(rows[:, None] < M) & (byte_cols[None, :] < N // 2))
            scale_count = (N + MXFP4_QUANT_BLOCK_SIZE - 1) // MXFP4_QUANT_BLOCK_SIZE
            tl.store(bs_ptrs, scales, mask=(rows[:, None] < M) & (scale_cols[None, :] < scale_count))
