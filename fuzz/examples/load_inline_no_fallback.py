#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission that needs ROCm: it builds its HIP kernel at import with ``load_inline`` and
has no fallback. On the runner that is fine; on a machine without ROCm it cannot load, which says
nothing about its correctness: every verdict is NOT RUN ("needs hipcc / a ROCm GPU"), never FAIL, and
``mxfp4-fuzz check`` exits with 6 (inconclusive), not 1.
"""
import torch
from torch.utils.cpp_extension import load_inline

from task import input_t, output_t

HIP_SOURCE = r"""
#include <hip/hip_runtime.h>
#include <torch/extension.h>
torch::Tensor gemm(torch::Tensor a, torch::Tensor b) { return torch::matmul(a, b.t()); }
"""

_EXT = load_inline("mxfp4_no_fallback", cpp_sources="torch::Tensor gemm(torch::Tensor a, torch::Tensor b);",
                   cuda_sources=HIP_SOURCE, functions=["gemm"], extra_cuda_cflags=["--offload-arch=gfx950"])


def custom_kernel(data: input_t) -> output_t:
    A, B = data[0], data[1]
    return _EXT.gemm(A.float(), B.float()).to(torch.bfloat16)
