"""Provenance of a submission's exceptions (fuzz/submission/provenance.py: describe_exception records it,
tier_limit judges it): FAIL only for what the file's own code (or Triton's frontend, or an API raising as the real one
does) raised; NOT RUN for what the CPU tier cannot run: a tier-limit type anywhere in the exception's
chain (also when a wrapper such as Dynamo's carries it), a ROCm library loaded through ctypes, or a
stand-in (the emulated aiter, cuda_on_cpu, no_rocm, the Triton interpreter's internals, the oracle code
the emulation calls) failing by itself."""
from __future__ import annotations


import pytest
import torch

from fuzz.search.strategies import Case
from fuzz.submission.provenance import aiter_note, describe_exception, raised_by, tier_limit
from fuzz.testing.fresh_process import run_fresh
from fuzz.testing.own_module import own_module
from fuzz.testing.programs import calls_at_rows

SUB = "/subs/sub.py"
INTERP = "/py/site-packages/triton/runtime/interpreter.py"
EMU = "/repo/reference/emulation"


def frame(kind, file, function="f", code="x = y", statement="other", line=10):
    return {"kind": kind, "file": file, "line": line, "function": function, "code": code,
            "statement": statement, "count": 1}


OWN = frame("own", SUB, "custom_kernel", "return kernel[grid](a, b)")
LIB = dict(frame("library", "/py/site-packages/torch/_ops.py"), entry="gemm (/py/site-packages/torch/_ops.py)")


def error(*chain, where=True):
    """A worker error dict: the outermost exception's type and message, and its chain."""
    top = chain[0]
    return {"type": top["type"], "message": top["message"], "frames": [], "device_fault": False,
            "where": {"file": SUB, "line": 7, "code": "y = custom_kernel(d)"} if where else None,
            "chain": [dict(e, mro=e.get("mro", [e["type"], "Exception", "BaseException"])) for e in chain]}


def exc(type_, message, *frames, mro=None):
    return {"type": type_, "message": message, "frames": list(frames), **({"mro": mro} if mro else {})}


# -- the rule, on recorded error dicts ----------------------------------------------------------------


def test_a_tier_limit_under_a_wrapper_is_not_run_naming_it():
    wrapped = error(exc("BackendCompilerFailed", "backend='inductor' raised", LIB, OWN),
                    exc("NotModelledOnCpu", "torch.cuda.get_rng_state is not modelled",
                        frame("stand_in", f"{EMU}/cuda_on_cpu.py", "_not_modelled_lazy_init",
                              "raise NotModelledOnCpu(f\"...\")", "raise"), LIB))
    reason = tier_limit(wrapped)
    assert reason and "CUDA API the CPU tier does not model" in reason
    assert "BackendCompilerFailed <- NotModelledOnCpu" in reason and "torch.cuda.get_rng_state" in reason


def test_inductor_generating_gpu_code_on_the_cpu_tier_is_the_tiers_limit():
    """41_torch_compile (kernelsanders) with the "cuda" RNG state modelled (tried in stop 47, not kept: each call
    then spent seconds in Inductor before failing, and the budget ran out): Dynamo gets past its frame setup and
    Inductor lowers the file's "cuda" tensors to GPU kernels, whose compile asserts libcuda: NOT RUN, not FAIL."""
    inductor = error(exc("InductorError", "AssertionError: libcuda.so cannot found!\n", LIB, OWN),
                     exc("AssertionError", "libcuda.so cannot found!\n",
                         frame("library", "/py/site-packages/triton/backends/nvidia/driver.py", "libcuda_dirs")))
    reason = tier_limit(inductor)
    assert reason and "Inductor" in reason and "InductorError" in reason


def test_a_wrapper_carrying_the_original_traceback_is_recognised():
    """Dynamo re-raises as InternalTorchDynamoError with the original's traceback and ``from None``."""
    carried = error(exc("InternalTorchDynamoError", "NotModelledOnCpu: torch.cuda.random.get_rng_state ...",
                        frame("stand_in", f"{EMU}/cuda_on_cpu.py", "_not_modelled_lazy_init",
                              "raise NotModelledOnCpu(f\"{caller} is not modelled\"", "raise"), LIB, OWN))
    reason = tier_limit(carried)
    assert reason and "InternalTorchDynamoError <- NotModelledOnCpu" in reason
    assert "compile" not in reason or "inside" in reason


