"""Prebuilt code objects through hipModuleLoad (reference/emulation/hip_cpu/code_objects.py): a launch of aiter's
f4gemm ASM kernel with aiter's KernelArgs buffer computes what the emulated gemm_a4w4_asm computes, bit for
bit, over the blocks the grid covers; what is not modelled is refused by name. Then the examples through the
worker: the launch from a file's C++ passes official, its wrong twin fails, a code object the model does not
have is NOT RUN even where the file falls back."""
from __future__ import annotations

import ctypes
import struct
from pathlib import Path

import pytest
import torch

from fuzz.testing.fixtures_aiter import emulated
from kernels.platform import detect
from reference import generate_input
from reference.emulation.hip_cpu import build, code_objects

fp4_utils = emulated("utility.fp4_utils")
triton_quant = emulated("ops.triton.quant")
asm = emulated("ops.gemm_op_a4w4")
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CODE_OBJECT = "/home/runner/aiter/hsa/gfx950/f4gemm/f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128.co"
KERNEL = "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128E"
# The model of aiter's code objects runs on the CPU tier, where the emulated aiter's Triton is interpreted on CPU
# tensors; on a GPU host that Triton is compiled and takes no CPU tensor (the check never loads the model there)
pytestmark = pytest.mark.skipif(not detect().interpreter, reason="the HIP CPU model's code objects run on the CPU "
                                "tier (Triton interpreted); this host compiles Triton for its GPU")


def kernel_args(out, a_q, a_scale, b, b_scale, m, *, alpha=1.0, beta=0.0, log2_k_split=0) -> bytes:
    """aiter's packed KernelArgs, filled as asm_gemm_a4w4.cu fills it (stride_D0 left unset, as aiter leaves it)."""
    values = {0: ("Q", out.data_ptr()), 1: ("Q", 0), 2: ("Q", a_q.data_ptr()), 3: ("Q", b.data_ptr()), 4: ("f", alpha),
              5: ("f", beta), 6: ("I", 0xDEADBEEF), 8: ("I", out.stride(0)), 10: ("I", a_q.stride(0) * 2),
              12: ("I", b.stride(0) * 2), 14: ("I", m), 15: ("I", b.shape[0]), 16: ("I", a_q.shape[1] * 2),
              17: ("Q", a_scale.data_ptr()), 18: ("Q", b_scale.data_ptr()), 19: ("I", a_scale.stride(0)),
              21: ("I", b_scale.stride(0))}
    buffer = bytearray(code_objects.ARGS_BYTES)
    for slot, (kind, value) in values.items():
        struct.pack_into("<" + kind, buffer, 16 * slot, value)
    struct.pack_into("<i", buffer, 16 * 23, log2_k_split)
    return bytes(buffer)


def operands(m, n, k, seed):
    data = generate_input(m, n, k, seed=seed, device="cpu")
    a_q, a_scale = triton_quant.dynamic_mxfp4_quant(data[0])
    return (data, a_q.view(torch.uint8), fp4_utils.e8m0_shuffle(a_scale).view(torch.uint8),
            data[3].view(torch.uint8), data[4].view(torch.uint8))


