#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: one Triton kernel of its own, split-K with fp32 atomic adds.

Each program quantizes its A tile to MXFP4 in registers (portable integer arithmetic, no gfx950
instruction), undoes the B and B-scale shuffles on the loaded tiles, accumulates ``tl.dot_scaled`` in
fp32 over its K stripe, and adds its partial into a zeroed fp32 workspace with ``tl.atomic_add``; the
workspace is rounded to bf16 once at the end. A GPU adds the partials in the order they arrive, so two
calls may differ in the last bits: legal for the runner's check, and the suite must report it, not fail
it. (The wrong twin adds into the bf16 output directly: every add rounds to bf16.)
"""
import torch
import triton
import triton.language as tl
from task import input_t, output_t
from triton_e2m1 import e2m1_codes, pack_pairs

BLOCK_M, BLOCK_N, BLOCK_K = 32, 128, 256
SPLITS = 4


@triton.jit
def _quantize_tile(x, BM: tl.constexpr, BK: tl.constexpr):
    """bf16 [BM, BK] -> (e2m1 bytes [BM, BK/2], E8M0 bytes [BM, BK/32]) with the task's scale rule."""
    values = (x.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)  # exact
    groups = tl.reshape(values, (BM, BK // 32, 32))
    amax = tl.max(tl.abs(groups), axis=2)
    # amax rounded up to the next power of two when its mantissa is >= 1.75; that exponent minus 2 (the
    # largest e2m1 binade) is the scale's. An all-NaN group lands on exponent 255: the largest scale.
    exponent = (((amax.to(tl.uint32, bitcast=True) + 0x200000) >> 23) & 0xFF).to(tl.int32)
    scale_exponent = tl.where(exponent == 255, 127, tl.maximum(exponent - 129, -127))
    inverse = 127 - scale_exponent  # 2^-scale from its bits; 2^-127 is the one subnormal
    quant_scale = tl.where(inverse > 0, inverse << 23, 0x400000).to(tl.float32, bitcast=True)
    codes = e2m1_codes(groups * quant_scale[:, :, None])
    return pack_pairs(tl.reshape(codes, (BM, BK)), BM, BK), (scale_exponent + 127).to(tl.uint8)


@triton.jit
def _split_k_gemm(a_ptr, w_ptr, ws_ptr, c_ptr, M, N, K, STRIPE, WS_ROWS,
                  stride_am, stride_ak, stride_w16, stride_ws32, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c += quant(a) @ dequant(w)^T over K stripe program_id(2), added atomically in c's dtype; w is
    shuffle_weight(B_q) as (N//16, 8K) bytes, ws is e8m0_shuffle(B_scale) as (WS_ROWS = N_pad//32, 32*cols)
    bytes. BN % 32 == 0, BK % 256 == 0, STRIPE % BK == 0. Every load is masked to its tensor: a tile wider
    than N must not read past B (the H200 faulted on it; the CPU interpreter reads whatever lies there)."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    start = tl.program_id(2) * STRIPE
    a_k = tl.arange(0, BK)
    w_j = tl.arange(0, BK // 2 * 16)  # BK/2 bytes of 16 rows, as 16x16-byte tiles
    ws_j = tl.arange(0, BK)  # BK/32 groups of 32 rows, as 8x32-byte tiles
    groups = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(start, tl.minimum(start + STRIPE, K), BK):
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + a_k)[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (k0 + a_k[None, :] < K), other=0.0)
        a_q, a_scale = _quantize_tile(a, BM, BK)

        w_rows = tl.program_id(1) * (BN // 16) + tl.arange(0, BN // 16)
        w = tl.load(w_ptr + w_rows[:, None] * stride_w16 + (k0 // 2 * 16 + w_j)[None, :],
                    mask=(w_rows[:, None] < N // 16) & (w_j[None, :] < (K - k0) // 2 * 16), other=0)
        # [n//16, kb//16, n%16, kb%16] -> [n, kb]
        w = tl.reshape(tl.permute(tl.reshape(w, (BN // 16, BK // 32, 16, 16)), (0, 2, 1, 3)), (BN, BK // 2))

        ws_rows = tl.program_id(1) * (BN // 32) + tl.arange(0, BN // 32)
        ws = tl.load(ws_ptr + ws_rows[:, None] * stride_ws32 + (k0 + ws_j)[None, :],
                     mask=ws_rows[:, None] < WS_ROWS, other=127)
        # [r//32, g//8, g%4, r%16, (g%8)//4, (r%32)//16] -> [r, g]
        ws = tl.reshape(tl.permute(tl.reshape(ws, (BN // 32, BK // 256, 4, 16, 2, 2)), (0, 5, 3, 1, 4, 2)),
                        (BN, BK // 32))
        ws = tl.where(k0 // 32 + groups[None, :] < K // 32, ws, 127)  # B's scale padding is uninitialised

        acc = tl.dot_scaled(a_q, a_scale, "e2m1", tl.trans(w), ws, "e2m1", acc)
    tl.atomic_add(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
                  mask=(rows[:, None] < M) & (cols[None, :] < N))


def gemm(A: torch.Tensor, B_shuffle: torch.Tensor, B_scale_sh: torch.Tensor, accumulate=torch.float32):
    m, k = A.shape
    n = B_shuffle.shape[0]
    w = B_shuffle.view(torch.uint8).reshape(n // 16, k * 8)
    ws = B_scale_sh.view(torch.uint8).reshape(B_scale_sh.shape[0] // 32, -1)
    c = torch.zeros((m, n), dtype=accumulate, device=A.device)
    stripe = triton.cdiv(triton.cdiv(k, SPLITS), BLOCK_K) * BLOCK_K
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N), triton.cdiv(k, stripe))
    _split_k_gemm[grid](A, w, ws, c, m, n, k, stripe, ws.shape[0], A.stride(0), A.stride(1), w.stride(0), ws.stride(0),
                        c.stride(0), c.stride(1), BLOCK_M, BLOCK_N, BLOCK_K)
    return c.to(torch.bfloat16)


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    return gemm(A, B_shuffle, B_scale_sh)
