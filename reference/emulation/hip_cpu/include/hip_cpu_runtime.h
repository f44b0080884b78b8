// The HIP runtime and the gfx950 device on the CPU: a submission's HIP source, compiled for the host by
// clang++ with this header forced in front (-include), runs its kernels here so their numbers get verdicts.
//
// Execution model (docs/hip_cpu.md says why, and what is not modelled):
//   * a launch walks its blocks one after another; inside a block every thread is a fiber (ucontext) on
//     the calling host thread, run in thread order until it reaches a synchronisation point;
//   * __syncthreads() is a block barrier: a thread waits until every thread of the block that has not
//     exited reaches one (an exited thread no longer counts, as an exited wave on the GPU);
//   * lane operations (__shfl*, __ballot, ds_bpermute, the MFMAs) are wave barriers: the 64 lanes of a
//     wavefront (threads 64w .. 64w+63 in linear order) deposit their operands, meet, then each reads what
//     it needs, so lanes interact exactly as in lockstep; plain memory accesses between two such points run
//     lane after lane, so a race inside one wave is not modelled (a race between waves is: wave 0 runs to
//     its barrier before wave 1 starts);
//   * __shared__ variables are function statics: one copy, shared by the block's fibers; blocks run one at
//     a time, so each block sees it as its own LDS (left holding the previous block's data, not zero);
//   * atomics are plain read-modify-writes: fibers never preempt each other.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>
#include <ucontext.h>

#define __global__ __attribute__((used))
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))

#define __shared__ static
#define __constant__ static
#define __launch_bounds__(...)
#define __restrict__ __restrict
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#define __HIP_CPU_MODEL__ 1  // a source may test it; the runner's hipcc never defines it
#define __gfx950__ 1

