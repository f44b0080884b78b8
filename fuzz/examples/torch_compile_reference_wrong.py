#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, wrong twin of torch_compile_reference: the compiled function drops the last
32-element group of K from both operands, so every output misses those terms. The runner fails it."""
import torch

from correct_reference_style import decode, quantize_activations
from task import input_t, output_t
from torch_compile_reference import run


def gemm_without_last_group(A: torch.Tensor, b_values: torch.Tensor) -> torch.Tensor:
    codes, exponents = quantize_activations(A)
    return (decode(codes, exponents)[:, :-32] @ b_values[:, :-32].T).to(torch.bfloat16)


compiled_gemm = torch.compile(gemm_without_last_group, dynamic=False)


def custom_kernel(data: input_t) -> output_t:
    return run(data, compiled_gemm)
