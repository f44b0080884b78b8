"""aiter's bf16-activation x MXFP4-weight GEMM kernels (``aiter/ops/triton/_triton_kernels/gemm/basic/
gemm_a16wfp4.py`` at f3be04a12a0c = bd02afb526; aiter_semantics.md sections 4.2-4.3).

Written from aiter's semantics the way aiter writes them: argument names and order, constexprs and
heuristics (submissions launch these kernels directly and override ``.values["EVEN_K"]`` and the like),
the quantizer called as the module global ``_mxfp4_quant_op`` (where submissions patch it), the layouts
undone with aiter's reshapes and permutes. Independent of ``kernels/``.

One addition: aiter's preshuffle kernel has no code path for EVEN_K or PREQUANT false, so its source fails
to compile with an undefined name; here a static assert fails first and names the constexpr.

Not written: aiter's ``tl.assume`` hints (the interpreter ignores them; a zero stride, e.g. an expand()ed A,
is UB in aiter and simply works here) and the kernels' ``repr`` (names of compiled kernels).
"""
from reference.emulation import triton_interpreter

triton_interpreter.activate()  # before Triton is imported: it fixes interpreted vs compiled at decoration

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from ...quant.quant import _mxfp4_quant_op  # noqa: E402
from ....utils._triton.pid_preprocessing import split_k_tile  # noqa: E402
from ....utils.gemm_config_utils import get_gemm_config  # noqa: E402