def test_subclasses_of_tier_limit_types_count_by_mro():
    sub = error(exc("HiprtcMissing", "libhiprtc.so: cannot open", OWN,
                    mro=["HiprtcMissing", "RocmUnavailable", "OSError", "Exception", "BaseException"]))
    assert "needs hipcc / a ROCm GPU" in tier_limit(sub)


def test_the_interpreter_failing_inside_is_not_run_but_the_kernels_own_errors_fail():
    inner = exc("ValueError", "unsupported semantic acq_rel",
                frame("interpreter", INTERP, "create_atomic_rmw", "raise ValueError(f\"unsupported semantic {sem}\")",
                      "raise"), frame("own", SUB, "_kernel", "tl.atomic_add(p, v, sem='acq_rel')"))
    wrapper = exc("InterpreterError", "ValueError('unsupported semantic')",
                  frame("interpreter", INTERP, "__call__", "raise InterpreterError(repr(e)) from e", "raise_from"), OWN)
    reason = tier_limit(error(wrapper, inner))
    assert reason and "the Triton interpreter failed" in reason and "create_atomic_rmw" in reason
    own = exc("NameError", "name 'BLOCK' is not defined", frame("own", SUB, "_kernel", "offs = tl.arange(0, BLOCK)"))
    assert tier_limit(error(wrapper, own)) is None
    numpy = exc("TypeError", "ufunc 'bitwise_and' not supported", dict(LIB, file="/py/site-packages/numpy/core/x.py"),
                frame("interpreter", INTERP, "binary_op", "return TensorHandle(op(lhs.data, rhs.data), lhs.dtype)"))
    assert "the Triton interpreter failed" in tier_limit(error(wrapper, numpy))


def test_the_kernels_own_device_assert_and_frontend_rejections_fail():
    assertion = exc("AssertionError", "K % BLOCK_K == 0",
                    frame("interpreter", INTERP, "create_assert", "assert condition, f\"{message}\"", "assert"),
                    frame("frontend", "/py/site-packages/triton/language/core.py", "device_assert"),
                    frame("own", SUB, "_kernel", "tl.device_assert(K % BLOCK_K == 0)"))
    assert tier_limit(error(assertion)) is None
    semantic = exc("ValueError", "Cannot broadcast", frame("frontend", "/py/site-packages/triton/language/semantic.py",
                                                           "broadcast_impl_shape", "raise ValueError(...)", "raise"))
    assert tier_limit(error(semantic)) is None
    rejects = exc("FrontendRejects", "sub.py:9: kernel k: Triton's compiled frontend rejects it",
                  frame("stand_in", f"{EMU}/triton_interpreter.py", "check_compiled_frontend",
                        "raise FrontendRejects(f\"{where}: kernel {fn.__name__}: \"", "raise"), OWN)
    assert tier_limit(error(rejects)) is None


