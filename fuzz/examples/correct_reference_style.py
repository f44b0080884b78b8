#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: pure PyTorch, dequantize both operands and multiply in fp32.

A is quantized per 1x32 block exactly like aiter's dynamic_mxfp4_quant (even scale rule, e2m1
round-to-nearest-even with saturation, written with the same fp32 bit operations); B comes from B_q
and the unshuffled B_scale_sh. Every product of two MXFP4 values is exact in fp32, the sum is fp32,
and the one conversion to bf16 rounds to nearest even. Fast on a CPU; slow on a GPU (it is a
reference, not a kernel). The hazard examples beside it import these helpers so that only their
hazard differs.
"""
import torch

from task import input_t, output_t

E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


def _f32_bits(x: torch.Tensor) -> torch.Tensor:
    return x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF


def _f32_from_bits(b: torch.Tensor) -> torch.Tensor:
    b = b & 0xFFFFFFFF
    return torch.where(b >= 2**31, b - 2**32, b).to(torch.int32).view(torch.float32)


def quantize_activations(A: torch.Tensor):
    """bf16 [M, K] -> (e2m1 codes uint8 [M, K], scale exponents int [M, K/32]), aiter's bit operations."""
    m, k = A.shape
    x = A.float().reshape(m, k // 32, 32)
    magnitude = x.abs()
    nan = torch.isnan(magnitude)
    amax = torch.where(nan, torch.zeros_like(magnitude), magnitude).amax(dim=-1)  # max ignores NaN ...
    amax = torch.where(nan.all(dim=-1), torch.full_like(amax, float("nan")), amax)  # ... unless all are NaN
    rounded = _f32_from_bits((_f32_bits(amax) + 0x200000) & 0xFF800000)  # mantissa >= 1.75 rounds up
    exponent = (torch.floor(torch.log2(rounded)) - 2).clamp(-127, 127)
    qx = x * torch.exp2(-exponent)[..., None]
    # A NaN's code comes from its payload, which the multiply keeps on a CPU (and in aiter's kernel);
    # CUDA returns a canonical NaN instead, so take NaN bits from x itself.
    b = torch.where(torch.isnan(qx), _f32_bits(x), _f32_bits(qx))
    sign = b & 0x80000000
    b = b ^ sign
    f = _f32_from_bits(b)
    saturate = f >= 6
    denormal = ~saturate & (f < 1)
    # |qx| < 1: adding 2^22 rounds to a multiple of 0.5 (ties to even); the low bits are the code
    den = (_f32_bits(f + 4194304.0) - 0x4A800000) & 0xFF
    # 1 <= |qx| < 6: round the mantissa to one bit, ties to even, and rebias the exponent
    nor = ((b + ((1 - 127) << 23) + 0x1FFFFF + ((b >> 22) & 1)) >> 22) & 0xFF
    code = torch.where(saturate, torch.full_like(b, 7), torch.where(denormal, den, nor)) | (sign >> 28)
    return code.reshape(m, k).to(torch.uint8), exponent.to(torch.int64)


def decode(codes: torch.Tensor, exponents: torch.Tensor) -> torch.Tensor:
    """e2m1 codes [R, K] and scale exponents [R, K/32] -> fp32 values."""
    table = torch.tensor(E2M1_VALUES, dtype=torch.float32, device=codes.device)
    scale = torch.exp2(exponents.float()).repeat_interleave(32, dim=1)
    return table[codes.long()] * scale


def unshuffle_scales(scale_sh: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    """Inverse of e8m0_shuffle: [ceil256(rows), ceil8(cols)] bytes -> [rows, cols] bytes."""
    padded_rows, padded_cols = scale_sh.shape
    tiles = scale_sh.view(torch.uint8).reshape(padded_rows // 32, padded_cols // 8, 4, 16, 2, 2)
    return tiles.permute(0, 5, 3, 1, 4, 2).reshape(padded_rows, padded_cols)[:rows, :cols]


def dequantize_weights(B_q: torch.Tensor, B_scale_sh: torch.Tensor) -> torch.Tensor:
    """B's fp32 values [N, K] from the packed codes (low nibble first) and the shuffled scales."""
    packed = B_q.view(torch.uint8)
    n, k = packed.shape[0], packed.shape[1] * 2
    codes = torch.stack((packed & 0xF, packed >> 4), dim=-1).reshape(n, k)
    scale_bytes = unshuffle_scales(B_scale_sh, n, k // 32).to(torch.int64)
    return decode(codes, scale_bytes - 127)


def gemm(A: torch.Tensor, b_values: torch.Tensor) -> torch.Tensor:
    """bf16 [M, N] = round_to_nearest_even(dequant(quant(A)) @ b_values^T), accumulated in fp32."""
    codes, exponents = quantize_activations(A)
    return (decode(codes, exponents) @ b_values.T).to(torch.bfloat16)


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    return gemm(A, dequantize_weights(B_q, B_scale_sh))
