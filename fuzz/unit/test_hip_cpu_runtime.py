"""The CPU model of the HIP runtime (reference/emulation/hip_cpu/include) on small kernels: a checked access
that faults ends the launch cleanly, each block starts with its LDS filled with NaN bytes, the lane order
a wave runs in is chosen per launch, and what the model does not run (lanes of one wave at different lane
operations, a barrier some threads never reach) ends the launch and is named for the call's NOT RUN."""
import ctypes
import os
import platform

import pytest

from reference.emulation.hip_cpu import build

pytestmark = pytest.mark.skipif(build.find_clang() is None, reason="no clang++ here: the HIP CPU model needs it")

SOURCE = r"""
#include <hip/hip_runtime.h>
__global__ void lockstep_exchange(int* out) {  // right only in lockstep: no barrier between write and read
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x * 10;
    out[threadIdx.x] = s[threadIdx.x ^ 1];
}
__global__ void unwritten_lds(int* out) {  // block 0 writes LDS, every block reads it
    __shared__ int s[64];
    if (blockIdx.x == 0) s[threadIdx.x] = 7;
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = s[threadIdx.x];
}
__global__ void checked(int* out, int n) {  // block b writes out[64 b + t], checked against the regions
    int i = blockIdx.x * 64 + threadIdx.x;
    ::hipcpu::check_access(out + i, 4, 4, true);
    out[i] = 1;
}
__global__ void divergent_shfl(int* out) {
    int v = threadIdx.x;
    if (threadIdx.x < 32) v = __shfl_xor(v, 1);
    out[threadIdx.x] = __ballot(v > 0) != 0;
}
__global__ void divergent_barrier(int* out) {
    if (threadIdx.x < 64) __syncthreads();
    else out[0] = __shfl(threadIdx.x, 0);
}
extern "C" float timed_launch(int* out) {  // events as real files time a launch (hipEventElapsedTime included)
    hipEvent_t start, stop;
    hipEventCreate(&start);
    hipEventCreate(&stop);
    hipEventRecord(start);
    lockstep_exchange<<<1, 64>>>(out);
    hipEventRecord(stop);
    hipEventSynchronize(stop);
    float ms = -1.0f;
    hipError_t code = hipEventElapsedTime(&ms, start, stop);
    hipEventDestroy(start);
    hipEventDestroy(stop);
    return code == hipSuccess ? ms : -1000.0f;
}
extern "C" int run(int which, int* out, int blocks) {
    switch (which) {
        case 0: lockstep_exchange<<<1, 64>>>(out); break;
        case 1: unwritten_lds<<<blocks, 64>>>(out); break;
        case 2: checked<<<blocks, 64>>>(out, blocks * 64); break;
        case 3: divergent_shfl<<<1, 64>>>(out); break;
        default: divergent_barrier<<<1, 128>>>(out); break;
    }
    return (int)hipGetLastError();
}
extern "C" const char* error_text(int code) { return hipGetErrorString(code); }
extern "C" const char* error_name(int code) { return cudaGetErrorName(code); }
"""


# Fiber switches: the model's own on x86-64, and ucontext (every other host, or -DHIPCPU_UCONTEXT): both must
# run the same schedule, so every test here runs on each.
@pytest.fixture(scope="module", params=["own_switch", "ucontext"])
def lib(tmp_path_factory, request):
    if request.param == "own_switch" and platform.machine() != "x86_64":
        pytest.skip("the model's own fiber switch is x86-64 only; this host uses ucontext")
    defines = ["HIPCPU_UCONTEXT"] if request.param == "ucontext" else []
    path = build.compile_shared([SOURCE], tmp_path_factory.mktemp("hip_cpu_runtime") / "k.so", defines=defines)
    library = ctypes.CDLL(str(path))
    library.run.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    library.error_text.restype = ctypes.c_char_p
    library.hip_cpu_take_unmodelled.restype = ctypes.c_char_p
    library.hip_cpu_add_region.argtypes = [ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int]
    return library


def launch(lib, which, count, blocks=1, lanes=None, lds_fill=None):
    out = (ctypes.c_int * count)(*([-7] * count))
    if lanes:
        os.environ["MXFP4_FUZZ_HIP_LANES"] = lanes
    if lds_fill is not None:
        os.environ["MXFP4_FUZZ_HIP_LDS_FILL"] = str(lds_fill)
    try:
        code = lib.run(which, out, blocks)
    finally:
        os.environ.pop("MXFP4_FUZZ_HIP_LANES", None)
        os.environ.pop("MXFP4_FUZZ_HIP_LDS_FILL", None)
    return code, list(out)


def test_the_lane_order_is_chosen_per_launch(lib):
    outputs = {}
    for lanes in (None, "reversed", "rotated"):
        code, out = launch(lib, 0, 64, lanes=lanes)
        assert code == 0
        # In lane order, each lane reads its xor-neighbour's slot: the even lanes read before the odd ones
        # wrote (the slot holds the block's starting 0xFF bytes, -1), the odd lanes after.
        outputs[lanes] = [i for i in range(64) if out[i] != (i ^ 1) * 10]
    assert outputs[None] == list(range(0, 64, 2))
    assert outputs["reversed"] == list(range(1, 64, 2))
    assert outputs["rotated"] == list(range(0, 64, 2))  # the rotation keeps the order within each xor pair
    assert outputs[None] != outputs["reversed"]


