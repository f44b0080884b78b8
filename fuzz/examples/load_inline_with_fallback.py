#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: builds a HIP kernel at import with ``load_inline`` and falls back to
PyTorch when the build fails (as on a machine without ROCm). On the CPU tier the build raises at once
and the fallback serves; the report says so.
"""
import torch

from correct_reference_style import dequantize_weights, gemm
from task import input_t, output_t

HIP_SOURCE = r"""
#include <hip/hip_runtime.h>
__global__ void scale_rows(float* x, const float* s, int cols) {
    int row = blockIdx.x, col = threadIdx.x + blockIdx.y * blockDim.x;
    if (col < cols) x[row * cols + col] *= s[row];
}
"""

try:
    from torch.utils.cpp_extension import load_inline

    _EXT = load_inline("mxfp4_scale_rows", cpp_sources="", cuda_sources=HIP_SOURCE,
                       extra_cuda_cflags=["--offload-arch=gfx950", "-O3"])
except Exception:  # no hipcc / no GPU: the PyTorch path below serves
    _EXT = None


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    return gemm(A, dequantize_weights(B_q, B_scale_sh))
