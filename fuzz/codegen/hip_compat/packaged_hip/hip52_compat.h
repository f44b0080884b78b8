// Pre-included (-include) when clang >= 20 builds against packaged HIP headers older than 6.0 (Debian
// bookworm ships 5.2). Those headers were written for the clang of their day:
//   * amd_hip_fp16.h calls __llvm_amdgcn_rcp_f16/_2f16, which the clang HIP wrapper headers of that
//     time declared and today's do not (the headers' own declarations are skipped under the wrapper);
//   * amd_warp_functions.h reads __AMDGCN_WAVEFRONT_SIZE, a macro clang no longer defines (the caller
//     passes -D__AMDGCN_WAVEFRONT_SIZE=64: gfx950 is wave64 only).
// Both helpers are the single instruction the old wrapper mapped them to (v_rcp_f16).
#pragma once
#if defined(__HIP__)
static __attribute__((device)) inline _Float16 __llvm_amdgcn_rcp_f16(_Float16 x) { return __builtin_amdgcn_rcph(x); }
typedef _Float16 __hip52_compat_2f16 __attribute__((ext_vector_type(2)));
static __attribute__((device)) inline __hip52_compat_2f16 __llvm_amdgcn_rcp_2f16(__hip52_compat_2f16 x) {
  __hip52_compat_2f16 r;
  r.x = __builtin_amdgcn_rcph(x.x);
  r.y = __builtin_amdgcn_rcph(x.y);
  return r;
}
#endif
