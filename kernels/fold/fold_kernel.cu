// Split-K fold: Y[i] = bf16_rne(P[0][i] + P[1][i] + ... + P[S-1][i]), summed in fp32 in order s = 0..S-1.
//
// One source for three compilers:
//   hipcc -x hip  (ROCm, gfx950)        nvcc (CUDA)        g++ -x c++ (CPU, on the CPU model of HIP)
// The CPU build runs on the same CPU model of the HIP runtime that submissions' HIP runs on
// (reference/emulation/hip_cpu/include): blocks one after another, threads as fibers, and each memory
// access made through the fold_ld*/fold_st* helpers below checked (hip_cpu_memcheck.h), so every access
// in the kernels must go through them.
//
// Layout: partials slice s starts at p + s * slice_stride (floats); within a slice, element i is p[i],
// i in [0, n). out is n contiguous bf16 values (stored as raw uint16 bits).
//
// Alignment (vector path only): the vector path loads 4 floats at p + s*slice_stride + 4k as one 16-byte
// access and stores 4 bf16 as one 8-byte access at out + 4k. It therefore needs
//   * p 16-byte aligned, slice_stride % 4 == 0 (or S == 1), out 8-byte aligned.
// fold_pick_path() checks exactly this; FOLD_PATH_AUTO falls back to the scalar kernel otherwise.
// The last n % 4 elements (the tail) are always folded one at a time by the vector kernel itself.
// Forcing FOLD_PATH_VECTOR on misaligned buffers is undefined on GPUs (CUDA faults) and is reported as
// a fault by the CPU model; it exists so tests can prove the model catches it.

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
typedef hipStream_t fold_stream_t;
#define FOLD_RT(name) hip##name
#elif defined(__CUDACC__)
#include <cuda_runtime.h>
typedef cudaStream_t fold_stream_t;
#define FOLD_RT(name) cuda##name
#else
#include "hip_cpu_runtime.h"
#endif

#include <stdint.h>

#if defined(__HIPCC__) || defined(__CUDACC__)
#define FOLD_GPU 1
// On the GPU the helpers are plain accesses; the checks only exist in the CPU emulation.
#define FOLD_CHECK(ptr, bytes, align, is_store) ((void)0)
#else
#define FOLD_GPU 0
#define FOLD_CHECK(ptr, bytes, align, is_store) ::hipcpu::check_access((ptr), (bytes), (align), (is_store))
#endif

enum { FOLD_PATH_AUTO = 0, FOLD_PATH_VECTOR = 1, FOLD_PATH_SCALAR = 2 };
enum { FOLD_THREADS = 256, FOLD_DEFAULT_MAX_BLOCKS = 4096 };

__device__ __forceinline__ float4 fold_ld4(const float* p) {
    FOLD_CHECK(p, 16, 16, false);
    return *reinterpret_cast<const float4*>(p);
}

__device__ __forceinline__ float fold_ld1(const float* p) {
    FOLD_CHECK(p, 4, 4, false);
    return *p;
}

__device__ __forceinline__ void fold_st4(uint16_t* p, unsigned long long packed) {
    FOLD_CHECK(p, 8, 8, true);
    *reinterpret_cast<unsigned long long*>(p) = packed;
}

__device__ __forceinline__ void fold_st1(uint16_t* p, uint16_t v) {
    FOLD_CHECK(p, 2, 2, true);
    *p = v;
}

// Round-to-nearest-even fp32 -> bf16 bits. NaN is handled first: the carry trick alone would turn a
// NaN with low mantissa bits into Inf (0x7F800001 -> 0x7F80) or wrap 0xFFFFFFFF to 0x0000. Every NaN
// becomes the canonical quiet 0x7FC0, because fp32 NaN payloads from adds differ between CPUs, NVIDIA
// and AMD and the fold should not. Inf and overflow past the bf16 max come out of the carry as +-Inf,
// as RNE requires.
__device__ __forceinline__ uint16_t fold_bf16_rne(float x) {
    unsigned int w = __float_as_uint(x);
    if ((w & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)0x7FC0u;
    return (uint16_t)((w + 0x7FFFu + ((w >> 16) & 1u)) >> 16);
}

// S_FIXED > 0 lets the compiler unroll the common split counts; S_FIXED == 0 reads S at run time.
template <int S_FIXED>
__global__ void fold_vector_kernel(const float* __restrict__ p, uint16_t* __restrict__ out,
                                   long long n, long long slice_stride, int s_runtime) {
    const int S = S_FIXED > 0 ? S_FIXED : s_runtime;
    const long long n4 = n >> 2;
    // Work units: n4 groups of four, then the n % 4 tail elements one unit each.
    const long long units = n4 + (n & 3);
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < units; u += step) {
        if (u < n4) {
            const float* q = p + 4 * u;
            float4 a = fold_ld4(q);
#pragma unroll
            for (int s = 1; s < S; ++s) {
                float4 v = fold_ld4(q + s * slice_stride);
                a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;
            }
            unsigned long long packed = (unsigned long long)fold_bf16_rne(a.x)
                                      | ((unsigned long long)fold_bf16_rne(a.y) << 16)
                                      | ((unsigned long long)fold_bf16_rne(a.z) << 32)
                                      | ((unsigned long long)fold_bf16_rne(a.w) << 48);
            fold_st4(out + 4 * u, packed);
        } else {
            const long long i = 4 * n4 + (u - n4);
            float a = fold_ld1(p + i);
#pragma unroll
            for (int s = 1; s < S; ++s) a += fold_ld1(p + i + s * slice_stride);
            fold_st1(out + i, fold_bf16_rne(a));
        }
    }
}

