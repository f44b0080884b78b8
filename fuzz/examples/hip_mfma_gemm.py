#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: a HIP kernel on gfx950's scaled MFMA, built at import with hipcc and
called through ctypes (the pattern of real hipcc files). A is quantized to MXFP4 in PyTorch; the kernel
multiplies the packed fp4 codes with ``__builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4`` (both operands
e2m1, one E8M0 scale per 32 K), four waves per block sharing A's tile through LDS, one 32 x 32 output
tile per wave. Its twins (hip_mfma_gemm_*_wrong.py) each break one thing.

Layouts (CDNA4, wave64): a lane holds 32 consecutive K of one row of A (row lane % 32, K block lane / 32)
and likewise of one column of B, with that row's (column's) scale byte; accumulator element i of a lane is
row 8 (i / 4) + 4 (lane / 32) + i % 4, column lane % 32.
"""
import ctypes
import os
import subprocess
import tempfile

import torch

from correct_reference_style import quantize_activations, unshuffle_scales
from task import input_t, output_t

SOURCE = r"""
#include <hip/hip_runtime.h>
#include <stdint.h>

typedef int v8i __attribute__((ext_vector_type(8)));
typedef float v16f __attribute__((ext_vector_type(16)));

#ifndef B_HALF_SWAP
#define B_HALF_SWAP 0
#endif
#ifndef K_STEP_WHOLE
#define K_STEP_WHOLE 64
#endif
#ifndef BARRIER_AFTER_LDS
#define BARRIER_AFTER_LDS 1
#endif
#ifndef WAVE_LOCAL_A
#define WAVE_LOCAL_A 0
#endif

