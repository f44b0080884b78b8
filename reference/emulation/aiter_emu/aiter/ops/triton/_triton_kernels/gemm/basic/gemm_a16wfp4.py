"""aiter's bf16-activation x MXFP4-weight GEMM kernels (aiter_semantics.md sections 4.2-4.3).

Argument names, order, constexprs and heuristics are aiter's, because submissions launch these kernels
directly and patch them (``.values[...]`` of the heuristics, the ``_mxfp4_quant_op`` global). The bodies
are our own, built from the shared blocks. Where aiter's source has no path (EVEN_K False or PREQUANT False
in the preshuffle kernel), compiling it fails; here a static assert fails with the reason.

Not modelled: ``tl.assume(stride > 0)`` (a zero stride, e.g. an expand()ed A, is UB in aiter and simply
works here) and the kernel ``repr`` used for naming compiled kernels.
"""
from kernels.triton_blocks import unshuffle_b_scales_tile, unshuffle_b_tile  # first: picks interpreter mode

import triton
import triton.language as tl

from ...quant.quant import _mxfp4_quant_op
from ....utils._triton.pid_preprocessing import pid_grid
from ....utils.gemm_config_utils import get_gemm_config

SCALE_GROUP = tl.constexpr(32)  # a constexpr: compiled kernels may only read constexpr globals