__global__ void fold_scalar_kernel(const float* __restrict__ p, uint16_t* __restrict__ out,
                                   long long n, long long slice_stride, int S) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        float a = fold_ld1(p + i);
        for (int s = 1; s < S; ++s) a += fold_ld1(p + i + s * slice_stride);
        fold_st1(out + i, fold_bf16_rne(a));
    }
}

#if FOLD_GPU
#define FOLD_LAUNCH(kernel, grid, block, stream, ...) \
    kernel<<<(grid), (block), 0, (fold_stream_t)(stream)>>>(__VA_ARGS__)
static int fold_status() { return (int)FOLD_RT(GetLastError)(); }
static const char* fold_status_text(int code) { return FOLD_RT(GetErrorString)((FOLD_RT(Error_t))code); }
#else
#define FOLD_LAUNCH(kernel, grid, block, stream, ...) hipLaunchKernelGGL(kernel, (grid), (block), 0, (stream), __VA_ARGS__)
static int fold_status() { return (int)hipGetLastError(); }
static const char* fold_status_text(int code) { return hipGetErrorString(code); }
#endif

// Per host thread, like the CUDA/HIP runtime's own last-error state.
static thread_local int fold_last_code = 0;

extern "C" {

// Which path FOLD_PATH_AUTO takes for these buffers: FOLD_PATH_VECTOR or FOLD_PATH_SCALAR.
int fold_pick_path(const void* p, const void* out, long long slice_stride, int S) {
    const bool aligned = ((uintptr_t)p % 16 == 0) && ((uintptr_t)out % 8 == 0)
                      && (S == 1 || slice_stride % 4 == 0);
    return aligned ? FOLD_PATH_VECTOR : FOLD_PATH_SCALAR;
}

// Returns 0 on success, -1 on bad arguments, otherwise the runtime's error code (CPU: a grid fault).
// max_blocks <= 0 picks the default cap; smaller caps exercise the grid-stride loop.
int fold_launch(const float* p, uint16_t* out, long long n, long long slice_stride, int S,
                int path, int max_blocks, void* stream) {
    if (n < 0 || S < 1 || (S > 1 && slice_stride < n) || path < 0 || path > 2) {
        fold_last_code = -1;
        return -1;
    }
    if (n == 0) return fold_last_code = 0;
    if (path == FOLD_PATH_AUTO) path = fold_pick_path(p, out, slice_stride, S);
    const long long units = path == FOLD_PATH_VECTOR ? (n >> 2) + (n & 3) : n;
    long long blocks = (units + FOLD_THREADS - 1) / FOLD_THREADS;
    const long long cap = max_blocks > 0 ? max_blocks : FOLD_DEFAULT_MAX_BLOCKS;
    if (blocks > cap) blocks = cap;
    const dim3 grid((unsigned)blocks), block(FOLD_THREADS);
    if (path == FOLD_PATH_SCALAR) {
        FOLD_LAUNCH(fold_scalar_kernel, grid, block, stream, p, out, n, slice_stride, S);
    } else {
        switch (S) {
            case 1: FOLD_LAUNCH(fold_vector_kernel<1>, grid, block, stream, p, out, n, slice_stride, S); break;
            case 2: FOLD_LAUNCH(fold_vector_kernel<2>, grid, block, stream, p, out, n, slice_stride, S); break;
            case 3: FOLD_LAUNCH(fold_vector_kernel<3>, grid, block, stream, p, out, n, slice_stride, S); break;
            case 4: FOLD_LAUNCH(fold_vector_kernel<4>, grid, block, stream, p, out, n, slice_stride, S); break;
            case 7: FOLD_LAUNCH(fold_vector_kernel<7>, grid, block, stream, p, out, n, slice_stride, S); break;
            case 8: FOLD_LAUNCH(fold_vector_kernel<8>, grid, block, stream, p, out, n, slice_stride, S); break;
            case 14: FOLD_LAUNCH(fold_vector_kernel<14>, grid, block, stream, p, out, n, slice_stride, S); break;
            default: FOLD_LAUNCH(fold_vector_kernel<0>, grid, block, stream, p, out, n, slice_stride, S); break;
        }
    }
    return fold_last_code = fold_status();
}

const char* fold_last_error(void) {
    if (fold_last_code == -1) return "fold_launch: bad arguments (need n >= 0, S >= 1, slice_stride >= n, path 0..2)";
    return fold_last_code == 0 ? "" : fold_status_text(fold_last_code);
}

}  // extern "C"
