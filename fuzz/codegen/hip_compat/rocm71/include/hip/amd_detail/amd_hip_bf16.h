// Stand-in (builds_gfx950 with packaged HIP < 6 headers) for ROCm 7.1's hip/amd_detail/amd_hip_bf16.h,
// written here from the facts of its public API (docs/hip_cpu.md, "ROCm 7.1 headers"), not copied:
//   * __hip_bfloat16 keeps its 16 bits in a protected union with clang's __bf16 (no public member);
//     construction from float/double/integers and conversion to them are implicit casts of __bf16, so
//     every conversion and every one-operation arithmetic helper rounds once to nearest even;
//   * __hip_bfloat16_raw / __hip_bfloat162_raw expose the bits as .x (.y); __hip_bfloat162 has public x, y;
//   * NaN handling is the compiler's (the header does no bit manipulation), as here.
// What is left out is named by ROCM71_NAMES in fuzz/submission/hip_builds.py: a file
// using it gets "not built here", never a FAIL.
#pragma once
#include <hip/hip_runtime.h>

#if defined(__HIPCC_RTC__)
#define __HIPCPU_BF16_HD__ __device__
#else
#define __HIPCPU_BF16_HD__ __host__ __device__
#endif
#define __HIPCPU_BF16_FN__ __HIPCPU_BF16_HD__ static inline
#define __HIPCPU_BF16_DEV__ __device__ static inline

typedef struct __attribute__((aligned(2))) { unsigned short x; } __hip_bfloat16_raw;
typedef struct __attribute__((aligned(4))) { unsigned short x; unsigned short y; } __hip_bfloat162_raw;
typedef __bf16 __bf16_2 __attribute__((ext_vector_type(2)));

struct __attribute__((aligned(2))) __hip_bfloat16 {
 protected:
  union { unsigned short __x; __bf16 __x_bf16; };

 public:
  __hip_bfloat16() = default;
  __HIPCPU_BF16_HD__ constexpr __hip_bfloat16(const __hip_bfloat16_raw& r) : __x(r.x) {}
  __HIPCPU_BF16_HD__ __hip_bfloat16(__bf16 v) : __x_bf16(v) {}
  __HIPCPU_BF16_HD__ __hip_bfloat16(float v) : __x_bf16(static_cast<__bf16>(v)) {}
  __HIPCPU_BF16_HD__ __hip_bfloat16(double v) : __x_bf16(static_cast<__bf16>(v)) {}
  __HIPCPU_BF16_HD__ __hip_bfloat16(int v) : __x_bf16(static_cast<__bf16>(v)) {}
  __HIPCPU_BF16_HD__ __hip_bfloat16(unsigned int v) : __x_bf16(static_cast<__bf16>(v)) {}
  __HIPCPU_BF16_HD__ __hip_bfloat16(short v) : __x_bf16(static_cast<__bf16>(v)) {}
  __HIPCPU_BF16_HD__ __hip_bfloat16(unsigned short v) : __x_bf16(static_cast<__bf16>(v)) {}

  __HIPCPU_BF16_HD__ operator __hip_bfloat16_raw() const { return __hip_bfloat16_raw{__x}; }
  __HIPCPU_BF16_HD__ operator __hip_bfloat16_raw() const volatile { return __hip_bfloat16_raw{__x}; }
  __HIPCPU_BF16_HD__ operator __bf16() const { return __x_bf16; }
  __HIPCPU_BF16_HD__ operator float() const { return static_cast<float>(__x_bf16); }
  __HIPCPU_BF16_HD__ constexpr operator bool() const { return (__x & 0x7FFF) != 0; }
  __HIPCPU_BF16_HD__ operator char() const { return static_cast<char>(__x_bf16); }
  __HIPCPU_BF16_HD__ operator signed char() const { return static_cast<signed char>(__x_bf16); }
  __HIPCPU_BF16_HD__ operator unsigned char() const { return static_cast<unsigned char>(__x_bf16); }
  __HIPCPU_BF16_HD__ operator short() const { return static_cast<short>(__x_bf16); }
  __HIPCPU_BF16_HD__ operator unsigned short() const { return static_cast<unsigned short>(__x_bf16); }
  __HIPCPU_BF16_HD__ operator int() const { return static_cast<int>(__x_bf16); }
  __HIPCPU_BF16_HD__ operator unsigned int() const { return static_cast<unsigned int>(__x_bf16); }
  __HIPCPU_BF16_HD__ operator long() const { return static_cast<long>(__x_bf16); }
  __HIPCPU_BF16_HD__ operator unsigned long() const { return static_cast<unsigned long>(__x_bf16); }
  __HIPCPU_BF16_HD__ operator long long() const { return static_cast<long long>(__x_bf16); }
  __HIPCPU_BF16_HD__ operator unsigned long long() const { return static_cast<unsigned long long>(__x_bf16); }

