"""The fused Triton path: bf16 A is quantized to MXFP4 inside the kernel, preshuffled B bytes and
shuffled E8M0 scales are unshuffled in registers, and ``tl.dot_scaled`` accumulates in fp32.

Optional K striping (split-K): each stripe writes an fp32 partial [M, N] and a fold (kernels.fold)
reduces them with one RNE rounding. Without striping the kernel rounds to bf16 itself.

Compile cost is bounded by configs, not shapes: M, N, K and the stripe length are runtime arguments and
the stripe count is the grid's second axis; the constexprs are the tile sizes and the modes (quantizer,
cache modifier, whether stripes write fp32 partials). M is not specialized at all and A's K stride only
on == 1, so a config compiles at most 6 variants: A 16-byte aligned or not x A's strides (K-contiguous,
transposed, transposed with M = 1). The task's contiguous, aligned A gives exactly one.

Tails: rows >= M, columns >= N and K elements >= K are masked; B scale bytes beyond K (the padding
of ``e8m0_shuffle``, uninitialised memory in the real task) are replaced by 127 so that a NaN byte
there cannot poison the zero codes it multiplies.
"""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

from kernels import configs, platform
from kernels.fold import fold_partials
from kernels.path import FunctionPath, RunInfo
from kernels.triton_blocks import (
    bf16_bits_rne,
    mxfp4_quant_gfx950,
    mxfp4_quant_portable,
    unshuffle_b_scales_tile,
    unshuffle_b_tile,
)

QUANTIZERS = ("portable", "gfx950")
NEUTRAL_SCALE = tl.constexpr(127)  # 2^0: what a padding scale byte becomes where the codes are masked to zero


