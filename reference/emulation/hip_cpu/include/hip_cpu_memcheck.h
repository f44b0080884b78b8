// Checked memory accesses on the CPU model, for kernels that route their loads and stores through
// ::hipcpu::check_access (our own fold does; a submission's raw pointer accesses are not checked).
//
// A check faults, ending the launch the way a GPU memory fault ends a kernel (the launch returns, the
// error is the next hipGetLastError, the remaining blocks never run), on
//   * a misaligned access: the address is not a multiple of the access's alignment (16 for float4),
//   * an access outside every registered region, or a store into a read-only region
//     (only when the host registered regions with hip_cpu_add_region; none registered means "not checked").
// Every checked access is counted, by direction and width, per launch: tests read the counts to see which
// path ran and that it covered every element.
#pragma once

namespace hipcpu {

// Error codes of the HIP runtime (hipErrorIllegalAddress) and CUDA's misaligned-address code, which HIP's
// enum lacks: callers treat a fault of either build alike.
enum { kIllegalAddress = 700, kMisalignedAddress = 716 };

struct Region {
    uintptr_t lo, hi;
    bool writable;
};

inline std::vector<Region>& regions() { static thread_local std::vector<Region> r; return r; }

// [is_store][width index]: widths 1, 2, 4, 8, 16 bytes, then any other.
constexpr int kWidths = 6;
inline long long (&access_counts())[2][kWidths] { static thread_local long long c[2][kWidths] = {}; return c; }

inline int width_index(std::size_t bytes) {
    switch (bytes) {
        case 1: return 0;
        case 2: return 1;
        case 4: return 2;
        case 8: return 3;
        case 16: return 4;
        default: return 5;
    }
}

inline std::string access_text(const void* ptr, std::size_t bytes, bool is_store) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%zu-byte %s at %p (block %u, thread %u)", bytes, is_store ? "store" : "load",
                  ptr, block_index().x, me().tid.x);
    return buf;
}

inline void check_access(const void* ptr, std::size_t bytes, std::size_t align, bool is_store) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
    if (a % align != 0) {
        end_launch(kMisalignedAddress, "misaligned " + access_text(ptr, bytes, is_store) + ": needs " +
                                           std::to_string(align) + "-byte alignment, address % " +
                                           std::to_string(align) + " = " + std::to_string(a % align));
    }
    if (!regions().empty()) {
        const Region* hit = nullptr;
        for (const Region& r : regions()) {
            if (a >= r.lo && a + bytes <= r.hi) {
                hit = &r;
                break;
            }
        }
        if (hit == nullptr) end_launch(kIllegalAddress, "out-of-bounds " + access_text(ptr, bytes, is_store));
        if (is_store && !hit->writable) end_launch(kIllegalAddress, "read-only " + access_text(ptr, bytes, is_store));
    }
    ++access_counts()[is_store ? 1 : 0][width_index(bytes)];
}

}  // namespace hipcpu

// Host-side controls for the loader and tests (weak: every library built on the model exports them once).
extern "C" {
__attribute__((visibility("default"), weak)) void hip_cpu_clear_regions(void) { ::hipcpu::regions().clear(); }

__attribute__((visibility("default"), weak)) void hip_cpu_add_region(const void* lo, long long bytes, int writable) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(lo);
    ::hipcpu::regions().push_back(::hipcpu::Region{a, a + static_cast<uintptr_t>(bytes), writable != 0});
}

// The last launch's checked accesses: out[0..5] loads of 1, 2, 4, 8, 16 and other bytes, out[6..11] stores.
__attribute__((visibility("default"), weak)) void hip_cpu_access_counts(long long* out) {
    for (int s = 0; s < 2; ++s)
        for (int w = 0; w < ::hipcpu::kWidths; ++w) out[s * ::hipcpu::kWidths + w] = ::hipcpu::access_counts()[s][w];
}
}
