"""The emulated aiter reads operands the way aiter's kernels do, through the strides it is given, and checks
nothing aiter does not: scale views of any shape (the preshuffled scales with or without their padding
rows, unshuffled scales inside a padded buffer), a wider x, K tails and dtypes go where aiter's kernels
would take them, in both modes of the public API (kernels interpreted, and the PyTorch stand-in)."""
import pytest
import torch
import triton

from fuzz.testing.fixtures_aiter import assert_within_bound, emulated, preshuffled_views, unshuffled_b
from reference import e8m0_unshuffle, exact_gemm, exact_gemm_from_inputs, generate_input

vectorized = emulated("ops.triton._vectorized")
triton_quant = emulated("ops.triton.quant")
a16wfp4 = emulated("ops.triton.gemm.basic.gemm_a16wfp4")
afp4wfp4 = emulated("ops.triton.gemm.basic.gemm_afp4wfp4")
e8m0 = emulated().dtypes.fp8_e8m0

pytestmark = pytest.mark.skipif(not triton.knobs.runtime.interpret, reason="both modes of the public API exist "
                                "on the CPU tier only (the PyTorch stand-in serves CPU tensors)")
MODES = ("kernels", "vectorized")


def in_mode(mode, call):
    vectorized.set_mode(mode)
    try:
        return call()
    finally:
        vectorized.set_mode("kernels")


