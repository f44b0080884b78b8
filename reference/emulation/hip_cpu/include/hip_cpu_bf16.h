// bf16 as HIP's hip_bf16.h offers it to kernels: a 16-bit storage type, conversions rounding to nearest
// even (NaN kept quiet), and float arithmetic through float.
#pragma once

struct __hip_bfloat16 {
    unsigned short data;
    __hip_bfloat16() = default;
    __hip_bfloat16(float f);
    operator float() const;
};
typedef __hip_bfloat16 hip_bfloat16;
typedef __hip_bfloat16 __nv_bfloat16;

inline unsigned short hipcpu_f32_to_bf16_bits(float f) {
    unsigned u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (unsigned short)((u >> 16) | 0x40);  // quiet NaN
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}
inline float hipcpu_bf16_bits_to_f32(unsigned short b) {
    unsigned u = (unsigned)b << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline __hip_bfloat16::__hip_bfloat16(float f) : data(hipcpu_f32_to_bf16_bits(f)) {}
inline __hip_bfloat16::operator float() const { return hipcpu_bf16_bits_to_f32(data); }
inline __hip_bfloat16 __float2bfloat16(float f) { return __hip_bfloat16(f); }
inline __hip_bfloat16 __float2bfloat16_rn(float f) { return __hip_bfloat16(f); }
inline float __bfloat162float(__hip_bfloat16 b) { return (float)b; }
inline __hip_bfloat16 __ushort_as_bfloat16(unsigned short s) { __hip_bfloat16 b; b.data = s; return b; }
inline unsigned short __bfloat16_as_ushort(__hip_bfloat16 b) { return b.data; }

inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline int __float_as_int(float x) { int i; std::memcpy(&i, &x, 4); return i; }
inline unsigned __float_as_uint(float x) { unsigned i; std::memcpy(&i, &x, 4); return i; }
inline float __int_as_float(int i) { float x; std::memcpy(&x, &i, 4); return x; }
inline float __uint_as_float(unsigned i) { float x; std::memcpy(&x, &i, 4); return x; }

// HIP's device min/max overloads (integers and floats), which kernels call unqualified.
inline int max(int a, int b) { return a < b ? b : a; }
inline int min(int a, int b) { return b < a ? b : a; }
inline unsigned max(unsigned a, unsigned b) { return a < b ? b : a; }
inline unsigned min(unsigned a, unsigned b) { return b < a ? b : a; }
inline long long max(long long a, long long b) { return a < b ? b : a; }
inline long long min(long long a, long long b) { return b < a ? b : a; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a < b ? b : a; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return b < a ? b : a; }
inline float max(float a, float b) { return std::fmax(a, b); }
inline float min(float a, float b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
