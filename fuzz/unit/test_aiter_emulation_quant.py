"""The emulated aiter quantizers, layouts and converters against the oracle: bit for bit."""
import numpy as np
import pytest
import torch

from fuzz.testing.fixtures_aiter import emulated
from kernels.platform import detect
from reference import e8m0_shuffle as oracle_e8m0_shuffle
from reference import quantize_mxfp4
from reference import shuffle_weight as oracle_shuffle_weight
from reference.oracle.e2m1 import E2M1_VALUES, encode_e2m1, pack_e2m1, unpack_e2m1

aiter = emulated()
triton_quant = emulated("ops.triton.quant")
fp4_utils = emulated("utility.fp4_utils")
shuffle = emulated("ops.shuffle")
POISON = emulated("_emulation").UNINITIALIZED_BYTE
DEVICE = detect().device  # the Triton quantizer needs tensors where Triton runs

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN/Inf inputs reach numpy in the interpreter


def randn(m, n, seed=0, scale=1.0):
    return (torch.randn((m, n), generator=torch.Generator().manual_seed(seed)) * scale).to(torch.bfloat16).to(DEVICE)


def every_bf16_pattern() -> torch.Tensor:
    """All 65536 bf16 bit patterns in random 32-element groups (NaN, Inf, subnormals, -0 included)."""
    bits = np.random.default_rng(1).permutation(65536).astype(np.uint16).view(np.int16)
    return torch.from_numpy(bits).view(torch.bfloat16).reshape(512, 128).to(DEVICE)


