#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: its own Triton quantizer for A with aiter's scale idiom, then aiter's
e8m0_shuffle and gemm_a4w4 (the task reference's GEMM).

The scale byte is ``exponent.to(tl.uint8) + 127`` with ``exponent`` a float in [-127, 127], as aiter's
``_mxfp4_quant_op`` writes it. A negative float converted to uint8 is poison in LLVM; gfx950's Triton
emits ``v_cvt_i32_f32`` and keeps the low byte (-5.0 -> 251, + 127 -> 122), which is what the runner
computes. Compiled Triton on NVIDIA saturates instead (-5.0 -> 0): the suite must model gfx950 there,
not fail this file.
"""
import torch
import triton
import triton.language as tl
import aiter
from aiter import dtypes
from aiter.utility.fp4_utils import e8m0_shuffle
from task import input_t, output_t
from triton_e2m1 import e2m1_codes, pack_pairs

BLOCK_M, BLOCK_K = 8, 256
EXPONENT_OFFSET = 2  # e2m1's largest binade: the scale is 2^(floor(log2(amax)) - 2)


@triton.jit
def _quantize_a(a_ptr, q_ptr, s_ptr, M, K, stride_am, stride_qm, stride_sm,
                BM: tl.constexpr, BK: tl.constexpr, OFFSET: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    ks = tl.program_id(1) * BK + tl.arange(0, BK)
    a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K),
                other=0.0)
    values = tl.reshape(a.to(tl.float32), (BM, BK // 32, 32))
    amax = tl.max(tl.abs(values), axis=2)
    rounded = ((amax.to(tl.uint32, bitcast=True) + 0x200000) & 0xFF800000).to(tl.float32, bitcast=True)
    exponent = tl.minimum(tl.maximum(tl.floor(tl.log2(rounded)) - OFFSET, -127.0), 127.0)
    scale_byte = exponent.to(tl.uint8) + 127  # aiter's idiom: relies on gfx950's conversion of negatives
    inverse = 127 - exponent.to(tl.int32)  # 2^-exponent from its bits; 2^-127 is the one subnormal
    quant_scale = tl.where(inverse > 0, inverse << 23, 0x400000).to(tl.float32, bitcast=True)
    codes = e2m1_codes(values * quant_scale[:, :, None])
    packed = pack_pairs(tl.reshape(codes, (BM, BK)), BM, BK)
    half = tl.program_id(1) * (BK // 2) + tl.arange(0, BK // 2)
    tl.store(q_ptr + rows[:, None] * stride_qm + half[None, :], packed,
             mask=(rows[:, None] < M) & (half[None, :] < K // 2))
    groups = tl.program_id(1) * (BK // 32) + tl.arange(0, BK // 32)
    tl.store(s_ptr + rows[:, None] * stride_sm + groups[None, :], scale_byte,
             mask=(rows[:, None] < M) & (groups[None, :] < K // 32))


def quantize_a(A: torch.Tensor, offset: int = EXPONENT_OFFSET):
    m, k = A.shape
    q = torch.empty((m, k // 2), dtype=torch.uint8, device=A.device)
    s = torch.empty((m, k // 32), dtype=torch.uint8, device=A.device)
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(k, BLOCK_K))
    _quantize_a[grid](A, q, s, m, k, A.stride(0), q.stride(0), s.stride(0), BLOCK_M, BLOCK_K, offset)
    return q, s


def gemm(A: torch.Tensor, B_shuffle: torch.Tensor, B_scale_sh: torch.Tensor, offset: int = EXPONENT_OFFSET):
    a_q, a_scale = quantize_a(A, offset)
    return aiter.gemm_a4w4(a_q.view(dtypes.fp4x2), B_shuffle, e8m0_shuffle(a_scale).view(dtypes.fp8_e8m0),
                           B_scale_sh, dtype=dtypes.bf16, bpreshuffle=True)


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    return gemm(A.contiguous(), B_shuffle, B_scale_sh)
