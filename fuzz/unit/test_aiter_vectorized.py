"""aiter's public Triton API served by PyTorch on the CPU tier (aiter/ops/triton/_vectorized.py): the
same quantization bits and the same output layout as the emulated kernels, every GEMM inside the
oracle's bound, a caller's ``y`` written in place. (How much faster it is: docs/aiter_emulation.md.)"""
import pytest
import torch
import triton

from fuzz.testing.fixtures_aiter import assert_within_bound, emulated, preshuffled_views, unshuffled_b
from reference import exact_gemm_from_inputs, generate_input

vectorized = emulated("ops.triton._vectorized")
triton_quant = emulated("ops.triton.quant")
a16wfp4 = emulated("ops.triton.gemm.basic.gemm_a16wfp4")
afp4wfp4 = emulated("ops.triton.gemm.basic.gemm_afp4wfp4")

pytestmark = pytest.mark.skipif(not triton.knobs.runtime.interpret, reason="the vectorized public API serves the "
                                "CPU tier only (CPU tensors); compiled kernels on a GPU are the emulation's own tests")
SHAPES = [(1, 64, 256), (13, 128, 320), (16, 256, 512)]


def both_modes(call):
    out = {}
    for m in ("kernels", "vectorized"):
        vectorized.set_mode(m)
        try:
            out[m] = call()
        finally:
            vectorized.set_mode("kernels")
    return out


def b_views(data):
    packed, scales = unshuffled_b(data)
    shuffled, shuffled_scales = preshuffled_views(data)
    return {"packed": packed, "scales": scales, "shuffled": shuffled, "shuffled_scales": shuffled_scales}


@pytest.mark.parametrize("m, n, k", SHAPES)
def test_dynamic_mxfp4_quant_is_bit_exact_with_the_kernel_and_keeps_its_strides(m, n, k):
    x = generate_input(m, n, k, seed=k)[0]
    got = both_modes(lambda: triton_quant.dynamic_mxfp4_quant(x))
    (codes_k, scales_k), (codes_v, scales_v) = got["kernels"], got["vectorized"]
    assert torch.equal(codes_k, codes_v) and torch.equal(scales_k, scales_v)
    assert scales_v.stride() == scales_k.stride() == (1, m) and codes_v.is_contiguous()


@pytest.mark.parametrize("m, n, k", SHAPES)
def test_the_public_gemms_meet_the_bound_in_both_modes(m, n, k):
    data = generate_input(m, n, k, seed=m * k)
    exact = exact_gemm_from_inputs(data)
    views = b_views(data)
    a_codes, a_scales = triton_quant.dynamic_mxfp4_quant(data[0])
    calls = {
        "gemm_a16wfp4": lambda: a16wfp4.gemm_a16wfp4(data[0], views["packed"], views["scales"]),
        "gemm_afp4wfp4": lambda: afp4wfp4.gemm_afp4wfp4(a_codes, views["packed"], a_scales, views["scales"]),
    }
    if k % 256 == 0:  # aiter's preshuffle kernel has no masked-K path
        calls["gemm_a16wfp4_preshuffle"] = lambda: a16wfp4.gemm_a16wfp4_preshuffle(
            data[0], views["shuffled"], views["shuffled_scales"])
    for name, call in calls.items():
        for mode_name, out in both_modes(call).items():
            assert out.dtype == torch.bfloat16 and out.shape == (m, n), (name, mode_name)
            try:
                assert_within_bound(out, exact, "rne", splits=8)
            except AssertionError as error:
                raise AssertionError(f"{name}, {mode_name}: {error}") from None


def test_a_callers_y_is_written_in_place():
    data = generate_input(4, 64, 256, seed=3)
    views = b_views(data)
    y = torch.full((4, 64), 7.0, dtype=torch.bfloat16)
    vectorized.set_mode("vectorized")
    try:
        out = a16wfp4.gemm_a16wfp4(data[0], views["packed"], views["scales"], y=y)
    finally:
        vectorized.set_mode("kernels")
    assert out is y
    assert_within_bound(y, exact_gemm_from_inputs(data), "rne")


def test_split_k_partials_asked_for_are_still_the_kernels():
    """skip_reduce returns the partials themselves: their layout is the kernel's, so the kernel serves."""
    data = generate_input(4, 64, 1024, seed=5)
    views = b_views(data)
    config = dict(BLOCK_SIZE_M=16, BLOCK_SIZE_N=64, BLOCK_SIZE_K=256, GROUP_SIZE_M=1, num_warps=4, num_stages=1,
                  waves_per_eu=1, matrix_instr_nonkdim=16, cache_modifier=".cg", NUM_KSPLIT=2)
    vectorized.set_mode("vectorized")
    try:
        partials = a16wfp4.gemm_a16wfp4_preshuffle(data[0], views["shuffled"], views["shuffled_scales"],
                                                   config=config, skip_reduce=True)
    finally:
        vectorized.set_mode("kernels")
    assert partials.shape == (2, 4, 64) and partials.dtype == torch.float32


@pytest.mark.parametrize("m, n, k", [(13, 128, 320), (33, 128, 640)])
def test_the_kernels_scale_reads_past_k_see_zeros_not_the_memory_after_the_scales(m, n, k):
    """aiter's kernels load scale groups unmasked, so at K % BLOCK_SIZE_K != 0 they read past x_scales'
    end (and past w_scales' last row). Whatever lies there must not reach the output: here it is 0xFF
    (E8M0 NaN), which made 8 rows NaN before the emulation padded the scales (a flaky NaN seen once in
    this file's GEMM test, from whatever the allocator had left there)."""
    data = generate_input(m, n, k, seed=m * k)
    exact = exact_gemm_from_inputs(data)
    views = b_views(data)
    a_codes, a_scales = triton_quant.dynamic_mxfp4_quant(data[0])

    def followed_by_nan_scales(t):  # the same values and strides, 0xFF bytes after the last one
        buffer = torch.full((t.numel() + 4096,), 0xFF, dtype=torch.uint8)
        out = torch.as_strided(buffer, t.shape, t.stride())
        out.copy_(t)
        return out

    a_scales, w_scales = followed_by_nan_scales(a_scales), followed_by_nan_scales(views["scales"])
    for name, call in {
        "gemm_afp4wfp4": lambda: afp4wfp4.gemm_afp4wfp4(a_codes, views["packed"], a_scales, w_scales),
        "gemm_a16wfp4": lambda: a16wfp4.gemm_a16wfp4(data[0], views["packed"], w_scales),
    }.items():
        try:
            assert_within_bound(call(), exact, "rne", splits=8)  # kernels mode: the emulated Triton kernels
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from None
