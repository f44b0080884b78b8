"""Each path of kernels/ meets the oracle's bound on this tier; the dispatcher's rules hold; the bundle
is the package."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from hypothesis import given, settings, strategies as st

from fuzz.judge.verdicts import accumulation_model
from kernels import aiter_helper, asm, configs, dispatch, fused
from kernels.platform import detect
from reference import accumulation_bound, acceptable_range, exact_gemm_from_inputs, generate_input, quantize_mxfp4

DEVICE = detect().device


def assert_meets_bound(y, data, splits=1, rounding="rne"):
    ex = exact_gemm_from_inputs(tuple(t.cpu() for t in data))
    lo, hi = acceptable_range(ex, accumulation_bound(ex, splits, **accumulation_model()), rounding)
    y = y.detach().cpu().double()
    assert y.shape == ex.value.shape
    bad = ~((lo <= y) & (y <= hi))
    assert not bad.any(), f"{int(bad.sum())} elements outside the bound, first at {bad.nonzero()[0].tolist()}"


small_shapes = st.tuples(st.integers(1, 20), st.integers(1, 4).map(lambda x: 32 * x), st.integers(1, 6).map(lambda x: 64 * x))


@settings(max_examples=6)
@given(shape=small_shapes, seed=st.integers(0, 2**16), splits=st.sampled_from([1, 2, 3]))
def test_fused_portable_meets_the_bound(shape, seed, splits):
    m, n, k = shape
    n = max(n, 64) if n % 64 else n
    data = generate_input(m, n, k, seed, device=DEVICE, scale_pad_fill=0xFF)
    split_k, splits = configs.align_splits(k, 256, splits)
    cfg = configs.FusedConfig(16, 32, 256, splits=splits, split_k=split_k if splits > 1 else 0)
    y = fused.fused_gemm(data[0], data[3], data[4], n, cfg, "portable")
    assert_meets_bound(y, data, splits)


@pytest.mark.parametrize("quantizer", fused.QUANTIZERS)
def test_in_kernel_quantizers_are_bit_exact_with_the_reference(quantizer):
    if quantizer == "gfx950" and detect().tier == "nvidia":
        pytest.skip("gfx950 inline asm cannot compile for NVIDIA")
    g = torch.Generator().manual_seed(0)
    A = (torch.randn(24, 512, generator=g) * torch.exp2(torch.randint(-20, 20, (24, 1), generator=g).float()))
    A = A.to(torch.bfloat16).to(DEVICE)
    packed, scales = fused.quantize_a(A, quantizer)
    ref_packed, ref_scales = quantize_mxfp4(A.cpu())
    assert torch.equal(scales.cpu(), ref_scales)
    assert torch.equal(packed.cpu(), ref_packed)


@pytest.mark.slow
def test_official_test_shape_fits_on_this_tier():
    shape = (16, 3072, 1536) if detect().interpreter else (256, 2880, 512)
    data = generate_input(*shape, seed=5, device=DEVICE)
    y, info = fused.run(data)
    assert_meets_bound(y, data, info.splits)


def test_dispatcher_records_the_path_and_returns_fresh_outputs():
    d = dispatch.Dispatcher()
    data = generate_input(4, 64, 256, seed=1, device=DEVICE)
    y1 = d(data)
    y2 = d(data)
    assert d.last.info.path == "fused" and d.last.shape == (4, 64, 256)
    assert y1.data_ptr() != y2.data_ptr() and torch.equal(y1, y2)


def test_dispatcher_falls_back_once_per_shape_and_remembers():
    from kernels.path import FunctionPath, RunInfo

    calls = {"broken": 0}

    def broken(data):
        calls["broken"] += 1
        raise RuntimeError("injected")

    broken_path = FunctionPath("broken", lambda: (True, "test"), broken)
    d = dispatch.Dispatcher([broken_path, fused.PATH])
    data = generate_input(2, 64, 256, seed=2, device=DEVICE)
    for _ in range(3):
        d(data)
    assert calls["broken"] == 1
    assert d.last.info.path == "fused"
    assert "failed before" in d.last.fallbacks[0][1]


def test_dispatcher_rejects_bad_input_with_a_clear_error():
    data = generate_input(2, 64, 256, seed=0)
    with pytest.raises(TypeError, match="A must be a 2-D bf16"):
        dispatch.custom_kernel((data[0].float(),) + data[1:])
    with pytest.raises(TypeError, match="tuple"):
        dispatch.custom_kernel(data[:3])


def test_a_quant_cache_never_serves_a_modified_tensor():
    cache = asm.AQuantCache()
    A = torch.randn(4, 64).to(torch.bfloat16)
    first = cache.get(A, lambda a: a.clone())
    assert cache.get(A, lambda a: a.clone()) is first
    A.mul_(2)  # in place: same object, same data_ptr, new version
    assert not torch.equal(cache.get(A, lambda a: a.clone()), first)
    B = A.clone()
    assert cache.get(B, lambda a: "recomputed") == "recomputed"


def test_bundle_gives_the_same_outputs_as_the_package(tmp_path):
    from kernels import bundle

    sub = tmp_path / "submission.py"
    bundle.main(["-o", str(sub)])
    assert sub.read_text().startswith("#!POPCORN leaderboard amd-mxfp4-mm\n#!POPCORN gpu MI355X\n")
    (tmp_path / "task.py").write_text("from typing import TypeVar\ninput_t = TypeVar('input_t')\noutput_t = TypeVar('output_t')\n")
    script = textwrap.dedent(f"""
        import sys, torch
        sys.path[:0] = [{str(tmp_path)!r}]
        import submission
        from reference import generate_input
        for shape in [(3, 64, 256), (17, 96, 512)]:
            y = submission.custom_kernel(generate_input(*shape, seed=9, device={DEVICE!r})).cpu()
            torch.save(y, {str(tmp_path)!r} + f"/y_{{shape[0]}}.pt")
        import kernels
        assert kernels.__file__.startswith({str(tmp_path / 'cache')!r}), kernels.__file__
    """)
    env = dict(os.environ, MXFP4_FUZZ_CACHE=str(tmp_path / "cache"))
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=tmp_path.parent)
    for shape in [(3, 64, 256), (17, 96, 512)]:
        expected = dispatch.Dispatcher()(generate_input(*shape, seed=9, device=DEVICE)).cpu()
        assert torch.equal(torch.load(tmp_path / f"y_{shape[0]}.pt"), expected)
