#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: hiprtc_mfma_gemm's kernel through HIPRTC, written as real HIPRTC files are:
``CDLL`` reached through ``importlib`` (no ``import ctypes`` line a scanner could see), ``restype`` and
``argtypes`` set on every function before its first call, an ``errcheck`` that turns a status into an
exception, and ``hiprtcGetErrorString`` read through ``restype = c_char_p``. The runner's ctypes accepts all
of it, so the CPU model's stand-ins must too (issue 39: they were bound methods, and setting ``restype``
on one was an AttributeError, the file's FAIL)."""
import importlib

import torch

from hiprtc_mfma_gemm import KERNEL_SOURCE
from hip_mfma_gemm import prepare
from task import input_t, output_t

ct = importlib.import_module("cty" + "pes")
CDLL = getattr(ct, "CD" + "LL")
c_int, c_uint, c_size_t, c_void_p, c_char_p = ct.c_int, ct.c_uint, ct.c_size_t, ct.c_void_p, ct.c_char_p
P = ct.POINTER


class HipError(RuntimeError):
    pass


def declare(library, errors, table):
    """restype, argtypes and errcheck for each function the file uses, as ctypes users write them."""
    def errcheck(status, function, args):
        if status != 0:
            raise HipError(f"{function.__name__} failed: {errors(status)!r}")
        return status
    for name, argtypes in table.items():
        function = getattr(library, name)
        function.restype, function.argtypes, function.errcheck = c_int, argtypes, errcheck


_hiprtc, _hip = CDLL("libhiprtc.so"), CDLL("libamdhip64.so")
_hiprtc.hiprtcGetErrorString.restype = c_char_p
_hiprtc.hiprtcGetErrorString.argtypes = [c_int]
declare(_hiprtc, _hiprtc.hiprtcGetErrorString, {
    "hiprtcCreateProgram": [P(c_void_p), c_char_p, c_char_p, c_int, P(c_char_p), P(c_char_p)],
    "hiprtcCompileProgram": [c_void_p, c_int, P(c_char_p)],
    "hiprtcGetCodeSize": [c_void_p, P(c_size_t)],
    "hiprtcGetCode": [c_void_p, c_char_p],
})
declare(_hip, lambda status: f"hip error {status}", {
    "hipModuleLoadData": [P(c_void_p), c_void_p],
    "hipModuleGetFunction": [P(c_void_p), c_void_p, c_char_p],
    "hipModuleLaunchKernel": [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_void_p,
                              P(c_void_p), P(c_void_p)],
    "hipDeviceSynchronize": [],
})
assert _hiprtc.hiprtcGetErrorString(0) == b"HIPRTC_SUCCESS"


def compile_kernel():
    program = c_void_p()
    _hiprtc.hiprtcCreateProgram(ct.byref(program), KERNEL_SOURCE.encode(), b"gemm.hip", 0, None, None)
    options = (c_char_p * 1)(b"--offload-arch=gfx950")
    _hiprtc.hiprtcCompileProgram(program, 1, options)
    size = c_size_t()
    _hiprtc.hiprtcGetCodeSize(program, ct.byref(size))
    code = ct.create_string_buffer(size.value)
    _hiprtc.hiprtcGetCode(program, code)
    module, function = c_void_p(), c_void_p()
    _hip.hipModuleLoadData(ct.byref(module), code)
    _hip.hipModuleGetFunction(ct.byref(function), module, b"mxfp4_gemm")
    return function


FUNCTION = compile_kernel()


def custom_kernel(data: input_t) -> output_t:
    a_q, a_scale, b_q, b_scale, m, n, k = prepare(data)
    out = torch.empty((m, n), dtype=torch.bfloat16, device=data[0].device)
    args = [c_void_p(t.data_ptr()) for t in (a_q, a_scale, b_q, b_scale, out)] + [c_int(m), c_int(n), c_int(k)]
    params = (c_void_p * len(args))(*[ct.addressof(a) for a in args])
    _hip.hipModuleLaunchKernel(FUNCTION, (n + 127) // 128, (m + 31) // 32, 1, 256, 1, 1, 0, None, params, None)
    _hip.hipDeviceSynchronize()
    return out
