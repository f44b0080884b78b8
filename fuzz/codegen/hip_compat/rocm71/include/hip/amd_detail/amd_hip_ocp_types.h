// Stand-in (builds_gfx950 with packaged HIP < 6 headers) for ROCm 7.1's amd_hip_ocp_types.h: the OCP
// storage types, written here from the facts of its public API (docs/hip_cpu.md, "ROCm 7.1 headers").
#pragma once
#include <stdint.h>

typedef uint8_t __amd_fp8_storage_t;
typedef uint16_t __amd_fp8x2_storage_t;
typedef uint8_t __amd_fp4x2_storage_t;
typedef uint32_t __amd_fp4x8_storage_t;
typedef __bf16 __amd_bf16_storage_t;
typedef _Float16 __amd_fp16_storage_t;
typedef int8_t __amd_scale_t;  // an unbiased exponent: x 2^s (E8M0 byte = s + 127); -128 is a NaN scale
typedef unsigned int __amd_uintx2_storage_t __attribute__((ext_vector_type(2)));
typedef uint8_t __amd_fp8x8_storage_t __attribute__((ext_vector_type(8)));
typedef __bf16 __amd_bf16x2_storage_t __attribute__((ext_vector_type(2)));
typedef __bf16 __amd_bf16x8_storage_t __attribute__((ext_vector_type(8)));
typedef __bf16 __amd_bf16x32_storage_t __attribute__((ext_vector_type(32)));
typedef float __amd_floatx2_storage_t __attribute__((ext_vector_type(2)));
typedef float __amd_floatx8_storage_t __attribute__((ext_vector_type(8)));
typedef float __amd_floatx16_storage_t __attribute__((ext_vector_type(16)));
typedef float __amd_floatx32_storage_t __attribute__((ext_vector_type(32)));
typedef _Float16 __amd_fp16x2_storage_t __attribute__((ext_vector_type(2)));
typedef _Float16 __amd_fp16x8_storage_t __attribute__((ext_vector_type(8)));
typedef _Float16 __amd_fp16x32_storage_t __attribute__((ext_vector_type(32)));
typedef uint32_t __amd_fp6x32_storage_t __attribute__((ext_vector_type(6)));
typedef short __amd_shortx2_storage_t __attribute__((ext_vector_type(2)));
