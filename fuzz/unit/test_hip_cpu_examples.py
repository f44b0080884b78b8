"""The HIP MFMA GEMM examples (fuzz/examples/hip_mfma_gemm*.py) run on the CPU model of gfx950 through
their own ``hipcc`` + ``ctypes`` code: no_rocm routes the hipcc command to the model, the file loads the
library it built, and the oracle judges what its kernel computed. The correct one passes; each twin fails
where its bug is, and only there. (The worker path, report and verdicts: test_submission_examples.py.)"""
import ctypes
import sys
from pathlib import Path

import pytest

from fuzz.judge.verdicts import check_product
from fuzz.search.strategies import Case
from reference.emulation import no_rocm
from reference.emulation.hip_cpu import build

pytestmark = pytest.mark.skipif(build.find_clang() is None, reason="no clang++ here: the HIP CPU model needs it")
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

SMALL = Case(40, 208, 320, seed=1)  # M, N tails; K % 256 = 64
WHOLE_K = Case(33, 144, 512, seed=2)  # K a multiple of 256: a dropped K tail cannot show
# twin -> (fails on SMALL, fails on WHOLE_K)
TWINS = {"": (False, False), "B_HALF_SWAP=1": (True, True), "K_STEP_WHOLE=256": (True, False),
         "BARRIER_AFTER_LDS=0": (True, True)}


@pytest.fixture(scope="module")
def example():
    installed_here = not no_rocm.installed()
    no_rocm.install()
    sys.path.insert(0, str(EXAMPLES))
    try:
        import hip_mfma_gemm

        yield hip_mfma_gemm
    finally:
        sys.path.remove(str(EXAMPLES))
        if installed_here:
            no_rocm.uninstall()


@pytest.mark.parametrize("define", sorted(TWINS))
def test_each_twin_fails_where_its_bug_is(example, define):
    library = example.build([define] if define else [])
    built = [a for a in no_rocm.attempts() if a.api == "subprocess"]
    assert built and built[-1].cpu_model == "built", built[-1:]
    for case, should_fail in zip((SMALL, WHOLE_K), TWINS[define]):
        data, _ = case.build()
        before = no_rocm.hip_cpu_launches()
        verdict = check_product(example.gemm(library, data), data)
        assert no_rocm.hip_cpu_launches() > before, "the HIP kernel served the call"
        assert verdict.passed != should_fail, (define, case.describe(), verdict.summary)


def test_an_unmodelled_builtin_is_refused_by_name(tmp_path):
    source = tmp_path / "k.hip"
    source.write_text("#include <hip/hip_runtime.h>\n__global__ void k(int* x) { x[0] = __builtin_amdgcn_s_getpc(); }\n")
    with pytest.raises(build.NotModelled, match="__builtin_amdgcn_s_getpc"):
        build.compile_shared([source.read_text()], tmp_path / "k.so")
    with pytest.raises(build.NotModelled, match="inline asm"):
        build.compile_shared(['__global__ void k() { asm volatile("s_nop 0"); }'], tmp_path / "k.so")


def test_launch_syntax_is_translated():
    text = "k<T, 4><<<dim3(g, 1), 256, 0, stream>>>(a, b);\nplain<<<1, 64>>>();\n"
    out = build.translate(text)
    assert "hipLaunchKernelGGL((k<T, 4>), dim3(g, 1), 256, 0, stream, a, b);" in out
    assert "hipLaunchKernelGGL((plain), 1, 64, 0, 0);" in out
    # the launch configuration on the line after the kernel's name and template arguments (CaptnJackSparrow)
    split = build.translate("    quant_a_kernel<M, K, K_HALF, NUM_BLOCKS>\n        <<<q_grid, q_block>>>(a, b);\n")
    assert "hipLaunchKernelGGL((quant_a_kernel<M, K, K_HALF, NUM_BLOCKS>), q_grid, q_block, 0, 0, a, b);" in split
    assert "float* smem = (float*)::hipcpu::dynamic_shared();" in build.translate("extern __shared__ float smem[];")


