// HIP's vector types (float4, int2, uint4, ...) with the sizes and alignments of ROCm's: a misaligned
// reinterpret_cast to float4 is as wrong here as there. Members x, y, z, w and make_* as in HIP.
#pragma once

#define HIP_CPU_VECTOR_TYPES(T, name)                                                              \
    struct alignas(sizeof(T) * 1) name##1 { T x; };                                                \
    struct alignas(sizeof(T) * 2) name##2 { T x, y; };                                             \
    struct name##3 { T x, y, z; };                                                                 \
    struct alignas(sizeof(T) * 4) name##4 { T x, y, z, w; };                                       \
    inline name##1 make_##name##1(T x) { return {x}; }                                             \
    inline name##2 make_##name##2(T x, T y) { return {x, y}; }                                     \
    inline name##3 make_##name##3(T x, T y, T z) { return {x, y, z}; }                             \
    inline name##4 make_##name##4(T x, T y, T z, T w) { return {x, y, z, w}; }

HIP_CPU_VECTOR_TYPES(float, float)
HIP_CPU_VECTOR_TYPES(int, int)
HIP_CPU_VECTOR_TYPES(unsigned int, uint)
HIP_CPU_VECTOR_TYPES(short, short)
HIP_CPU_VECTOR_TYPES(unsigned short, ushort)
HIP_CPU_VECTOR_TYPES(signed char, char)
HIP_CPU_VECTOR_TYPES(unsigned char, uchar)
HIP_CPU_VECTOR_TYPES(long long, longlong)
HIP_CPU_VECTOR_TYPES(unsigned long long, ulonglong)
HIP_CPU_VECTOR_TYPES(double, double)
#undef HIP_CPU_VECTOR_TYPES
