#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission: a HIP kernel that spills registers on gfx950, built at import with load_inline,
with a fallback.

The same MXFP4 quantizer of A as hip_load_inline_quant.py, but each thread quantizes eight 1x32 blocks
(a 256-wide K tile) and holds all 256 values in registers, and the kernel asks for
``__launch_bounds__(256, 8)``. In CUDA the 8 means "at least 8 resident blocks per SM"; in HIP it
means "at least 8 waves per SIMD", which caps each wave at 64 VGPRs, so the 256 live values spill to
scratch memory. The results are still right; the kernel is slow. mxfp4-fuzz reports the spill
(verdict builds_gfx950: REPORTED, or FAIL with --strict-resources) and fuzzes the PyTorch fallback,
which is what runs where the build fails (no ROCm, e.g. its CPU tier).
"""
import torch
from torch.utils.cpp_extension import load_inline

from correct_reference_style import decode, dequantize_weights, quantize_activations
from task import input_t, output_t

TILE_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <stdint.h>

constexpr int BLOCKS_PER_THREAD = 8;  // one 256-wide K tile per thread, every value kept in registers

__device__ __forceinline__ float pow2(int e) {  // 2^e exactly, e in [-127, 127]
    return e >= -126 ? __uint_as_float((uint32_t)(e + 127) << 23) : __uint_as_float(0x00400000u);
}

__device__ __forceinline__ uint32_t e2m1_code(uint32_t xb, float scale) {
    const float q = __uint_as_float(xb) * scale;
    uint32_t b = q != q ? xb : __float_as_uint(q);
    const uint32_t sign = b & 0x80000000u;
    b ^= sign;
    const float f = __uint_as_float(b);
    uint32_t code;
    if (f >= 6.0f) code = 7;
    else if (f < 1.0f) code = (__float_as_uint(f + 4194304.0f) - 0x4A800000u) & 0xFFu;
    else code = ((b - (126u << 23) + 0x1FFFFFu + ((b >> 22) & 1u)) >> 22) & 0xFFu;
    return code | (sign >> 28);
}

__global__ void __launch_bounds__(256, 8)
mxfp4_quant_tile_kernel(const uint16_t* __restrict__ a, uint8_t* __restrict__ codes,
                        int32_t* __restrict__ exponents, long long blocks) {
    const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * BLOCKS_PER_THREAD;
    if (first >= blocks) return;
    uint32_t bits[32 * BLOCKS_PER_THREAD];
#pragma unroll
    for (int i = 0; i < 32 * BLOCKS_PER_THREAD; ++i)
        bits[i] = first + i / 32 < blocks ? (uint32_t)a[first * 32 + i] << 16 : 0u;
#pragma unroll
    for (int b = 0; b < BLOCKS_PER_THREAD; ++b) {
        if (first + b >= blocks) break;
        float amax = 0.0f;
        int nans = 0;
#pragma unroll
        for (int i = 0; i < 32; ++i) {
            const float v = __uint_as_float(bits[b * 32 + i]);
            if (v != v) ++nans; else amax = fmaxf(amax, fabsf(v));
        }
        const uint32_t amax_bits = nans == 32 ? 0x7FC00000u : __float_as_uint(amax);
        const int biased = (int)(((amax_bits + 0x200000u) & 0xFF800000u) >> 23);
        const int exponent = biased == 255 ? 127 : max(biased - 129, -127);
        exponents[first + b] = exponent;
        const float scale = pow2(-exponent);
#pragma unroll
        for (int i = 0; i < 32; ++i) codes[(first + b) * 32 + i] = (uint8_t)e2m1_code(bits[b * 32 + i], scale);
    }
}

std::vector<torch::Tensor> quantize(torch::Tensor a) {
    TORCH_CHECK(a.scalar_type() == torch::kBFloat16 && a.dim() == 2 && a.size(1) % 32 == 0,
                "quantize: A must be a bf16 [M, K] tensor with K % 32 == 0");
    const auto x = a.contiguous();
    auto codes = torch::empty({x.size(0), x.size(1)}, x.options().dtype(torch::kUInt8));
    auto exponents = torch::empty({x.size(0), x.size(1) / 32}, x.options().dtype(torch::kInt32));
    const long long blocks = x.numel() / 32;
    const long long threads_needed = (blocks + BLOCKS_PER_THREAD - 1) / BLOCKS_PER_THREAD;
    if (threads_needed > 0) {
        mxfp4_quant_tile_kernel<<<(unsigned)((threads_needed + 255) / 256), 256, 0,
                                  at::cuda::getCurrentCUDAStream()>>>(
            reinterpret_cast<const uint16_t*>(x.data_ptr()), codes.data_ptr<uint8_t>(),
            exponents.data_ptr<int32_t>(), blocks);
    }
    return {codes, exponents};
}
"""

try:
    _extension = load_inline("mxfp4_quant_tile_hip", cpp_sources="std::vector<torch::Tensor> quantize(torch::Tensor a);",
                             cuda_sources=TILE_SOURCE, functions=["quantize"], extra_cuda_cflags=["-O3"])
    QUANTIZER = "hip"
except Exception as error:  # no ROCm (or CUDA) toolchain in this process: the PyTorch quantizer serves
    _extension, QUANTIZER = None, f"pytorch ({type(error).__name__})"


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    if _extension is not None and A.is_cuda:
        codes, exponents = _extension.quantize(A)
    else:
        codes, exponents = quantize_activations(A)
    return (decode(codes, exponents) @ dequantize_weights(B_q, B_scale_sh).T).to(torch.bfloat16)