  __HIPCPU_BF16_HD__ __hip_bfloat16& operator=(const __hip_bfloat16_raw& r) { __x = r.x; return *this; }
  __HIPCPU_BF16_HD__ volatile __hip_bfloat16& operator=(const __hip_bfloat16_raw& r) volatile { __x = r.x; return *this; }
  __HIPCPU_BF16_HD__ __hip_bfloat16& operator=(float v) { __x_bf16 = static_cast<__bf16>(v); return *this; }
  __HIPCPU_BF16_HD__ __hip_bfloat16& operator=(double v) { __x_bf16 = static_cast<__bf16>(v); return *this; }
  __HIPCPU_BF16_HD__ __hip_bfloat16& operator=(int v) { __x_bf16 = static_cast<__bf16>(v); return *this; }
  __HIPCPU_BF16_HD__ __hip_bfloat16& operator=(unsigned int v) { __x_bf16 = static_cast<__bf16>(v); return *this; }
  __HIPCPU_BF16_HD__ __hip_bfloat16& operator=(short v) { __x_bf16 = static_cast<__bf16>(v); return *this; }
  __HIPCPU_BF16_HD__ __hip_bfloat16& operator=(unsigned short v) { __x_bf16 = static_cast<__bf16>(v); return *this; }
};

struct __attribute__((aligned(4))) __hip_bfloat162 {
  union {
    struct { __hip_bfloat16 x, y; };
    __bf16_2 __xy_bf162;
  };
  __hip_bfloat162() = default;
  __HIPCPU_BF16_HD__ __hip_bfloat162(const __hip_bfloat162_raw& r)
      : x(__hip_bfloat16_raw{r.x}), y(__hip_bfloat16_raw{r.y}) {}
  __HIPCPU_BF16_HD__ constexpr __hip_bfloat162(const __hip_bfloat16& a, const __hip_bfloat16& b) : x(a), y(b) {}
  __HIPCPU_BF16_HD__ __hip_bfloat162(__bf16_2 v) : __xy_bf162(v) {}
  __HIPCPU_BF16_HD__ operator __hip_bfloat162_raw() const {
    return __hip_bfloat162_raw{static_cast<__hip_bfloat16_raw>(x).x, static_cast<__hip_bfloat16_raw>(y).x};
  }
  __HIPCPU_BF16_HD__ operator float2() const { return float2(static_cast<float>(x), static_cast<float>(y)); }
  __HIPCPU_BF16_HD__ operator __bf16_2() const { return __xy_bf162; }
  __HIPCPU_BF16_HD__ __hip_bfloat162& operator=(const __hip_bfloat162_raw& r) { *this = __hip_bfloat162(r); return *this; }
  __HIPCPU_BF16_HD__ __hip_bfloat162& operator=(__bf16_2 v) { __xy_bf162 = v; return *this; }
};

