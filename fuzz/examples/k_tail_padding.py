#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: pads K up to a multiple of 256 (the tile its kernel would want) in
zero-filled buffers, so the padding columns add nothing. Its twin k_tail_padding_uninitialised takes the
same buffer from ``torch.empty`` and never writes the padding."""
import torch

from correct_reference_style import decode, dequantize_weights, quantize_activations
from task import input_t, output_t

TILE_K = 256


def padded_gemm(data: input_t, allocate) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    m, k = A.shape
    padded_k = -(-k // TILE_K) * TILE_K
    a = allocate((m, padded_k), dtype=torch.bfloat16, device=A.device)
    a[:, :k] = A
    b = torch.zeros((B_q.shape[0], padded_k), dtype=torch.float32, device=A.device)
    b[:, :k] = dequantize_weights(B_q, B_scale_sh)
    codes, exponents = quantize_activations(a)
    return (decode(codes, exponents) @ b.T).to(torch.bfloat16)


def custom_kernel(data: input_t) -> output_t:
    return padded_gemm(data, torch.zeros)
