"""aiter's MXFP4 x MXFP4 GEMM kernel and the split-K reduce kernel (``aiter/ops/triton/_triton_kernels/
gemm/basic/gemm_afp4wfp4.py`` at f3be04a12a0c = bd02afb526; aiter_semantics.md section 4.4).

Written from aiter's semantics the way aiter writes them: names, argument order, constexprs and heuristics
(submissions launch ``_gemm_afp4wfp4_reduce_kernel`` directly), the XCD program remapping, the reduce's
masked load without ``other``. Independent of ``kernels/``.

Not written: aiter's ``tl.assume`` hints, the kernels' ``repr``; aiter's preshuffled-weight variants.
"""
from reference.emulation import triton_interpreter

triton_interpreter.activate()  # before Triton is imported: it fixes interpreted vs compiled at decoration

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from ....utils._triton.pid_preprocessing import remap_xcd, split_k_tile  # noqa: E402
from ....utils.gemm_config_utils import get_gemm_config  # noqa: E402


@triton.heuristics({
    "EVEN_K": lambda args: args["K"] % (args["BLOCK_SIZE_K"] // 2) == 0
    and args["SPLITK_BLOCK_SIZE"] % args["BLOCK_SIZE_K"] == 0
    and args["K"] % (args["SPLITK_BLOCK_SIZE"] // 2) == 0,
})
@triton.jit
def _gemm_afp4wfp4_kernel(
    a_ptr, b_ptr, c_ptr, a_scales_ptr, b_scales_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_ck, stride_cm, stride_cn,
    stride_asm, stride_ask, stride_bsn, stride_bsk,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr, NUM_KSPLIT: tl.constexpr, SPLITK_BLOCK_SIZE: tl.constexpr,
    EVEN_K: tl.constexpr, num_warps: tl.constexpr, num_stages: tl.constexpr, waves_per_eu: tl.constexpr,
    matrix_instr_nonkdim: tl.constexpr, cache_modifier: tl.constexpr,
):
    """C[M, N] = A @ B: A packed e2m1 bytes [M, K/2] with scales [M, K/32], B packed [K/2, N] with scales
    [N, K/32] (both unshuffled). K is in bytes. Split-K program pid_k stores its partial at slice pid_k."""

    GRID_MN = tl.cdiv(M, BLOCK_SIZE_M) * tl.cdiv(N, BLOCK_SIZE_N)
    # Contiguous runs of programs per XCD die, then the split index fastest, then the output tile.
    pid_unified = remap_xcd(tl.program_id(axis=0), GRID_MN * NUM_KSPLIT, NUM_XCDS=8)
    pid_m, pid_n, pid_k = split_k_tile(pid_unified, M, N, BLOCK_SIZE_M, BLOCK_SIZE_N, GROUP_SIZE_M, NUM_KSPLIT)

    SCALE_GROUP_SIZE: tl.constexpr = 32

    if (pid_k * SPLITK_BLOCK_SIZE // 2) < K:
        num_k_iter = tl.cdiv(SPLITK_BLOCK_SIZE // 2, BLOCK_SIZE_K // 2)

        # Both operands are read in packed bytes; rows of A and columns of B wrap (% M, % N).
        k_bytes = tl.arange(0, BLOCK_SIZE_K // 2)
        k_split = pid_k * (SPLITK_BLOCK_SIZE // 2) + k_bytes
        rows_a = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
        cols_b = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
        a_ptrs = a_ptr + rows_a[:, None] * stride_am + k_split[None, :] * stride_ak
        b_ptrs = b_ptr + k_split[:, None] * stride_bk + cols_b[None, :] * stride_bn
        k_groups = pid_k * (SPLITK_BLOCK_SIZE // SCALE_GROUP_SIZE) + tl.arange(0, BLOCK_SIZE_K // SCALE_GROUP_SIZE)
        a_scale_ptrs = a_scales_ptr + rows_a[:, None] * stride_asm + k_groups[None, :] * stride_ask
        b_scale_ptrs = b_scales_ptr + cols_b[:, None] * stride_bsn + k_groups[None, :] * stride_bsk

        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k in range(pid_k * num_k_iter, (pid_k + 1) * num_k_iter):
            a_scales = tl.load(a_scale_ptrs)
            b_scales = tl.load(b_scale_ptrs, cache_modifier=cache_modifier)
            if EVEN_K:
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs, cache_modifier=cache_modifier)
            else:
                a = tl.load(a_ptrs, mask=k_bytes[None, :] < K - k * (BLOCK_SIZE_K // 2), other=0)
                b = tl.load(b_ptrs, mask=k_bytes[:, None] < K - k * (BLOCK_SIZE_K // 2), other=0,
                            cache_modifier=cache_modifier)
            accumulator = tl.dot_scaled(a, a_scales, "e2m1", b, b_scales, "e2m1", accumulator)
            a_ptrs += (BLOCK_SIZE_K // 2) * stride_ak
            b_ptrs += (BLOCK_SIZE_K // 2) * stride_bk
            a_scale_ptrs += (BLOCK_SIZE_K // SCALE_GROUP_SIZE) * stride_ask
            b_scale_ptrs += (BLOCK_SIZE_K // SCALE_GROUP_SIZE) * stride_bsk

        c = accumulator.to(c_ptr.type.element_ty)
        rows_c = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
        cols_c = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
        c_ptrs = c_ptr + stride_cm * rows_c[:, None] + stride_cn * cols_c[None, :] + pid_k * stride_ck
        tl.store(c_ptrs, c, mask=(rows_c[:, None] < M) & (cols_c[None, :] < N))


@triton.heuristics({})  # aiter wraps it too (for kernel naming); submissions may rely on .values existing
@triton.jit
def _gemm_afp4wfp4_reduce_kernel(
    c_in_ptr, c_out_ptr, M, N,
    stride_c_in_k, stride_c_in_m, stride_c_in_n, stride_c_out_m, stride_c_out_n,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, ACTUAL_KSPLIT: tl.constexpr,
    MAX_KSPLIT: tl.constexpr,
):
    """c_out[m, n] = sum over the first ACTUAL_KSPLIT slices of c_in[:, m, n], one conversion at the end.

    MAX_KSPLIT is the power of two that tl.arange needs. Rows and columns wrap (% M, % N), so the unmasked
    store rewrites in-range elements with the same values and never touches padding.
    """
    rows = (tl.program_id(axis=0) * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    cols = (tl.program_id(axis=1) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    splits = tl.arange(0, MAX_KSPLIT)
    c_in_ptrs = (c_in_ptr + splits[:, None, None] * stride_c_in_k + rows[None, :, None] * stride_c_in_m
                 + cols[None, None, :] * stride_c_in_n)
    if ACTUAL_KSPLIT == MAX_KSPLIT:
        partials = tl.load(c_in_ptrs)
    else:
        # no `other`, as in aiter: the padded slices are undefined lanes (zeros in the interpreter)
        partials = tl.load(c_in_ptrs, mask=splits[:, None, None] < ACTUAL_KSPLIT)
    c = tl.sum(partials, axis=0).to(c_out_ptr.type.element_ty)
    tl.store(c_out_ptr + rows[:, None] * stride_c_out_m + cols[None, :] * stride_c_out_n, c)


def _get_config(M: int, N: int, K: int, shuffle: bool = False):
    """K in bytes; the config tables are keyed by elements. Only the non-preshuffled table is emulated."""
    return get_gemm_config("GEMM-AFP4WFP4" + ("_PRESHUFFLED" if shuffle else ""), M, N, 2 * K)
