#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: it loads libhiprtc and libamdhip64 through ``ctypes`` at import and
compiles a small HIP kernel with HIPRTC (the loading pattern of real HIPRTC files), catching OSError
where the libraries are missing; the GEMM itself is aiter's dynamic_mxfp4_quant + gemm_a4w4 either way.
Without ROCm the load raises OSError: the CPU tier must run the rest of the file and never FAIL it for a
library this machine lacks."""
import ctypes

import torch
import aiter
from aiter import dtypes
from aiter.ops.triton.quant import dynamic_mxfp4_quant
from aiter.utility.fp4_utils import e8m0_shuffle
from task import input_t, output_t

SOURCE = b"""
extern "C" __global__ void dequant_scale_rows(const unsigned char* scales, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __builtin_ldexpf(1.0f, (int)scales[i] - 127);
}
"""


def load_hip():
    """(hiprtc, hip) ctypes handles and the compiled code object, or None where ROCm is not there."""
    try:
        hiprtc = ctypes.CDLL("libhiprtc.so")
        hip = ctypes.CDLL("libamdhip64.so")
    except OSError:
        return None
    program = ctypes.c_void_p()
    if hiprtc.hiprtcCreateProgram(ctypes.byref(program), SOURCE, b"scales.hip", 0, None, None) != 0:
        return None
    options = (ctypes.c_char_p * 1)(b"--offload-arch=gfx950")
    if hiprtc.hiprtcCompileProgram(program, 1, options) != 0:
        return None
    return hiprtc, hip, program


HIP = load_hip()


def quantize(A: torch.Tensor):
    a_q, a_scale = dynamic_mxfp4_quant(A)
    return a_q.view(dtypes.fp4x2), e8m0_shuffle(a_scale).view(dtypes.fp8_e8m0)


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    a_q, a_scale_sh = quantize(A)
    return aiter.gemm_a4w4(a_q, B_shuffle, a_scale_sh, B_scale_sh, dtype=dtypes.bf16, bpreshuffle=True)
