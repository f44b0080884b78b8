// The HIP runtime and the gfx950 device on the CPU: a submission's HIP source, compiled for the host by
// clang++ with this header forced in front (-include), runs its kernels here so their numbers get verdicts.
//
// Execution model (docs/hip_cpu.md says why, and what is not modelled):
//   * a launch walks its blocks one after another; inside a block the threads run on fibers of
//     the calling host thread, in thread order, each until it reaches a synchronisation point; a thread
//     that waits keeps its fiber, one that exits hands it to the next thread;
//   * __syncthreads() is a block barrier: a thread waits until every thread of the block that has not
//     exited reaches one (an exited thread no longer counts, as an exited wave on the GPU);
//   * lane operations (__shfl*, __ballot, ds_bpermute, the MFMAs) are wave barriers: the 64 lanes of a
//     wavefront (threads 64w .. 64w+63 in linear order) deposit their operands, meet, then each reads what
//     it needs, so lanes interact exactly as in lockstep; plain memory accesses between two such points run
//     lane after lane, so a race inside one wave is not modelled (a race between waves is: wave 0 runs to
//     its barrier before wave 1 starts);
//   * __shared__ variables are function statics: one copy, shared by the block's threads; blocks run one at
//     a time, so each block sees it as its own LDS, filled with NaN bytes (0xFF) when the block starts;
//   * atomics are plain read-modify-writes: threads never preempt each other;
//   * a checked access that faults (hip_cpu_memcheck.h) ends the launch: the faulting thread and its block
//     are abandoned, later blocks never run, and the fault is the next hipGetLastError;
//   * the state is per host thread (thread_local), as the HIP runtime's last error is.
// g++ builds it too (our fold does), without the gfx950 builtins: their operand types need clang's
// ext_vector_type.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#if defined(__clang__)
// float/double -> __bf16 as compiled host code: x86 without AVX512-BF16 calls these compiler-runtime
// functions, which GCC's runtime has only from GCC 13 (Debian 12's libgcc lacks them), so a library that
// casts to __bf16 would not load (undefined symbol __truncsfbf2) and a file would run its fallback instead.
// On gfx950 the cast is v_cvt_pk_bf16_f32: nearest even, NaN kept quiet. double goes through float rounded to
// odd, which rounds once overall. Weak: a runtime that has them wins.
extern "C" __attribute__((weak, noinline)) __bf16 __truncsfbf2(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    uint16_t h = (u & 0x7FFFFFFFu) > 0x7F800000u ? (uint16_t)((u >> 16) | 0x0040u)
                                                   : (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
    __bf16 out;
    std::memcpy(&out, &h, 2);
    return out;
}
extern "C" __attribute__((weak, noinline)) __bf16 __truncdfbf2(double x) {
    float f = (float)x;
    if (!std::isnan(x) && (double)f != x) {  // round to odd: toward zero, then the last bit set
        uint32_t u;
        std::memcpy(&u, &f, 4);
        if (std::fabs((double)f) > std::fabs(x)) u -= 1;
        u |= 1u;
        std::memcpy(&f, &u, 4);
    }
    return __truncsfbf2(f);
}
#endif

#define __global__ __attribute__((used))
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))

