#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: hip_mfma_gemm's scaled-MFMA kernel compiled at import with HIPRTC and
launched with hipModuleLaunchKernel, both through ctypes (the pattern of real HIPRTC files): the source is
hip_mfma_gemm's kernel as an ``extern "C"`` kernel, without its host launcher."""
import ctypes

import torch

from hip_mfma_gemm import SOURCE, prepare
from task import input_t, output_t

KERNEL_SOURCE = SOURCE.split("extern \"C\" int mxfp4_gemm_launch")[0].replace(
    "__global__ void mxfp4_gemm(", 'extern "C" __global__ void mxfp4_gemm(').replace(
    "#include <hip/hip_runtime.h>\n", "").replace("#include <stdint.h>\n", "")


def check(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"{what} failed: error {status}")


def compile_kernel():
    """(libamdhip64, the kernel function handle), compiled for gfx950 with HIPRTC."""
    hiprtc, hip = ctypes.CDLL("libhiprtc.so"), ctypes.CDLL("libamdhip64.so")
    program = ctypes.c_void_p()
    check(hiprtc.hiprtcCreateProgram(ctypes.byref(program), KERNEL_SOURCE.encode(), b"gemm.hip", 0, None, None),
          "hiprtcCreateProgram")
    options = (ctypes.c_char_p * 2)(b"--offload-arch=gfx950", b"-O3")
    check(hiprtc.hiprtcCompileProgram(program, 2, options), "hiprtcCompileProgram")
    size = ctypes.c_size_t()
    check(hiprtc.hiprtcGetCodeSize(program, ctypes.byref(size)), "hiprtcGetCodeSize")
    code = ctypes.create_string_buffer(size.value)
    check(hiprtc.hiprtcGetCode(program, code), "hiprtcGetCode")
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    check(hip.hipModuleLoadData(ctypes.byref(module), code), "hipModuleLoadData")
    check(hip.hipModuleGetFunction(ctypes.byref(function), module, b"mxfp4_gemm"), "hipModuleGetFunction")
    return hip, function


HIP, FUNCTION = compile_kernel()


def custom_kernel(data: input_t) -> output_t:
    a_q, a_scale, b_q, b_scale, m, n, k = prepare(data)
    out = torch.empty((m, n), dtype=torch.bfloat16, device=data[0].device)
    args = [ctypes.c_void_p(t.data_ptr()) for t in (a_q, a_scale, b_q, b_scale, out)]
    args += [ctypes.c_int(m), ctypes.c_int(n), ctypes.c_int(k)]
    params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
    check(HIP.hipModuleLaunchKernel(FUNCTION, (n + 127) // 128, (m + 31) // 32, 1, 256, 1, 1, 0, None, params, None),
          "hipModuleLaunchKernel")
    check(HIP.hipDeviceSynchronize(), "hipDeviceSynchronize")
    return out
