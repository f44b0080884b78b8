#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission: a HIP kernel of its own, built at import with load_inline, with a fallback.

The kernel quantizes A to MXFP4, one thread per 1x32 block: aiter's scale rule and e2m1
round-to-nearest-even with saturation, by the same fp32 bit operations as
correct_reference_style.quantize_activations (codes one per byte, scale exponents as int32). The
product is fp32 PyTorch on the dequantized operands, rounded once to bf16. The source uses CUDA names,
as most load_inline submissions do: on ROCm, torch hipifies it before hipcc builds it.

Where the build fails (no ROCm or CUDA toolchain) the PyTorch quantizer serves instead; ``QUANTIZER``
says which one this process uses. mxfp4-fuzz builds the kernel for gfx950 (verdict builds_gfx950: errors,
registers, spills, occupancy), and on its CPU tier runs the kernel itself on the CPU model of gfx950
(docs/hip_cpu.md); without clang++ there, the fallback is what gets fuzzed.
"""
import torch
from torch.utils.cpp_extension import load_inline

from correct_reference_style import decode, dequantize_weights, quantize_activations
from task import input_t, output_t

QUANT_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <stdint.h>

__device__ __forceinline__ float pow2(int e) {  // 2^e exactly, e in [-127, 127] (2^-127 is subnormal)
    return e >= -126 ? __uint_as_float((uint32_t)(e + 127) << 23) : __uint_as_float(0x00400000u);
}

// One thread per 1x32 block of A (bf16 bits, row-major, K % 32 == 0).
__global__ void mxfp4_quant_kernel(const uint16_t* __restrict__ a, uint8_t* __restrict__ codes,
                                   int32_t* __restrict__ exponents, long long blocks) {
    const long long block = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (block >= blocks) return;
    const uint16_t* x = a + block * 32;
    float amax = 0.0f;
    int nans = 0;
    for (int i = 0; i < 32; ++i) {  // the max ignores NaN unless every element is NaN
        const float v = __uint_as_float((uint32_t)x[i] << 16);
        if (v != v) ++nans; else amax = fmaxf(amax, fabsf(v));
    }
    const uint32_t amax_bits = nans == 32 ? 0x7FC00000u : __float_as_uint(amax);
    // amax with mantissa >= 1.75 rounds up a binade; scale exponent = that exponent - 2, in [-127, 127]
    const int biased = (int)(((amax_bits + 0x200000u) & 0xFF800000u) >> 23);
    const int exponent = biased == 255 ? 127 : max(biased - 129, -127);
    exponents[block] = exponent;
    const float scale = pow2(-exponent);
    for (int i = 0; i < 32; ++i) {
        const uint32_t xb = (uint32_t)x[i] << 16;
        const float q = __uint_as_float(xb) * scale;
        uint32_t b = q != q ? xb : __float_as_uint(q);  // a NaN's code comes from its own payload
        const uint32_t sign = b & 0x80000000u;
        b ^= sign;
        const float f = __uint_as_float(b);
        uint32_t code;
        if (f >= 6.0f) {
            code = 7;  // saturate
        } else if (f < 1.0f) {  // adding 2^22 rounds to a multiple of 0.5, ties to even
            code = (__float_as_uint(f + 4194304.0f) - 0x4A800000u) & 0xFFu;
        } else {  // one mantissa bit, ties to even, exponent rebiased; NaN lands here too (quiet NaN -> 3)
            code = ((b - (126u << 23) + 0x1FFFFFu + ((b >> 22) & 1u)) >> 22) & 0xFFu;
        }
        codes[block * 32 + i] = (uint8_t)(code | (sign >> 28));
    }
}

std::vector<torch::Tensor> quantize(torch::Tensor a) {
    TORCH_CHECK(a.scalar_type() == torch::kBFloat16 && a.dim() == 2 && a.size(1) % 32 == 0,
                "quantize: A must be a bf16 [M, K] tensor with K % 32 == 0");
    const auto x = a.contiguous();
    auto codes = torch::empty({x.size(0), x.size(1)}, x.options().dtype(torch::kUInt8));
    auto exponents = torch::empty({x.size(0), x.size(1) / 32}, x.options().dtype(torch::kInt32));
    const long long blocks = x.numel() / 32;
    if (blocks > 0) {
        const int threads = 256;
        mxfp4_quant_kernel<<<(unsigned)((blocks + threads - 1) / threads), threads, 0,
                             at::cuda::getCurrentCUDAStream()>>>(
            reinterpret_cast<const uint16_t*>(x.data_ptr()), codes.data_ptr<uint8_t>(),
            exponents.data_ptr<int32_t>(), blocks);
    }
    return {codes, exponents};
}
"""

try:
    _extension = load_inline("mxfp4_quant_hip", cpp_sources="std::vector<torch::Tensor> quantize(torch::Tensor a);",
                             cuda_sources=QUANT_SOURCE, functions=["quantize"], extra_cuda_cflags=["-O3"])
    QUANTIZER = "hip"
except Exception as error:  # no ROCm (or CUDA) toolchain in this process: the PyTorch quantizer serves
    _extension, QUANTIZER = None, f"pytorch ({type(error).__name__})"


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    if _extension is not None:
        codes, exponents = _extension.quantize(A)
    else:
        codes, exponents = quantize_activations(A)
    return (decode(codes, exponents) @ dequantize_weights(B_q, B_scale_sh).T).to(torch.bfloat16)