def _even_k(args):
    """K is in bytes; SPLITK_BLOCK_SIZE and BLOCK_SIZE_K in elements."""
    return (args["K"] % (args["BLOCK_SIZE_K"] // 2) == 0 and args["SPLITK_BLOCK_SIZE"] % args["BLOCK_SIZE_K"] == 0
            and args["K"] % (args["SPLITK_BLOCK_SIZE"] // 2) == 0)


def _grid_mn(args):
    return triton.cdiv(args["M"], args["BLOCK_SIZE_M"]) * triton.cdiv(args["N"], args["BLOCK_SIZE_N"])


@triton.jit
def _program_tile(M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                  NUM_KSPLIT: tl.constexpr):
    """(pid_m, pid_n, pid_k) of this program: K-split index fastest, then the output tile."""
    pid = tl.program_id(axis=0)
    pid_k = pid % NUM_KSPLIT
    pid_mn = pid // NUM_KSPLIT
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    if NUM_KSPLIT == 1:
        pid_m, pid_n = pid_grid(pid_mn, num_pid_m, num_pid_n, GROUP_SIZE_M=GROUP_SIZE_M)
    else:
        pid_m = pid_mn // num_pid_n
        pid_n = pid_mn % num_pid_n
    return pid_m, pid_n, pid_k


@triton.jit
def _store_tile(c_ptr, accumulator, pid_m, pid_n, pid_k, M, N, stride_ck, stride_cm, stride_cn,
                BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, ATOMIC_ADD: tl.constexpr):
    """Convert to c's element type (RNE compiled, truncation in the interpreter) and store the in-bounds part
    at split slice pid_k (stride_ck is 0 without split-K)."""
    c = accumulator.to(c_ptr.type.element_ty)
    rows = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
    c_ptrs = c_ptr + stride_cm * rows[:, None] + stride_cn * cols[None, :] + pid_k * stride_ck
    c_mask = (rows[:, None] < M) & (cols[None, :] < N)
    if ATOMIC_ADD:
        tl.atomic_add(c_ptrs, c, mask=c_mask, sem="relaxed")
    else:
        tl.store(c_ptrs, c, mask=c_mask)


@triton.heuristics({"EVEN_K": _even_k, "GRID_MN": _grid_mn})
@triton.jit
def _gemm_a16wfp4_kernel(
    a_ptr, b_ptr, c_ptr, b_scales_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_ck, stride_cm, stride_cn, stride_bsn, stride_bsk,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr, NUM_KSPLIT: tl.constexpr, SPLITK_BLOCK_SIZE: tl.constexpr,
    EVEN_K: tl.constexpr, num_warps: tl.constexpr, num_stages: tl.constexpr, waves_per_eu: tl.constexpr,
    matrix_instr_nonkdim: tl.constexpr, GRID_MN: tl.constexpr, ATOMIC_ADD: tl.constexpr,
    cache_modifier: tl.constexpr,
):
    """C[M, N] (+)= quant(A)[M, K] @ B[K, N]: A bf16/fp16, B packed e2m1 bytes [K/2, N] (K bytes = K here),
    B scales unshuffled [N, K/32]. Split-K program pid_k writes its fp32 partial to slice pid_k."""
    pid_m, pid_n, pid_k = _program_tile(M, N, BLOCK_SIZE_M, BLOCK_SIZE_N, GROUP_SIZE_M, NUM_KSPLIT)
    if (pid_k * SPLITK_BLOCK_SIZE // 2) < K:
        num_k_iter = tl.cdiv(SPLITK_BLOCK_SIZE // 2, BLOCK_SIZE_K // 2)
        k_elems = tl.arange(0, BLOCK_SIZE_K)
        rows_a = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M  # wraps: no load mask needed
        a_ptrs = a_ptr + rows_a[:, None] * stride_am + (pid_k * SPLITK_BLOCK_SIZE + k_elems)[None, :] * stride_ak
        k_bytes = tl.arange(0, BLOCK_SIZE_K // 2)
        cols_b = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
        b_ptrs = b_ptr + (pid_k * (SPLITK_BLOCK_SIZE // 2) + k_bytes)[:, None] * stride_bk + cols_b[None, :] * stride_bn
        k_groups = pid_k * (SPLITK_BLOCK_SIZE // SCALE_GROUP) + tl.arange(0, BLOCK_SIZE_K // SCALE_GROUP)
        b_scale_ptrs = b_scales_ptr + cols_b[:, None] * stride_bsn + k_groups[None, :] * stride_bsk

        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k in range(pid_k * num_k_iter, (pid_k + 1) * num_k_iter):
            b_scales = tl.load(b_scale_ptrs)
            if EVEN_K:
                a_bf16 = tl.load(a_ptrs)
                b = tl.load(b_ptrs, cache_modifier=cache_modifier)
            else:
                # Zero-fill past K: zero codes add nothing whatever scale the padding gets.
                a_bf16 = tl.load(a_ptrs, mask=k_elems[None, :] < 2 * K - k * BLOCK_SIZE_K, other=0)
                b = tl.load(b_ptrs, mask=k_bytes[:, None] < K - k * (BLOCK_SIZE_K // 2), other=0,
                            cache_modifier=cache_modifier)
            a, a_scales = _mxfp4_quant_op(a_bf16, BLOCK_SIZE_K, BLOCK_SIZE_M, 32)
            accumulator += tl.dot_scaled(a, a_scales, "e2m1", b, b_scales, "e2m1")
            a_ptrs += BLOCK_SIZE_K * stride_ak
            b_ptrs += (BLOCK_SIZE_K // 2) * stride_bk
            b_scale_ptrs += (BLOCK_SIZE_K // SCALE_GROUP) * stride_bsk
        _store_tile(c_ptr, accumulator, pid_m, pid_n, pid_k, M, N, stride_ck, stride_cm, stride_cn,
                    BLOCK_SIZE_M, BLOCK_SIZE_N, ATOMIC_ADD)


@triton.heuristics({"EVEN_K": _even_k, "GRID_MN": _grid_mn})
@triton.jit
def _gemm_a16wfp4_preshuffle_kernel(
    a_ptr, b_ptr, c_ptr, b_scales_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bn, stride_bk, stride_ck, stride_cm, stride_cn, stride_bsn, stride_bsk,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr, NUM_KSPLIT: tl.constexpr, SPLITK_BLOCK_SIZE: tl.constexpr,
    EVEN_K: tl.constexpr, num_warps: tl.constexpr, num_stages: tl.constexpr, waves_per_eu: tl.constexpr,
    matrix_instr_nonkdim: tl.constexpr, GRID_MN: tl.constexpr, PREQUANT: tl.constexpr,
    cache_modifier: tl.constexpr,
):
    """C[M, N] = quant(A)[M, K] @ B^T with B = shuffle_weight(B_q) viewed (N//16, K*8) and its scales
    e8m0_shuffle'd viewed (N_pad//32, 32*cols_pad). K is in bytes (K_elements // 2).

    Rows of A wrap (% M); the B and scale rows are taken % N although they count 16- and 32-row blocks,
    so they never wrap: the last N tile reads past the weight when N % BLOCK_SIZE_N != 0, and only masked
    output columns see it. With split-K, program pid_k stores its fp32 partial at c + pid_k * stride_ck.
    """
    tl.static_assert(EVEN_K, "aiter's preshuffle kernel loads A and B only when EVEN_K (it fails to compile otherwise)")
    tl.static_assert(PREQUANT, "aiter's preshuffle kernel defines A only when PREQUANT (it fails to compile otherwise)")
    pid_m, pid_n, pid_k = _program_tile(M, N, BLOCK_SIZE_M, BLOCK_SIZE_N, GROUP_SIZE_M, NUM_KSPLIT)
    if (pid_k * SPLITK_BLOCK_SIZE // 2) < K:
        num_k_iter = tl.cdiv(SPLITK_BLOCK_SIZE // 2, BLOCK_SIZE_K // 2)
        rows_a = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
        k_elems = pid_k * SPLITK_BLOCK_SIZE + tl.arange(0, BLOCK_SIZE_K)
        a_ptrs = a_ptr + rows_a[:, None] * stride_am + k_elems[None, :] * stride_ak
        # One row of the (N//16, K*8) view holds 16 weight rows: BLOCK_SIZE_K//2 K-bytes x 16 rows per tile.
        b_rows = (pid_n * (BLOCK_SIZE_N // 16) + tl.arange(0, BLOCK_SIZE_N // 16)) % N
        b_cols = pid_k * (SPLITK_BLOCK_SIZE // 2) * 16 + tl.arange(0, (BLOCK_SIZE_K // 2) * 16)
        b_ptrs = b_ptr + b_rows[:, None] * stride_bn + b_cols[None, :] * stride_bk
        # One row of the scale view holds 32 weight rows: 32 bytes per 32-element K group.
        s_rows = (pid_n * (BLOCK_SIZE_N // 32) + tl.arange(0, BLOCK_SIZE_N // 32)) % N
        s_cols = pid_k * (SPLITK_BLOCK_SIZE // SCALE_GROUP) * 32 + tl.arange(0, (BLOCK_SIZE_K // SCALE_GROUP) * 32)
        b_scale_ptrs = b_scales_ptr + s_rows[:, None] * stride_bsn + s_cols[None, :] * stride_bsk

        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k in range(pid_k * num_k_iter, (pid_k + 1) * num_k_iter):
            b_scales = unshuffle_b_scales_tile(tl.load(b_scale_ptrs, cache_modifier=cache_modifier),
                                               BLOCK_SIZE_N, BLOCK_SIZE_K)
            a_bf16 = tl.load(a_ptrs)
            b = unshuffle_b_tile(tl.load(b_ptrs, cache_modifier=cache_modifier), BLOCK_SIZE_N, BLOCK_SIZE_K)
            a, a_scales = _mxfp4_quant_op(a_bf16, BLOCK_SIZE_K, BLOCK_SIZE_M, 32)
            accumulator += tl.dot_scaled(a, a_scales, "e2m1", b, b_scales, "e2m1")
            a_ptrs += BLOCK_SIZE_K * stride_ak
            b_ptrs += (BLOCK_SIZE_K // 2) * 16 * stride_bk
            b_scale_ptrs += BLOCK_SIZE_K * stride_bsk
        _store_tile(c_ptr, accumulator, pid_m, pid_n, pid_k, M, N, stride_ck, stride_cm, stride_cn,
                    BLOCK_SIZE_M, BLOCK_SIZE_N, False)


def get_splitk(K: int, BLOCK_SIZE_K: int, NUM_KSPLIT: int):
    """aiter's split search without the final ``NUM_KSPLIT = cdiv(K, SPLITK_BLOCK_SIZE // 2)``: the unused
    copy in this module. K in bytes, BLOCK_SIZE_K and SPLITK_BLOCK_SIZE in elements; halves NUM_KSPLIT
    (or, at one split, BLOCK_SIZE_K) until every split is a whole number of BLOCK_SIZE_K chunks of K."""

    def split_size(num_ksplit, block_k):
        return triton.cdiv(2 * triton.cdiv(K, num_ksplit), block_k) * block_k

    splitk_block = split_size(NUM_KSPLIT, BLOCK_SIZE_K)
    while NUM_KSPLIT > 1 and BLOCK_SIZE_K > 16:
        splits_tile_k = K % (splitk_block // 2) == 0
        blocks_tile_split = splitk_block % BLOCK_SIZE_K == 0
        blocks_tile_k = K % (BLOCK_SIZE_K // 2) == 0
        if splits_tile_k and blocks_tile_split and blocks_tile_k:
            break
        if not splits_tile_k or not blocks_tile_split:
            NUM_KSPLIT //= 2  # the loop runs only while NUM_KSPLIT > 1, so aiter's BLOCK_SIZE_K branch is dead
        else:
            BLOCK_SIZE_K //= 2
        splitk_block = split_size(NUM_KSPLIT, BLOCK_SIZE_K)
    return splitk_block, BLOCK_SIZE_K, NUM_KSPLIT


def _get_config(M: int, N: int, K: int, shuffle: bool = False):
    """K in bytes; the config tables are keyed by elements."""
    return get_gemm_config("GEMM-A16WFP4" + ("_PRESHUFFLED" if shuffle else ""), M, N, 2 * K)