# Triton specializes int arguments on == 1 and % 16 == 0 by default, i.e. one compile per class of value.
# M gains nothing from it; A's K stride needs the == 1 case (vector loads along K), not its divisibility
# (transposed A: it is M). Every other shape-dependent argument is a multiple of 16 in every launch (N, K,
# SCALE_COLS, SPLIT_K, the other strides) or 1. The stripe index is the grid's second axis, so the
# stripe count is no argument at all (a runtime modulo costs gfx950 scalar registers it does not have).
@triton.jit(do_not_specialize=["M"], do_not_specialize_on_alignment=["stride_ak"])
def fused_mxfp4_gemm_kernel(
    a_ptr, w_ptr, s_ptr, y_ptr,
    M, N, K, SCALE_COLS, SPLIT_K,
    stride_am, stride_ak, stride_wn, stride_wk, stride_sn, stride_sk,
    stride_ys, stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    PARTIALS: tl.constexpr, QUANTIZER: tl.constexpr, CACHE_MODIFIER: tl.constexpr,
):
    tile = tl.program_id(0)
    num_n = tl.cdiv(N, BLOCK_N)
    pid_m = tile // num_n
    pid_n = tile % num_n

    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row16 = pid_n * (BLOCK_N // 16) + tl.arange(0, BLOCK_N // 16)  # 16-row blocks of the shuffled weight
    row32 = pid_n * (BLOCK_N // 32) + tl.arange(0, BLOCK_N // 32)  # 32-row blocks of the shuffled scales
    offs_k = tl.arange(0, BLOCK_K)
    offs_wk = tl.arange(0, BLOCK_K * 8)  # BLOCK_K/2 bytes per row x 16 rows per shuffled row
    offs_g = tl.arange(0, BLOCK_K // 32)

    if PARTIALS:
        pid_s = tl.program_id(1)
        k_begin = pid_s * SPLIT_K
        k_end = tl.minimum(k_begin + SPLIT_K, K)
    else:
        pid_s = 0
        k_begin = 0
        k_end = K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(k_begin, k_end, BLOCK_K):
        a_mask = (rows[:, None] < M) & (k0 + offs_k[None, :] < K)
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + offs_k[None, :]) * stride_ak, mask=a_mask, other=0.0)
        if QUANTIZER == "gfx950":
            a_q, a_s = mxfp4_quant_gfx950(a, BLOCK_M, BLOCK_K)
        else:
            a_q, a_s = mxfp4_quant_portable(a, BLOCK_M, BLOCK_K)

        w_mask = (row16[:, None] < N // 16) & (k0 * 8 + offs_wk[None, :] < K * 8)
        w = tl.load(w_ptr + row16[:, None] * stride_wn + (k0 * 8 + offs_wk[None, :]) * stride_wk,
                    mask=w_mask, other=0, cache_modifier=CACHE_MODIFIER)
        b_q = unshuffle_b_tile(w, BLOCK_N, BLOCK_K)

        s_mask = (row32[:, None] * 32 < N) & (k0 + offs_k[None, :] < SCALE_COLS)
        s = tl.load(s_ptr + row32[:, None] * stride_sn + (k0 + offs_k[None, :]) * stride_sk,
                    mask=s_mask, other=NEUTRAL_SCALE, cache_modifier=CACHE_MODIFIER)
        b_s = unshuffle_b_scales_tile(s, BLOCK_N, BLOCK_K)
        b_s = tl.where((k0 // 32 + offs_g[None, :]) < K // 32, b_s, NEUTRAL_SCALE)

        acc = tl.dot_scaled(a_q, a_s, "e2m1", b_q, b_s, "e2m1", acc)

    y_mask = (rows[:, None] < M) & (cols[None, :] < N)
    y_ptrs = y_ptr + pid_s * stride_ys + rows[:, None].to(tl.int64) * stride_ym + cols[None, :] * stride_yn
    if PARTIALS:
        tl.store(y_ptrs, acc, mask=y_mask)
    else:
        tl.store(y_ptrs, bf16_bits_rne(acc), mask=y_mask)  # y_ptr is the uint16 view of the bf16 output


def _install_asm_model_if_interpreting(quantizer: str) -> None:
    """The interpreter cannot run inline asm; our instruction model stands in (never on a real GPU,
    so a bundled submission does not need reference/)."""
    if quantizer == "gfx950" and platform.detect().interpreter:
        from reference.emulation import gfx950_asm

        gfx950_asm.install()


def _check_operands(A: torch.Tensor, B_shuffle: torch.Tensor, B_scale_sh: torch.Tensor, n: int):
    if A.dim() != 2 or A.dtype != torch.bfloat16:
        raise TypeError(f"A must be a 2-D bf16 tensor, got {A.dtype} with shape {tuple(A.shape)}")
    m, k = A.shape
    if k % 32 or n % 32:
        raise ValueError(f"the fused path needs K % 32 == 0 and N % 32 == 0, got N={n}, K={k}")
    if B_shuffle.shape != (n, k // 2) or B_shuffle.element_size() != 1:
        raise ValueError(f"B_shuffle must be [N, K/2] = [{n}, {k // 2}] bytes, got {tuple(B_shuffle.shape)}")
    rows_pad, cols_pad = B_scale_sh.shape
    if rows_pad % 256 or cols_pad % 8 or rows_pad < n or cols_pad * 32 < k:
        raise ValueError(f"B_scale_sh {tuple(B_scale_sh.shape)} is not an e8m0_shuffle output for N={n}, K={k}")


def fused_gemm(A, B_shuffle, B_scale_sh, n: int, cfg: configs.FusedConfig | None = None,
               quantizer: str = "portable", fold_backend: str = "auto") -> torch.Tensor:
    """y = MXFP4(A) @ MXFP4(B)^T as bf16 [M, N], in one kernel (plus a fold when the config splits K)."""
    if quantizer not in QUANTIZERS:
        raise ValueError(f"quantizer must be one of {QUANTIZERS}, got {quantizer!r}")
    _check_operands(A, B_shuffle, B_scale_sh, n)
    m, k = A.shape
    cfg = cfg or configs.choose(m, n, k)
    configs.validate(cfg, m, n, k)
    w = B_shuffle.view(torch.uint8).reshape(n // 16, k * 8)
    rows_pad, cols_pad = B_scale_sh.shape
    s = B_scale_sh.view(torch.uint8).reshape(rows_pad // 32, cols_pad * 32)
    if cfg.splits > 1:
        out = torch.empty((cfg.splits, m, n), dtype=torch.float32, device=A.device)
        strides = out.stride()
    else:
        out = torch.empty((m, n), dtype=torch.bfloat16, device=A.device)
        strides = (0,) + out.stride()
    _install_asm_model_if_interpreting(quantizer)
    fused_mxfp4_gemm_kernel[cfg.grid(m, n)](
        A, w, s, out if cfg.splits > 1 else out.view(torch.uint16), m, n, k, cols_pad * 32,
        cfg.split_k or k,
        A.stride(0), A.stride(1), w.stride(0), w.stride(1), s.stride(0), s.stride(1), *strides,
        BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n, BLOCK_K=cfg.block_k,
        PARTIALS=cfg.splits > 1, QUANTIZER=quantizer, CACHE_MODIFIER=cfg.cache_modifier,
        num_warps=cfg.num_warps, num_stages=cfg.num_stages,
    )
    if cfg.splits > 1:
        return fold_partials(out, backend=fold_backend)
    return out


@triton.jit
def quantize_tile_kernel(a_ptr, q_ptr, s_ptr, M, K, stride_am, stride_ak,
                         BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, QUANTIZER: tl.constexpr):
    """The fused kernel's in-register quantizer, run alone: the stage check compares its bytes."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    k0 = tl.program_id(1) * BLOCK_K
    offs_k = k0 + tl.arange(0, BLOCK_K)
    mask = (rows[:, None] < M) & (offs_k[None, :] < K)
    a = tl.load(a_ptr + rows[:, None] * stride_am + offs_k[None, :] * stride_ak, mask=mask, other=0.0)
    if QUANTIZER == "gfx950":
        a_q, a_s = mxfp4_quant_gfx950(a, BLOCK_M, BLOCK_K)
    else:
        a_q, a_s = mxfp4_quant_portable(a, BLOCK_M, BLOCK_K)
    offs_b = k0 // 2 + tl.arange(0, BLOCK_K // 2)
    tl.store(q_ptr + rows[:, None] * (K // 2) + offs_b[None, :], a_q, mask=(rows[:, None] < M) & (offs_b[None, :] < K // 2))
    offs_g = k0 // 32 + tl.arange(0, BLOCK_K // 32)
    tl.store(s_ptr + rows[:, None] * (K // 32) + offs_g[None, :], a_s, mask=(rows[:, None] < M) & (offs_g[None, :] < K // 32))


def quantize_a(A: torch.Tensor, quantizer: str = "portable"):
    """(packed uint8 [M, K/2], scales uint8 [M, K/32]) exactly as the fused kernel quantizes A."""
    if quantizer not in QUANTIZERS:
        raise ValueError(f"quantizer must be one of {QUANTIZERS}, got {quantizer!r}")
    m, k = A.shape
    packed = torch.empty((m, k // 2), dtype=torch.uint8, device=A.device)
    scales = torch.empty((m, k // 32), dtype=torch.uint8, device=A.device)
    _install_asm_model_if_interpreting(quantizer)
    block_m, block_k = 16, 256
    grid = (triton.cdiv(m, block_m), triton.cdiv(k, block_k))
    quantize_tile_kernel[grid](A, packed, scales, m, k, A.stride(0), A.stride(1),
                               BLOCK_M=block_m, BLOCK_K=block_k, QUANTIZER=quantizer)
    return packed, scales


def default_quantizer() -> str:
    """gfx950's conversion instruction where it exists, the portable quantizer elsewhere;
    MXFP4_FUZZ_QUANTIZER=portable|gfx950 forces one (gfx950 runs on the instruction model in the
    interpreter)."""
    forced = os.environ.get("MXFP4_FUZZ_QUANTIZER")
    if forced:
        if forced not in QUANTIZERS:
            raise ValueError(f"MXFP4_FUZZ_QUANTIZER must be one of {QUANTIZERS}, got {forced!r}")
        return forced
    return "gfx950" if platform.detect().is_gfx950 else "portable"


def requirements() -> tuple[bool, str]:
    plat = platform.detect()
    if plat.tier == "nvidia" and default_quantizer() == "gfx950":
        return False, "the gfx950 quantizer's inline asm cannot compile for NVIDIA"
    if plat.interpreter and not _interpreter_has_dot_scaled():
        return False, f"triton {triton.__version__}'s interpreter has no tl.dot_scaled (needs >= 3.8)"
    return True, f"fused Triton kernel on {plat.describe()}"


def _interpreter_has_dot_scaled() -> bool:
    from triton.runtime import interpreter

    return hasattr(interpreter.InterpreterBuilder, "create_dot_scaled")


def run(data) -> tuple[torch.Tensor, RunInfo]:
    A, _, _, B_shuffle, B_scale_sh = data
    n = B_shuffle.shape[0]
    m, k = A.shape
    cfg = configs.choose(m, n, k)
    quantizer = default_quantizer()
    y = fused_gemm(A, B_shuffle, B_scale_sh, n, cfg, quantizer)
    return y, RunInfo("fused", cfg.describe(), cfg.splits, "rne", {"quantizer": quantizer})


PATH = FunctionPath("fused", requirements, run)
