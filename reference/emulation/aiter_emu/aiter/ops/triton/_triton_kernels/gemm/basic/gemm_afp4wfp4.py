"""aiter's MXFP4 x MXFP4 GEMM kernel and the split-K reduce kernel (aiter_semantics.md section 4.4).

Names, argument order and constexprs are aiter's (submissions launch ``_gemm_afp4wfp4_reduce_kernel``
directly); the bodies are ours. aiter's XCD program remapping is not modelled: it permutes which program
computes which tile, not what is computed.
"""
import kernels  # noqa: F401  (first: picks interpreter mode before any @triton.jit)

import triton
import triton.language as tl

from ....utils.gemm_config_utils import get_gemm_config
from .gemm_a16wfp4 import SCALE_GROUP, _even_k, _program_tile, _store_tile


@triton.heuristics({"EVEN_K": _even_k})
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
    [N, K/32] (both unshuffled). K is in bytes. Split-K program pid_k stores its fp32 partial at slice pid_k."""
    pid_m, pid_n, pid_k = _program_tile(M, N, BLOCK_SIZE_M, BLOCK_SIZE_N, GROUP_SIZE_M, NUM_KSPLIT)
    if (pid_k * SPLITK_BLOCK_SIZE // 2) < K:
        num_k_iter = tl.cdiv(SPLITK_BLOCK_SIZE // 2, BLOCK_SIZE_K // 2)
        k_bytes = tl.arange(0, BLOCK_SIZE_K // 2)
        k_split = pid_k * (SPLITK_BLOCK_SIZE // 2) + k_bytes
        rows_a = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
        cols_b = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
        a_ptrs = a_ptr + rows_a[:, None] * stride_am + k_split[None, :] * stride_ak
        b_ptrs = b_ptr + k_split[:, None] * stride_bk + cols_b[None, :] * stride_bn
        k_groups = pid_k * (SPLITK_BLOCK_SIZE // SCALE_GROUP) + tl.arange(0, BLOCK_SIZE_K // SCALE_GROUP)
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
            a_scale_ptrs += (BLOCK_SIZE_K // SCALE_GROUP) * stride_ask
            b_scale_ptrs += (BLOCK_SIZE_K // SCALE_GROUP) * stride_bsk
        _store_tile(c_ptr, accumulator, pid_m, pid_n, pid_k, M, N, stride_ck, stride_cm, stride_cn,
                    BLOCK_SIZE_M, BLOCK_SIZE_N, False)


@triton.heuristics({})  # aiter wraps it too (for kernel naming); submissions may rely on .values existing
@triton.jit
def _gemm_afp4wfp4_reduce_kernel(
    c_in_ptr, c_out_ptr, M, N,
    stride_c_in_k, stride_c_in_m, stride_c_in_n, stride_c_out_m, stride_c_out_n,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, ACTUAL_KSPLIT: tl.constexpr,
    MAX_KSPLIT: tl.constexpr,
):
    """c_out[m, n] = sum over the first ACTUAL_KSPLIT slices of c_in[:, m, n], in fp32, one conversion.

    MAX_KSPLIT is the padded power of two that tl.arange needs. Rows and columns wrap (% M, % N), so the
    unmasked store rewrites in-range elements with the same values and never touches padding.
    """
    rows = (tl.program_id(axis=0) * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    cols = (tl.program_id(axis=1) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    splits = tl.arange(0, MAX_KSPLIT)
    c_in_ptrs = (c_in_ptr + splits[:, None, None] * stride_c_in_k + rows[None, :, None] * stride_c_in_m
                 + cols[None, None, :] * stride_c_in_n)
    if ACTUAL_KSPLIT == MAX_KSPLIT:
        partials = tl.load(c_in_ptrs)
    else:
        # aiter leaves the masked-off slices undefined (no `other`); the interpreter reads zeros.
        partials = tl.load(c_in_ptrs, mask=splits[:, None, None] < ACTUAL_KSPLIT)
    c = tl.sum(partials, axis=0).to(c_out_ptr.type.element_ty)
    tl.store(c_out_ptr + rows[:, None] * stride_c_out_m + cols[None, :] * stride_c_out_n, c)


def _get_config(M: int, N: int, K: int, shuffle: bool = False):
    """K in bytes; the config tables are keyed by elements. Only the non-preshuffled table is emulated."""
    return get_gemm_config("GEMM-AFP4WFP4" + ("_PRESHUFFLED" if shuffle else ""), M, N, 2 * K)
