// The HIP runtime API a submission's host code calls, on host memory: allocation, copies, streams and
// events (no-ops: every launch has finished when it returns), errors, device properties of an MI355X.
#pragma once

#include <chrono>

typedef int hipError_t;
typedef void* hipStream_t;
typedef void* hipEvent_t;
enum { hipSuccess = 0, hipErrorInvalidValue = 1, hipErrorOutOfMemory = 2 };
enum hipMemcpyKind { hipMemcpyHostToHost, hipMemcpyHostToDevice, hipMemcpyDeviceToHost, hipMemcpyDeviceToDevice,
                     hipMemcpyDefault };

inline hipError_t hipMalloc(void** p, std::size_t bytes) {
    *p = std::aligned_alloc(256, ((bytes + 255) / 256) * 256 + 256);
    return *p ? hipSuccess : hipErrorOutOfMemory;
}
template <class T> inline hipError_t hipMalloc(T** p, std::size_t bytes) { return hipMalloc((void**)p, bytes); }
inline hipError_t hipFree(void* p) { std::free(p); return hipSuccess; }
inline hipError_t hipMemcpy(void* d, const void* s, std::size_t n, hipMemcpyKind) { std::memmove(d, s, n); return hipSuccess; }
inline hipError_t hipMemcpyAsync(void* d, const void* s, std::size_t n, hipMemcpyKind k, hipStream_t = nullptr) {
    return hipMemcpy(d, s, n, k);
}
inline hipError_t hipMemset(void* d, int v, std::size_t n) { std::memset(d, v, n); return hipSuccess; }
inline hipError_t hipMemsetAsync(void* d, int v, std::size_t n, hipStream_t = nullptr) { return hipMemset(d, v, n); }
inline hipError_t hipDeviceSynchronize() { return hipSuccess; }
inline hipError_t hipStreamSynchronize(hipStream_t) { return hipSuccess; }
inline hipError_t hipStreamCreate(hipStream_t* s) { *s = nullptr; return hipSuccess; }
inline hipError_t hipStreamDestroy(hipStream_t) { return hipSuccess; }
// An event holds the host clock of its last record (every launch has finished when it returns): elapsed
// times are plausible host milliseconds, not a GPU's.
inline hipError_t hipEventCreate(hipEvent_t* e) { *e = new double(0.0); return hipSuccess; }
inline hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned) { return hipEventCreate(e); }
inline hipError_t hipEventRecord(hipEvent_t e, hipStream_t = nullptr) {
    if (e == nullptr) return hipErrorInvalidValue;
    *static_cast<double*>(e) = std::chrono::duration<double, std::milli>(
        std::chrono::steady_clock::now().time_since_epoch()).count();
    return hipSuccess;
}
inline hipError_t hipEventSynchronize(hipEvent_t) { return hipSuccess; }
inline hipError_t hipEventQuery(hipEvent_t) { return hipSuccess; }
inline hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop) {
    if (ms == nullptr || start == nullptr || stop == nullptr) return hipErrorInvalidValue;
    *ms = (float)(*static_cast<double*>(stop) - *static_cast<double*>(start));
    return hipSuccess;
}
inline hipError_t hipEventDestroy(hipEvent_t e) { delete static_cast<double*>(e); return hipSuccess; }
inline hipError_t hipStreamWaitEvent(hipStream_t, hipEvent_t, unsigned = 0) { return hipSuccess; }
inline hipError_t hipGetLastError() { int e = ::hipcpu::last_error(); ::hipcpu::last_error() = 0; return e; }
inline hipError_t hipPeekAtLastError() { return ::hipcpu::last_error(); }
// A fault of a checked access (hip_cpu_memcheck.h) reads as its message: which access, where, why.
inline const char* hipGetErrorString(hipError_t e) {
    if (e == hipSuccess) return "hipSuccess";
    if (e >= 700 && !::hipcpu::fault_message().empty()) return ::hipcpu::fault_message().c_str();
    return "hip_cpu error";
}
inline const char* hipGetErrorName(hipError_t e) {
    switch (e) {
        case hipSuccess: return "hipSuccess";
        case hipErrorInvalidValue: return "hipErrorInvalidValue";
        case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
        case 700: return "hipErrorIllegalAddress";
        default: return "hipErrorUnknown";
    }
}
inline hipError_t hipGetDevice(int* d) { *d = 0; return hipSuccess; }
inline hipError_t hipSetDevice(int) { return hipSuccess; }
inline hipError_t hipFuncSetAttribute(const void*, int, int) { return hipSuccess; }
#define HIP_CHECK(x) (x)

// The CUDA names of the same API: load_inline sources are written with them (ROCm's torch hipifies them).
typedef hipError_t cudaError_t;
typedef hipEvent_t cudaEvent_t;
#define cudaSuccess hipSuccess
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaGetLastError hipGetLastError
#define cudaPeekAtLastError hipPeekAtLastError
#define cudaGetErrorString hipGetErrorString
#define cudaGetErrorName hipGetErrorName
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemcpyDefault hipMemcpyDefault
#define cudaFuncSetAttribute hipFuncSetAttribute
#define cudaEventCreate hipEventCreate
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventQuery hipEventQuery
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventDestroy hipEventDestroy
#define cudaStreamWaitEvent hipStreamWaitEvent