struct uint3 { unsigned x, y, z; };
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace hipcpu {

constexpr int kWave = 64;
constexpr std::size_t kStack = 256 * 1024;
constexpr std::size_t kLaneBytes = 128;  // the largest operand one lane deposits at a wave barrier

struct Fiber {
    ucontext_t context;
    uint3 tid;
    int linear = 0;
    int state = 0;  // 0 runnable, 1 at the block barrier, 2 at a wave barrier, 3 exited
    char* stack = nullptr;  // kStack bytes, uninitialised (a zeroed vector would memset them per block size)
};

struct Block {
    std::vector<Fiber> fibers;
    ucontext_t scheduler;
    int current = -1;
    int live = 0;
    void (*body)(void*) = nullptr;
    void* closure = nullptr;
    alignas(16) unsigned char lanes[1024][kLaneBytes];  // each thread's deposit at a wave barrier
    long long wave_epoch[16] = {};  // wave barriers passed, per wave: names one lane operation
    long long launches = 0;
    std::vector<unsigned char> dynamic_shared;
};

inline Block*& block() { static Block* b = nullptr; return b; }
inline uint3& block_index() { static uint3 v; return v; }
inline dim3& block_dim() { static dim3 v; return v; }
inline dim3& grid_dim() { static dim3 v; return v; }
inline int& last_error() { static int e = 0; return e; }
inline std::string& fault_message() { static std::string s; return s; }

inline Fiber& me() { return block()->fibers[block()->current]; }
inline long long wave_epoch() { return block()->wave_epoch[me().linear / 64]; }
inline int lane_id() { return me().linear % kWave; }

[[noreturn]] inline void fault(const char* what) {
    std::fprintf(stderr, "hip_cpu: %s\n", what);
    std::fflush(stderr);
    std::abort();  // a GPU fault ends the kernel; here it ends the process, which the worker reports as a crash
}

inline void yield_to_scheduler() {
    Block* b = block();
    swapcontext(&b->fibers[b->current].context, &b->scheduler);
}

// Everyone of ``group`` (the wave, or the whole block) that has not exited waits here until all have come.
inline void barrier(int state, int first, int count) {
    Block* b = block();
    me().state = state;
    for (;;) {
        bool all = true;
        for (int t = first; t < first + count && t < (int)b->fibers.size(); ++t) {
            int s = b->fibers[t].state;
            if (s != state && s != 3) { all = false; break; }
        }
        if (all) {
            for (int t = first; t < first + count && t < (int)b->fibers.size(); ++t)
                if (b->fibers[t].state == state) b->fibers[t].state = 0;
            if (state == 2) b->wave_epoch[first / kWave] += 1;  // a new lane operation of this wave begins
            return;
        }
        yield_to_scheduler();
        if (me().state == 0) return;
    }
}

inline void wave_barrier() {
    int wave = me().linear / kWave;
    barrier(2, wave * kWave, kWave);
}
inline void block_barrier() { barrier(1, 0, (int)block()->fibers.size()); }

inline unsigned char* lane_slot(int lane) {
    int wave = me().linear / kWave;
    return block()->lanes[wave * kWave + lane];
}

// A value of every lane of the wave: deposit, meet, read, meet again (so no lane overwrites a slot that
// another has not read yet).
template <class T, class Read>
inline auto wave_exchange(const T& mine, Read read) -> decltype(read()) {
    static_assert(sizeof(T) <= kLaneBytes, "lane operand too large for the wave model");
    std::memcpy(lane_slot(lane_id()), &mine, sizeof(T));
    wave_barrier();
    auto out = read();
    wave_barrier();
    return out;
}

template <class T>
inline T lane_value(int lane) {
    T v;
    std::memcpy(&v, lane_slot(lane), sizeof(T));
    return v;
}

inline bool lane_exited(int lane) {
    int t = (me().linear / kWave) * kWave + lane;
    return t >= (int)block()->fibers.size() || block()->fibers[t].state == 3;
}

inline void fiber_entry(unsigned int hi, unsigned int lo) {
    Block* b = block();
    (void)hi; (void)lo;
    b->body(b->closure);
    b->fibers[b->current].state = 3;
    b->live -= 1;
    swapcontext(&b->fibers[b->current].context, &b->scheduler);
}

inline long long& launch_count() { static long long n = 0; return n; }
// Called after every block (set by the host through hip_cpu_set_progress): the submission worker counts
// blocks as progress, so a long HIP call on the CPU model is slow, not hung.
inline void (*&block_done())() { static void (*callback)() = nullptr; return callback; }

template <class F>
inline void run_block(dim3 threads, std::size_t shared_bytes, F& body_fn) {
    static Block* storage = new Block();  // one block at a time; fibers' stacks are reused
    Block* b = storage;
    block() = b;
    const int count = (int)(threads.x * threads.y * threads.z);
    if (count <= 0 || count > 1024) fault("launch with a block of more than 1024 threads (or none)");
    if ((int)b->fibers.size() != count) b->fibers.resize(count);
    b->dynamic_shared.assign(shared_bytes, 0xFF);  // NaN bytes: a read of dynamic LDS nobody wrote shows
    b->body = [](void* f) { (*static_cast<F*>(f))(); };
    b->closure = &body_fn;
    b->live = count;
    for (int t = 0; t < count; ++t) {
        Fiber& f = b->fibers[t];
        f.linear = t;
        f.tid = {t % threads.x, (t / threads.x) % threads.y, t / (threads.x * threads.y)};
        f.state = 0;
        if (f.stack == nullptr) f.stack = static_cast<char*>(std::malloc(kStack));
        getcontext(&f.context);
        f.context.uc_stack.ss_sp = f.stack;
        f.context.uc_stack.ss_size = kStack;
        f.context.uc_link = &b->scheduler;
        makecontext(&f.context, (void (*)())fiber_entry, 2, 0u, 0u);
    }
    while (b->live > 0) {
        bool ran = false;
        for (int t = 0; t < count; ++t) {
            if (b->fibers[t].state != 0) continue;
            b->current = t;
            ran = true;
            swapcontext(&b->scheduler, &b->fibers[t].context);
        }
        if (!ran && b->live > 0) {
            // Every live thread waits: a barrier some threads never reach (on the GPU: a hang).
            fault("deadlock: threads wait at __syncthreads or a lane operation that others of the block never reach");
        }
    }
    b->current = -1;
    if (block_done()) block_done()();
}

template <class... P, class... A>
inline void launch(void (*kernel)(P...), dim3 grid, dim3 threads, std::size_t shared_bytes, void* /*stream*/,
                   A&&... args) {
    grid_dim() = grid;
    block_dim() = threads;
    launch_count() += 1;
    std::tuple<std::decay_t<P>...> bound(static_cast<std::decay_t<P>>(args)...);
    for (unsigned z = 0; z < grid.z; ++z)
        for (unsigned y = 0; y < grid.y; ++y)
            for (unsigned x = 0; x < grid.x; ++x) {
                block_index() = {x, y, z};
                auto body = [&]() { std::apply(kernel, bound); };
                run_block(threads, shared_bytes, body);
            }
    last_error() = 0;
}

inline void* dynamic_shared() { return block()->dynamic_shared.data(); }

}  // namespace hipcpu


#define threadIdx (::hipcpu::me().tid)
#define blockIdx (::hipcpu::block_index())
#define blockDim (::hipcpu::block_dim())
#define gridDim (::hipcpu::grid_dim())
#define warpSize 64
#define hipLaunchKernelGGL(kernel, grid, block, shared, stream, ...) \
    ::hipcpu::launch((kernel), dim3(grid), dim3(block), (std::size_t)(shared), (void*)(stream), ##__VA_ARGS__)

inline void __syncthreads() { ::hipcpu::block_barrier(); }
inline void __threadfence() {}
inline void __threadfence_block() {}
inline unsigned __lane_id() { return (unsigned)::hipcpu::lane_id(); }

#include "hip_cpu_bf16.h"
#include "hip_cpu_lanes.h"
#include "hip_cpu_api.h"
#include "hip_cpu_gfx950.h"

// How many kernels this library launched: the worker reads it to say the HIP path served a call.
extern "C" __attribute__((visibility("default"), weak)) long long hip_cpu_launch_count() {
    return ::hipcpu::launch_count();
}
extern "C" __attribute__((visibility("default"), weak)) void hip_cpu_set_progress(void (*callback)()) {
    ::hipcpu::block_done() = callback;
}