def _even_k(args):
    """No K tail anywhere: K (bytes) is whole BLOCK_SIZE_K chunks and whole splits, and a split is whole
    BLOCK_SIZE_K chunks (both in elements)."""
    return (args["K"] % (args["BLOCK_SIZE_K"] // 2) == 0 and args["SPLITK_BLOCK_SIZE"] % args["BLOCK_SIZE_K"] == 0
            and args["K"] % (args["SPLITK_BLOCK_SIZE"] // 2) == 0)


def _grid_mn(args):
    return triton.cdiv(args["M"], args["BLOCK_SIZE_M"]) * triton.cdiv(args["N"], args["BLOCK_SIZE_N"])


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
    """C[M, N] (+)= quant(A)[M, K] @ B[K, N]: A bf16/fp16, B packed e2m1 bytes [K/2, N] (K is in bytes),
    B scales unshuffled [N, K/32]. Split-K program pid_k stores its partial at c + pid_k * stride_ck."""

    pid_m, pid_n, pid_k = split_k_tile(tl.program_id(axis=0), M, N, BLOCK_SIZE_M, BLOCK_SIZE_N, GROUP_SIZE_M,
                                       NUM_KSPLIT)

    SCALE_GROUP_SIZE: tl.constexpr = 32

    if (pid_k * SPLITK_BLOCK_SIZE // 2) < K:
        num_k_iter = tl.cdiv(SPLITK_BLOCK_SIZE // 2, BLOCK_SIZE_K // 2)

        # A is read in elements, B and the scales in packed bytes and 32-element groups. Rows of A and
        # columns of B wrap (% M, % N) so loads need no mask; the store masks them.
        k_elems = tl.arange(0, BLOCK_SIZE_K)
        rows_a = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
        a_ptrs = a_ptr + rows_a[:, None] * stride_am + (pid_k * SPLITK_BLOCK_SIZE + k_elems)[None, :] * stride_ak
        k_bytes = tl.arange(0, BLOCK_SIZE_K // 2)
        cols_b = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
        b_ptrs = b_ptr + (pid_k * (SPLITK_BLOCK_SIZE // 2) + k_bytes)[:, None] * stride_bk + cols_b[None, :] * stride_bn
        k_groups = pid_k * (SPLITK_BLOCK_SIZE // SCALE_GROUP_SIZE) + tl.arange(0, BLOCK_SIZE_K // SCALE_GROUP_SIZE)
        b_scale_ptrs = b_scales_ptr + cols_b[:, None] * stride_bsn + k_groups[None, :] * stride_bsk

        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k in range(pid_k * num_k_iter, (pid_k + 1) * num_k_iter):
            b_scales = tl.load(b_scale_ptrs)
            if EVEN_K:
                a_bf16 = tl.load(a_ptrs)
                b = tl.load(b_ptrs, cache_modifier=cache_modifier)
            else:
                # past K: zero elements and zero codes add nothing, whatever scale the padding gets
                a_bf16 = tl.load(a_ptrs, mask=k_elems[None, :] < 2 * K - k * BLOCK_SIZE_K, other=0)
                b = tl.load(b_ptrs, mask=k_bytes[:, None] < K - k * (BLOCK_SIZE_K // 2), other=0,
                            cache_modifier=cache_modifier)
            a, a_scales = _mxfp4_quant_op(a_bf16, BLOCK_SIZE_K, BLOCK_SIZE_M, 32)
            accumulator += tl.dot_scaled(a, a_scales, "e2m1", b, b_scales, "e2m1")
            a_ptrs += BLOCK_SIZE_K * stride_ak
            b_ptrs += (BLOCK_SIZE_K // 2) * stride_bk
            b_scale_ptrs += (BLOCK_SIZE_K // SCALE_GROUP_SIZE) * stride_bsk

        c = accumulator.to(c_ptr.type.element_ty)
        rows_c = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
        cols_c = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
        c_ptrs = c_ptr + stride_cm * rows_c[:, None] + stride_cn * cols_c[None, :] + pid_k * stride_ck
        c_mask = (rows_c[:, None] < M) & (cols_c[None, :] < N)
        if ATOMIC_ADD:
            tl.atomic_add(c_ptrs, c, mask=c_mask, sem="relaxed")
        else:
            tl.store(c_ptrs, c, mask=c_mask)


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
    """C[M, N] = quant(A)[M, K] @ B^T with B = shuffle_weight(B_q, (16, 16)) viewed (N//16, K*8) and its
    scales e8m0_shuffle'd viewed (N_pad//32, 32*cols_pad). K is in bytes (K_elements // 2).

    Rows of A wrap (% M); the B and scale rows are taken % N although they count 16- and 32-row blocks, so
    they never wrap: the last N tile reads past the weight when N % BLOCK_SIZE_N != 0, and only masked
    output columns see it. With split-K, program pid_k stores its partial at c + pid_k * stride_ck.
    """
    tl.static_assert(EVEN_K, "aiter's preshuffle kernel loads A and B only when EVEN_K (it fails to compile otherwise)")
    tl.static_assert(PREQUANT, "aiter's preshuffle kernel defines A only when PREQUANT (it fails to compile otherwise)")

    pid_m, pid_n, pid_k = split_k_tile(tl.program_id(axis=0), M, N, BLOCK_SIZE_M, BLOCK_SIZE_N, GROUP_SIZE_M,
                                       NUM_KSPLIT)

    SCALE_GROUP_SIZE: tl.constexpr = 32

    if (pid_k * SPLITK_BLOCK_SIZE // 2) < K:
        num_k_iter = tl.cdiv(SPLITK_BLOCK_SIZE // 2, BLOCK_SIZE_K // 2)

        k_elems = pid_k * SPLITK_BLOCK_SIZE + tl.arange(0, BLOCK_SIZE_K)
        rows_a = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
        a_ptrs = a_ptr + rows_a[:, None] * stride_am + k_elems[None, :] * stride_ak
        # A row of the (N//16, K*8) weight view holds 16 weight rows: 16 bytes of each per 16 K-bytes.
        b_cols = pid_k * (SPLITK_BLOCK_SIZE // 2) * 16 + tl.arange(0, (BLOCK_SIZE_K // 2) * 16)
        b_rows = (pid_n * (BLOCK_SIZE_N // 16) + tl.arange(0, BLOCK_SIZE_N // 16)) % N
        b_ptrs = b_ptr + b_rows[:, None] * stride_bn + b_cols[None, :] * stride_bk
        # A row of the scale view holds 32 weight rows: 32 bytes per 32-element K group.
        s_rows = (pid_n * (BLOCK_SIZE_N // 32) + tl.arange(0, BLOCK_SIZE_N // 32)) % N
        s_cols = pid_k * (SPLITK_BLOCK_SIZE // SCALE_GROUP_SIZE) * 32 + tl.arange(0, BLOCK_SIZE_K // SCALE_GROUP_SIZE * 32)
        b_scale_ptrs = b_scales_ptr + s_rows[:, None] * stride_bsn + s_cols[None, :] * stride_bsk

        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k in range(pid_k * num_k_iter, (pid_k + 1) * num_k_iter):
            # e8m0_shuffle stores, per 32 rows and 8 scale columns, the 256 bytes in the order
            # [c % 4][r % 16][(c % 8) // 4][(r % 32) // 16]: axes back to [r // 32][(r % 32) // 16][r % 16]
            # [c // 8][(c % 8) // 4][c % 4] make it row-major [N, K/32].
            b_scales = (
                tl.load(b_scale_ptrs, cache_modifier=cache_modifier)
                .reshape(BLOCK_SIZE_N // 32, BLOCK_SIZE_K // SCALE_GROUP_SIZE // 8, 4, 16, 2, 2, 1)
                .permute(0, 5, 3, 1, 4, 2, 6)
                .reshape(BLOCK_SIZE_N, BLOCK_SIZE_K // SCALE_GROUP_SIZE)
            )
            if EVEN_K:
                a_bf16 = tl.load(a_ptrs)
                b = tl.load(b_ptrs, cache_modifier=cache_modifier)
            # shuffle_weight stores, per 16 rows and 32 K-bytes, two 16x16 byte tiles [r % 16][kb % 16]:
            # axes back to [r // 16][r % 16][kb // 32][(kb % 32) // 16][kb % 16], then K-major for the dot.
            b = (
                b.reshape(1, BLOCK_SIZE_N // 16, BLOCK_SIZE_K // 64, 2, 16, 16)
                .permute(0, 1, 4, 2, 3, 5)
                .reshape(BLOCK_SIZE_N, BLOCK_SIZE_K // 2)
                .trans(1, 0)
            )
            if PREQUANT:
                a, a_scales = _mxfp4_quant_op(a_bf16, BLOCK_SIZE_K, BLOCK_SIZE_M, 32)
            accumulator += tl.dot_scaled(a, a_scales, "e2m1", b, b_scales, "e2m1")
            a_ptrs += BLOCK_SIZE_K * stride_ak
            b_ptrs += (BLOCK_SIZE_K // 2) * 16 * stride_bk
            b_scale_ptrs += BLOCK_SIZE_K * stride_bsk

        c = accumulator.to(c_ptr.type.element_ty)
        rows_c = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
        cols_c = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
        c_ptrs = c_ptr + stride_cm * rows_c[:, None] + stride_cn * cols_c[None, :] + pid_k * stride_ck
        tl.store(c_ptrs, c, mask=(rows_c[:, None] < M) & (cols_c[None, :] < N))


def get_splitk(K: int, BLOCK_SIZE_K: int, NUM_KSPLIT: int):
    """aiter's split search as this module has it: without the wrapper's final ``NUM_KSPLIT =
    cdiv(K, SPLITK_BLOCK_SIZE // 2)`` (the wrappers use their own copy). K in bytes, BLOCK_SIZE_K and
    SPLITK_BLOCK_SIZE in elements. Halves NUM_KSPLIT while a split is not a whole part of K or not whole
    BLOCK_SIZE_K chunks, else BLOCK_SIZE_K while it does not divide K; stops at one split or 16."""
    SPLITK_BLOCK_SIZE = triton.cdiv(2 * triton.cdiv(K, NUM_KSPLIT), BLOCK_SIZE_K) * BLOCK_SIZE_K
    while NUM_KSPLIT > 1 and BLOCK_SIZE_K > 16:
        splits_tile_k = K % (SPLITK_BLOCK_SIZE // 2) == 0
        blocks_tile_split = SPLITK_BLOCK_SIZE % BLOCK_SIZE_K == 0
        blocks_tile_k = K % (BLOCK_SIZE_K // 2) == 0
        if splits_tile_k and blocks_tile_split and blocks_tile_k:
            break
        # aiter's chain of elifs also halves BLOCK_SIZE_K when a split is not whole chunks and only one
        # split is left, and breaks when BLOCK_SIZE_K <= 16: neither can happen inside this loop.
        if not splits_tile_k or not blocks_tile_split:
            NUM_KSPLIT //= 2
        else:
            BLOCK_SIZE_K //= 2
        SPLITK_BLOCK_SIZE = triton.cdiv(2 * triton.cdiv(K, NUM_KSPLIT), BLOCK_SIZE_K) * BLOCK_SIZE_K
    return SPLITK_BLOCK_SIZE, BLOCK_SIZE_K, NUM_KSPLIT


def _get_config(M: int, N: int, K: int, shuffle: bool = False):
    """K in bytes; the config tables are keyed by elements."""
    return get_gemm_config("GEMM-A16WFP4" + ("_PRESHUFFLED" if shuffle else ""), M, N, 2 * K)
