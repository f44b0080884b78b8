// hip_cpu: the OCP storage types of ROCm 7.1's hip_ext_ocp.h that kernels declare their MFMA operands with,
// and its fp4/fp8 packing helpers (element 0 in the low nibble / byte). __amd_scale_t is ROCm's signed,
// unbiased exponent (x 2^s; the E8M0 byte is s + 127). The conversions (__amd_cvt_*) are not modelled:
// a file calling one does not build on the model, and the report says the model lacks it.
#pragma once
#include <hip_cpu_runtime.h>
typedef unsigned char __amd_fp4x2_storage_t;
typedef unsigned int __amd_fp4x8_storage_t;
typedef unsigned char __amd_fp8_storage_t;
typedef unsigned short __amd_fp8x2_storage_t;
typedef signed char __amd_scale_t;
enum __amd_fp8_interpretation_t { __AMD_OCP_E4M3 = 0, __AMD_OCP_E5M2 = 1 };
enum __amd_fp4_interpretation_t { __AMD_OCP_E2M1 = 0 };

inline __amd_fp4x2_storage_t __amd_create_fp4x2(__amd_fp4x2_storage_t x, __amd_fp4x2_storage_t y) {
    return (__amd_fp4x2_storage_t)((x & 0xF) | (y << 4));
}
inline __amd_fp4x2_storage_t __amd_extract_fp4(__amd_fp4x2_storage_t v, unsigned i) {
    return (__amd_fp4x2_storage_t)(i == 0 ? (v & 0xF) : (v >> 4));
}
inline __amd_fp4x8_storage_t __amd_create_fp4x8(__amd_fp4x2_storage_t a, __amd_fp4x2_storage_t b,
                                                __amd_fp4x2_storage_t c, __amd_fp4x2_storage_t d) {
    return (__amd_fp4x8_storage_t)a | ((__amd_fp4x8_storage_t)b << 8) | ((__amd_fp4x8_storage_t)c << 16) |
           ((__amd_fp4x8_storage_t)d << 24);
}
inline __amd_fp4x2_storage_t __amd_extract_fp4x2(__amd_fp4x8_storage_t v, unsigned i) {
    return (__amd_fp4x2_storage_t)(v >> (8 * i));
}
inline __amd_fp8x2_storage_t __amd_create_fp8x2(__amd_fp8_storage_t x, __amd_fp8_storage_t y) {
    return (__amd_fp8x2_storage_t)(x | (y << 8));
}
inline __amd_fp8_storage_t __amd_extract_fp8(__amd_fp8x2_storage_t v, unsigned i) {
    return (__amd_fp8_storage_t)(i == 0 ? v : (v >> 8));
}