# Two torch extension builds on the CPU, about half a minute each cold: deep only (ci sees load_inline reach
# the model through hip_load_inline_quant.py in test_hip_builds.py).
@pytest.mark.slow
@pytest.mark.deep
def test_load_inline_and_load_reach_the_model(tmp_path):
    """A load_inline with CUDA-named sources (at::cuda stream, <<<>>> launch, TORCH_CHECK(x.is_cuda())) and
    a load of .cu/.cpp files with their own PYBIND11_MODULE both build for the CPU model, and their kernel
    computes, counted as the model's launches."""
    from fuzz.testing.fresh_process import run_fresh

    kernel = r'''
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void add_one(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v += __shfl_xor(v, 1) * 0.0f;  // a lane operation: the wave meets
    if (i < n) y[i] = v + 1.0f;
}
torch::Tensor add(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    auto y = torch::empty_like(x);
    int n = x.numel();
    add_one<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
'''
    (tmp_path / "add.cu").write_text(kernel)
    (tmp_path / "bind.cpp").write_text("#include <torch/extension.h>\ntorch::Tensor add(torch::Tensor x);\n"
                                       "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"add\", &add); }\n")
    result = run_fresh("from reference.emulation import no_rocm\nassert no_rocm.install()\n", f"""
        import torch
        from torch.utils.cpp_extension import load, load_inline
        x = torch.arange(1000, dtype=torch.float32)
        inline = load_inline("add_inline", cpp_sources="torch::Tensor add(torch::Tensor x);",
                             cuda_sources={kernel!r}, functions=["add"], extra_cuda_cflags=["-O3"])
        print(torch.equal(inline.add(x), x + 1), no_rocm.hip_cpu_launches())
        files = load("add_files", sources=["{tmp_path / 'add.cu'}", "{tmp_path / 'bind.cpp'}"])
        print(torch.equal(files.add(x), x + 1), no_rocm.hip_cpu_launches())
        print([a.cpu_model for a in no_rocm.attempts()])
    """, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == ["True 1", "True 2", "['built', 'built']"], result.stdout + result.stderr[-2000:]


def test_hiprtc_through_ctypes_compiles_and_launches_on_the_model(example):
    """hiprtc_mfma_gemm.py: HIPRTC compiles the kernel, hipModuleLaunchKernel runs it with kernelParams."""
    import hiprtc_mfma_gemm

    data, _ = SMALL.build()
    before = no_rocm.hip_cpu_launches()
    verdict = check_product(hiprtc_mfma_gemm.custom_kernel(data), data)
    assert verdict.passed, verdict.summary
    assert no_rocm.hip_cpu_launches() == before + 1
    library = no_rocm.attempts()[-1] if no_rocm.attempts() else None
    assert any(a.api == "ctypes" and a.cpu_model.startswith("modelled") for a in no_rocm.attempts()), library


def test_hiprtc_stand_ins_take_restype_argtypes_and_errcheck_as_ctypes_does(example):
    """hiprtc_ctypes_restype.py sets restype, argtypes and errcheck on every function, reads
    hiprtcGetErrorString through c_char_p and reaches CDLL through importlib: it runs and is right."""
    import hiprtc_ctypes_restype

    data, _ = SMALL.build()
    verdict = check_product(hiprtc_ctypes_restype.custom_kernel(data), data)
    assert verdict.passed, verdict.summary


def _outcome(call):
    try:
        return "returns", call()
    except Exception as error:  # noqa: BLE001 - the kind of error is what is compared
        return type(error).__name__, None


@pytest.mark.parametrize("argtypes, args", [
    ([ctypes.c_int], (3,)), ([ctypes.c_int], ()), ([ctypes.c_int], ("3",)), ([ctypes.c_int], (3.5,)),
    ([ctypes.c_int], (ctypes.c_int(-4),)), ([ctypes.c_int], (3, 4)), (None, (5,)),
])
def test_a_modelled_function_checks_arguments_as_a_ctypes_function(argtypes, args):
    """The same argtypes and arguments give the same outcome on libc's abs and on a ModelledFunction."""
    from reference.emulation.hip_cpu.hiprtc import ModelledFunction

    real = ctypes.CDLL(None).abs
    modelled = ModelledFunction("abs", lambda value, *rest: abs(int(getattr(value, "value", value))))
    real.argtypes = modelled.argtypes = argtypes
    assert _outcome(lambda: modelled(*args)) == _outcome(lambda: real(*args))


@pytest.mark.parametrize("restype", [ctypes.c_int, ctypes.c_uint8, ctypes.c_void_p, ctypes.c_char_p, None, int])
def test_a_modelled_function_converts_its_result_by_restype_as_ctypes_does(restype):
    from reference.emulation.hip_cpu.hiprtc import ModelledFunction

    text = ctypes.create_string_buffer(b"hipSuccess")
    address = ctypes.addressof(text)
    real = ctypes.CDLL(None).strchr  # strchr(s, 0) returns the address of s's terminator: a C pointer
    real.argtypes, real.restype = [ctypes.c_void_p, ctypes.c_int], restype
    modelled = ModelledFunction("strchr", lambda s, c: address + len(b"hipSuccess"))
    modelled.restype = restype
    assert modelled(address, 0) == real(address, 0)
    seen = []
    modelled.errcheck = lambda result, function, args: seen.append((result, function.__name__, args)) or "checked"
    assert modelled(address, 0) == "checked" and seen == [(real(address, 0), "strchr", (address, 0))]


def test_an_unmodelled_hip_runtime_function_is_refused_by_name(example):
    import ctypes

    from reference.emulation.hip_cpu.hiprtc import NotModelled

    hip = ctypes.CDLL("libamdhip64.so")
    with pytest.raises(NotModelled, match="hipGraphLaunch"):
        hip.hipGraphLaunch(None, None)


@pytest.mark.parametrize("name, statuses", [("hip_mfma_gemm_wave_lockstep.py", ("not_run", "pass")),
                                            ("hip_mfma_gemm_lds_race_wrong.py", ("fail", "pass"))])
def test_a_failure_that_rests_on_lane_order_is_not_run(name, statuses):
    """The CPU model runs a wave's lanes one after another; gfx950 runs them in lockstep. A kernel that
    relies on lockstep (each wave stages and reads its own LDS tile with no barrier) is wrong on the model,
    but only where the output changes with the lanes' order, so correctness says NOT RUN. A race between
    waves (the missing __syncthreads) is wrong in every lane order: its correctness FAIL stands. Neither
    fails a stale verdict: each block's LDS starts filled alike, whatever ran before."""
    from fuzz.submission import checks
    from fuzz.testing.explicit_plan import TIER
    from fuzz.submission.runner import SubmissionRunner

    if TIER != "cpu":
        pytest.skip("the CPU model of HIP runs on the CPU tier only")
    runner = SubmissionRunner(EXAMPLES / name, aiter="emulated", timeout=120)
    try:
        ctx = checks.Context(runner, TIER)
        # Every block starts with its LDS filled with NaN bytes, so no call sees the previous call's LDS.
        outcomes = [checks.check_correctness(ctx, SMALL), checks.check_stale_in_place(ctx, SMALL)]
    finally:
        runner.close()
    for outcome, status in zip(outcomes, statuses):
        assert outcome.status == status, outcome.summary
        if status == "not_run":
            assert "lockstep" in outcome.summary and "another order" in outcome.summary, outcome.summary


# A HIPRTC program as real files write it: the kernel's attributes in #if branches on a define the compile
# options give, amdgpu_flat_work_group_size on the kernel, the value of a define used in the computation.
OPTIONED_PROGRAM = rb"""
#define WG (WAVES * 64)
#if WG == 64
extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(64, 64)))
#else
extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(256, 256)))
#endif
void scale_by(float* y, const float* x) { y[threadIdx.x] = x[threadIdx.x] * FACTOR; }
"""


@pytest.mark.parametrize("factor", [3, 5])
def test_hiprtc_compiles_with_the_options_defines_and_amdgpu_attributes(example, factor):
    hiprtc, hip = ctypes.CDLL("libhiprtc.so"), ctypes.CDLL("libamdhip64.so")
    seen = []
    runtime = no_rocm._hiprtc_runtime()
    runtime.on_compiled, kept = (lambda *a: seen.append(a)), runtime.on_compiled
    try:
        prog = ctypes.c_void_p()
        assert hiprtc.hiprtcCreateProgram(ctypes.byref(prog), OPTIONED_PROGRAM, b"scale.hip", 0, None, None) == 0
        options = [b"--offload-arch=gfx950", b"-O3", b"-DWAVES=1", b"-D", f"FACTOR={factor}".encode()]
        assert hiprtc.hiprtcCompileProgram(prog, len(options), (ctypes.c_char_p * len(options))(*options)) == 0
    finally:
        runtime.on_compiled = kept
    assert seen[0][0] == "scale.hip" and seen[0][2] == ["WAVES=1", f"FACTOR={factor}"] and seen[0][4] == ""
    size = ctypes.c_size_t()
    hiprtc.hiprtcGetCodeSize(prog, ctypes.byref(size))
    code = ctypes.create_string_buffer(size.value)
    hiprtc.hiprtcGetCode(prog, code)
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    assert hip.hipModuleLoadData(ctypes.byref(module), code) == 0
    assert hip.hipModuleGetFunction(ctypes.byref(function), module, b"scale_by") == 0
    x = (ctypes.c_float * 64)(*range(64))
    y = (ctypes.c_float * 64)()
    pointers = [ctypes.c_void_p(ctypes.addressof(y)), ctypes.c_void_p(ctypes.addressof(x))]  # kept alive here
    args = (ctypes.c_void_p * 2)(*[ctypes.addressof(p) for p in pointers])  # kernelParams: each argument's address
    assert hip.hipModuleLaunchKernel(function, 1, 1, 1, 64, 1, 1, 0, None, args, None) == 0
    assert list(y) == [factor * i for i in range(64)]


def test_a_programs_kernel_declarations_are_preprocessed_once_per_source_and_defines(monkeypatch, tmp_path):
    """A file that compiles its HIPRTC program in every fresh module (each forked program) pays the
    preprocessor once: the declarations come back from the model's cache, the same, per set of defines."""
    from reference.emulation.hip_cpu import hiprtc

    monkeypatch.setattr(build, "CACHE", tmp_path)
    source = OPTIONED_PROGRAM.decode()
    first = hiprtc.kernel_declarations(source, ["WAVES=1"])
    other = hiprtc.kernel_declarations(source, ["WAVES=4"])
    assert [name for name, _ in first] == [name for name, _ in other] == ["scale_by"]

    def no_preprocessor(*args, **kwargs):
        raise AssertionError("clang -E ran again for a source and defines it had seen")

    monkeypatch.setattr(hiprtc.subprocess, "run", no_preprocessor)
    assert hiprtc.kernel_declarations(source, ["WAVES=1"]) == first
    assert hiprtc.kernel_declarations(source, ["WAVES=4"]) == other


@pytest.mark.slow
def test_a_precompiled_header_that_does_not_fit_never_decides_a_build(tmp_path):
    """The model's torch-extension builds use a precompiled header of its runtime and torch/extension.h
    (build.torch_pch); a header that does not fit (here: a file that is no header at all) fails the build,
    which is then made without it: the extension builds and its kernel computes."""
    from fuzz.testing.fresh_process import run_fresh

    bogus = tmp_path / "not_a.pch"
    bogus.write_bytes(b"no AST here")
    kernel = r'''
#include <torch/extension.h>
__global__ void twice(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    twice<<<(x.numel() + 63) / 64, 64>>>(x.data_ptr<float>(), y.data_ptr<float>(), (int)x.numel());
    return y;
}
'''
    result = run_fresh(f"""
        from pathlib import Path
        from reference.emulation import no_rocm
        from reference.emulation.hip_cpu import build
        assert no_rocm.install()
        build.torch_pch = lambda clang: Path({str(bogus)!r})
    """, f"""
        import os, torch
        os.environ["TORCH_EXTENSIONS_DIR"] = {str(tmp_path / 'ext')!r}
        from torch.utils.cpp_extension import load_inline
        module = load_inline("pch_fallback", cpp_sources="torch::Tensor run(torch::Tensor x);",
                             cuda_sources={kernel!r}, functions=["run"])
        x = torch.arange(100, dtype=torch.float32)
        print(torch.equal(module.run(x), 2 * x), [a.cpu_model for a in no_rocm.attempts()])
    """, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines()[-1] == "True ['built']", result.stdout + result.stderr[-2000:]
