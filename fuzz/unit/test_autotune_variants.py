"""Every autotune config a variant on both local tiers (triton_interpreter.install_autotune_variants): the
submission worker on the NVIDIA tier runs the config it names instead of timing every config there (the
NVIDIA GPU's fastest says nothing of gfx950's, and timing cost seconds a shape)."""
import pytest
import torch
import triton
import triton.language as tl

from reference.emulation import triton_interpreter

DEVICE = "cpu" if triton.knobs.runtime.interpret or not torch.cuda.is_available() else "cuda"


@triton.autotune(configs=[triton.Config({"B": 4}), triton.Config({"B": 8}), triton.Config({"B": 16})], key=["n"])
@triton.jit
def _autotuned_add_block(x_ptr, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x_ptr + i, tl.load(x_ptr + i, mask=i < n) + B, mask=i < n)


@pytest.fixture
def variants():
    installed_now = triton_interpreter.install_autotune_variants()
    assert not triton_interpreter.install_autotune_variants()  # idempotent
    yield
    triton_interpreter.set_autotune_choice(0)
    if installed_now:  # compiled Triton in the pytest process: our own kernels tune as stock Triton does
        triton_interpreter.uninstall(["autotune_without_benchmark"])


def test_the_named_config_runs_untimed_and_every_config_is_reported(variants):
    triton_interpreter.reset_autotune_report()
    ran = []
    for choice in range(4):
        triton_interpreter.set_autotune_choice(choice)
        x = torch.zeros(16, device=DEVICE)
        _autotuned_add_block[lambda meta: (triton.cdiv(16, meta["B"]),)](x, 16)
        ran.append(x[0].item())
    assert ran == [4.0, 8.0, 16.0, 4.0]  # choice modulo the kernel's number of configs
    report = triton_interpreter.autotune_report()["_autotuned_add_block"]
    assert len(report["configs"]) == 3 and report["ran"] == [0, 1, 2]
    calls = []
    assert triton.testing.do_bench(lambda: calls.append(1)) == 1.0 and calls == [1]  # once, untimed