// __shared__ variables live in one section of the library, so every block can start with its LDS filled
// with NaN bytes (run_block): on the GPU a block's LDS holds whatever an earlier block left, and a read of
// LDS nobody wrote must not find this model's previous call (reruns in another lane order start alike).
#define __shared__ static __attribute__((section("hipcpu_lds")))
extern "C" char __start_hipcpu_lds[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_hipcpu_lds[] __attribute__((weak, visibility("hidden")));
#define __constant__ static
#define __launch_bounds__(...)
// AMDGPU kernel attributes (occupancy and register hints): meaningless for a host function, which the host
// compiler refuses them on. Empty, `__attribute__((amdgpu_flat_work_group_size(64, 64)))` reads as
// `__attribute__(())`.
#define amdgpu_flat_work_group_size(...)
#define amdgpu_waves_per_eu(...)
#define amdgpu_num_vgpr(...)
#define amdgpu_num_sgpr(...)
#define amdgpu_max_num_work_groups(...)
#define __restrict__ __restrict
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#define __HIP_CPU_MODEL__ 1  // a source may test it; the runner's hipcc never defines it
#define __gfx950__ 1
#if defined(__x86_64__)
// __fp16 is an arithmetic half that functions may return on gfx950 (clang's AMDGPU target); x86-64 clang
// keeps it a storage-only type and refuses such returns (aiter's opus.hpp has them). _Float16 is the same
// IEEE binary16 format with arithmetic (on aarch64 hosts __fp16 already is).
#define __fp16 _Float16
#endif

#include "hip_cpu_vector_types.h"  // uint3 (threadIdx's type), float4, ...
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

// Fiber switches. On x86-64 a switch is a few instructions of our own (the callee-saved registers, MXCSR and
// the x87 control word; no signal mask, which swapcontext saves and restores by a system call each time: the
// example GEMM made 2 048 switches a block step, 80% of its run time); elsewhere, or with
// -DHIPCPU_UCONTEXT, ucontext. The two run the same schedule (test_hip_cpu_runtime.py runs both).
#if defined(__x86_64__) && !defined(HIPCPU_UCONTEXT)
#define HIPCPU_OWN_SWITCH 1
extern "C" void hipcpu_fiber_switch(void** save_sp, void* load_sp) __attribute__((visibility("hidden")));
extern "C" void hipcpu_fiber_start() __attribute__((visibility("hidden")));
// Saves this fiber's registers on its stack and its stack pointer in *save_sp, then resumes the fiber whose
// stack pointer is load_sp. A new fiber's stack (fiber_make) holds the same frame, returning into
// hipcpu_fiber_start, which calls the entry in r13 with the argument in r12 (the entry never returns).
__asm__(R"(
    .text
    .weak hipcpu_fiber_switch
    .hidden hipcpu_fiber_switch
    .type hipcpu_fiber_switch, @function
hipcpu_fiber_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $16, %rsp
    stmxcsr 8(%rsp)
    fnstcw (%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    fldcw (%rsp)
    ldmxcsr 8(%rsp)
    addq $16, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size hipcpu_fiber_switch, .-hipcpu_fiber_switch
    .weak hipcpu_fiber_start
    .hidden hipcpu_fiber_start
    .type hipcpu_fiber_start, @function
hipcpu_fiber_start:
    movq %r12, %rdi
    callq *%r13
    ud2
    .size hipcpu_fiber_start, .-hipcpu_fiber_start
)");
#else
#include <ucontext.h>
#endif

namespace hipcpu {

#if defined(HIPCPU_OWN_SWITCH)
struct FiberContext {
    void* sp = nullptr;
};
inline void fiber_switch(FiberContext& from, FiberContext& to) { hipcpu_fiber_switch(&from.sp, to.sp); }
// A fiber on ``stack`` that starts in entry(arg): the frame hipcpu_fiber_switch pops (control words as now,
// r12 = arg, r13 = entry), returning into hipcpu_fiber_start with the stack 16-byte aligned.
inline void fiber_make(FiberContext& c, char* stack, std::size_t size, void (*entry)(long), long arg) {
    uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t(15);
    auto* frame = reinterpret_cast<uint64_t*>(top - 88);  // 88: the frame below, and top - 16 after the return
    uint32_t mxcsr;
    uint16_t fpcw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpcw));
    frame[0] = fpcw;
    frame[1] = mxcsr;
    frame[2] = 0;                                    // r15
    frame[3] = 0;                                    // r14
    frame[4] = reinterpret_cast<uint64_t>(entry);   // r13
    frame[5] = static_cast<uint64_t>(arg);          // r12
    frame[6] = 0;                                    // rbx
    frame[7] = 0;                                    // rbp
    frame[8] = reinterpret_cast<uint64_t>(&hipcpu_fiber_start);  // the return address
    c.sp = frame;
}
#else
struct FiberContext {
    ucontext_t context;
};
inline void fiber_switch(FiberContext& from, FiberContext& to) { swapcontext(&from.context, &to.context); }
inline void fiber_make(FiberContext& c, char* stack, std::size_t size, void (*entry)(long), long arg) {
    getcontext(&c.context);
    c.context.uc_stack.ss_sp = stack;
    c.context.uc_stack.ss_size = size;
    c.context.uc_link = nullptr;  // the entry never returns
    makecontext(&c.context, (void (*)())entry, 1, arg);
}
#endif

constexpr int kWave = 64;
constexpr std::size_t kStack = 256 * 1024;
constexpr std::size_t kLaneBytes = 128;  // the largest operand one lane deposits at a wave barrier

// A thread of the block. It runs on a worker fiber; a thread that never waits at a barrier gives its worker
// to the next thread when it exits, so a block without synchronisation costs one context switch, not one
// per thread (measured: the fold at 8 x 256 x 7168 took 0.50 s with a fiber per thread, see docs/hip_cpu.md).
struct Thread {
    uint3 tid;
    int linear = 0;
    int state = 5;  // 0 runnable, 1 at the block barrier, 2 at a wave barrier, 3 exited, 4 abandoned, 5 not started
    int worker = -1;
    int position = 0;  // where the scheduler's pass runs it (Block::order)
    const void* lane_op = nullptr;  // the lane operation it waits at (one tag per kind: wave_exchange)
};

struct Worker {
    FiberContext context;
    char* stack = nullptr;  // kStack bytes, uninitialised (a zeroed vector would memset them per block size)
    bool parked = false;    // waiting at the end of worker_entry's loop for its next thread
};

struct Block {
    std::vector<Thread> threads;
    std::vector<int> order;  // the pass order: waves in turn, lanes in order (or reversed, lane_order())
    std::vector<Worker> workers;  // reused by every block of every launch on this host thread
    std::vector<int> free_workers;
    FiberContext scheduler;
    int current = -1;  // the running thread
    int cursor = -1;   // the position of the last thread the running worker ran: the pass goes on after it
    int assign = -1;   // the thread a worker resumed from the scheduler is to start
    int live = 0;
    void (*body)(void*) = nullptr;
    void* closure = nullptr;
    alignas(16) unsigned char lanes[1024][kLaneBytes];  // each thread's deposit at a wave barrier
    long long wave_epoch[16] = {};  // wave barriers passed, per wave: names one lane operation
    bool faulted = false;  // a thread ended the launch (end_launch)
    std::vector<unsigned char> dynamic_shared;
};

inline Block*& block() { static thread_local Block* b = nullptr; return b; }
inline uint3& block_index() { static thread_local uint3 v; return v; }
inline dim3& block_dim() { static thread_local dim3 v; return v; }
inline dim3& grid_dim() { static thread_local dim3 v; return v; }
inline int& last_error() { static thread_local int e = 0; return e; }
inline int& launch_fault() { static thread_local int e = 0; return e; }  // the running launch's fault code
inline std::string& fault_message() { static thread_local std::string s; return s; }
// What a launch needed that the model does not run (divergent lane operations, a barrier not every thread
// reaches): kept until the host reads it (hip_cpu_take_unmodelled), which makes the call NOT RUN.
inline std::string& unmodelled() { static std::string s; return s; }
constexpr int kNotModelled = 1000;  // outside HIP's error codes: the launch's error while unmodelled() says why

inline Thread& me() { return block()->threads[block()->current]; }
inline long long wave_epoch() { return block()->wave_epoch[me().linear / 64]; }
inline int lane_id() { return me().linear % kWave; }

[[noreturn]] inline void fault(const char* what) {
    std::fprintf(stderr, "hip_cpu: %s\n", what);
    std::fflush(stderr);
    std::abort();  // a GPU fault ends the kernel; here it ends the process, which the worker reports as a crash
}

inline FiberContext& my_worker_context() { return block()->workers[me().worker].context; }

// Ends the running launch with a fault, as a GPU memory fault ends its kernel: this thread never resumes,
// the scheduler abandons its block and the launch runs no further blocks.
[[noreturn]] inline void end_launch(int code, const std::string& what) {
    Block* b = block();
    if (b == nullptr || b->current < 0) fault(what.c_str());  // not inside a kernel: nothing to end
    fault_message() = what;
    launch_fault() = code;
    b->faulted = true;
    me().state = 4;
    b->cursor = me().position;
    fiber_switch(my_worker_context(), b->scheduler);
    std::abort();  // never resumed
}

// Ends the launch because it needs what the model does not run; the call that launched it is NOT RUN.
[[noreturn]] inline void not_modelled(const std::string& what) {
    if (unmodelled().empty()) unmodelled() = what;
    end_launch(kNotModelled, "not modelled by the CPU model of gfx950: " + what);
}

inline void yield_to_scheduler() {
    Block* b = block();
    b->cursor = me().position;
    fiber_switch(my_worker_context(), b->scheduler);
}

// Everyone of ``group`` (the wave, or the whole block) that has not exited waits here until all have come.
inline void barrier(int state, int first, int count) {
    Block* b = block();
    me().state = state;
    for (;;) {
        bool all = true;
        for (int t = first; t < first + count && t < (int)b->threads.size(); ++t) {
            int s = b->threads[t].state;
            if (s != state && s != 3) { all = false; break; }
        }
        if (all) {
            if (state == 2) {
                // On gfx950 a lane operation is one instruction of the wave: lanes meeting at different ones
                // (a __shfl only some lanes call) exchange nothing this model could vouch for.
                for (int t = first; t < first + count && t < (int)b->threads.size(); ++t)
                    if (b->threads[t].state == 2 && b->threads[t].lane_op != me().lane_op)
                        not_modelled("divergent lane operations: lanes of one wave reached different lane "
                                     "operations (e.g. a __shfl or an MFMA only some lanes call)");
            }
            for (int t = first; t < first + count && t < (int)b->threads.size(); ++t)
                if (b->threads[t].state == state) b->threads[t].state = 0;
            if (state == 2) b->wave_epoch[first / kWave] += 1;  // a new lane operation of this wave begins
            return;
        }
        yield_to_scheduler();
        if (me().state == 0) return;
    }
}

inline void wave_barrier(const void* lane_op = nullptr) {
    int wave = me().linear / kWave;
    me().lane_op = lane_op;
    barrier(2, wave * kWave, kWave);
}
inline void block_barrier() { barrier(1, 0, (int)block()->threads.size()); }

inline unsigned char* lane_slot(int lane) {
    int wave = me().linear / kWave;
    return block()->lanes[wave * kWave + lane];
}

// A value of every lane of the wave: deposit, meet, read, meet again (so no lane overwrites a slot that
// another has not read yet).
template <class T, class Read>
inline auto wave_exchange(const T& mine, Read read) -> decltype(read()) {
    static_assert(sizeof(T) <= kLaneBytes, "lane operand too large for the wave model");
    static const char kind = 0;  // one per instantiation: per kind of lane operation
    std::memcpy(lane_slot(lane_id()), &mine, sizeof(T));
    wave_barrier(&kind);
    auto out = read();
    wave_barrier(&kind);
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
    return t >= (int)block()->threads.size() || block()->threads[t].state == 3;
}

// A worker runs the thread it was given, then, while the next thread in order has not started, that one
// too (the order the scheduler's pass would run them in), then parks until it is given another.
inline void worker_entry(long index) {
    const int w = (int)index;
    for (;;) {
        Block* b = block();
        int t = b->assign;
        for (;;) {
            b->current = t;
            b->threads[t].worker = w;
            b->threads[t].state = 0;
            b->body(b->closure);
            b->threads[t].state = 3;
            b->live -= 1;
            const int next = b->threads[t].position + 1;
            if (next < (int)b->order.size() && b->threads[b->order[next]].state == 5) {
                t = b->order[next];
                continue;
            }
            break;
        }
        b->cursor = b->threads[t].position;
        b->workers[w].parked = true;
        b->free_workers.push_back(w);
        fiber_switch(b->workers[w].context, b->scheduler);
    }
}

inline int take_worker(Block* b) {
    if (!b->free_workers.empty()) {
        int w = b->free_workers.back();
        b->free_workers.pop_back();
        return w;
    }
    b->workers.emplace_back();
    return (int)b->workers.size() - 1;
}

// A worker that is not parked in worker_entry (new, or abandoned by a fault) starts afresh.
inline void start_worker(Block* b, int w) {
    Worker& k = b->workers[w];
    if (k.parked) return;
    if (k.stack == nullptr) k.stack = static_cast<char*>(std::malloc(kStack));
    fiber_make(k.context, k.stack, kStack, worker_entry, w);
}

inline long long& launch_count() { static thread_local long long n = 0; return n; }
// Called after every block (set by the host through hip_cpu_set_progress): the submission worker counts
// blocks as progress, so a long HIP call on the CPU model is slow, not hung.
inline void (*&block_done())() { static void (*callback)() = nullptr; return callback; }
inline void reset_access_counts();

// The order lanes of one wave run in between two lane operations: 0 in lane order, 1 reversed, 2 rotated by
// half a wave (lanes 32..63, then 0..31). A wave runs in lockstep on gfx950, which this model does not do; a
// kernel whose result changes with this order relies on lockstep (or races inside a wave), and the suite
// then calls what fails only there NOT RUN. Read at every launch from MXFP4_FUZZ_HIP_LANES ("reversed",
// "rotated"), which the submission worker sets per call.
inline int lane_order() {
    const char* v = std::getenv("MXFP4_FUZZ_HIP_LANES");
    if (v == nullptr) return 0;
    return std::strcmp(v, "reversed") == 0 ? 1 : std::strcmp(v, "rotated") == 0 ? 2 : 0;
}

// The byte a block's LDS holds when it starts: 0xFF (NaN in every float format, so a read of LDS nobody wrote
// shows), or MXFP4_FUZZ_HIP_LDS_FILL (read at every launch; the submission worker sets it per call): an output
// that changes with it read LDS before any lane wrote it, in the model's lane-after-lane order. On gfx950 a
// wave reading what its own lanes just wrote without a barrier sees it (lockstep); nobody's data is garbage.
inline int lds_fill() {
    const char* v = std::getenv("MXFP4_FUZZ_HIP_LDS_FILL");
    return v == nullptr ? 0xFF : (int)(std::strtol(v, nullptr, 0) & 0xFF);
}

template <class F>
inline void run_block(dim3 threads, std::size_t shared_bytes, F& body_fn) {
    static thread_local Block* storage = new Block();  // one block at a time; workers' stacks are reused
    Block* b = storage;
    block() = b;
    const int count = (int)(threads.x * threads.y * threads.z);
    if (count <= 0 || count > 1024) fault("launch with a block of more than 1024 threads (or none)");
    if ((int)b->threads.size() != count) b->threads.resize(count);
    const int fill = lds_fill();
    b->dynamic_shared.assign(shared_bytes, (unsigned char)fill);  // a read of dynamic LDS nobody wrote shows
    if (__start_hipcpu_lds != nullptr && __stop_hipcpu_lds > __start_hipcpu_lds)
        std::memset(__start_hipcpu_lds, fill, (std::size_t)(__stop_hipcpu_lds - __start_hipcpu_lds));
    b->body = [](void* f) { (*static_cast<F*>(f))(); };
    b->closure = &body_fn;
    b->live = count;
    b->faulted = false;
    b->order.resize(count);
    const int order = lane_order();
    for (int t = 0; t < count; ++t) {
        const int first = t / kWave * kWave, lanes = std::min(count, first + kWave) - first;
        b->order[t] = order == 1 ? first + (lanes - 1 - (t - first))
                    : order == 2 ? first + (t - first + lanes / 2) % lanes : t;
    }
    for (int p = 0; p < count; ++p) b->threads[b->order[p]].position = p;
    for (int t = 0; t < count; ++t) {
        Thread& th = b->threads[t];
        th.linear = t;
        th.tid = {t % threads.x, (t / threads.x) % threads.y, t / (threads.x * threads.y)};
        th.state = 5;
        th.worker = -1;
    }
    // Passes in thread order: a thread not started starts on a free worker, a released one resumes on its own.
    while (b->live > 0 && !b->faulted) {
        bool ran = false;
        for (int p = 0; p < count && !b->faulted; ++p) {
            const int t = b->order[p];
            Thread& th = b->threads[t];
            int w;
            if (th.state == 5) {
                w = take_worker(b);
                start_worker(b, w);
                b->workers[w].parked = false;
                b->assign = t;
            } else if (th.state == 0) {
                w = th.worker;
            } else {
                continue;
            }
            b->current = t;
            ran = true;
            fiber_switch(b->scheduler, b->workers[w].context);
            p = b->cursor;
        }
        if (!ran && b->live > 0 && !b->faulted) {
            // Every live thread waits: a barrier some threads never reach. On the GPU that is a hang, or, where
            // only some lanes of a wave skip a __syncthreads, fine (s_barrier is per wave): the model cannot say.
            if (unmodelled().empty())
                unmodelled() = "a barrier that some threads of the block never reach (__syncthreads or a lane "
                               "operation in divergent code)";
            fault_message() = "not modelled by the CPU model of gfx950: " + unmodelled();
            launch_fault() = kNotModelled;
            b->faulted = true;
        }
    }
    if (b->faulted) {
        // Every worker is free again; those that held the abandoned block's threads (not parked) restart
        // from scratch when next taken (start_worker).
        b->free_workers.clear();
        for (int w = 0; w < (int)b->workers.size(); ++w) b->free_workers.push_back(w);
    }
    b->current = -1;
    if (!b->faulted && block_done()) block_done()();
}

template <class... P, class... A>
inline void launch(void (*kernel)(P...), dim3 grid, dim3 threads, std::size_t shared_bytes, void* /*stream*/,
                   A&&... args) {
    grid_dim() = grid;
    block_dim() = threads;
    launch_count() += 1;
    launch_fault() = 0;
    reset_access_counts();
    std::tuple<std::decay_t<P>...> bound(static_cast<std::decay_t<P>>(args)...);
    for (unsigned z = 0; z < grid.z; ++z)
        for (unsigned y = 0; y < grid.y; ++y)
            for (unsigned x = 0; x < grid.x; ++x) {
                block_index() = {x, y, z};
                auto body = [&]() { std::apply(kernel, bound); };
                run_block(threads, shared_bytes, body);
                if (launch_fault() != 0) {
                    last_error() = launch_fault();
                    return;
                }
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
#include "hip_cpu_module.h"
#include "hip_cpu_memcheck.h"
#include "hip_cpu_buffer.h"
#if defined(__clang__)
#include "hip_cpu_gfx950.h"
#endif

namespace hipcpu {
inline void reset_access_counts() {
    for (auto& direction : access_counts())
        for (long long& c : direction) c = 0;
}
}  // namespace hipcpu

// How many kernels this library launched: the worker reads it to say the HIP path served a call.
extern "C" __attribute__((visibility("default"), weak)) long long hip_cpu_launch_count() {
    return ::hipcpu::launch_count();
}
// What a launch needed that the model does not run, then forgotten ("" when nothing): the worker makes
// the call NOT RUN with it.
extern "C" __attribute__((visibility("default"), weak)) const char* hip_cpu_take_unmodelled() {
    static std::string taken;
    taken = ::hipcpu::unmodelled();
    ::hipcpu::unmodelled().clear();
    return taken.c_str();
}
extern "C" __attribute__((visibility("default"), weak)) void hip_cpu_set_progress(void (*callback)()) {
    ::hipcpu::block_done() = callback;
}
