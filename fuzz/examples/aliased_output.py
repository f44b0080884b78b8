#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Hazard example: one output buffer per shape, returned by every call.

Saves an allocation per call, and every output is right when it is returned; but the tensor a caller
got from call 1 is overwritten by call 2. The official harness checks each output before the next
call and cannot see it. Expected verdicts: aliasing fails, everything else passes.
"""
import torch

from correct_reference_style import dequantize_weights, gemm  # the arithmetic; only the buffer differs
from task import input_t, output_t

_out = {}  # (M, N) -> the output buffer


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    y = gemm(A, dequantize_weights(B_q, B_scale_sh))
    out = _out.setdefault(tuple(y.shape), torch.empty_like(y))
    out.copy_(y)
    return out
