"""AMD-only launch/compile options on a CUDA GPU (reference/emulation/amd_launch_options.py): the option list
comes from the installed Triton's two backends, the filter keeps kernel parameters, the hook turns compiled
Triton's KeyError into a recorded drop, and the interpreter ignores these options by itself."""
from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

from kernels import platform
from reference.emulation import amd_launch_options as amd

ON_CUDA = platform.detect().tier == "nvidia" and not platform.detect().interpreter
INTERPRETING = platform.detect().interpreter


@pytest.fixture
def stock_then_hooked():
    """Whatever the tier had installed is put back afterwards; the test starts from stock Triton."""
    was = amd.installed()
    amd.uninstall()
    amd.reset()
    yield
    amd.uninstall()
    amd.reset()
    if was:
        amd._patch()


# ---------------------------------------------------------------------------------------------------
# the option list (any machine: both backends are in the published Triton wheel)


def test_the_dropped_options_are_hip_option_fields_that_cuda_options_lack():
    hip, cuda = amd.backend_fields()
    if hip is None or cuda is None:
        pytest.skip("this Triton lacks the AMD or the NVIDIA backend: only the fixed list applies")
    names = set(amd.amd_only_options())
    assert set(hip) - set(cuda) <= names  # every HIP-only field of this Triton
    assert not names & set(cuda)  # and never a field the CUDA backend understands
    assert {"waves_per_eu", "matrix_instr_nonkdim", "kpack"} <= names
    assert "num_warps" not in names and "num_stages" not in names  # shared fields stay


def test_names_from_other_releases_are_added_unless_cuda_knows_them():
    assert amd.amd_only_options(hip_fields=(), cuda_fields=()) == amd.KNOWN_AMD_ONLY
    assert "kpack" not in amd.amd_only_options(hip_fields=("kpack",), cuda_fields=("kpack",))
    assert amd.amd_only_options(hip_fields=("new_amd_knob", "num_warps"), cuda_fields=("num_warps",))[0] == "new_amd_knob"
    assert "instruction_sched_variant" in amd.amd_only_options()  # HIPOptions until 3.3; the runner's Triton is unknown


# ---------------------------------------------------------------------------------------------------
# the filter (plain dicts)


def test_split_options_drops_amd_only_keys_and_keeps_everything_else():
    opts = {"num_warps": 4, "waves_per_eu": 2, "matrix_instr_nonkdim": 16, "BLOCK": 64, "debug": False}
    kept, dropped = amd.split_options(opts, ("waves_per_eu", "matrix_instr_nonkdim", "kpack"))
    assert kept == {"num_warps": 4, "BLOCK": 64, "debug": False}
    assert dropped == {"waves_per_eu": 2, "matrix_instr_nonkdim": 16}
    assert len(opts) == 5  # pure


def test_split_options_never_drops_a_kernel_parameter_of_the_same_name():
    kept, dropped = amd.split_options({"kpack": 2, "waves_per_eu": 1}, ("kpack", "waves_per_eu"), params=("x", "kpack"))
    assert kept == {"kpack": 2} and dropped == {"waves_per_eu": 1}


def test_a_drop_is_said_in_one_sentence():
    line = amd.note({"option": "waves_per_eu", "value": 2, "kernel": "k", "where": "f.py:3", "count": 1})
    assert line == "dropped AMD-only launch option waves_per_eu=2 (no meaning on NVIDIA) in kernel k at f.py:3"


# ---------------------------------------------------------------------------------------------------
# the hook, against Triton's own _pack_args and a CUDA backend object (no GPU needed)


def _plain_kernel(x_ptr, n, kpack, BLOCK: tl.constexpr):  # made a JITFunction below, whatever the tier's mode
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, 1.0 + kpack, mask=i < n)


def _pack(kwargs):
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.runtime.jit import JITFunction

    backend = CUDABackend(GPUTarget("cuda", 90, 32))
    jit = JITFunction(_plain_kernel)
    specialization = [("*fp32", "D"), ("i32", ""), ("i32", ""), ("constexpr", 16)]
    bound = {"x_ptr": None, "n": 4, "kpack": 3, "BLOCK": 16}
    return jit._pack_args(backend, dict(kwargs), bound, specialization, {})


def test_stock_cuda_backend_rejects_an_amd_only_launch_keyword(stock_then_hooked):
    with pytest.raises(KeyError, match="waves_per_eu was specified but unrecognised"):
        _pack({"BLOCK": 16, "waves_per_eu": 2, "debug": False, "enable_fp_fusion": True})


