"""aiter.gemm_a4w4 and aiter.gemm_a4w4_asm: the closed ASM MXFP4 GEMM (aiter_semantics.md section 5).

The ASM kernel is given pointers and row strides only, so the emulation reads its operands the same way:
bytes at ``data_ptr + offset`` through the layouts (A row-major with its row stride, B preshuffled in
16x16-byte tiles, scales in the e8m0_shuffle order with the scale tensor's row stride). A wrong view gives
wrong numbers, not an error, as on the GPU.

Arithmetic (the model; the ASM is closed): every MXFP4 product and each K-split's sum is formed exactly
(float64, exact for any realistic scale spread), each split's sum is rounded to fp32, the splits are added
in fp32 in order, then ``alpha * acc + beta * bias`` in fp32 and one round-to-nearest-even to bf16. Without
split-K that is the correctly rounded fp32 accumulator, rounded once to bf16. The ASM's true summation
order, and whether its split-K partials (accumulated into a zeroed ``out``) stay fp32, are not visible.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch
from torch import Tensor

from reference.oracle.e2m1 import decode_e2m1
from reference.oracle.e8m0 import decode_e8m0

from .. import _emulation
from ..utility import dtypes

SCALE_GROUP = 32


@dataclass(frozen=True)
class AsmKernel:
    tile_m: int
    tile_n: int
    split_k: bool  # only these honour log2_k_split; every other kernel silently ignores it
    bpreshuffle: bool

    @property
    def name(self) -> str:
        """The C++-mangled symbol (``_ZN5aiter<len><name>E``): the only form gemm_a4w4_asm accepts."""
        layout = "BpreShuffle" if self.bpreshuffle else "noBpreShuffle"
        base = f"f4gemm_bf16_per1x32Fp4_{layout}_{self.tile_m}x{self.tile_n}"
        return f"_ZN5aiter{len(base)}{base}E"


# aiter's hsa/gfx950/f4gemm/f4gemm_bf16_per1x32Fp4.csv at the competition snapshot, in file order (the
# heuristic's tie-breaks follow iteration order; aiter iterates a hash map, so that order is assumed).
ASM_KERNELS = tuple(
    [AsmKernel(256, 256, False, False), AsmKernel(256, 256, True, True), AsmKernel(128, 512, True, True)]
    + [AsmKernel(m, n, False, True) for m, n in (
        (192, 256), (224, 256), (128, 128), (128, 256), (128, 384), (160, 128), (160, 256), (160, 384),
        (192, 128), (224, 128), (256, 128), (32, 1024), (32, 128), (32, 256), (32, 384), (32, 512), (32, 640),
        (32, 768), (32, 896), (64, 1024), (64, 128), (64, 256), (64, 384), (64, 512), (64, 640), (64, 768),
        (64, 896), (96, 128), (96, 256), (96, 384), (96, 512), (96, 640))])
_BY_KEY = {_emulation.ARCH + k.name: k for k in ASM_KERNELS}


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _heuristic_kernel(M: int, N: int, log2_k_split: Optional[int], bpreshuffle: Optional[bool]):
    """aiter's choice when no kernel is named: fewest rounds of work over the CUs, ties broken towards more
    occupied CUs or larger tiles. Returns (kernel, log2 of the split)."""
    want_split = log2_k_split is not None and log2_k_split != 0
    want_preshuffle = bpreshuffle is None or bool(bpreshuffle)
    cus = _emulation.CU_NUM
    best, best_split, rounds, empty_cus, efficiency = None, 1, 0xFFFFFFFF, cus, 1.0
    for kernel in ASM_KERNELS:
        if kernel.bpreshuffle != want_preshuffle or kernel.split_k < want_split:
            continue
        if (kernel.tile_m, kernel.tile_n) == (128, 512) and N % 512:
            continue
        if kernel.split_k:
            splits = [1 << log2_k_split] if log2_k_split is not None else [2, 4, 8, 16]
        else:
            splits = [1]
        for split in splits:
            groups = _cdiv(M, kernel.tile_m) * _cdiv(N, kernel.tile_n) * split
            local_rounds = _cdiv(groups, cus)
            local_efficiency = kernel.tile_m * kernel.tile_n // (kernel.tile_m + kernel.tile_n)  # C++ int division
            same_round = local_rounds == rounds
            if local_rounds < rounds or (same_round and (empty_cus > local_rounds * cus - groups
                                                         or local_efficiency > efficiency)):
                best, best_split, rounds = kernel, split, local_rounds
                empty_cus, efficiency = local_rounds * cus - groups, local_efficiency
    if best is None:
        raise RuntimeError("get_heuristic_kernel: cannot get heuristic kernel!")
    return best, best_split.bit_length() - 1


def _scale_offsets(rows: int, groups: int, row_stride: int, device) -> Tensor:
    """Byte offsets [rows, groups] of the scales in the e8m0_shuffle layout with the given row stride."""
    r = torch.arange(rows, device=device)[:, None]
    g = torch.arange(groups, device=device)[None, :]
    return ((r // 32) * 32 * row_stride + (g // 8) * 256 + (g % 4) * 64 + (r % 16) * 4 + ((g % 8) // 4) * 2
            + (r % 32) // 16)


def _weight_offsets(rows: int, k_bytes: int, row_stride: int, preshuffled: bool, device) -> Tensor:
    """Byte offsets [rows, k_bytes] of the packed weight: shuffle_weight's 16x16-byte tiles, or row-major."""
    n = torch.arange(rows, device=device)[:, None]
    kb = torch.arange(k_bytes, device=device)[None, :]
    if not preshuffled:
        return n * row_stride + kb
    return (n // 16) * 16 * row_stride + (kb // 16) * 256 + (n % 16) * 16 + kb % 16


def _dequantize(packed: Tensor, scales: Tensor) -> Tensor:
    """Bytes [R, K/2] (even element in the low nibble) and scale bytes [R, cdiv(K, 32)] -> exact float64 [R, K]."""
    codes = torch.stack((packed & 0xF, packed >> 4), dim=-1).reshape(packed.shape[0], -1)
    factors = decode_e8m0(scales).to(torch.float64).repeat_interleave(SCALE_GROUP, dim=1)
    return decode_e2m1(codes).to(torch.float64) * factors[:, : codes.shape[1]]


def _asm_product(A, B, A_scale, B_scale, kernel: AsmKernel, k_per_split: int, alpha, beta, bias) -> Tensor:
    """bf16 [M, N] that the ASM kernel computes (see the module docstring for the arithmetic)."""
    M, k_bytes = A.shape
    N, K = B.shape[0], 2 * k_bytes
    groups = _cdiv(K, SCALE_GROUP)
    device = A.device
    a_codes = _emulation.read_bytes(A, _weight_offsets(M, k_bytes, A.stride(0), False, device), "gemm_a4w4_asm A")
    b_codes = _emulation.read_bytes(B, _weight_offsets(N, k_bytes, B.stride(0), kernel.bpreshuffle, device),
                                    "gemm_a4w4_asm B")
    a_scales = _emulation.read_bytes(A_scale, _scale_offsets(M, groups, A_scale.stride(0), device),
                                     "gemm_a4w4_asm A_scale")
    b_scales = _emulation.read_bytes(B_scale, _scale_offsets(N, groups, B_scale.stride(0), device),
                                     "gemm_a4w4_asm B_scale")
    return asm_arithmetic(a_codes, a_scales, b_codes, b_scales, k_per_split, alpha, beta, bias)


def asm_arithmetic(a_codes, a_scales, b_codes, b_scales, k_per_split: int, alpha, beta, bias) -> Tensor:
    """bf16 [M, N] from the bytes the ASM kernel read: packed codes [M or N, K/2] and scale bytes
    [M or N, cdiv(K, 32)] in row order (the CPU model's launches of aiter's code objects read them too)."""
    a = _dequantize(a_codes, a_scales)
    b = _dequantize(b_codes, b_scales)
    K = a.shape[1]
    acc = None
    for start in range(0, K, k_per_split):
        partial = (a[:, start:start + k_per_split] @ b[:, start:start + k_per_split].T).to(torch.float32)
        acc = partial if acc is None else acc + partial
    acc = acc * torch.tensor(alpha, dtype=torch.float32)
    if bias is not None:
        acc = acc + torch.tensor(beta, dtype=torch.float32) * bias.to(torch.float32)
    return acc.to(torch.bfloat16)


def gemm_a4w4_asm(
    A: Tensor,  # [M, K/2] fp4x2
    B: Tensor,  # [N, K/2] fp4x2, shuffle_weight'ed for BpreShuffle kernels
    A_scale: Tensor,  # e8m0_shuffle'd, rows padded to 256
    B_scale: Tensor,  # e8m0_shuffle'd
    out: Tensor,  # [>= M, N] bf16
    kernelName: str,
    bias: Optional[Tensor] = None,
    alpha: Optional[float] = 1.0,
    beta: Optional[float] = 0.0,
    bpreshuffle: Optional[bool] = True,
    log2_k_split: Optional[int] = None,
) -> Tensor:
    """D = alpha * A @ B^T + beta * bias into out's first M rows (row stride out.stride(0)); returns out.

    kernelName "" lets aiter's heuristic choose; otherwise it must be a mangled name from ASM_KERNELS.
    Only the two split-K kernels read log2_k_split: K is cut into cdiv(K, ceil256(K / 2^log2)) pieces and
    out is zeroed first (all of it).
    """
    if out.dtype != torch.bfloat16:
        raise RuntimeError("gemm_a4w4_asm only support BFloat16 output now!")
    M, N, K = A.size(0), B.size(0), A.size(1) * 2
    if A.dtype != dtypes.fp4x2:
        raise RuntimeError(f"get_cfg Unsupported input_type:{A.dtype}, out_type:{out.dtype}")
    if kernelName:
        kernel = _BY_KEY.get(_emulation.ARCH + kernelName)
        if kernel is None:
            raise RuntimeError(f"gemm_a4w4_asm not find kernel {_emulation.ARCH + kernelName}")
        log2_split = log2_k_split or 0
    else:
        kernel, log2_split = _heuristic_kernel(M, N, log2_k_split, bpreshuffle)
    k_per_split = K
    if kernel.split_k:
        k_num = 1 << log2_split
        if K % k_num:
            raise RuntimeError("gemm_a4w4_asm Kdim % (1 << args.log2_k_split) != 0 !")
        if k_num > 1:
            out.zero_()
        k_per_split = _cdiv(K // k_num, 256) * 256
    result = _asm_product(A, B, A_scale, B_scale, kernel, k_per_split, alpha, beta, bias)
    # The kernel writes through the pointer with row stride out.stride(0) and unit column stride.
    out.as_strided((M, N), (out.stride(0), 1)).copy_(result)
    return out


def gemm_a4w4(
    A: Tensor,  # [M, K/2] fp4x2 (any leading dims)
    B: Tensor,  # [N, K/2] fp4x2, preshuffled
    A_scale: Tensor,
    B_scale: Tensor,
    bias: Optional[Tensor] = None,
    dtype: torch.dtype = dtypes.bf16,
    alpha: Optional[float] = 1.0,
    beta: Optional[float] = 0.0,
    bpreshuffle: Optional[bool] = True,
) -> Tensor:
    """[..., N] = A @ B^T through gemm_a4w4_asm, with the output allocated with rows padded to 32.

    aiter first looks the shape up in its tuned CSV; at the competition snapshot every row there names an
    ASM kernel with splitK 0, which computes what the heuristic path below computes (no split).
    """
    m = A.numel() // A.shape[-1]
    n = B.shape[0]
    k = A.shape[-1] * 2
    out = torch.empty(((m + 31) // 32 * 32, n), dtype=dtype, device=A.device)
    gemm_a4w4_asm(A.view(m, k // 2), B, A_scale, B_scale, out, "", bias, alpha, beta, bpreshuffle, log2_k_split=0)
    return out[:m].view(*A.shape[:-1], n)
