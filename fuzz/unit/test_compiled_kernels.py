"""Compiled Triton kernels carried over a fresh module on a GPU (fuzz/submission/compiled_kernels.py): only
between functions Triton itself gives the same cache key (same source, same constexpr globals), and the
module's own state never. The key logic runs anywhere (a JITFunction is built and hashed without a GPU);
the launch without a recompile needs a GPU."""
from __future__ import annotations

import importlib.util
import textwrap

import pytest
import torch

from fuzz.submission.compiled_kernels import carry_over

SOURCE = textwrap.dedent("""
    import triton
    import triton.language as tl
    from triton.runtime.jit import JITFunction

    SCALE = tl.constexpr({scale})
    STATE = []  # module state: never carried

    def _double(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(x_ptr + offs, x * SCALE, mask=offs < n)

    double = {wrap}(_double)
""")


def module_from(tmp_path, name: str, scale: int, wrap: str = "JITFunction"):
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCE.format(scale=scale, wrap=wrap))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_same_source_takes_the_old_kernels_and_nothing_else(tmp_path):
    old = module_from(tmp_path, "first", 2)
    new = module_from(tmp_path, "second", 2)
    assert carry_over(old, new) == 0  # nothing compiled yet: nothing to take (and no foreign factory)
    old.double.device_caches["gpu0"] = ("kernels", "binder")  # what a launch leaves there
    old.STATE.append("from the last program")
    binders = []
    new.double.create_binder = lambda: binders.append(1) or ("fresh",)  # no GPU here: the factory's stand-in
    assert carry_over(old, new) == 1
    assert new.double.device_caches["gpu0"] == ("kernels", "binder")
    assert new.double.device_caches is not old.double.device_caches and binders == [1]
    assert new.double.device_caches["gpu1"] == ("fresh",)  # another device: the new function's own factory
    assert new.STATE == []  # a fresh module's state stays fresh


def test_another_constexpr_global_gets_no_kernels(tmp_path):
    old = module_from(tmp_path, "first", 2)
    old.double.device_caches["gpu0"] = ("kernels", "binder")
    new = module_from(tmp_path, "second", 3)  # SCALE differs: another cache key
    marker = new.double.device_caches
    assert carry_over(old, new) == 0
    assert new.double.device_caches is marker
    assert carry_over(None, new) == 0


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: compiled Triton launches (this is the CPU tier)")
def test_on_a_gpu_the_fresh_module_launches_without_compiling_again(tmp_path):
    import triton

    old = module_from(tmp_path, "first", 2, wrap="triton.jit")
    x = torch.arange(100, dtype=torch.float32, device="cuda")
    old.double[(1,)](x, 100, BLOCK=128)
    new = module_from(tmp_path, "second", 2, wrap="triton.jit")
    assert carry_over(old, new) == 1
    compiled = []
    original = new.double._do_compile
    new.double._do_compile = lambda *a, **k: compiled.append(1) or original(*a, **k)
    y = torch.arange(100, dtype=torch.float32, device="cuda")
    new.double[(1,)](y, 100, BLOCK=128)
    torch.cuda.synchronize()
    assert compiled == [] and torch.equal(y, x)
    # from a module that never launched (the one loaded before the first program): nothing is carried and
    # the new function compiles on its own (a carried, empty table once made it raise at its first launch)
    unused = module_from(tmp_path, "third", 2, wrap="triton.jit")
    fourth = module_from(tmp_path, "fourth", 2, wrap="triton.jit")
    assert carry_over(unused, fourth) == 0
    z = torch.arange(100, dtype=torch.float32, device="cuda")
    fourth.double[(1,)](z, 100, BLOCK=128)
    torch.cuda.synchronize()
    assert torch.equal(z, x) and triton is not None