def test_the_hook_drops_it_records_it_and_keeps_a_parameter_named_like_an_option(stock_then_hooked):
    assert amd._patch() and amd.installed()
    options, signature, constexprs, _ = _pack({"BLOCK": 16, "waves_per_eu": 2, "matrix_instr_nonkdim": 16,
                                              "kpack": 3, "debug": False, "enable_fp_fusion": True})
    assert options.num_warps == 4 and not hasattr(options, "waves_per_eu")
    drops = {d["option"]: d for d in amd.dropped()}
    assert set(drops) == {"waves_per_eu", "matrix_instr_nonkdim"}  # kpack is _plain_kernel's argument here
    assert drops["waves_per_eu"]["value"] == 2 and drops["waves_per_eu"]["kernel"] == "_plain_kernel"
    assert drops["waves_per_eu"]["where"].startswith(__file__ + ":")
    amd.uninstall()
    with pytest.raises(KeyError):  # back to stock
        _pack({"BLOCK": 16, "waves_per_eu": 2, "debug": False, "enable_fp_fusion": True})


@pytest.mark.skipif(not INTERPRETING, reason="the install rule for the interpreter is checked where it interprets")
def test_install_is_a_no_op_in_the_interpreter(stock_then_hooked):
    assert amd.install() is False and not amd.installed()


# ---------------------------------------------------------------------------------------------------
# launches on this tier


@triton.jit
def _store_ones(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, tl.full((BLOCK,), 1.0, tl.float32), mask=i < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 16, "matrix_instr_nonkdim": 16}, num_warps=1),
                          triton.Config({"BLOCK": 32, "matrix_instr_nonkdim": 16, "waves_per_eu": 2}, num_warps=1)],
                 key=["n"])
@triton.jit
def _store_ones_autotuned(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, tl.full((BLOCK,), 1.0, tl.float32), mask=i < n)


@pytest.mark.skipif(not INTERPRETING, reason="checks the interpreter (cpu tier); compiled tiers are checked below")
def test_the_interpreter_ignores_amd_only_options_by_itself():
    x = torch.zeros(16)
    _store_ones[(1,)](x, 16, BLOCK=16, waves_per_eu=2, matrix_instr_nonkdim=16, kpack=1)
    assert x.tolist() == [1.0] * 16 and not amd.installed()


@pytest.mark.skipif(not ON_CUDA, reason="needs compiled Triton on a CUDA GPU (the KeyError is raised there only)")
def test_on_cuda_a_launch_with_waves_per_eu_raises_stock_and_runs_hooked(stock_then_hooked):
    x = torch.zeros(16, device="cuda")
    with pytest.raises(KeyError, match="waves_per_eu"):
        _store_ones[(1,)](x, 16, BLOCK=16, waves_per_eu=2)
    assert amd.install() and amd.installed()
    _store_ones[(1,)](x, 16, BLOCK=16, waves_per_eu=2)
    torch.cuda.synchronize()
    assert x.tolist() == [1.0] * 16
    (drop,) = [d for d in amd.dropped() if d["option"] == "waves_per_eu"]
    assert drop["kernel"].endswith("_store_ones") and drop["value"] == 2 and drop["where"].startswith(__file__)


@pytest.mark.skipif(not ON_CUDA, reason="needs compiled Triton on a CUDA GPU (the KeyError is raised there only)")
def test_on_cuda_an_autotune_config_with_matrix_instr_nonkdim_runs_hooked(stock_then_hooked):
    assert amd.install()
    x = torch.zeros(32, device="cuda")
    _store_ones_autotuned[(1,)](x, 32)  # benchmarks both configs, then runs the faster
    torch.cuda.synchronize()
    assert x[:16].tolist() == [1.0] * 16
    options = {(d["option"], d["kernel"].rsplit(".", 1)[-1]) for d in amd.dropped()}
    assert ("matrix_instr_nonkdim", "_store_ones_autotuned") in options
    assert ("waves_per_eu", "_store_ones_autotuned") in options


def test_a_launch_site_is_never_a_frame_of_our_launch_wrappers():
    """On the H200 the shared-memory retry (nvidia_shared_memory.py) wraps JITFunction.run around this hook, and
    its frame was named as the file's launch site: every module of ours on the launch path sets
    LAUNCH_WRAPPER and its frames are passed over, as Triton's are."""
    import sys

    from reference.emulation import cuda_backend_hook, nvidia_shared_memory

    wrapper_globals = {"LAUNCH_WRAPPER": True, "sys": sys}
    exec("def wrapped():\n    return sys._getframe()\n", wrapper_globals)
    ours = wrapper_globals["wrapped"]()
    assert not cuda_backend_hook.outside_launch_path(ours, "/nowhere/triton")
    assert cuda_backend_hook.outside_launch_path(sys._getframe(), "/nowhere/triton")
    assert nvidia_shared_memory.LAUNCH_WRAPPER and amd.LAUNCH_WRAPPER
    # the trace's hooks too: they stay on JITFunction.run between traces (the H100 named trace.py:184, stop 50)
    from fuzz.judge import trace

    assert trace.LAUNCH_WRAPPER
