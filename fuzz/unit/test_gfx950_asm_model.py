"""The gfx950 fp4 conversion model against a scalar implementation of its spec, and its interpreter hook."""
import math

import numpy as np
import pytest
import torch

import kernels  # noqa: F401  (switches Triton to the interpreter on this machine before @triton.jit)
import triton
import triton.language as tl
from kernels.platform import detect
from reference.emulation import gfx950_asm

# The model stands in for the instruction in the Triton interpreter only; a GPU compiles the asm itself
# (or, on NVIDIA, cannot: ptxas rejects gfx950 asm).
interpreter_only = pytest.mark.skipif(not detect().interpreter, reason=(
    f"the gfx950 asm model runs in the Triton interpreter (CPU tier) only; this is the {detect().describe()}"))

E2M1_GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def spec_code(value: float, scale_exponent: int) -> int:
    """The documented behaviour, one element at a time: e2m1 of value / 2^(E-127), nearest with ties to
    the even code, saturating at 6, sign kept; NaN, Inf and an all-ones scale exponent give +-6."""
    sign = 8 if math.copysign(1.0, value) < 0 else 0
    if math.isnan(value) or math.isinf(value) or scale_exponent == 255:
        return sign | 7
    quotient = math.ldexp(abs(value), 127 - scale_exponent)  # exact: a float32 times a power of two
    if quotient >= 6.0:
        return sign | 7
    distances = [abs(quotient - g) for g in E2M1_GRID]
    nearest = [code for code, d in enumerate(distances) if d == min(distances)]
    return sign | (nearest[0] if len(nearest) == 1 else next(c for c in nearest if c % 2 == 0))


def exact_floats(values: np.ndarray) -> list[float]:
    """float32 -> Python floats, exactly (signalling NaNs are quieted, keeping their sign)."""
    with np.errstate(invalid="ignore"):
        return values.astype(np.float64).tolist()


def bf16_values(bits16: np.ndarray) -> list[float]:
    return exact_floats((bits16.astype(np.uint32) << 16).view(np.float32))


def scale_exponent_of(scale: float) -> int:
    return int((np.array([scale], dtype=np.float32).view(np.uint32)[0] >> 23) & 0xFF)


ALL_BF16 = np.arange(65536, dtype=np.uint32)
# A permutation of all patterns for the high halves, so every pattern is also seen as element 1.
ALL_BF16_PERMUTED = (ALL_BF16 * 40503 + 12345) % 65536


def expected_words(low16: np.ndarray, high16: np.ndarray, scale: float) -> np.ndarray:
    e = scale_exponent_of(scale)
    low = np.array([spec_code(v, e) for v in bf16_values(low16)], dtype=np.uint32)
    high = np.array([spec_code(v, e) for v in bf16_values(high16)], dtype=np.uint32)
    return low | (high << 4) | upper_bytes_of(scale)


def upper_bytes_of(scale: float) -> int:
    """Assumed: vdst's untouched upper bytes are the scale's, as when the allocator reuses its register."""
    return int(np.array([scale], dtype=np.float32).view(np.uint32)[0] & 0xFFFFFF00)


@pytest.mark.parametrize("scale", [1.0, 2.0**-3, 2.0**5, 0.0], ids=["2^0", "2^-3", "2^5", "0.0f=2^-127"])
def test_bf16_model_matches_spec_for_every_bf16_pattern(scale):
    src = ALL_BF16 | (ALL_BF16_PERMUTED << 16)
    got = gfx950_asm.v_cvt_scalef32_pk_fp4_bf16(src, np.full(src.shape, scale, dtype=np.float32))
    np.testing.assert_array_equal(got, expected_words(ALL_BF16, ALL_BF16_PERMUTED, scale))


@pytest.mark.parametrize(
    "scale", [2.0**-126, 2.0**-127, 1.75 * 2.0**-3, 2.0**127, math.inf],
    ids=["2^-126", "denormal 2^-127", "mantissa ignored", "2^127", "Inf scale"])
