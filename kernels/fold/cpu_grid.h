// Minimal CUDA/HIP grid emulation so a .cu kernel source compiles with plain g++ -x c++ and runs on CPU.
//
// launch() walks every block and every thread sequentially on the calling host thread. Kernels route
// memory accesses through check_access(), which faults (aborting the whole grid walk, as a GPU fault
// aborts the kernel) on
//   * a misaligned access: the address is not a multiple of the access's alignment (16 for float4),
//   * an access outside every registered region, or a store into a read-only region
//     (only when the host registered regions with cpu_grid_add_region; none means "not checked").
// It also counts each launch's accesses by width so tests can see which path ran and that it covered everything.
//
// Not emulated: shared memory, __syncthreads, warps/wavefronts, atomics, concurrency. Threads run one
// after another, so a data race between threads cannot show up here.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct uint3 {
    unsigned x, y, z;
};

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

// Same size and alignment as CUDA's float4, so a misaligned reinterpret_cast is as wrong here as there.
struct alignas(16) float4 {
    float x, y, z, w;
};

inline thread_local uint3 blockIdx, threadIdx;
inline thread_local dim3 blockDim, gridDim;

inline unsigned int __float_as_uint(float x) {
    unsigned int w;
    std::memcpy(&w, &x, sizeof w);
    return w;
}

namespace cpu_grid {

// Error codes mirror the CUDA runtime's, so callers can treat both builds alike.
enum { kOk = 0, kIllegalAddress = 700, kMisalignedAddress = 716 };

struct Fault {
    int code;
    std::string what;
};

struct Region {
    uintptr_t lo, hi;
    bool writable;
};

// Access counters, indexed by kind: 0 = 16-byte loads, 1 = 4-byte loads, 2 = 8-byte stores, 3 = 2-byte stores,
// 4 = any other access.
enum { kCounters = 5 };

struct State {
    std::vector<Region> regions;
    long long counters[kCounters] = {};
    int status = kOk;
    std::string message;
};

inline thread_local State state;

inline int counter_index(std::size_t bytes, bool is_store) {
    if (!is_store && bytes == 16) return 0;
    if (!is_store && bytes == 4) return 1;
    if (is_store && bytes == 8) return 2;
    if (is_store && bytes == 2) return 3;
    return 4;
}

inline std::string where(const void* ptr, std::size_t bytes, bool is_store) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%zu-byte %s at %p (block %u, thread %u)", bytes, is_store ? "store" : "load",
                  ptr, blockIdx.x, threadIdx.x);
    return buf;
}

inline void check_access(const void* ptr, std::size_t bytes, std::size_t align, bool is_store) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
    if (a % align != 0) {
        throw Fault{kMisalignedAddress,
                    "misaligned " + where(ptr, bytes, is_store) + ": needs " + std::to_string(align) +
                        "-byte alignment, address % " + std::to_string(align) + " = " + std::to_string(a % align)};
    }
    if (!state.regions.empty()) {
        const Region* hit = nullptr;
        for (const Region& r : state.regions) {
            if (a >= r.lo && a + bytes <= r.hi) {
                hit = &r;
                break;
            }
        }
        if (hit == nullptr) throw Fault{kIllegalAddress, "out-of-bounds " + where(ptr, bytes, is_store)};
        if (is_store && !hit->writable) throw Fault{kIllegalAddress, "read-only " + where(ptr, bytes, is_store)};
    }
    ++state.counters[counter_index(bytes, is_store)];
}

template <class... KArgs, class... Args>
int launch(dim3 grid, dim3 block, void (*kernel)(KArgs...), Args... args) {
    gridDim = grid;
    blockDim = block;
    for (long long& c : state.counters) c = 0;
    try {
        for (unsigned bz = 0; bz < grid.z; ++bz)
            for (unsigned by = 0; by < grid.y; ++by)
                for (unsigned bx = 0; bx < grid.x; ++bx) {
                    blockIdx = uint3{bx, by, bz};
                    for (unsigned tz = 0; tz < block.z; ++tz)
                        for (unsigned ty = 0; ty < block.y; ++ty)
                            for (unsigned tx = 0; tx < block.x; ++tx) {
                                threadIdx = uint3{tx, ty, tz};
                                kernel(args...);
                            }
                }
    } catch (const Fault& f) {
        state.message = f.what;
        return state.status = f.code;
    }
    state.message.clear();
    return state.status = kOk;
}

inline int status() { return state.status; }
inline const char* message() { return state.message.c_str(); }

}  // namespace cpu_grid

// Host-side controls, exported from the shared object for the Python loader and tests. Defined (not
// inline) so they are always emitted: include this header from exactly one translation unit.
extern "C" {

void cpu_grid_clear_regions(void) { cpu_grid::state.regions.clear(); }

void cpu_grid_add_region(const void* lo, long long bytes, int writable) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(lo);
    cpu_grid::state.regions.push_back(cpu_grid::Region{a, a + static_cast<uintptr_t>(bytes), writable != 0});
}

// Copies the last launch's access counters (see cpu_grid::kCounters) into out[0..4].
void cpu_grid_counters(long long* out) {
    for (int i = 0; i < cpu_grid::kCounters; ++i) out[i] = cpu_grid::state.counters[i];
}

}  // extern "C"