// bf16 bits of x, rounded to nearest even
__device__ inline uint16_t to_bf16(float x) {
    uint32_t u = __float_as_uint(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

// 256 threads: 4 waves, a 32 x 128 output tile; wave w computes columns 32w .. 32w + 31 of it.
__global__ void mxfp4_gemm(const uint8_t* a_q, const uint8_t* a_scale, const uint8_t* b_q,
                           const uint8_t* b_scale, uint16_t* out, int M, int N, int K) {
    __shared__ uint32_t a_tile[32 * 8];  // 32 rows x 64 K of fp4 codes: 32 bytes a row
#if WAVE_LOCAL_A
    __shared__ uint32_t wave_tile[4][32 * 8];  // each wave's own copy of the tile
#endif
    const int t = threadIdx.x, wave = t / 64, lane = t % 64;
    const int row0 = blockIdx.y * 32, col0 = blockIdx.x * 128 + wave * 32;
    const int kb = K / 32;
    const int k_end = K / K_STEP_WHOLE * K_STEP_WHOLE;
    v16f acc = {};
    for (int k = 0; k < k_end; k += 64) {
#if WAVE_LOCAL_A
        // Each lane stages 4 words of its wave's own copy, with no barrier before the reads: the lanes of a
        // wave run in lockstep on gfx950, so every lane's LDS writes land before any lane's reads.
        for (int i = 0; i < 4; ++i) {
            int word = lane * 4 + i, r = word / 8, byte = (word % 8) * 4, m = row0 + r, kk = k + byte * 2;
            uint32_t value = 0;
            if (m < M && kk < K) value = *(const uint32_t*)(a_q + (size_t)m * (K / 2) + kk / 2);
            wave_tile[wave][word] = value;
        }
        const uint32_t* tile = wave_tile[wave];
#else
        const uint32_t* tile = a_tile;
#endif
        {   // every thread stages 4 bytes of A's 32 x 64 tile (zero past M or K)
            int r = t / 8, byte = (t % 8) * 4, m = row0 + r, kk = k + byte * 2;
            uint32_t word = 0;
            if (m < M && kk < K) word = *(const uint32_t*)(a_q + (size_t)m * (K / 2) + kk / 2);
            a_tile[t] = word;
        }
#if BARRIER_AFTER_LDS
        __syncthreads();
#endif
        const int half = lane / 32;
        const int b_half = B_HALF_SWAP ? 1 - half : half;
        v8i a = {}, b = {};
        int sa = 127, sb = 127;
        const int m = row0 + lane % 32, n = col0 + lane % 32;
        const int ka = k + 32 * half, kbh = k + 32 * b_half;
        for (int i = 0; i < 4; ++i) a[i] = (int)tile[(lane % 32) * 8 + half * 4 + i];
        if (m < M && ka < K) sa = a_scale[(size_t)m * kb + ka / 32];
        if (n < N && kbh < K) {
            const uint32_t* src = (const uint32_t*)(b_q + (size_t)n * (K / 2) + kbh / 2);
            for (int i = 0; i < 4; ++i) b[i] = (int)src[i];
            sb = b_scale[(size_t)n * kb + kbh / 32];
        }
        acc = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(a, b, acc, 4, 4, 0, sa, 0, sb);
        __syncthreads();  // before the next tile overwrites a_tile
    }
    for (int i = 0; i < 16; ++i) {
        int r = row0 + 8 * (i / 4) + 4 * (lane / 32) + i % 4, c = col0 + lane % 32;
        if (r < M && c < N) out[(size_t)r * N + c] = to_bf16(acc[i]);
    }
}

extern "C" int mxfp4_gemm_launch(const uint8_t* a_q, const uint8_t* a_scale, const uint8_t* b_q,
                                 const uint8_t* b_scale, uint16_t* out, int M, int N, int K) {
    dim3 grid((N + 127) / 128, (M + 31) / 32);
    mxfp4_gemm<<<grid, 256>>>(a_q, a_scale, b_q, b_scale, out, M, N, K);
    return (int)hipGetLastError();
}
"""


def build(defines=()):
    """Compile SOURCE with hipcc for gfx950 into a shared library; its ctypes handle."""
    folder = tempfile.mkdtemp(prefix="hip_mfma_gemm_")
    source, library = os.path.join(folder, "gemm.hip"), os.path.join(folder, "libgemm.so")
    with open(source, "w") as f:
        f.write(SOURCE)
    subprocess.run(["hipcc", "-O3", "--offload-arch=gfx950", "-shared", "-fPIC", *[f"-D{d}" for d in defines],
                    "-o", library, source], check=True)
    lib = ctypes.CDLL(library)
    lib.mxfp4_gemm_launch.restype = ctypes.c_int
    lib.mxfp4_gemm_launch.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_int] * 3
    return lib


def prepare(data: input_t) -> tuple:
    """The kernel's operands: A quantized to packed fp4 codes and E8M0 bytes, B's codes and its unshuffled
    scale bytes, and M, N, K."""
    A, _, B_q, _, B_scale_sh = data
    m, k = A.shape
    n = B_q.shape[0]
    if k % 64:
        raise ValueError(f"K must be a multiple of 64 (the MFMA's K), got {k}")
    codes, exponents = quantize_activations(A)
    a_q = (codes[:, 0::2] | (codes[:, 1::2] << 4)).contiguous()
    a_scale = (exponents + 127).to(torch.uint8).contiguous()
    b_q = B_q.view(torch.uint8).contiguous()
    b_scale = unshuffle_scales(B_scale_sh.view(torch.uint8), n, k // 32).contiguous()
    return a_q, a_scale, b_q, b_scale, m, n, k


def gemm(lib, data: input_t) -> output_t:
    a_q, a_scale, b_q, b_scale, m, n, k = prepare(data)
    out = torch.empty((m, n), dtype=torch.bfloat16, device=data[0].device)
    status = lib.mxfp4_gemm_launch(a_q.data_ptr(), a_scale.data_ptr(), b_q.data_ptr(), b_scale.data_ptr(),
                                   out.data_ptr(), m, n, k)
    if status != 0:
        raise RuntimeError(f"mxfp4_gemm launch failed: hipError {status}")
    return out


_LIB = build()


def custom_kernel(data: input_t) -> output_t:
    return gemm(_LIB, data)