def test_the_emulated_aiter_raising_as_aiter_raises_fails_and_failing_by_itself_is_not_run():
    as_aiter = exc("RuntimeError", "gemm_a4w4_asm only support BFloat16 output now!",
                   frame("stand_in", f"{EMU}/aiter_emu/aiter/ops/gemm_op_a4w4.py", "gemm_a4w4_asm",
                         "raise RuntimeError(\"gemm_a4w4_asm only support BFloat16 output now!\")", "raise"), OWN)
    assert tier_limit(error(as_aiter)) is None
    by_itself = exc("RuntimeError", "shape '[4, 7, 32]' is invalid for input of size 100", LIB,
                    frame("stand_in", f"{EMU}/aiter_emu/aiter/ops/triton/_vectorized.py", "_quantize",
                          "blocks = x.view(m, k // 32, 32)"), OWN)
    reason = tier_limit(error(by_itself))
    assert reason and "the emulated aiter failed" in reason and "_vectorized.py" in reason
    oracle_check = exc("ValueError", "shuffled scales must be [multiple of 256, multiple of 8], got (128, 224)",
                       frame("stand_in", "/repo/reference/oracle/layouts.py", "e8m0_unshuffle", "raise ValueError(f\"...\")",
                             "raise"),
                       frame("stand_in", f"{EMU}/aiter_emu/aiter/ops/triton/_vectorized.py", "_weights",
                             "scales = e8m0_unshuffle(shuffled_scales, n, k // 32)"), OWN)
    assert "the oracle code the emulation calls failed" in tier_limit(error(oracle_check))
    not_implemented = exc("NotImplementedError", "QuantType.per_Token Triton quantization is not emulated",
                          frame("stand_in", f"{EMU}/aiter_emu/aiter/ops/quant.py", "get_triton_quant",
                                "raise NotImplementedError(f\"...\")", "raise"), OWN)
    assert "the emulated aiter does not implement it" in tier_limit(error(not_implemented))


def test_forwarding_lines_of_a_stand_in_are_transparent():
    """A torch error in the file's own call passes through cuda_on_cpu's TorchFunctionMode: still the file's."""
    own_torch = exc("RuntimeError", "mat1 and mat2 shapes cannot be multiplied",
                    frame("stand_in", f"{EMU}/cuda_on_cpu.py", "__torch_function__",
                          "return func(*args, **kwargs)  # forwards: the real op, on the CPU", "forward"),
                    frame("own", SUB, "custom_kernel", "return A @ B"))
    assert tier_limit(error(own_torch)) is None


def test_the_files_own_errors_and_library_errors_stay_fail():
    assert tier_limit(error(exc("NameError", "name 'x' is not defined", OWN))) is None
    assert tier_limit(error(exc("RuntimeError", "CUDA error: illegal memory access", LIB, OWN))) is None
    assert raised_by(exc("KeyError", "k", LIB)) is None  # library frames only: undecided
    legacy = {"type": "ValueError", "message": "bad"}  # a record without a chain: judged by its type
    assert tier_limit(legacy) is None
    assert tier_limit({"type": "RocmUnavailable", "message": "x"})


def test_a_stand_in_failure_in_the_context_makes_the_handler_path_not_run():
    """The file's except-block ran because a stand-in failed; on the runner it may never run."""
    handler = exc("UnboundLocalError", "local variable 'y' referenced before assignment", OWN)
    fault = exc("TypeError", "unsupported operand", frame("stand_in", f"{EMU}/aiter_emu/aiter/ops/shuffle.py",
                                                          "shuffle_weight", "x = w.view(*shape) * 2"), OWN)
    assert "the emulated aiter failed" in tier_limit(error(handler, fault))


# -- describe_exception on real exceptions --------------------------------------------------------------


def _module(tmp_path, body: str):
    return own_module(tmp_path, body, "own_sub_for_provenance")


def test_describe_exception_records_the_chain_and_who_raised(tmp_path):
    module, path = _module(tmp_path, """
        import torch
        from reference import e8m0_unshuffle

        def through_the_oracle():
            return e8m0_unshuffle(torch.zeros(3, 3, dtype=torch.uint8))

        def own_wrapper():
            try:
                through_the_oracle()
            except ValueError as e:
                raise RuntimeError("my kernel failed") from e

        def own_bug():
            return torch.zeros(2, 3) @ torch.zeros(2, 3)
    """)
    with pytest.raises(RuntimeError) as caught:
        module.own_wrapper()
    described = describe_exception(caught.value, path)
    assert [e["type"] for e in described["chain"]] == ["RuntimeError", "ValueError"]
    top, cause = described["chain"]
    assert top["frames"][0]["kind"] == "own" and top["frames"][0]["statement"] == "raise_from"
    assert cause["frames"][0]["kind"] == "stand_in" and cause["frames"][0]["statement"] == "raise"
    assert cause["frames"][0]["file"].endswith("reference/oracle/layouts.py") and cause["frames"][-1]["kind"] == "own"
    assert "the oracle code the emulation calls failed" in tier_limit(described)
    with pytest.raises(RuntimeError) as caught:
        module.own_bug()
    assert tier_limit(describe_exception(caught.value, path)) is None