def scale_views(data, n):
    """Views of B_scale_sh a file hands to gemm_a16wfp4_preshuffle: one 32-row block per row."""
    sh = data[4].view(torch.uint8)
    return {
        "(N_pad//32, -1)": sh.reshape(sh.shape[0] // 32, -1),
        "B_scale_sh[:N].view(N//32, -1)": sh[:n].view(n // 32, -1),  # rows not a multiple of 256: no padding rows
        "B_scale_sh[:N].contiguous().view(N//32, -1)": sh[:n].contiguous().view(n // 32, -1),  # nothing after it
        "(N_pad//32, -1)[:N//32]": sh.reshape(sh.shape[0] // 32, -1)[: n // 32],
    }


# N = 160 and 96: not multiples of 256 (the ValueError real files got) and of the 128-wide N tiles (the last
# tile reads scale and weight rows past N).
@pytest.mark.parametrize("m, n, k", [(4, 160, 512), (3, 96, 256)])
@pytest.mark.parametrize("mode", MODES)
def test_preshuffle_takes_scale_views_without_padding_rows(m, n, k, mode):
    data = generate_input(m, n, k, seed=n + k)
    exact = exact_gemm_from_inputs(data)
    w, _ = preshuffled_views(data)
    for name, view in scale_views(data, n).items():
        out = in_mode(mode, lambda: a16wfp4.gemm_a16wfp4_preshuffle(data[0], w, view))
        try:
            assert_within_bound(out, exact, "rne", splits=8)
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from None


@pytest.mark.parametrize("mode", MODES)
def test_a_wrong_scale_view_is_read_through_its_strides_as_aiter_reads_it(mode):
    """B_scale_sh[:N, :K//32] is (N, K/32)-shaped with row stride K/32: the kernel takes its row stride for
    one 32-row block's, so block r starts r * K/32 bytes in, not r * K. Expected: the product with exactly the
    bytes at those addresses (unshuffled by the oracle), which are not B's scales."""
    m, n, k = 4, 256, 512
    data = generate_input(m, n, k, seed=7)
    w, _ = preshuffled_views(data)
    view = data[4].view(torch.uint8)[:n, : k // 32]
    assert view.stride() == (k // 32, 1)
    seen = torch.as_strided(view, (n // 32, k), view.stride())  # what the kernel addresses, rows overlapping
    scales_seen = e8m0_unshuffle(seen.contiguous().view(n, k // 32), n, k // 32)
    expected = exact_gemm(data[0], data[2].view(torch.uint8), scales_seen)
    assert not torch.equal(expected.value, exact_gemm_from_inputs(data).value)
    out = in_mode(mode, lambda: a16wfp4.gemm_a16wfp4_preshuffle(data[0], w, view))
    assert_within_bound(out, expected, "rne", splits=8)


@pytest.mark.parametrize("mode", MODES)
def test_unshuffled_scales_are_read_through_their_strides(mode):
    """w_scales inside a padded [N_pad, cols_pad] buffer (row stride cols_pad) and x_scales as aiter's
    quantizer returns them (column-major); x wider than K (aiter takes K from w)."""
    m, n, k = 5, 96, 512
    data = generate_input(m, n, k, seed=3)
    exact = exact_gemm_from_inputs(data)
    packed, scales = unshuffled_b(data)
    padded = torch.full((256, 24), 0xFF, dtype=torch.uint8)
    padded[:n, : k // 32] = scales
    w_scales = padded[:n, : k // 32]
    a_codes, a_scales = triton_quant.dynamic_mxfp4_quant(data[0])
    wide_x = torch.cat((data[0], torch.full((m, 64), float("nan"), dtype=data[0].dtype)), dim=1)
    wide_codes = torch.cat((a_codes, torch.full((m, 32), 0xFF, dtype=torch.uint8)), dim=1)
    calls = {
        "gemm_a16wfp4": lambda: a16wfp4.gemm_a16wfp4(data[0], packed, w_scales),
        "gemm_a16wfp4, wide x": lambda: a16wfp4.gemm_a16wfp4(wide_x, packed, w_scales),
        "gemm_afp4wfp4": lambda: afp4wfp4.gemm_afp4wfp4(a_codes, packed, a_scales, w_scales),
        "gemm_afp4wfp4, wide x": lambda: afp4wfp4.gemm_afp4wfp4(wide_codes, packed, a_scales, w_scales),
    }
    for name, call in calls.items():
        try:
            assert_within_bound(in_mode(mode, call), exact, "rne", splits=8)
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from None


def test_the_stand_in_refuses_and_accepts_what_the_kernels_do():
    """The PyTorch stand-in checks nothing of its own: what aiter's kernels (and the emulated ones) reject is
    rejected, with the kernels' error; what they take (a K tail, fp64 input) is computed."""
    data = generate_input(2, 64, 512, seed=11)
    w, w_scales = preshuffled_views(data)
    for mode in MODES:
        with pytest.raises(KeyError, match="float8_e8m0fnu"):  # Triton's own dtype map, in both modes
            in_mode(mode, lambda: a16wfp4.gemm_a16wfp4_preshuffle(data[0], w, w_scales.view(e8m0)))
    short = generate_input(2, 64, 320, seed=12)  # no BLOCK_SIZE_K >= 256 divides K: aiter cannot compile it
    sw, ss = preshuffled_views(short)
    for mode in MODES:
        with pytest.raises(Exception, match="EVEN_K"):
            in_mode(mode, lambda: a16wfp4.gemm_a16wfp4_preshuffle(short[0], sw, ss))

    x = torch.randn((3, 80), generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)  # K % 32 != 0
    packed = torch.randint(0, 256, (64, 40), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    scales = torch.full((64, 3), 127, dtype=torch.uint8)
    outs = {mode: in_mode(mode, lambda: a16wfp4.gemm_a16wfp4(x, packed, scales)) for mode in MODES}
    assert torch.equal(outs["kernels"], outs["vectorized"]) and torch.isfinite(outs["kernels"].float()).all()
    x64 = data[0][:, :64].to(torch.float64)
    quant = {mode: in_mode(mode, lambda: triton_quant.dynamic_mxfp4_quant(x64)) for mode in MODES}
    assert all(torch.equal(a, b) for a, b in zip(quant["kernels"], quant["vectorized"]))


def test_a_dtype_the_file_registers_with_triton_is_computed_in_both_modes(monkeypatch):
    """Real files add float8_e8m0fnu (and fp4x2) to Triton's dtype map as u8 before calling aiter, so that
    its kernels take e8m0 views: then the kernels run, and the stand-in serves the call too."""
    from triton._utils import type_canonicalisation_dict

    data = generate_input(2, 64, 512, seed=11)
    w, w_scales = preshuffled_views(data)
    vectorized.set_mode("vectorized")
    try:
        assert not vectorized.serves(w_scales.view(e8m0))  # Triton's map lacks it: the kernels raise its KeyError
        monkeypatch.setitem(type_canonicalisation_dict, "float8_e8m0fnu", "u8")
        assert vectorized.serves(w_scales.view(e8m0))
    finally:
        vectorized.set_mode("kernels")
    outs = {mode: in_mode(mode, lambda: a16wfp4.gemm_a16wfp4_preshuffle(data[0], w, w_scales.view(e8m0)))
            for mode in MODES}
    assert_within_bound(outs["vectorized"], exact_gemm_from_inputs(data), "rne", splits=8)
    assert_within_bound(outs["kernels"], exact_gemm_from_inputs(data), "rne", splits=8)