def test_every_block_starts_with_nan_bytes_in_lds(lib):
    code, out = launch(lib, 1, 3 * 64, blocks=3)
    assert code == 0
    assert out[:64] == [7] * 64
    assert out[64:] == [-1] * 128, "block 1 and 2 must not see block 0's LDS"


def test_the_lds_fill_byte_is_chosen_per_launch(lib):
    """What a lockstep kernel read before its neighbour wrote shows as the fill: in every lane order the even lanes
    read first, so only another fill tells their values came from nobody's write (lane_order.py's fourth run)."""
    code, filled = launch(lib, 0, 64, lds_fill=0)
    assert code == 0
    assert [filled[i] for i in range(0, 64, 2)] == [0] * 32 and all(filled[i] == (i ^ 1) * 10 for i in range(1, 64, 2))
    code, default = launch(lib, 0, 64)
    assert code == 0 and [default[i] for i in range(0, 64, 2)] == [-1] * 32, "0xFF bytes again without the variable"


def test_events_time_a_launch_on_the_host_clock(lib):
    lib.timed_launch.argtypes = [ctypes.c_void_p]
    lib.timed_launch.restype = ctypes.c_float
    out = (ctypes.c_int * 64)()
    ms = lib.timed_launch(out)
    assert 0.0 <= ms < 10_000.0, ms
    assert out[1] == 0 * 10  # lane 1 read lane 0's write: the launch ran between the two records


def test_a_checked_fault_ends_the_launch_and_names_the_access(lib):
    out = (ctypes.c_int * 256)(*([0] * 256))
    lib.hip_cpu_clear_regions()
    lib.hip_cpu_add_region(ctypes.addressof(out), 64 * 4, 1)  # only block 0's elements
    try:
        code = lib.run(2, out, 4)
    finally:
        lib.hip_cpu_clear_regions()
    assert code == 700
    assert lib.error_text(code).decode().startswith("out-of-bounds 4-byte store")
    lib.error_name.restype = ctypes.c_char_p
    assert lib.error_name(code) == b"hipErrorIllegalAddress" and lib.error_name(0) == b"hipSuccess"
    assert list(out[:64]) == [1] * 64 and list(out[64:]) == [0] * 192, "blocks after the fault must not run"
    assert lib.run(2, out, 4) == 0, "the next launch runs normally (workers restart)"
    assert list(out) == [1] * 256


@pytest.mark.parametrize("which, named", [(3, "divergent lane operations"), (4, "never reach")])
def test_what_the_model_does_not_run_ends_the_launch_by_name(lib, which, named):
    code, _ = launch(lib, which, 128)
    assert code == 1000
    reason = lib.hip_cpu_take_unmodelled().decode()
    assert named in reason
    assert lib.hip_cpu_take_unmodelled().decode() == "", "taken once"
    assert launch(lib, 0, 64)[0] == 0, "the model runs the next launch"


DIVERGENT_SUBMISSION = r'''
import ctypes, os, subprocess, tempfile
import torch
from task import input_t, output_t

SOURCE = """
#include <hip/hip_runtime.h>
#include <stdint.h>
__global__ void fill(uint16_t* out, int n) {
    int v = threadIdx.x;
    if (threadIdx.x < 32) v = __shfl_xor(v, 1);  // only half the wave: divergent
    if (__ballot(v >= 0) && blockIdx.x * 64 + threadIdx.x < n) out[blockIdx.x * 64 + threadIdx.x] = 0;
}
extern "C" int launch(uint16_t* out, int n) { fill<<<(n + 63) / 64, 64>>>(out, n); return (int)hipGetLastError(); }
"""
folder = tempfile.mkdtemp()
with open(os.path.join(folder, "k.hip"), "w") as f:
    f.write(SOURCE)
subprocess.run(["hipcc", "-O3", "--offload-arch=gfx950", "-shared", "-fPIC", "-o", os.path.join(folder, "k.so"),
                os.path.join(folder, "k.hip")], check=True)
_LIB = ctypes.CDLL(os.path.join(folder, "k.so"))


def custom_kernel(data: input_t) -> output_t:
    A, B = data[0], data[1]
    out = torch.empty((A.shape[0], B.shape[0]), dtype=torch.bfloat16, device=A.device)
    if _LIB.launch(ctypes.c_void_p(out.data_ptr()), out.numel()) != 0:
        raise RuntimeError("launch failed")
    return out
'''


def test_a_divergent_lane_operation_in_a_submission_is_not_run(tmp_path):
    """Whatever the file makes of the failed launch (here: it raises), the call is NOT RUN, named."""
    from fuzz.search.strategies import Case
    from fuzz.submission import checks
    from fuzz.testing.explicit_plan import TIER
    from fuzz.submission.runner import SubmissionRunner

    if TIER != "cpu":
        pytest.skip("the CPU model of HIP runs on the CPU tier only")
    path = tmp_path / "divergent.py"
    path.write_text(DIVERGENT_SUBMISSION)
    runner = SubmissionRunner(path, aiter="emulated", timeout=120)
    try:
        outcome = checks.check_official(checks.Context(runner, TIER))
    finally:
        runner.close()
    assert outcome.status == "not_run", outcome.summary
    assert "divergent lane operations" in outcome.summary, outcome.summary