# -- end to end: the worker on a file of our own -------------------------------------------------------

EXAMPLE = '''
import ctypes
import torch


def _hip_or_none():  # ROCm libraries through ctypes, with a fallback (not HIPRTC: the CPU model has that)
    try:
        return ctypes.CDLL("librocblas.so"), ctypes.cdll.LoadLibrary("libhipblaslt.so")
    except OSError:
        return None


def _rng(x):
    torch.cuda.get_rng_state()
    return x + 1


def custom_kernel(data):
    A, B = data[0], data[1]
    m = A.shape[0]
    if m == 1:
        assert _hip_or_none() is None
        return (A.float() @ B.float().t()).to(torch.bfloat16)
    if m == 2:  # no fallback
        hip = ctypes.CDLL("librocblas.so")
    if m == 3:
        return torch.compile(_rng, backend="eager")(A)
    return undefined_name  # the file's own bug
'''


def test_worker_ctypes_rocm_torch_compile_and_own_errors(tmp_path):
    from fuzz.submission.runner import SubmissionRunner

    path = tmp_path / "provenance_example.py"
    path.write_text(EXAMPLE)
    runner = SubmissionRunner(path, aiter="emulated", timeout=120)
    try:
        result = runner.run(calls_at_rows((1, 2, 3, 4)).steps)
        assert result.kind == "ok", result.describe_death()
        calls = {r["out"]: r for r in result.calls()}
        if "hip_builds" not in calls["y1"]:
            pytest.skip("ROCm is here: no_rocm is not installed")
        assert "file" in calls["y1"] and "exception" not in calls["y1"]  # the fallback served
        device = calls["y1"]["input_device"]
        A, B = (t.to(device) for t in Case(1, 64, 64, seed=1).build()[0][:2])
        assert torch.equal(result.tensor(calls["y1"]), (A.float() @ B.float().t()).to(torch.bfloat16).cpu())
    finally:
        runner.close()
    no_fallback = tier_limit(calls["y2"]["exception"])
    assert no_fallback and "librocblas.so" in no_fallback and "needs hipcc / a ROCm GPU" in no_fallback
    assert [b["name"] for b in calls["y2"]["hip_builds"]] == ["librocblas.so"]
    if device == "cpu":  # the CUDA device stood in by the CPU has no RNG state for torch.compile to save
        compiled = tier_limit(calls["y3"]["exception"])
        assert compiled and "NotModelledOnCpu" in compiled and "get_rng_state" in compiled
    else:  # a CUDA GPU has one: the compiled function runs
        assert "exception" not in calls["y3"], calls["y3"]["exception"]
    assert calls["y4"]["exception"]["type"] == "NameError" and tier_limit(calls["y4"]["exception"]) is None


# -- no_rocm: ctypes and C++ extensions against ROCm ------------------------------------------------------


