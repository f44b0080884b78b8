// Buffer resources and raw buffer loads and stores on the CPU model (clang's amdgcn builtins
// __builtin_amdgcn_make_buffer_rsrc, __builtin_amdgcn_raw_buffer_load_b{8,16,32,64,128},
// __builtin_amdgcn_raw_buffer_store_b*; aiter's opus.hpp reaches global memory through them).
//
// A resource is {base, stride, num_records, flags}, 16 bytes like the hardware's V#. A raw access reads or
// writes base + voffset + soffset: wholly inside [0, num_records) it is made; wholly outside it reads 0
// and its store is dropped, the buffer instructions' documented out-of-range behaviour (what kernels lean
// on to skip bounds checks). What this model does not decide is NOT RUN, named, never guessed: an access
// partly past num_records (whether the hardware checks a wide access per dword or as a whole), a nonzero
// soffset where counting it in the range check or not would differ, a nonzero stride (swizzled or
// structured buffers), and the aux bits (cache policy: no effect on values, so they are ignored).
#pragma once

struct hipcpu_buffer_rsrc {
    unsigned long long base_and_stride;  // the address in bits 0-47, the stride in bits 48-61 (as dwords 0-1)
    unsigned num_records;
    unsigned flags;
};
typedef hipcpu_buffer_rsrc __amdgpu_buffer_rsrc_t;
static_assert(sizeof(hipcpu_buffer_rsrc) == 16, "a V# is four dwords");

inline __amdgpu_buffer_rsrc_t __builtin_amdgcn_make_buffer_rsrc_cpu(void* p, short stride, int num, int flags) {
    unsigned long long address = reinterpret_cast<unsigned long long>(p);
    if (address >> 48) ::hipcpu::not_modelled("a buffer resource whose base address needs more than 48 bits");
    return hipcpu_buffer_rsrc{address | ((unsigned long long)(unsigned short)stride & 0x3fffull) << 48,
                              (unsigned)num, (unsigned)flags};
}
#define __builtin_amdgcn_make_buffer_rsrc __builtin_amdgcn_make_buffer_rsrc_cpu

namespace hipcpu {

// Whether bytes [offset, offset + bytes) of the buffer are in range: 1 inside, 0 outside, NOT RUN between.
inline int buffer_component_in_range(const hipcpu_buffer_rsrc& r, long long voffset, long long soffset,
                                     long long at, long long bytes) {
    auto inside = [&](long long offset) {
        if (offset >= 0 && offset + bytes <= (long long)r.num_records) return 1;
        if (offset >= (long long)r.num_records || offset + bytes <= 0) return 0;
        not_modelled("a raw buffer access straddling the resource's num_records (" + std::to_string(bytes) +
                     " bytes at offset " + std::to_string(offset) + " of " + std::to_string(r.num_records) + ")");
    };
    int with = inside(voffset + soffset + at);
    if (soffset != 0 && inside(voffset + at) != with)
        not_modelled("a raw buffer access whose range check differs with and without its soffset (" +
                     std::to_string(soffset) + "): which the hardware checks is not modelled");
    return with;
}

inline char* buffer_base(const hipcpu_buffer_rsrc& r) {
    if ((r.base_and_stride >> 48) & 0x3fff)
        not_modelled("a buffer resource with a nonzero stride (structured or swizzled buffers)");
    return reinterpret_cast<char*>(r.base_and_stride & ((1ull << 48) - 1));
}

// Whether a whole access of ``bytes`` is in range (1) or out (0); partly: NOT RUN.
inline int buffer_access_in_range(const hipcpu_buffer_rsrc& r, long long voffset, long long soffset, int bytes) {
    const int part = bytes < 4 ? bytes : 4;
    int first = buffer_component_in_range(r, voffset, soffset, 0, part);
    for (int at = part; at < bytes; at += part)
        if (buffer_component_in_range(r, voffset, soffset, at, part) != first)
            not_modelled("a " + std::to_string(bytes) + "-byte raw buffer access partly past num_records (" +
                         std::to_string(r.num_records) + "): whether the hardware checks it per dword is not modelled");
    return first;
}

template <class T>
inline T buffer_load(const hipcpu_buffer_rsrc& r, int voffset, int soffset) {
    T value;
    std::memset(&value, 0, sizeof(T));  // out of range: reads 0
    char* base = buffer_base(r);
    if (buffer_access_in_range(r, voffset, soffset, sizeof(T))) {
        const char* src = base + (long long)voffset + soffset;
        check_access(src, sizeof(T), 1, false);
        std::memcpy(&value, src, sizeof(T));
    }
    return value;
}

template <class T>
inline void buffer_store(const T& value, const hipcpu_buffer_rsrc& r, int voffset, int soffset) {
    char* base = buffer_base(r);
    if (buffer_access_in_range(r, voffset, soffset, sizeof(T))) {  // out of range: dropped
        char* dst = base + (long long)voffset + soffset;
        check_access(dst, sizeof(T), 1, true);
        std::memcpy(dst, &value, sizeof(T));
    }
}

}  // namespace hipcpu

