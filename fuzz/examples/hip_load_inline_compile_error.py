#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission: a HIP kernel with a compile error, built at import with load_inline, with a
fallback that hides it.

The kernel rounds the fp32 product to bf16 (round to nearest even, NaN to the canonical quiet NaN), but
one line still uses the parameter's old name (``numel`` for ``n``). Wherever the build fails the file
falls back to PyTorch's conversion, so every numerical check passes, on the runner too: the HIP path
never runs and the submission is slower than its author thinks. mxfp4-fuzz builds the source for gfx950
and fails verdict builds_gfx950 with the error at this file's line.
"""
import torch
from torch.utils.cpp_extension import load_inline

from correct_reference_style import decode, dequantize_weights, quantize_activations
from task import input_t, output_t

ROUND_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <stdint.h>

__global__ void round_to_bf16_kernel(const float* __restrict__ x, uint16_t* __restrict__ y, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= numel) return;
    const uint32_t w = __float_as_uint(x[i]);
    y[i] = (w & 0x7FFFFFFFu) > 0x7F800000u ? (uint16_t)0x7FC0u : (uint16_t)((w + 0x7FFFu + ((w >> 16) & 1u)) >> 16);
}

torch::Tensor round_to_bf16(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "round_to_bf16: x must be float32");
    const auto xc = x.contiguous();
    auto y = torch::empty(xc.sizes(), xc.options().dtype(torch::kBFloat16));
    const long long n = xc.numel();
    if (n > 0) {
        round_to_bf16_kernel<<<(unsigned)((n + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
            xc.data_ptr<float>(), reinterpret_cast<uint16_t*>(y.data_ptr()), n);
    }
    return y;
}
"""

try:
    _extension = load_inline("round_to_bf16_hip", cpp_sources="torch::Tensor round_to_bf16(torch::Tensor x);",
                             cuda_sources=ROUND_SOURCE, functions=["round_to_bf16"], extra_cuda_cflags=["-O3"])
except Exception:  # the build failed: PyTorch's conversion (also round to nearest even) serves
    _extension = None


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    product = decode(*quantize_activations(A)) @ dequantize_weights(B_q, B_scale_sh).T
    if _extension is not None and product.is_cuda:
        return _extension.round_to_bf16(product)
    return product.to(torch.bfloat16)
