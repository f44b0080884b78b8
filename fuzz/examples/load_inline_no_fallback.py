#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission that needs ROCm: it builds its HIP at import with ``load_inline`` and has no
fallback, and its HIP uses inline gfx950 asm, which the CPU model of gfx950 does not run. On the runner
that is fine; here it cannot load, which says nothing about its correctness: every verdict is NOT RUN
("the CPU model of gfx950 lacks ... inline asm"), never FAIL, and ``mxfp4-fuzz check`` exits with 6
(inconclusive), not 1. Its numbers are the dequantized operands' fp32 product, rounded once to bf16.
"""
import torch
from torch.utils.cpp_extension import load_inline

from correct_reference_style import decode, dequantize_weights, quantize_activations
from task import input_t, output_t

HIP_SOURCE = r"""
#include <hip/hip_runtime.h>
#include <torch/extension.h>
__global__ void settle() { asm volatile("s_nop 0"); }
torch::Tensor gemm(torch::Tensor a, torch::Tensor b) {
    settle<<<1, 64>>>();
    return torch::matmul(a, b.t());
}
"""

_EXT = load_inline("mxfp4_no_fallback", cpp_sources="torch::Tensor gemm(torch::Tensor a, torch::Tensor b);",
                   cuda_sources=HIP_SOURCE, functions=["gemm"], extra_cuda_cflags=["--offload-arch=gfx950"])


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    a = decode(*quantize_activations(A))
    return _EXT.gemm(a, dequantize_weights(B_q, B_scale_sh)).to(torch.bfloat16)