def oracle_quant(x, rounding="rne"):
    """The oracle on x zero-padded to whole 32-groups (aiter's masked lanes read zero), trimmed like aiter."""
    m, n = x.shape
    padded = torch.nn.functional.pad(x, (0, -n % 32))
    codes, scales = quantize_mxfp4(padded, rounding=rounding)
    return codes[:, : n // 2], scales


@pytest.mark.parametrize("m, n", [(1, 64), (7, 96), (16, 1024), (33, 256), (40, 2048), (3, 68), (2, 4)])
def test_triton_dynamic_mxfp4_quant_matches_the_oracle(m, n):
    # The shapes walk aiter's launch branches: M <= 32, M > 32 with N <= 1024 and N > 1024, and masked tails.
    x = randn(m, n, seed=m * n, scale=4.0)
    codes, scales = triton_quant.dynamic_mxfp4_quant(x)
    want_codes, want_scales = oracle_quant(x)
    assert torch.equal(codes, want_codes)
    assert torch.equal(scales, want_scales)


def quiet_nans(x: torch.Tensor) -> torch.Tensor:
    """x with every signalling NaN quieted (bf16 quiet bit 0x0040 set; sign and payload kept)."""
    bits = x.view(torch.int16)
    signalling = ((bits & 0x7F80) == 0x7F80) & ((bits & 0x7F) != 0) & ((bits & 0x40) == 0)
    return torch.where(signalling, bits | 0x40, bits).view(torch.bfloat16)


def test_triton_dynamic_mxfp4_quant_every_bf16_pattern():
    # Signalling NaNs excepted: aiter's quantizer takes the amax with tl.max, as maxnum, which may let a
    # signalling NaN through (IEEE 754-2008 maxNum; numpy does so in the interpreter). The oracle ignores a
    # NaN unless its whole group is NaN, and the fuzzer places quiet NaNs only (docs/aiter_emulation.md).
    # On NVIDIA, fp32 arithmetic turns every NaN into the canonical NaN, whose code is 0x4 whatever the
    # payload (measured on the H200), so NaN elements' codes are compared on the other tiers only.
    x = quiet_nans(every_bf16_pattern())
    codes, scales = triton_quant.dynamic_mxfp4_quant(x)
    want_codes, want_scales = quantize_mxfp4(x)
    assert torch.equal(scales, want_scales)
    compared = ~torch.isnan(x.float()) if detect().tier == "nvidia" else torch.ones_like(x, dtype=torch.bool)
    assert torch.equal(unpack_e2m1(codes)[compared], unpack_e2m1(want_codes)[compared])


def test_triton_dynamic_mxfp4_quant_rounds_ties_to_even_in_groups_of_scale_byte_0():
    # amax below 1.75 * 2^-125 gives scale byte 0: aiter multiplies by tl.exp2(127), so e2m1 ties (and
    # their bf16 neighbours) survive only if that is exactly 2^127 (numpy's float32 exp2 is not; the
    # interpreter is patched). Groups at s = -127, -129, -133 (subnormal amax) and s = 0 for contrast.
    ties = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
    groups = []
    for s in (0, -127, -129, -133):
        group = torch.tensor([4.0, 0.0, 0.5, 1.0] + ties + [-t for t in ties] + [t * 1.01 for t in ties] + [-0.0] * 7)
        groups.append(group * 2.0**s)
    x = torch.stack(groups).to(torch.bfloat16).reshape(2, 64).to(DEVICE)
    codes, scales = triton_quant.dynamic_mxfp4_quant(x)
    want_codes, want_scales = quantize_mxfp4(x)
    assert scales.contiguous().flatten().tolist()[1:] == [0, 0, 0]
    assert torch.equal(codes, want_codes) and torch.equal(scales, want_scales)


def test_triton_dynamic_mxfp4_quant_output_layout_is_aiters():
    codes, scales = triton_quant.dynamic_mxfp4_quant(randn(5, 96))
    assert codes.dtype == scales.dtype == torch.uint8
    assert codes.shape == (5, 48) and codes.is_contiguous()
    assert scales.shape == (5, 3) and scales.stride() == (1, 5)  # column-major, unpadded


def test_triton_dynamic_mxfp4_quant_honours_input_strides():
    base = randn(64, 40, seed=3)
    x = base.T  # (40, 64) with strides (1, 40)
    codes, scales = triton_quant.dynamic_mxfp4_quant(x)
    want_codes, want_scales = quantize_mxfp4(x.contiguous())
    assert torch.equal(codes, want_codes) and torch.equal(scales, want_scales)


def test_triton_dynamic_mxfp4_quant_asserts_like_aiter():
    with pytest.raises(AssertionError):
        triton_quant.dynamic_mxfp4_quant(randn(2, 6))  # (N // 2) % 2 != 0
    with pytest.raises(ValueError):
        triton_quant.dynamic_mxfp4_quant(randn(2, 64).reshape(2, 2, 32))


def test_fp4_utils_quant_rounds_ties_up_and_returns_the_padded_buffer():
    m, n = 5, 512
    x = randn(m, n, seed=9, scale=3.0)
    x[0, :4] = torch.tensor([0.25, 1.25, 2.5, 5.0], device=DEVICE) * 2.0 ** -2  # exact ties at the group's scale 2^-2
    x[0, 4:32] = 0.0
    x[0, 31] = 6.0 * 2.0 ** -2
    codes, scales = fp4_utils.dynamic_mxfp4_quant(x)
    want_codes, want_scales = quantize_mxfp4(x, rounding="ties_up")
    assert codes.dtype == aiter.dtypes.fp4x2 and scales.dtype == aiter.dtypes.fp8_e8m0
    assert torch.equal(codes.view(torch.uint8), want_codes)
    assert list(codes.view(torch.uint8)[0, :2]) == [0x31, 0x75]  # 0.25 -> 0.5, 1.25 -> 1.5, 2.5 -> 3, 5 -> 6
    raw = scales.view(torch.uint8)
    assert raw.shape == (256, 16)
    assert torch.equal(raw[:m], want_scales)
    assert (raw[m:] == POISON).all()  # uninitialised rows


def test_get_triton_quant_is_the_fp4_utils_quant():
    quant = aiter.get_triton_quant(aiter.QuantType.per_1x32)
    assert quant is aiter.per_1x32_f4_quant_triton
    x = randn(3, 64)
    codes, scales = quant(x, shuffle=False)
    assert torch.equal(codes.view(torch.uint8), quantize_mxfp4(x, rounding="ties_up")[0])
    assert str(aiter.QuantType.per_1x32) == "QuantType.per_1x32" and aiter.QuantType.per_1x32.value == 3
    with pytest.raises(NotImplementedError, match="not emulated"):
        aiter.get_triton_quant(aiter.QuantType.per_Token)(x)


def test_fp4_utils_shuffled_quant_matches_e8m0_shuffle_when_k_is_a_multiple_of_256():
    m, n = 40, 512
    x = randn(m, n, seed=4)
    _, scales = fp4_utils.dynamic_mxfp4_quant(x, shuffle=True)
    _, plain = quantize_mxfp4(x, rounding="ties_up")
    # Rows [M, 64) are written as 127, rows from ceil32(M) = 64 on are left uninitialised.
    padded = torch.full((64, 16), 127, dtype=torch.uint8, device=DEVICE)
    padded[:m] = plain
    want = oracle_e8m0_shuffle(padded, fill=POISON)
    assert torch.equal(scales.view(torch.uint8), want)


def test_fp4_utils_shuffled_quant_uses_the_unpadded_width_as_stride():
    # K = 320: 10 scale columns padded to 16, but aiter (pre-#2900) spaces 32-row groups 10*32 bytes apart.
    m, n = 32, 320
    x = randn(m, n, seed=5)
    _, scales = fp4_utils.dynamic_mxfp4_quant(x, shuffle=True)
    _, plain = quantize_mxfp4(x, rounding="ties_up")
    flat = scales.view(torch.uint8).flatten()
    r, c = torch.meshgrid(torch.arange(m, device=DEVICE), torch.arange(10, device=DEVICE), indexing="ij")
    offsets = (r % 32) // 16 + ((c % 8) // 4) * 2 + (r % 16) * 4 + (c % 4) * 64 + (c // 8) * 256 + (r // 32) * 320
    assert torch.equal(flat[offsets], plain)
    assert not torch.equal(scales.view(torch.uint8)[:256], oracle_e8m0_shuffle(plain, fill=127)[:256])


@pytest.mark.parametrize("rows, cols", [(1, 1), (40, 10), (256, 16), (300, 3)])
def test_e8m0_shuffle_matches_the_oracle_with_poisoned_padding(rows, cols):
    scales = torch.randint(0, 256, (rows, cols), dtype=torch.uint8, generator=torch.Generator().manual_seed(rows))
    got = fp4_utils.e8m0_shuffle(scales.view(aiter.dtypes.fp8_e8m0))
    assert got.dtype == aiter.dtypes.fp8_e8m0  # keeps the input dtype
    assert torch.equal(got.view(torch.uint8), oracle_e8m0_shuffle(scales, fill=POISON))


def test_e8m0_shuffle_passes_none_and_fp32_through_and_wants_2d():
    assert fp4_utils.e8m0_shuffle(None) is None
    fp32 = torch.ones(3, 4)
    assert fp4_utils.e8m0_shuffle(fp32) is fp32
    with pytest.raises(AssertionError):
        fp4_utils.e8m0_shuffle(torch.zeros(2, 3, 4, dtype=torch.uint8))


def test_shuffle_weight_matches_the_oracle():
    packed = torch.randint(0, 256, (48, 64), dtype=torch.uint8, generator=torch.Generator().manual_seed(2))
    got = shuffle.shuffle_weight(packed.view(aiter.dtypes.fp4x2), layout=(16, 16))
    assert got.dtype == aiter.dtypes.fp4x2 and got.shape == packed.shape and got.is_shuffled
    assert torch.equal(got.view(torch.uint8), oracle_shuffle_weight(packed))
    # aiter's own test shuffles a transposed (K/2, N).T view: any viewable input works.
    assert torch.equal(shuffle.shuffle_weight(packed.T.contiguous().T), oracle_shuffle_weight(packed))


@pytest.mark.parametrize("shape", [(40, 64), (48, 48)])
def test_shuffle_weight_asserts_on_partial_tiles(shape):
    with pytest.raises(AssertionError):
        shuffle.shuffle_weight(torch.zeros(shape, dtype=torch.uint8))


def test_mxfp4_to_f32_decodes_every_byte():
    every_byte = torch.arange(256, dtype=torch.uint8)[None, :]
    got = fp4_utils.mxfp4_to_f32(every_byte.view(aiter.dtypes.fp4x2))
    table = torch.tensor(E2M1_VALUES)
    want = torch.stack((table[torch.arange(256) & 0xF], table[torch.arange(256) >> 4]), dim=-1).reshape(1, 512)
    assert torch.equal(got.view(torch.int32), want.view(torch.int32))  # -0.0 included


def test_e8m0_to_f32_decodes_every_byte():
    got = fp4_utils.e8m0_to_f32(torch.arange(256, dtype=torch.uint8)).view(torch.int32)
    assert got[0] == 0x00400000 and got[255] == 0x7F800001
    assert torch.equal(got[1:255], torch.arange(1, 255, dtype=torch.int32) << 23)


def test_f32_to_e8m0_rounds_mantissas_of_one_half_and_up():
    x = torch.tensor([1.0, 1.4999, 1.5, 1.75, 2.0 ** -127, 3 * 2.0 ** -128, float("inf"), float("nan")])
    assert fp4_utils.f32_to_e8m0(x).view(torch.uint8).tolist() == [127, 127, 128, 128, 0, 1, 255, 255]


def test_f32_to_mxfp4_is_the_rne_encoder():
    x = torch.tensor([0.25, 0.75, 1.25, 2.5, 5.0, -7.0, float("nan"), -0.0])
    assert torch.equal(fp4_utils.f32_to_mxfp4(x).view(torch.uint8), pack_e2m1(encode_e2m1(x, "rne")))


def test_dtypes_are_aiters_names():
    d = aiter.dtypes
    assert (d.fp4x2, d.fp8_e8m0, d.bf16, d.fp16, d.fp32, d.fp8) == (
        torch.float4_e2m1fn_x2, torch.float8_e8m0fnu, torch.bfloat16, torch.float16, torch.float32,
        torch.float8_e4m3fn)
    assert d.d_dtypes["fp4x2"] is d.fp4x2


def test_get_torch_quant_per_1x32_rounds_its_scale_at_one_and_a_half_not_the_references_one_and_three_quarters():
    """aiter.get_torch_quant(QuantType.per_1x32) (aiter/ops/quant.py per_1x32_f4_quant at f3be04a12a0c): the
    block's E8M0 exponent is floor(log2 amax) - 2, plus one when amax's significand is >= 1.5 (the reference's
    quantizer: >= 1.75); elements x / 2^s to e2m1 with RNE. Written out here per block, independently."""
    x = randn(64, 256, seed=3, scale=3.0)
    x[0, :32] = 0.0  # a zero block: byte 0, codes 0
    codes, scales = aiter.get_torch_quant(aiter.QuantType.per_1x32)(x)
    assert codes.dtype == aiter.dtypes.fp4x2 and scales.dtype == aiter.dtypes.fp8_e8m0
    assert codes.shape == (64, 128) and scales.shape == (64, 8)
    blocks = x.float().view(-1, 32)
    amax = blocks.abs().amax(dim=1)
    exponent = torch.floor(torch.log2(amax))
    significand = amax / 2.0 ** exponent
    s = torch.where(amax > 0, exponent - 2 + (significand >= 1.5).float(), torch.full_like(amax, -127.0))
    assert torch.equal(scales.view(torch.uint8).flatten().long(), (s + 127).long())
    expected = pack_e2m1(encode_e2m1(blocks / 2.0 ** s[:, None], "rne")).view(64, 128)
    assert torch.equal(codes.view(torch.uint8), expected)
    reference_scales = triton_quant.dynamic_mxfp4_quant(x)[1].flatten().long()
    differs = scales.view(torch.uint8).flatten().long() != reference_scales
    assert torch.equal(differs, (significand >= 1.5) & (significand < 1.75) & (amax > 0))  # only there
    shuffled = aiter.get_torch_quant(aiter.QuantType.per_1x32)(x, shuffle=True)[1]
    assert shuffled.shape == (256, 8)  # e8m0_shuffle pads the rows to 256
