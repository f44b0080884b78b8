// hipModuleLoad and its kin from a file's C++: prebuilt gfx950 code objects. The model builds a file's HIP
// from source and cannot run a binary; the host (reference/emulation/hip_cpu/code_objects.py, registered by
// no_rocm when it loads the library) knows the code objects it models (aiter's f4gemm ASM kernels) and runs
// their launches. Anything else the host refuses, saying why, and the call is NOT RUN.
#pragma once

typedef struct ihipModule_t* hipModule_t;
typedef struct ihipModuleSymbol_t* hipFunction_t;
#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void*)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void*)0x02)
#define HIP_LAUNCH_PARAM_END ((void*)0x03)
// HIP's codes (hip_runtime_api.h)
enum { hipErrorInvalidImage = 200, hipErrorFileNotFound = 301, hipErrorInvalidHandle = 400, hipErrorNotFound = 500,
       hipErrorNotSupported = 801 };

namespace hipcpu {
// op 0: load (path); op 1: get function (path, name); op 2: launch (path, name, argument buffer, its size, dims:
// grid x y z, block x y z). Answers 0, kNotModelled (the host recorded why), or a HIP error code to return.
typedef int (*CodeObjectHost)(int op, const char* path, const char* name, const void* args, unsigned long size,
                              const unsigned* dims);
inline CodeObjectHost& code_object_host() { static CodeObjectHost host = nullptr; return host; }
struct CodeObject { std::string path; };
struct CodeObjectFunction { std::string path, name; };

// A host's answer as the HIP call's result: kNotModelled (the host recorded why) reads as hipErrorNotSupported.
inline hipError_t code_object_answer(int code) { return code == kNotModelled ? hipErrorNotSupported : code; }
// No host (a build outside the suite's worker): every code object is refused, saying so.
inline hipError_t no_code_object_host(const char* what) {
    if (unmodelled().empty()) unmodelled() = std::string(what) + ": the CPU model of gfx950 runs no prebuilt code object";
    return hipErrorNotSupported;
}
}  // namespace hipcpu

inline hipError_t hipModuleLoad(hipModule_t* module, const char* path) {
    if (::hipcpu::code_object_host() == nullptr) return ::hipcpu::no_code_object_host("hipModuleLoad");
    const int code = ::hipcpu::code_object_host()(0, path, "", nullptr, 0, nullptr);
    if (code != 0) return ::hipcpu::code_object_answer(code);
    *module = reinterpret_cast<hipModule_t>(new ::hipcpu::CodeObject{path});
    return hipSuccess;
}
inline hipError_t hipModuleLoadData(hipModule_t*, const void*) {
    return ::hipcpu::no_code_object_host("hipModuleLoadData of a code object image");
}
inline hipError_t hipModuleUnload(hipModule_t module) {
    delete reinterpret_cast<::hipcpu::CodeObject*>(module);
    return hipSuccess;
}
inline hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* name) {
    if (module == nullptr) return hipErrorInvalidHandle;
    const std::string& path = reinterpret_cast<::hipcpu::CodeObject*>(module)->path;
    const int code = ::hipcpu::code_object_host()(1, path.c_str(), name, nullptr, 0, nullptr);
    if (code != 0) return ::hipcpu::code_object_answer(code);
    *function = reinterpret_cast<hipFunction_t>(new ::hipcpu::CodeObjectFunction{path, name});
    return hipSuccess;
}
inline hipError_t hipModuleLaunchKernel(hipFunction_t function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                        unsigned by, unsigned bz, unsigned /*shared*/, hipStream_t /*stream*/,
                                        void** kernel_params, void** extra) {
    if (function == nullptr) return hipErrorInvalidHandle;
    const auto* f = reinterpret_cast<::hipcpu::CodeObjectFunction*>(function);
    const void* buffer = nullptr;
    std::size_t size = 0;
    for (void** e = extra; e != nullptr && *e != HIP_LAUNCH_PARAM_END; e += 2) {
        if (e[0] == HIP_LAUNCH_PARAM_BUFFER_POINTER) buffer = e[1];
        else if (e[0] == HIP_LAUNCH_PARAM_BUFFER_SIZE) size = *static_cast<std::size_t*>(e[1]);
        else return hipErrorInvalidValue;
    }
    if (buffer == nullptr)
        return ::hipcpu::no_code_object_host(kernel_params != nullptr
            ? "hipModuleLaunchKernel of a prebuilt code object with kernelParams (only aiter's argument buffer, extra, "
              "is modelled)"
            : "hipModuleLaunchKernel without an argument buffer");
    const unsigned dims[6] = {gx, gy, gz, bx, by, bz};
    const int code = ::hipcpu::code_object_host()(2, f->path.c_str(), f->name.c_str(), buffer, size, dims);
    if (code == 0) ::hipcpu::launch_count() += 1;  // the file's HIP served the call, as a kernel of its own does
    ::hipcpu::last_error() = ::hipcpu::code_object_answer(code);
    return ::hipcpu::last_error();
}

extern "C" __attribute__((visibility("default"), weak)) void hip_cpu_set_code_object_host(
    ::hipcpu::CodeObjectHost host) {
    ::hipcpu::code_object_host() = host;
}