def test_no_rocm_models_hiprtc_and_refuses_other_rocm_libraries_and_rocm_cpp_extensions():
    result = run_fresh("from reference.emulation import no_rocm\nassert no_rocm.install()\n", """
        import ctypes, ctypes.util
        from torch.utils.cpp_extension import load_inline
        for load in (lambda: ctypes.CDLL("libamdhip64.so"), lambda: ctypes.cdll.LoadLibrary("libhiprtc.so.7"),
                     lambda: getattr(ctypes, "CD" + "LL")("/opt/rocm/lib/libhipblaslt.so"),
                     lambda: ctypes.cdll.librocblas, lambda: ctypes.CDLL(ctypes.util.find_library("amdhip64"))):
            try:
                load()
                print("loaded")
            except (OSError, AttributeError) as e:  # Python 3.12's cdll.<name> turns the loader's OSError into this
                e = e.__context__ if isinstance(e, AttributeError) else e
                print(type(e).__name__, "cannot open shared object file" in str(e))
        print(ctypes.util.find_library("amdhip64"), ctypes.CDLL(ctypes.util.find_library("c")).getpid() > 0)
        try:
            load_inline("blt", cpp_sources="#include <hipblaslt/hipblaslt.h>\\nvoid f() {}", functions=["f"],
                        extra_ldflags=["-L/opt/rocm/lib", "-lhipblaslt"])
        except OSError as e:
            print(type(e).__name__, "hipblaslt/hipblaslt.h" in str(e), "-lhipblaslt" in str(e))
        print([(a.api, a.name) for a in no_rocm.attempts()])
    """)
    assert result.returncode == 0, result.stderr
    # HIPRTC and the HIP runtime load as the CPU model of them (reference/emulation/hip_cpu/hiprtc.py); the
    # other ROCm libraries are refused
    assert result.stdout.splitlines() == ["loaded", "loaded", "RocmUnavailable True", "RocmUnavailable True",
                                          "loaded"] + [
        "libamdhip64.so True", "RocmUnavailable True True",
        "[('ctypes', 'libamdhip64.so'), ('ctypes', 'libhiprtc.so.7'), ('ctypes', 'libhipblaslt.so'), "
        "('ctypes', 'librocblas'), ('ctypes', 'libamdhip64.so'), ('load_inline', 'blt')]"]


CUDA_CLEAN = "__global__ void k(float* y) { y[threadIdx.x] = 1.0f; }"
HIP_HEADER = "#include <hip/hip_runtime.h>\n" + CUDA_CLEAN
MFMA = "__global__ void k(float* y) { auto c = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, c, 0, 0, 0); }"
HOST_HIP = "void f(void** p) { hipMalloc(p, 4); }"


def test_on_a_cuda_gpu_only_what_needs_rocm_is_refused(monkeypatch):
    from reference.emulation import no_rocm

    monkeypatch.setitem(no_rocm._state, "cuda_builds", True)  # the nvidia tier: nvcc builds CUDA-clean sources
    assert no_rocm._refused_build(True, [CUDA_CLEAN], {}) is None
    assert "hip/hip_runtime.h" in no_rocm._refused_build(True, [HIP_HEADER], {})
    assert "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k" in no_rocm._refused_build(True, [MFMA], {})
    assert no_rocm._refused_build(False, ["int f() { return 1; }"], {}) is None
    assert "hipMalloc" in no_rocm._refused_build(False, [HOST_HIP], {})
    monkeypatch.setitem(no_rocm._state, "cuda_builds", False)  # the CPU tier: no GPU build at all
    assert no_rocm._refused_build(True, [CUDA_CLEAN], {}) == "HIP/CUDA sources"
    assert "hipMalloc" in no_rocm._refused_build(False, [HOST_HIP], {})


def test_a_kernel_of_ours_rejected_by_the_frontend_is_not_the_files_fail():
    """Compiled Triton's frontend rejecting a stand-in's own kernel is ours to fix: NOT RUN naming it; the
    same rejection of a kernel in the file stays the file's."""
    def error(path):
        message = (f"{path}:148: kernel _k: Triton's compiled frontend rejects it for gfx950, so it cannot run on "
                   "the GPU although the interpreter runs it:\nat 3:4: ...")
        exc = {"type": "FrontendRejects", "mro": ["FrontendRejects", "ValueError", "Exception"], "message": message,
               "frames": []}
        return {"type": "FrontendRejects", "message": message, "chain": [exc]}

    ours = tier_limit(error("/repo/reference/emulation/probe_kernels.py"))
    assert ours and "the CPU tier's emulation's own Triton kernel _k" in ours and "ours to fix" in ours
    assert tier_limit(error("/home/user/submission.py")) is None
    # the emulated aiter's kernels follow aiter's, whose compile rejects the same configs: the file's call
    # fails on the runner too (checked for _gemm_a16wfp4_preshuffle_kernel at K = 64 with aiter's own source)
    assert tier_limit(error("/repo/reference/emulation/aiter_emu/aiter/ops/triton/gemm.py")) is None


