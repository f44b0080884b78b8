// Lane operations of a wave64 wavefront (HIP's __shfl family, ballot/any/all, and the amdgcn builtins
// real kernels use for the same): each is a wave barrier of hip_cpu_runtime.h, so every lane sees the
// others' values of the same instruction, as in lockstep.
#pragma once

namespace hipcpu {

template <class T>
inline T shfl_from(const T& v, int source) {
    return wave_exchange(v, [&] {
        int s = ((source % kWave) + kWave) % kWave;
        return lane_exited(s) ? v : lane_value<T>(s);  // an inactive source lane: the hardware returns stale data
    });
}

}  // namespace hipcpu

// HIP semantics (hip/amd_detail/amd_warp_functions.h): the source lane wraps within ``width``-lane segments.
template <class T>
inline T __shfl(T v, int src, int width = warpSize) {
    int lane = (int)__lane_id();
    int source = (lane & ~(width - 1)) + (src & (width - 1));
    return ::hipcpu::shfl_from(v, source);
}
template <class T>
inline T __shfl_xor(T v, int mask, int width = warpSize) {
    int lane = (int)__lane_id();
    int source = lane ^ mask;
    if ((source & ~(width - 1)) != (lane & ~(width - 1))) source = lane;  // outside the segment: own value
    return ::hipcpu::shfl_from(v, source);
}
template <class T>
inline T __shfl_down(T v, unsigned delta, int width = warpSize) {
    int lane = (int)__lane_id();
    int source = lane + (int)delta;
    if ((source & ~(width - 1)) != (lane & ~(width - 1))) source = lane;
    return ::hipcpu::shfl_from(v, source);
}
template <class T>
inline T __shfl_up(T v, unsigned delta, int width = warpSize) {
    int lane = (int)__lane_id();
    int source = lane - (int)delta;
    if (source < (lane & ~(width - 1))) source = lane;
    return ::hipcpu::shfl_from(v, source);
}
template <class T> inline T __shfl_sync(unsigned long long, T v, int src, int width = warpSize) { return __shfl(v, src, width); }
template <class T> inline T __shfl_xor_sync(unsigned long long, T v, int m, int width = warpSize) { return __shfl_xor(v, m, width); }
template <class T> inline T __shfl_down_sync(unsigned long long, T v, unsigned d, int width = warpSize) { return __shfl_down(v, d, width); }
template <class T> inline T __shfl_up_sync(unsigned long long, T v, unsigned d, int width = warpSize) { return __shfl_up(v, d, width); }

