// Stand-in (builds_gfx950 with packaged HIP < 6 headers) for ROCm 7.1's hip/hip_ext_ocp.h, written here
// from the facts of its public API (docs/hip_cpu.md, "ROCm 7.1 headers"), not copied: the OCP storage
// types, the interpretation enums, the fp4/fp8 packing helpers and the fp4 conversions with a scale, each
// the gfx950 builtin ROCm's header lowers it to on gfx950. The rest of ROCm's header (fp6, the stochastic
// and fp8 conversions, the C++ wrapper structs) is not here: a file using it is "not built here", never a
// FAIL (fuzz/submission/hip_builds.py's toolchain rule).
#pragma once
#include <hip/hip_runtime.h>
#include <hip/amd_detail/amd_hip_bf16.h>
#include <hip/amd_detail/amd_hip_ocp_types.h>

enum __amd_fp8_interpretation_t { __AMD_OCP_E4M3 = 0, __AMD_OCP_E5M2 = 1 };
enum __amd_fp6_interpretation_t { __AMD_OCP_E2M3 = 0, __AMD_OCP_E3M2 = 1 };
enum __amd_fp4_interpretation_t { __AMD_OCP_E2M1 = 0 };
enum hipRoundMode { hipRoundNearest = 0, hipRoundZero = 1, hipRoundPosInf = 2, hipRoundMinInf = 3 };

#define __HIPCPU_OCP_HD__ __host__ __device__ static inline

// packing: element 0 in the low nibble (byte)
__HIPCPU_OCP_HD__ __amd_fp4x2_storage_t __amd_create_fp4x2(__amd_fp4x2_storage_t x, __amd_fp4x2_storage_t y) {
  return (__amd_fp4x2_storage_t)((x & 0xF) | (y << 4));
}
__HIPCPU_OCP_HD__ __amd_fp4x2_storage_t __amd_extract_fp4(__amd_fp4x2_storage_t v, unsigned i) {
  return (__amd_fp4x2_storage_t)(i == 0 ? (v & 0xF) : (v >> 4));
}
__HIPCPU_OCP_HD__ __amd_fp4x8_storage_t __amd_create_fp4x8(__amd_fp4x2_storage_t a, __amd_fp4x2_storage_t b,
                                                            __amd_fp4x2_storage_t c, __amd_fp4x2_storage_t d) {
  return (__amd_fp4x8_storage_t)a | ((__amd_fp4x8_storage_t)b << 8) | ((__amd_fp4x8_storage_t)c << 16) |
         ((__amd_fp4x8_storage_t)d << 24);
}
__HIPCPU_OCP_HD__ __amd_fp4x2_storage_t __amd_extract_fp4x2(__amd_fp4x8_storage_t v, unsigned i) {
  return (__amd_fp4x2_storage_t)(v >> (8 * i));
}
__HIPCPU_OCP_HD__ __amd_fp8x2_storage_t __amd_create_fp8x2(__amd_fp8_storage_t x, __amd_fp8_storage_t y) {
  return (__amd_fp8x2_storage_t)(x | (y << 8));
}
__HIPCPU_OCP_HD__ __amd_fp8_storage_t __amd_extract_fp8(__amd_fp8x2_storage_t v, unsigned i) {
  return (__amd_fp8_storage_t)(i == 0 ? v : (v >> 8));
}

// the scale operand of the gfx950 builtins: a float whose exponent field is the E8M0 byte (s + 127)
__HIPCPU_OCP_HD__ float __amd_scale_to_float(__amd_scale_t s) {
  unsigned bits = s == -128 ? 0xFFu << 23 : ((unsigned)(s + 127) & 0xFFu) << 23;
  return __builtin_bit_cast(float, bits);
}

#if defined(__HIP_DEVICE_COMPILE__)
__device__ static inline __amd_floatx2_storage_t __amd_cvt_fp4x2_to_floatx2_scale(
    __amd_fp4x2_storage_t v, __amd_fp4_interpretation_t, __amd_scale_t s) {
  return __builtin_amdgcn_cvt_scalef32_pk_f32_fp4((unsigned)v, __amd_scale_to_float(s), 0);
}
__device__ static inline __amd_fp4x2_storage_t __amd_cvt_floatx2_to_fp4x2_scale(
    __amd_floatx2_storage_t v, __amd_fp4_interpretation_t, __amd_scale_t s) {
  return (__amd_fp4x2_storage_t)__builtin_amdgcn_cvt_scalef32_pk_fp4_f32(0u, v[0], v[1], __amd_scale_to_float(s), 0);
}
__device__ static inline __amd_fp4x2_storage_t __amd_cvt_bf16x2_to_fp4x2_scale(
    __amd_bf16x2_storage_t v, __amd_fp4_interpretation_t, __amd_scale_t s) {
  return (__amd_fp4x2_storage_t)__builtin_amdgcn_cvt_scalef32_pk_fp4_bf16(0u, v, __amd_scale_to_float(s), 0);
}
__device__ static inline __amd_bf16x2_storage_t __amd_cvt_fp4x2_to_bf16x2_scale(
    __amd_fp4x2_storage_t v, __amd_fp4_interpretation_t, __amd_scale_t s) {
  return __builtin_amdgcn_cvt_scalef32_pk_bf16_fp4((unsigned)v, __amd_scale_to_float(s), 0);
}
__device__ static inline __amd_fp4x2_storage_t __amd_cvt_fp16x2_to_fp4x2_scale(
    __amd_fp16x2_storage_t v, __amd_fp4_interpretation_t, __amd_scale_t s) {
  return (__amd_fp4x2_storage_t)__builtin_amdgcn_cvt_scalef32_pk_fp4_f16(0u, v, __amd_scale_to_float(s), 0);
}
__device__ static inline __amd_fp16x2_storage_t __amd_cvt_fp4x2_to_fp16x2_scale(
    __amd_fp4x2_storage_t v, __amd_fp4_interpretation_t, __amd_scale_t s) {
  return __builtin_amdgcn_cvt_scalef32_pk_f16_fp4((unsigned)v, __amd_scale_to_float(s), 0);
}
#endif