def test_bf16_model_edge_scales(scale):
    low = ALL_BF16[::16]
    high = ALL_BF16_PERMUTED[::16]
    got = gfx950_asm.v_cvt_scalef32_pk_fp4_bf16(low | (high << 16), np.float32(scale))
    np.testing.assert_array_equal(got, expected_words(low, high, scale))


def test_f32_model_matches_spec_on_random_and_special_patterns():
    rng = np.random.default_rng(7)
    specials = np.array([0.0, -0.0, 0.25, 0.2500001, -1.25, 2.5, 5.0, 5.5, 6.0, 1e-45, -1e-40,
                         np.inf, -np.inf, np.nan, -np.nan, 3e38], dtype=np.float32)
    random_bits = rng.integers(0, 2**32, size=4000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    near_grid = rng.choice(E2M1_GRID, size=4000).astype(np.float32) * rng.choice([1, -1], size=4000)
    near_grid = np.nextafter(near_grid, rng.choice([np.inf, -np.inf], size=4000)).astype(np.float32)
    src0 = np.concatenate([specials, random_bits, near_grid])
    src1 = src0[::-1].copy()
    for scale in (1.0, 2.0**-20, 2.0**20):
        got = gfx950_asm.v_cvt_scalef32_pk_fp4_f32(src0, src1, np.float32(scale))
        e = scale_exponent_of(scale)
        expected = [spec_code(a, e) | (spec_code(b, e) << 4) | upper_bytes_of(scale)
                    for a, b in zip(exact_floats(src0), exact_floats(src1))]
        np.testing.assert_array_equal(got, np.array(expected, dtype=np.uint32))


def test_nan_converts_to_signed_max_and_ties_go_to_even():
    values = np.array([np.nan, -np.nan, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.0], dtype=np.float32)
    assert gfx950_asm.e2m1_codes(values, np.float32(1.0)).tolist() == [0x7, 0xF, 0, 2, 2, 4, 4, 6, 6, 0x8]


@triton.jit
def _asm_kernel(src_ptr, scale_ptr, out_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    src = tl.load(src_ptr + offsets)
    scale = tl.load(scale_ptr + offsets)
    out = tl.inline_asm_elementwise("v_cvt_scalef32_pk_fp4_bf16  $0,$1,   $2", "=v,v,v", [src, scale],
                                    dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(out_ptr + offsets, out)


@triton.jit
def _unknown_asm_kernel(src_ptr, out_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    out = tl.inline_asm_elementwise("v_foo $0, $1", "=v,v", [tl.load(src_ptr + offsets)],
                                    dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(out_ptr + offsets, out)


@interpreter_only
@pytest.mark.parametrize("scale_dtype", [torch.float32, torch.int32], ids=["f32 scale", "scale as its bits"])
def test_interpreter_evaluates_the_asm_with_the_model(scale_dtype):
    assert gfx950_asm.install()
    assert gfx950_asm.install()  # idempotent
    src = torch.from_numpy((ALL_BF16[:1024] | (ALL_BF16_PERMUTED[:1024] << 16)).view(np.int32))
    # A register is a register: an int32 operand holding the float's bits must act the same.
    scale = torch.full((1024,), 2.0**-3, dtype=torch.float32).view(scale_dtype)
    out = torch.empty(1024, dtype=torch.int32)
    _asm_kernel[(1,)](src, scale, out, 1024)
    expected = expected_words(ALL_BF16[:1024], ALL_BF16_PERMUTED[:1024], 2.0**-3)
    np.testing.assert_array_equal(out.numpy().view(np.uint32), expected)


@interpreter_only
def test_interpreter_names_unsupported_asm():
    gfx950_asm.install()
    src = torch.zeros(16, dtype=torch.int32)
    with pytest.raises(Exception, match=r"v_foo \$0, \$1"):
        _unknown_asm_kernel[(1,)](src, torch.empty_like(src), 16)


def test_install_does_nothing_when_not_interpreting(monkeypatch):
    from triton.runtime.interpreter import InterpreterBuilder

    def untouched(*args):
        raise AssertionError("placeholder")

    monkeypatch.setattr(InterpreterBuilder, "create_inline_asm", untouched)
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert gfx950_asm.install() is False
    assert InterpreterBuilder.create_inline_asm is untouched