def test_a_build_failure_no_rocm_raises_as_the_runner_s_torch_would_is_the_file_s():
    """no_rocm raises a few failures the runner's torch raises the same way (an extension whose own
    PYBIND11_MODULE clashes with load_inline(functions=...)) through _fails_as_on_the_runner: the file's, FAIL;
    any other raise of no_rocm is the stand-in failing, NOT RUN."""
    as_runner = frame("stand_in", f"{EMU}/no_rocm.py", "_fails_as_on_the_runner",
                      "raise error from None", "raise_from")
    caller = frame("stand_in", f"{EMU}/no_rocm.py", "load_inline", "_fails_as_on_the_runner(RuntimeError(str(error)))")
    failed = error(exc("RuntimeError", "Error building extension 'm': redefinition of 'PyInit_m'", as_runner, caller, OWN))
    assert tier_limit(failed) is None
    own_bug = error(exc("KeyError", "'x'", frame("stand_in", f"{EMU}/no_rocm.py", "load_inline", "x = d['x']"), OWN))
    assert "no_rocm" in tier_limit(own_bug)


def test_an_aiter_name_the_emulation_lacks_is_not_run_and_a_name_aiter_never_had_is_the_files():
    """``from aiter.M import N`` fails as a plain ImportError however the module's __getattr__ raises: where
    real aiter's M binds N at the runner's commit (the surface list), it is the emulation's gap."""
    emulated = f"{EMU}/aiter_emu/aiter/ops/gemm_op_a4w4.py"
    real = exc("ImportError", f"cannot import name 'get_GEMM_config' from 'aiter.ops.gemm_op_a4w4' ({emulated})",
               mro=["ImportError", "Exception", "BaseException"])
    assert "aiter.ops.gemm_op_a4w4.get_GEMM_config (in aiter f3be04a12a0c)" in tier_limit(error(real))
    never = exc("ImportError", f"cannot import name 'gemm_a4w4_turbo' from 'aiter.ops.gemm_op_a4w4' ({emulated})",
                mro=["ImportError", "Exception", "BaseException"])
    assert tier_limit(error(never)) is None
    elsewhere = exc("ImportError", "cannot import name 'get_GEMM_config' from 'aiter.ops.gemm_op_a4w4' "
                    "(/opt/rocm/aiter/ops/gemm_op_a4w4.py)", mro=["ImportError", "Exception", "BaseException"])
    assert tier_limit(error(elsewhere)) is None  # real aiter lacking it: the file's, as on the runner


def test_a_crash_inside_a_stand_in_s_kernel_is_ours_and_inside_the_file_s_is_the_file_s():
    """faulthandler's dump of a worker killed by SIGSEGV: the crashing thread's innermost frame that is the file's
    or a stand-in's decides (Triton's interpreter and our machinery that runs any kernel are skipped); a thread
    other than the crashing one says nothing."""
    from fuzz.submission.provenance import STAND_IN_ROOT, crash_in_stand_in

    emulated = f"{STAND_IN_ROOT}emulation/aiter_emu/aiter/ops/triton/_triton_kernels/gemm/basic/gemm_a16wfp4.py"
    machinery = f"{STAND_IN_ROOT}emulation/triton_interpreter.py"

    def dump(*files, other=()):
        current = [f'  File "{file}", line {10 + i} in fn{i}' for i, file in enumerate(files)]
        others = [f'  File "{file}", line 1 in g' for file in other]
        return "\n".join(["Fatal Python error: Segmentation fault", "", "Thread 0x01 (most recent call first):",
                          *others, "", "Current thread 0x02 (most recent call first):", *current,
                          "", "Extension modules: numpy.core._multiarray_umath (total: 1)"])

    found = crash_in_stand_in(dump(INTERP, machinery, emulated, SUB), SUB)
    assert found == ("the emulated aiter (reference/emulation/aiter_emu/aiter/ops/triton/_triton_kernels/gemm/basic/"
                     "gemm_a16wfp4.py:12 in fn2)")
    assert crash_in_stand_in(dump(INTERP, machinery, SUB, emulated), SUB) is None  # the file's own kernel ran
    assert crash_in_stand_in(dump(INTERP, SUB), SUB, ) is None
    assert crash_in_stand_in(dump(INTERP, SUB, other=(emulated,)), SUB) is None  # another thread's stand-in
    assert crash_in_stand_in("Segmentation fault (core dumped)", SUB) is None  # no dump: nothing to tell