typedef unsigned int hipcpu_u32x2 __attribute__((ext_vector_type(2)));
typedef unsigned int hipcpu_u32x3 __attribute__((ext_vector_type(3)));
typedef unsigned int hipcpu_u32x4 __attribute__((ext_vector_type(4)));

#define HIPCPU_RAW_BUFFER(bits, type)                                                                           \
    inline type __builtin_amdgcn_raw_buffer_load_b##bits##_cpu(__amdgpu_buffer_rsrc_t r, int voffset, int soffset, \
                                                               int /*aux: cache policy*/) {                     \
        return ::hipcpu::buffer_load<type>(r, voffset, soffset);                                                \
    }                                                                                                           \
    /* any value of the width (clang's builtin takes int and unsigned vectors alike) */                         \
    template <class V>                                                                                          \
    inline void __builtin_amdgcn_raw_buffer_store_b##bits##_cpu(V v, __amdgpu_buffer_rsrc_t r, int voffset,       \
                                                                int soffset, int /*aux*/) {                     \
        static_assert(sizeof(V) == sizeof(type), "raw buffer store of another width");                         \
        ::hipcpu::buffer_store<type>(__builtin_bit_cast(type, v), r, voffset, soffset);                         \
    }
HIPCPU_RAW_BUFFER(8, unsigned char)
HIPCPU_RAW_BUFFER(16, unsigned short)
HIPCPU_RAW_BUFFER(32, unsigned int)
HIPCPU_RAW_BUFFER(64, hipcpu_u32x2)
HIPCPU_RAW_BUFFER(96, hipcpu_u32x3)
HIPCPU_RAW_BUFFER(128, hipcpu_u32x4)
#undef HIPCPU_RAW_BUFFER
#define __builtin_amdgcn_raw_buffer_load_b8 __builtin_amdgcn_raw_buffer_load_b8_cpu
#define __builtin_amdgcn_raw_buffer_load_b16 __builtin_amdgcn_raw_buffer_load_b16_cpu
#define __builtin_amdgcn_raw_buffer_load_b32 __builtin_amdgcn_raw_buffer_load_b32_cpu
#define __builtin_amdgcn_raw_buffer_load_b64 __builtin_amdgcn_raw_buffer_load_b64_cpu
#define __builtin_amdgcn_raw_buffer_load_b96 __builtin_amdgcn_raw_buffer_load_b96_cpu
#define __builtin_amdgcn_raw_buffer_load_b128 __builtin_amdgcn_raw_buffer_load_b128_cpu
#define __builtin_amdgcn_raw_buffer_store_b8 __builtin_amdgcn_raw_buffer_store_b8_cpu
#define __builtin_amdgcn_raw_buffer_store_b16 __builtin_amdgcn_raw_buffer_store_b16_cpu
#define __builtin_amdgcn_raw_buffer_store_b32 __builtin_amdgcn_raw_buffer_store_b32_cpu
#define __builtin_amdgcn_raw_buffer_store_b64 __builtin_amdgcn_raw_buffer_store_b64_cpu
#define __builtin_amdgcn_raw_buffer_store_b96 __builtin_amdgcn_raw_buffer_store_b96_cpu
#define __builtin_amdgcn_raw_buffer_store_b128 __builtin_amdgcn_raw_buffer_store_b128_cpu

// Global -> LDS buffer loads (buffer_load_dword ... lds): not modelled; a launch that reaches one is NOT RUN.
template <class... A>
inline void __builtin_amdgcn_raw_ptr_buffer_load_lds_cpu(A...) {
    ::hipcpu::not_modelled("__builtin_amdgcn_raw_ptr_buffer_load_lds (a buffer load into LDS)");
}
#define __builtin_amdgcn_raw_ptr_buffer_load_lds __builtin_amdgcn_raw_ptr_buffer_load_lds_cpu