@pytest.mark.parametrize("m, n, k", [(8, 256, 512), (40, 384, 1536)])
def test_a_launch_computes_what_the_emulated_gemm_a4w4_asm_computes(m, n, k):
    data, a_q, a_scale, b, b_scale = operands(m, n, k, seed=m + n)
    expected = torch.full(((m + 31) // 32 * 32, n), 7.0, dtype=torch.bfloat16)
    asm.gemm_a4w4_asm(a_q.view(asm.dtypes.fp4x2), data[3], a_scale.view(asm.dtypes.fp8_e8m0), data[4], expected,
                      KERNEL, log2_k_split=0)
    out = torch.full_like(expected, 7.0)
    grid = (-(-n // 128), -(-m // 32), 1)
    code_objects.launch(CODE_OBJECT, KERNEL, kernel_args(out, a_q, a_scale, b, b_scale, m), grid, (256, 1, 1))
    assert torch.equal(out, expected)  # rows past M keep their bytes, as the emulated gemm_a4w4_asm leaves them
    partial = torch.full_like(expected, 7.0)  # a grid of one column block: only N's first 128 columns
    code_objects.launch(CODE_OBJECT, KERNEL, kernel_args(partial, a_q, a_scale, b, b_scale, m), (1, grid[1], 1),
                        (256, 1, 1))
    assert torch.equal(partial[:, :128], expected[:, :128]) and (partial[:, 128:] == 7.0).all()


def test_what_is_not_modelled_is_refused_by_name():
    data, a_q, a_scale, b, b_scale = operands(8, 256, 512, seed=1)
    out = torch.empty((32, 256), dtype=torch.bfloat16)
    args = kernel_args(out, a_q, a_scale, b, b_scale, 8)
    with pytest.raises(code_objects.NotModelled, match="prebuilt code object"):
        code_objects.kernel_of("/tmp/my_kernel.co")
    with pytest.raises(code_objects.NotModelled, match="prebuilt code object"):
        code_objects.kernel_of("/home/runner/aiter/hsa/gfx950/f4gemm/f4gemm_bf16_per1x32Fp4_BpreShuffle_33x128.co")
    assert code_objects.has_function(CODE_OBJECT, KERNEL) and not code_objects.has_function(CODE_OBJECT, "_Z1kv")
    with pytest.raises(code_objects.NotModelled, match="threads a block"):
        code_objects.launch(CODE_OBJECT, KERNEL, args, (2, 1, 1), (128, 1, 1))
    with pytest.raises(code_objects.NotModelled, match="argument buffer"):
        code_objects.launch(CODE_OBJECT, KERNEL, args[:200], (2, 1, 1), (256, 1, 1))
    with pytest.raises(code_objects.NotModelled, match="beta"):
        code_objects.launch(CODE_OBJECT, KERNEL, kernel_args(out, a_q, a_scale, b, b_scale, 8, beta=1.0), (2, 1, 1),
                            (256, 1, 1))
    split = "/x/hsa/gfx950/f4gemm/f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256.co"
    with pytest.raises(code_objects.NotModelled, match="split-K"):
        code_objects.launch(split, "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256E",
                            kernel_args(out, a_q, a_scale, b, b_scale, 8, log2_k_split=1), (1, 1, 2), (256, 1, 1))


@pytest.mark.slow  # a worker, and the example's load_inline built for the CPU model
@pytest.mark.skipif(build.find_clang() is None, reason="no clang++ here: the HIP CPU model needs it")
@pytest.mark.parametrize("name, passes", [("hip_module_aiter_asm.py", True),
                                          ("hip_module_aiter_asm_scale_stride_wrong.py", False)])
def test_a_files_cpp_launch_of_aiters_code_object_is_judged(name, passes):
    from fuzz.submission import checks
    from fuzz.submission.runner import SubmissionRunner
    from fuzz.testing.explicit_plan import TIER

    if TIER != "cpu":
        pytest.skip("the CPU model of HIP runs on the CPU tier only")
    runner = SubmissionRunner(EXAMPLES / name, aiter="emulated", timeout=300)
    try:
        ctx = checks.Context(runner, TIER)
        outcome = checks.check_official(ctx)
    finally:
        runner.close()
    assert outcome.status == ("pass" if passes else "fail"), outcome.summary
    ran = runner.tier_notes.get("hip_code_objects") or {}
    assert any("f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128.co" in what and how.startswith("modelled")
               for what, how in ran.items()), runner.tier_notes
    assert (runner.tier_notes.get("hip_cpu") or {}).get("launches"), "the launches ran on the model"


def test_the_host_refuses_an_unknown_code_object_and_records_what_did_not_run():
    """no_rocm's host answers the model's C++ (hip_cpu_module.h): a code object it does not model is refused
    with NOT_MODELLED, the reason queued for the call's NOT RUN and the load recorded as not run (a file that
    falls back is then marked); aiter's is accepted and recorded as modelled."""
    from reference.emulation import no_rocm

    no_rocm.reset_attempts()
    no_rocm.hip_cpu_take_unmodelled()
    dims = (ctypes.c_uint * 6)(1, 1, 1, 256, 1, 1)
    assert no_rocm._code_object_host(0, b"/tmp/own.co", b"", None, 0, dims) == no_rocm.NOT_MODELLED
    assert no_rocm._code_object_host(0, CODE_OBJECT.encode(), b"", None, 0, dims) == 0
    assert no_rocm._code_object_host(1, CODE_OBJECT.encode(), b"_Z1kv", None, 0, dims) == 500  # hipErrorNotFound
    refused, modelled = no_rocm.attempts()[-2:]
    assert refused.api == "hipModuleLoad" and "runs none but aiter's f4gemm" in refused.not_run
    assert modelled.not_run == "" and modelled.cpu_model.startswith("modelled")
    assert "/tmp/own.co" in no_rocm.hip_cpu_take_unmodelled() and no_rocm.hip_cpu_take_unmodelled() == ""
    no_rocm.reset_attempts()


def test_through_ctypes_as_real_files_launch_it(tmp_path):
    """libamdhip64 through ctypes (hiprtc.py's stand-ins), as real files write it: hipModuleLoad by path,
    hipModuleGetFunction by the mangled name, hipModuleLaunchKernel with kernelParams None and the extra array
    cast to a pointer; the result is the emulated gemm_a4w4_asm's, and a code object the model lacks is refused."""
    from reference.emulation.hip_cpu import hiprtc

    m, n, k = 8, 256, 512
    data, a_q, a_scale, b, b_scale = operands(m, n, k, seed=5)
    expected = torch.zeros((32, n), dtype=torch.bfloat16)
    asm.gemm_a4w4_asm(a_q.view(asm.dtypes.fp4x2), data[3], a_scale.view(asm.dtypes.fp8_e8m0), data[4], expected,
                      KERNEL, log2_k_split=0)
    loaded = []
    runtime = hiprtc.Runtime(tmp_path, on_code_object=loaded.append)
    hip = type("Hip", (), {})()
    hiprtc.install_on(hip, runtime, "libamdhip64")
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    hip.hipModuleLoad.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
    assert hip.hipModuleLoad(ctypes.byref(module), CODE_OBJECT.encode()) == 0 and loaded == [CODE_OBJECT]
    assert hip.hipModuleGetFunction(ctypes.byref(function), module, b"_Z1kv") == 500
    assert hip.hipModuleGetFunction(ctypes.byref(function), module, KERNEL.encode()) == 0
    out = torch.zeros_like(expected)
    args = ctypes.create_string_buffer(kernel_args(out, a_q, a_scale, b, b_scale, m), code_objects.ARGS_BYTES)
    size = ctypes.c_size_t(code_objects.ARGS_BYTES)
    extra = (ctypes.c_void_p * 5)(1, ctypes.cast(ctypes.pointer(args), ctypes.c_void_p), 2,
                                  ctypes.cast(ctypes.pointer(size), ctypes.c_void_p), 3)
    launched = code_objects.LAUNCHES[0]
    assert hip.hipModuleLaunchKernel(function, 2, 1, 1, 256, 1, 1, 0, None, None,
                                     ctypes.cast(extra, ctypes.POINTER(ctypes.c_void_p))) == 0
    assert torch.equal(out, expected) and code_objects.LAUNCHES[0] == launched + 1
    with pytest.raises(hiprtc.NotModelled, match="prebuilt code object"):
        hip.hipModuleLoad(ctypes.byref(module), b"/tmp/fp4_lds.co")