// -- conversions and moves ----------------------------------------------------------------------------
__HIPCPU_BF16_FN__ float __bfloat162float(__hip_bfloat16 a) { return static_cast<float>(a); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __float2bfloat16(float f) { return __hip_bfloat16(static_cast<__bf16>(f)); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __double2bfloat16(double d) { return __hip_bfloat16(static_cast<__bf16>(d)); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __int2bfloat16_rn(int i) { return __hip_bfloat16(static_cast<__bf16>(i)); }
__HIPCPU_BF16_FN__ float2 __bfloat1622float2(__hip_bfloat162 a) { return float2(a); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __float22bfloat162_rn(float2 f) {
  return __hip_bfloat162(__float2bfloat16(f.x), __float2bfloat16(f.y));
}
__HIPCPU_BF16_FN__ __hip_bfloat162 __bfloat162bfloat162(__hip_bfloat16 a) { return __hip_bfloat162(a, a); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __halves2bfloat162(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat162(a, b); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __low2bfloat16(__hip_bfloat162 a) { return a.x; }
__HIPCPU_BF16_FN__ __hip_bfloat16 __high2bfloat16(__hip_bfloat162 a) { return a.y; }
__HIPCPU_BF16_FN__ __hip_bfloat162 __low2bfloat162(__hip_bfloat162 a) { return __hip_bfloat162(a.x, a.x); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __high2bfloat162(__hip_bfloat162 a) { return __hip_bfloat162(a.y, a.y); }
__HIPCPU_BF16_FN__ float __low2float(__hip_bfloat162 a) { return static_cast<float>(a.x); }
__HIPCPU_BF16_FN__ float __high2float(__hip_bfloat162 a) { return static_cast<float>(a.y); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __lows2bfloat162(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.x, b.x); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __highs2bfloat162(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.y, b.y); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __lowhigh2highlow(__hip_bfloat162 a) { return __hip_bfloat162(a.y, a.x); }
__HIPCPU_BF16_FN__ unsigned short __bfloat16_as_ushort(__hip_bfloat16 a) { return static_cast<__hip_bfloat16_raw>(a).x; }
__HIPCPU_BF16_FN__ short __bfloat16_as_short(__hip_bfloat16 a) { return static_cast<short>(__bfloat16_as_ushort(a)); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __ushort_as_bfloat16(unsigned short u) { return __hip_bfloat16(__hip_bfloat16_raw{u}); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __short_as_bfloat16(short s) { return __ushort_as_bfloat16(static_cast<unsigned short>(s)); }

#define HIPRT_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)
#define HIPRT_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define HIPRT_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define HIPRT_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define HIPRT_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define HIPRT_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define HIPRT_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)

// -- arithmetic: one __bf16 operation each (computed in float, rounded once) ---------------------------
__HIPCPU_BF16_FN__ __hip_bfloat16 __hadd(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16((__bf16)a + (__bf16)b); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __hsub(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16((__bf16)a - (__bf16)b); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __hmul(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16((__bf16)a * (__bf16)b); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __hdiv(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16((__bf16)a / (__bf16)b); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __hadd_rn(__hip_bfloat16 a, __hip_bfloat16 b) { return __hadd(a, b); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __hsub_rn(__hip_bfloat16 a, __hip_bfloat16 b) { return __hsub(a, b); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __hmul_rn(__hip_bfloat16 a, __hip_bfloat16 b) { return __hmul(a, b); }
__HIPCPU_BF16_DEV__ __hip_bfloat16 __hfma(__hip_bfloat16 a, __hip_bfloat16 b, __hip_bfloat16 c) {
  return __hip_bfloat16(__builtin_elementwise_fma((__bf16)a, (__bf16)b, (__bf16)c));
}
__HIPCPU_BF16_FN__ __hip_bfloat16 __hneg(__hip_bfloat16 a) { return __ushort_as_bfloat16(__bfloat16_as_ushort(a) ^ 0x8000); }
__HIPCPU_BF16_FN__ __hip_bfloat16 __habs(__hip_bfloat16 a) { return __ushort_as_bfloat16(__bfloat16_as_ushort(a) & 0x7FFF); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __hadd2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162((__bf16_2)a + (__bf16_2)b); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __hsub2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162((__bf16_2)a - (__bf16_2)b); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __hmul2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162((__bf16_2)a * (__bf16_2)b); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __h2div(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162((__bf16_2)a / (__bf16_2)b); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __hadd2_rn(__hip_bfloat162 a, __hip_bfloat162 b) { return __hadd2(a, b); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __hsub2_rn(__hip_bfloat162 a, __hip_bfloat162 b) { return __hsub2(a, b); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __hmul2_rn(__hip_bfloat162 a, __hip_bfloat162 b) { return __hmul2(a, b); }
__HIPCPU_BF16_DEV__ __hip_bfloat162 __hfma2(__hip_bfloat162 a, __hip_bfloat162 b, __hip_bfloat162 c) {
  return __hip_bfloat162(__builtin_elementwise_fma((__bf16_2)a, (__bf16_2)b, (__bf16_2)c));
}
__HIPCPU_BF16_FN__ __hip_bfloat162 __hneg2(__hip_bfloat162 a) { return __hip_bfloat162(__hneg(a.x), __hneg(a.y)); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __habs2(__hip_bfloat162 a) { return __hip_bfloat162(__habs(a.x), __habs(a.y)); }

#define __HIPCPU_BF16_OPS__(T, ADD, SUB, MUL, DIV)                                                  \
  __HIPCPU_BF16_FN__ T operator+(const T& a, const T& b) { return ADD(a, b); }                     \
  __HIPCPU_BF16_FN__ T operator-(const T& a, const T& b) { return SUB(a, b); }                     \
  __HIPCPU_BF16_FN__ T operator*(const T& a, const T& b) { return MUL(a, b); }                     \
  __HIPCPU_BF16_FN__ T operator/(const T& a, const T& b) { return DIV(a, b); }                     \
  __HIPCPU_BF16_FN__ T& operator+=(T& a, const T& b) { return a = ADD(a, b); }                     \
  __HIPCPU_BF16_FN__ T& operator-=(T& a, const T& b) { return a = SUB(a, b); }                     \
  __HIPCPU_BF16_FN__ T& operator*=(T& a, const T& b) { return a = MUL(a, b); }                     \
  __HIPCPU_BF16_FN__ T& operator/=(T& a, const T& b) { return a = DIV(a, b); }
__HIPCPU_BF16_OPS__(__hip_bfloat16, __hadd, __hsub, __hmul, __hdiv)
__HIPCPU_BF16_OPS__(__hip_bfloat162, __hadd2, __hsub2, __hmul2, __h2div)
#undef __HIPCPU_BF16_OPS__
__HIPCPU_BF16_FN__ __hip_bfloat16 operator+(const __hip_bfloat16& a) { return a; }
__HIPCPU_BF16_FN__ __hip_bfloat16 operator-(const __hip_bfloat16& a) { return __hneg(a); }
__HIPCPU_BF16_FN__ __hip_bfloat162 operator+(const __hip_bfloat162& a) { return a; }
__HIPCPU_BF16_FN__ __hip_bfloat162 operator-(const __hip_bfloat162& a) { return __hneg2(a); }
__HIPCPU_BF16_FN__ __hip_bfloat16& operator++(__hip_bfloat16& a) { return a = __hadd(a, HIPRT_ONE_BF16); }
__HIPCPU_BF16_FN__ __hip_bfloat16& operator--(__hip_bfloat16& a) { return a = __hsub(a, HIPRT_ONE_BF16); }
__HIPCPU_BF16_FN__ __hip_bfloat16 operator++(__hip_bfloat16& a, int) { __hip_bfloat16 r = a; ++a; return r; }
__HIPCPU_BF16_FN__ __hip_bfloat16 operator--(__hip_bfloat16& a, int) { __hip_bfloat16 r = a; --a; return r; }

// -- comparisons (ordered: false on NaN, but __hne; the *u forms unordered) ------------------------------
__HIPCPU_BF16_FN__ bool __heq(__hip_bfloat16 a, __hip_bfloat16 b) { return (__bf16)a == (__bf16)b; }
__HIPCPU_BF16_FN__ bool __hne(__hip_bfloat16 a, __hip_bfloat16 b) { return (__bf16)a != (__bf16)b; }
__HIPCPU_BF16_FN__ bool __hlt(__hip_bfloat16 a, __hip_bfloat16 b) { return (__bf16)a < (__bf16)b; }
__HIPCPU_BF16_FN__ bool __hle(__hip_bfloat16 a, __hip_bfloat16 b) { return (__bf16)a <= (__bf16)b; }
__HIPCPU_BF16_FN__ bool __hgt(__hip_bfloat16 a, __hip_bfloat16 b) { return (__bf16)a > (__bf16)b; }
__HIPCPU_BF16_FN__ bool __hge(__hip_bfloat16 a, __hip_bfloat16 b) { return (__bf16)a >= (__bf16)b; }
__HIPCPU_BF16_FN__ bool __hequ(__hip_bfloat16 a, __hip_bfloat16 b) { return !__hlt(a, b) && !__hgt(a, b); }
__HIPCPU_BF16_FN__ bool __hneu(__hip_bfloat16 a, __hip_bfloat16 b) { return !__heq(a, b); }
__HIPCPU_BF16_FN__ bool __hltu(__hip_bfloat16 a, __hip_bfloat16 b) { return !__hge(a, b); }
__HIPCPU_BF16_FN__ bool __hleu(__hip_bfloat16 a, __hip_bfloat16 b) { return !__hgt(a, b); }
__HIPCPU_BF16_FN__ bool __hgtu(__hip_bfloat16 a, __hip_bfloat16 b) { return !__hle(a, b); }
__HIPCPU_BF16_FN__ bool __hgeu(__hip_bfloat16 a, __hip_bfloat16 b) { return !__hlt(a, b); }
__HIPCPU_BF16_FN__ bool __hisnan(__hip_bfloat16 a) { return (__bfloat16_as_ushort(a) & 0x7FFF) > 0x7F80; }
__HIPCPU_BF16_FN__ int __hisinf(__hip_bfloat16 a) { return (__bfloat16_as_ushort(a) & 0x7FFF) == 0x7F80; }
__HIPCPU_BF16_FN__ __hip_bfloat16 __hmax(__hip_bfloat16 a, __hip_bfloat16 b) {
  if (__hisnan(a)) return __hisnan(b) ? HIPRT_NAN_BF16 : b;
  if (__hisnan(b)) return a;
  return __hgt(a, b) ? a : b;
}
__HIPCPU_BF16_FN__ __hip_bfloat16 __hmin(__hip_bfloat16 a, __hip_bfloat16 b) {
  if (__hisnan(a)) return __hisnan(b) ? HIPRT_NAN_BF16 : b;
  if (__hisnan(b)) return a;
  return __hlt(a, b) ? a : b;
}
__HIPCPU_BF16_FN__ __hip_bfloat162 __hmax2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(__hmax(a.x, b.x), __hmax(a.y, b.y)); }
__HIPCPU_BF16_FN__ __hip_bfloat162 __hmin2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(__hmin(a.x, b.x), __hmin(a.y, b.y)); }
#define __HIPCPU_BF16_CMP__(OP, FN)                                                                    \
  __HIPCPU_BF16_FN__ bool operator OP(const __hip_bfloat16& a, const __hip_bfloat16& b) { return FN(a, b); }
__HIPCPU_BF16_CMP__(==, __heq)
__HIPCPU_BF16_CMP__(!=, __hne)
__HIPCPU_BF16_CMP__(<, __hlt)
__HIPCPU_BF16_CMP__(<=, __hle)
__HIPCPU_BF16_CMP__(>, __hgt)
__HIPCPU_BF16_CMP__(>=, __hge)
#undef __HIPCPU_BF16_CMP__
__HIPCPU_BF16_FN__ bool __hbeq2(__hip_bfloat162 a, __hip_bfloat162 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); }
__HIPCPU_BF16_FN__ bool __hbne2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hne(a.x, b.x) && __hne(a.y, b.y); }
__HIPCPU_BF16_FN__ bool __hblt2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hlt(a.x, b.x) && __hlt(a.y, b.y); }
__HIPCPU_BF16_FN__ bool __hble2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hle(a.x, b.x) && __hle(a.y, b.y); }
__HIPCPU_BF16_FN__ bool __hbgt2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hgt(a.x, b.x) && __hgt(a.y, b.y); }
__HIPCPU_BF16_FN__ bool __hbge2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hge(a.x, b.x) && __hge(a.y, b.y); }
__HIPCPU_BF16_FN__ bool operator==(const __hip_bfloat162& a, const __hip_bfloat162& b) { return __hbeq2(a, b); }
__HIPCPU_BF16_FN__ bool operator!=(const __hip_bfloat162& a, const __hip_bfloat162& b) { return !__hbeq2(a, b); }

// -- math (device): through float, rounded back once -----------------------------------------------------
#define __HIPCPU_BF16_MATH__(NAME, EXPR)                                                               \
  __HIPCPU_BF16_DEV__ __hip_bfloat16 h##NAME(__hip_bfloat16 h) { float x = static_cast<float>(h); return __float2bfloat16(EXPR); } \
  __HIPCPU_BF16_DEV__ __hip_bfloat162 h2##NAME(__hip_bfloat162 h) { return __hip_bfloat162(h##NAME(h.x), h##NAME(h.y)); }
__HIPCPU_BF16_MATH__(ceil, __builtin_ceilf(x))
__HIPCPU_BF16_MATH__(floor, __builtin_floorf(x))
__HIPCPU_BF16_MATH__(rint, __builtin_rintf(x))
__HIPCPU_BF16_MATH__(trunc, __builtin_truncf(x))
__HIPCPU_BF16_MATH__(sqrt, __builtin_sqrtf(x))
__HIPCPU_BF16_MATH__(rsqrt, 1.0f / __builtin_sqrtf(x))
__HIPCPU_BF16_MATH__(rcp, 1.0f / x)
__HIPCPU_BF16_MATH__(exp, expf(x))
__HIPCPU_BF16_MATH__(exp2, exp2f(x))
__HIPCPU_BF16_MATH__(exp10, exp10f(x))
__HIPCPU_BF16_MATH__(log, logf(x))
__HIPCPU_BF16_MATH__(log2, log2f(x))
__HIPCPU_BF16_MATH__(log10, log10f(x))
__HIPCPU_BF16_MATH__(sin, sinf(x))
__HIPCPU_BF16_MATH__(cos, cosf(x))
#undef __HIPCPU_BF16_MATH__