inline unsigned long long __ballot(int predicate) {
    int mine = predicate != 0;
    return ::hipcpu::wave_exchange(mine, [] {
        unsigned long long bits = 0;
        for (int l = 0; l < ::hipcpu::kWave; ++l)
            if (!::hipcpu::lane_exited(l) && ::hipcpu::lane_value<int>(l)) bits |= 1ull << l;
        return bits;
    });
}
inline int __any(int p) { return __ballot(p) != 0; }
inline int __all(int p) {
    unsigned long long active = ::hipcpu::wave_exchange(1, [] {
        unsigned long long bits = 0;
        for (int l = 0; l < ::hipcpu::kWave; ++l) if (!::hipcpu::lane_exited(l)) bits |= 1ull << l;
        return bits;
    });
    return __ballot(p) == active;
}
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffsll(unsigned long long x) { return __builtin_ffsll((long long)x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }

// ds_bpermute: lane l reads the dword of lane (addr / 4) % 64 (the byte address, as the ISA's LDS permute).
inline int __builtin_amdgcn_ds_bpermute_cpu(int addr, int v) {
    return ::hipcpu::shfl_from(v, (addr >> 2) & 63);
}
#define __builtin_amdgcn_ds_bpermute __builtin_amdgcn_ds_bpermute_cpu
inline int __builtin_amdgcn_readfirstlane_cpu(int v) {
    return ::hipcpu::wave_exchange(v, [&] {
        for (int l = 0; l < ::hipcpu::kWave; ++l) if (!::hipcpu::lane_exited(l)) return ::hipcpu::lane_value<int>(l);
        return v;
    });
}
#define __builtin_amdgcn_readfirstlane __builtin_amdgcn_readfirstlane_cpu
// readlane: the value lane ``lane`` (uniform, mod 64) holds; a lane that has exited holds what the model
// does not know: NOT RUN.
inline int __builtin_amdgcn_readlane_cpu(int v, int lane) {
    int source = lane & 63;
    if (::hipcpu::wave_exchange(0, [&] { return (int)::hipcpu::lane_exited(source); }))
        ::hipcpu::not_modelled("__builtin_amdgcn_readlane of a lane that has exited");
    return ::hipcpu::shfl_from(v, source);
}
#define __builtin_amdgcn_readlane __builtin_amdgcn_readlane_cpu
// mbcnt: the count of set bits of the mask below this lane (lo: lanes 0-31, hi: lanes 32-63), plus base.
inline unsigned __builtin_amdgcn_mbcnt_lo_cpu(unsigned mask, unsigned base) {
    unsigned lane = __lane_id();
    unsigned below = lane >= 32 ? mask : (lane == 0 ? 0u : mask & ((1u << lane) - 1));
    return base + (unsigned)__builtin_popcount(below);
}
inline unsigned __builtin_amdgcn_mbcnt_hi_cpu(unsigned mask, unsigned base) {
    unsigned lane = __lane_id();
    unsigned below = lane < 32 ? 0u : (lane == 32 ? 0u : mask & ((1u << (lane - 32)) - 1));
    return base + (unsigned)__builtin_popcount(below);
}
#define __builtin_amdgcn_mbcnt_lo __builtin_amdgcn_mbcnt_lo_cpu
#define __builtin_amdgcn_mbcnt_hi __builtin_amdgcn_mbcnt_hi_cpu
#define __builtin_amdgcn_s_barrier() __syncthreads()
#define __builtin_amdgcn_s_waitcnt(x) ((void)0)
#define __builtin_amdgcn_sched_barrier(x) ((void)0)
#define __builtin_amdgcn_s_setprio(x) ((void)0)
// Scheduling hints and a sleep: they order or delay instructions, never change a value.
#define __builtin_amdgcn_sched_group_barrier(mask, size, group) ((void)0)
#define __builtin_amdgcn_iglp_opt(x) ((void)0)
#define __builtin_amdgcn_s_sleep(x) ((void)0)
#define __builtin_amdgcn_workitem_id_x() (threadIdx.x)
#define __builtin_amdgcn_workgroup_id_x() (blockIdx.x)

template <class T> inline T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
template <class T> inline T atomicMax(T* p, T v) { T old = *p; *p = old < v ? v : old; return old; }
template <class T> inline T atomicMin(T* p, T v) { T old = *p; *p = v < old ? v : old; return old; }
template <class T> inline T atomicExch(T* p, T v) { T old = *p; *p = v; return old; }
template <class T> inline T atomicCAS(T* p, T compare, T v) { T old = *p; if (old == compare) *p = v; return old; }

// DPP moves (row shifts, rotates, broadcasts within a row of 16 lanes): declared so that headers using them
// build; a launch that reaches one is NOT RUN, named (the dpp_ctrl encodings are not modelled).
inline int __builtin_amdgcn_mov_dpp_cpu(int, int, int, int, bool) {
    ::hipcpu::not_modelled("__builtin_amdgcn_mov_dpp (a DPP lane move)");
}
inline int __builtin_amdgcn_update_dpp_cpu(int, int, int, int, int, bool) {
    ::hipcpu::not_modelled("__builtin_amdgcn_update_dpp (a DPP lane move)");
}
#define __builtin_amdgcn_mov_dpp __builtin_amdgcn_mov_dpp_cpu
#define __builtin_amdgcn_update_dpp __builtin_amdgcn_update_dpp_cpu