def test_the_interpreters_wrapper_lets_its_cause_decide_and_a_modelled_null_fault_is_the_files():
    """v55 (zx1993max) at M=3 N=16 K=512 passes aiter an empty scale view (N // 32 = 0 rows): its data_ptr() is 0
    and aiter's kernel loads through it. The patched interpreter raises NullPointerFault (a GPU's memory access
    fault) instead of the SIGSEGV that read as our stand-in crashing; the InterpreterError wrapping it, raised
    under our launch machinery, no longer reads as the interpreter failing: the cause decides."""
    kernel = frame("stand_in", f"{EMU}/aiter_emu/aiter/ops/triton/_triton_kernels/gemm/basic/gemm_a16wfp4.py",
                   "_gemm_a16wfp4_preshuffle_kernel", "tl.load(b_scale_ptrs, cache_modifier=cache_modifier)", line=148)
    fault = exc("NullPointerFault", "an illegal memory access was encountered (the CPU tier's model ...)",
                frame("stand_in", f"{EMU}/triton_interpreter.py", "_check", "raise NullPointerFault(", "raise"),
                frame("interpreter", INTERP, "create_masked_load", "ret = _interpreter.load(...)"), kernel)
    wrapper = exc("InterpreterError", "NullPointerFault('an illegal memory access ...')",
                  frame("interpreter", INTERP, "__call__", "raise InterpreterError(repr(e)) from e", "raise_from"),
                  frame("stand_in", f"{EMU}/triton_batched.py", "__call__", "return stock(...)  # forwards", "forward"),
                  LIB, frame("interpreter", INTERP, "run", "return GridExecutor(fn, ...)(*args, **kwargs)"), OWN)
    recorded = error(wrapper, fault)
    assert tier_limit(recorded) is None
    assert "inside aiter's own _gemm_a16wfp4_preshuffle_kernel" in aiter_note(recorded)
    broken = exc("TypeError", "unsupported operand", frame("interpreter", INTERP, "binary_op", "return op(a, b)"))
    assert "the Triton interpreter failed" in tier_limit(error(wrapper, broken))
    assert aiter_note(error(wrapper, broken)) == ""  # a tier limit is not the file's: no note


def test_compiled_triton_rejecting_an_emulated_aiter_kernel_is_aiters_own_rejection():
    """The GPU tier compiles the emulated aiter's kernels: their static asserts (where aiter's source fails to
    compile) and Triton's shape checks raise CompilationError from Triton under the emulation's launch line.
    That is what the CPU tier's FrontendRejects of the same kernel is: the file's, with aiter named."""
    launch = frame("stand_in", f"{EMU}/aiter_emu/aiter/ops/triton/gemm/basic/gemm_a16wfp4.py", "gemm_a16wfp4_preshuffle",
                   "_gemm_a16wfp4_preshuffle_kernel[_gemm_grid(M, N, config)](", line=103)
    jit = dict(frame("library", "/py/site-packages/triton/runtime/jit.py", "run"), entry="run (triton/runtime/jit.py)")
    mro = ["CompileTimeAssertionFailure", "CompilationError", "TritonError", "Exception", "BaseException"]
    rejected = error(exc("CompileTimeAssertionFailure", "at 18:4: aiter's preshuffle kernel loads A and B only when EVEN_K",
                         jit, launch, OWN, mro=mro))
    assert tier_limit(rejected) is None
    assert "inside aiter's own gemm_a16wfp4_preshuffle" in aiter_note(rejected)
    elsewhere = error(exc("CompileTimeAssertionFailure", "at 3:4: ...", jit,
                          frame("stand_in", f"{EMU}/triton_batched.py", "template", "kernel(*args)"), OWN, mro=mro))
    assert "failed, not the file's code" in tier_limit(elsewhere)
