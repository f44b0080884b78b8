#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: the pure-PyTorch reference of correct_reference_style, compiled with
``torch.compile`` (inductor, the default backend), output allocated on ``device="cuda"``. Whatever the
tier's stand-ins do inside Dynamo's tracing must not turn into a FAIL of this file."""
import torch

from correct_reference_style import dequantize_weights, gemm
from task import input_t, output_t

compiled_gemm = torch.compile(gemm, dynamic=False)


def run(data: input_t, compiled) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    out = torch.empty((A.shape[0], B_q.shape[0]), dtype=torch.bfloat16, device="cuda")
    out.copy_(compiled(A, dequantize_weights(B_q, B_scale_sh)))
    return out


def custom_kernel(data: input_t) -> output_t:
    return run(data, compiled_gemm)
