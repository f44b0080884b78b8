"""The e2m1/E8M0 codecs and the quantizer against the spec, exhaustively where the space is small."""
import math

import numpy as np
import pytest
import torch

from fuzz.testing import scalar_spec
from reference import (
    decode_e2m1,
    decode_e8m0,
    encode_e2m1,
    pack_e2m1,
    quantize_mxfp4,
    scale_exponent,
    unpack_e2m1,
)


def all_bf16() -> torch.Tensor:
    return torch.arange(0, 65536, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)


def test_e2m1_decode_table_is_the_ocp_table():
    expected = [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6]
    got = decode_e2m1(torch.arange(16, dtype=torch.uint8)).tolist()
    assert got == expected
    assert math.copysign(1, got[8]) == -1  # code 8 is -0
    every_byte = torch.arange(256, dtype=torch.int32).to(torch.uint8)  # the high nibble is not read
    assert torch.equal(decode_e2m1(every_byte).view(torch.int32), decode_e2m1(every_byte & 0xF).view(torch.int32))


def test_e8m0_decode_every_byte():
    got = decode_e8m0(torch.arange(256, dtype=torch.int32).to(torch.uint8)).double()
    assert got[0].item() == 2.0**-127
    assert math.isnan(got[255].item())
    for b in range(1, 255):
        assert got[b].item() == 2.0 ** (b - 127)


def test_e8m0_decode_accepts_float8_e8m0fnu():
    if not hasattr(torch, "float8_e8m0fnu"):
        pytest.skip("this torch has no float8_e8m0fnu")
    b = torch.tensor([0, 127, 254], dtype=torch.uint8).view(torch.float8_e8m0fnu)
    assert decode_e8m0(b).tolist() == [2.0**-127, 1.0, 2.0**127]


@pytest.mark.parametrize("scale_exp", [0, -3, 120])
def test_every_bf16_pattern_encodes_like_the_scalar_spec(scale_exp):
    x = all_bf16().float()
    qx = x * torch.tensor(2.0**-scale_exp, dtype=torch.float32)
    got = encode_e2m1(qx).tolist()
    expected = [scalar_spec.element_code(v) for v in qx.tolist()]
    mismatches = [(i, got[i], expected[i]) for i in range(65536) if got[i] != expected[i]]
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:5]}"


def test_every_bf16_pattern_through_the_quantizer_matches_the_scalar_spec():
    # 65536 bf16 patterns in 2048 blocks of 32: every block mixes magnitudes, so the scale rule,
    # the per-block amax (NaN ignored) and the element rounding are all exercised.
    perm = torch.randperm(65536, generator=torch.Generator().manual_seed(0))
    x = all_bf16()[perm].reshape(64, 1024)
    packed, scales = quantize_mxfp4(x)
    codes = unpack_e2m1(packed).flatten().tolist()
    blocks = x.float().reshape(-1, 32).tolist()
    exp_codes, exp_scales = [], []
    for block in blocks:
        c, s = scalar_spec.quantize_block(block)
        exp_codes += c
        exp_scales.append(s)
    assert scales.flatten().tolist() == exp_scales
    assert codes == exp_codes


def test_quantizer_on_narrow_blocks_matches_scalar_spec():
    # Blocks of similar magnitude (one binade each) make most elements non-zero after scaling,
    # which the random mix above rarely does.
    g = torch.Generator().manual_seed(1)
    exps = torch.randint(-140, 127, (512, 1), generator=g).float()
    x = (torch.rand(512, 32, generator=g) * 2 - 1) * torch.exp2(exps)
    x = x.to(torch.bfloat16)
    packed, scales = quantize_mxfp4(x)
    for row in range(512):
        c, s = scalar_spec.quantize_block(x[row].float().tolist())
        assert scales[row, 0].item() == s
        assert unpack_e2m1(packed[row : row + 1]).flatten().tolist() == c, f"row {row}"


# The tie table of aiter_semantics.md 1.3: |qx| -> value, for RNE (post-#975) and ties-up (pre-#975).
TIES = [(0.25, 0, 0.5), (0.75, 1, 1), (1.25, 1, 1.5), (1.75, 2, 2), (2.5, 2, 3), (3.5, 4, 4), (5.0, 4, 6), (5.5, 6, 6), (7.0, 6, 6)]


@pytest.mark.parametrize("qx,rne,ties_up", TIES)
def test_tie_table(qx, rne, ties_up):
    for sign in (1, -1):
        q = torch.tensor([sign * qx], dtype=torch.float32)
        assert decode_e2m1(encode_e2m1(q, "rne")).item() == sign * rne
        assert decode_e2m1(encode_e2m1(q, "ties_up")).item() == sign * ties_up


def test_sticky_bits_count_in_rne():
    # 0.25 + 1 ulp is above the tie: RNE gives 0.5 (aiter issue #974's denormal example).
    q = torch.tensor([0.25], dtype=torch.float32).view(torch.int32) + 3
    assert decode_e2m1(encode_e2m1(q.view(torch.float32))).item() == 0.5


def test_special_elements():
    q = torch.tensor([float("nan"), -float("nan"), float("inf"), -float("inf"), -0.0, 0.0, -1e-30], dtype=torch.float32)
    assert encode_e2m1(q).tolist() == [0x3, 0xB, 0x7, 0xF, 0x8, 0x0, 0x8]
    assert encode_e2m1(q, "ties_up").tolist() == [0x7, 0xF, 0x7, 0xF, 0x8, 0x0, 0x8]
    # NaN payload decides the code (aiter_semantics.md 1.3)
    payloads = torch.tensor([0x7F800001, 0x7FFFFFFF], dtype=torch.int64).to(torch.int32).view(torch.float32)
    assert encode_e2m1(payloads).tolist() == [0x2, 0x4]


QUIET_NAN_BF16 = torch.tensor([0x7FC0], dtype=torch.int16).view(torch.bfloat16)[0]


def block(values):
    return torch.tensor([values + [0.0] * (32 - len(values))], dtype=torch.float32).to(torch.bfloat16)


def test_special_blocks():
    zero = quantize_mxfp4(block([]))
    assert zero[1].item() == 0 and zero[0].eq(0).all()
    neg_zero = quantize_mxfp4(torch.full((1, 32), -0.0, dtype=torch.bfloat16))
    assert neg_zero[1].item() == 0 and neg_zero[0].eq(0x88).all()
    inf = quantize_mxfp4(block([float("inf"), 1.0]))
    assert inf[1].item() == 254 and unpack_e2m1(inf[0])[0, :2].tolist() == [7, 0]
    all_nan = quantize_mxfp4(torch.full((1, 32), float("nan"), dtype=torch.bfloat16))
    assert all_nan[1].item() == 254
    one_nan_block = block([0.0, 4.0])
    one_nan_block[0, 0] = QUIET_NAN_BF16  # build the NaN from bits: float("nan") conversions pick a payload
    one_nan = quantize_mxfp4(one_nan_block)
    assert one_nan[1].item() == 127  # NaN ignored by the amax: 4.0 sets s = 0
    assert unpack_e2m1(one_nan[0])[0, :2].tolist() == [0x3, 0x6]
    near_max = quantize_mxfp4(block([1.75 * 2.0**127]))
    assert near_max[1].item() == 254  # the +2^21 carry overflows to Inf: s = 127, not 126


@pytest.mark.parametrize(
    "amax,even,floor,ceil,rceil",
    [(1.5, -2, -2, -1, -2), (1.74, -2, -2, -1, -1), (3.0, -1, -1, 0, -1), (6.0, 0, 0, 1, 0), (6.5, 0, 0, 1, 1), (4.0, 0, 0, 0, 0)],
)
def test_scale_rules_table(amax, even, floor, ceil, rceil):
    a = torch.tensor([amax])
    got = [scale_exponent(a, r).item() for r in ("even", "floor", "ceil", "rceil")]
    assert got == [even, floor, ceil, rceil]


def test_scale_rule_extremes():
    a = torch.tensor([0.0, 2.0**-130, float("inf"), float("nan")])
    for rule in ("even", "floor", "ceil", "rceil"):
        assert scale_exponent(a, rule).tolist() == [-127, -127, 127, 127], rule


def test_packing_puts_the_even_element_in_the_low_nibble():
    codes = torch.tensor([[1, 2, 3, 4]], dtype=torch.uint8)
    assert pack_e2m1(codes).tolist() == [[0x21, 0x43]]
    assert torch.equal(unpack_e2m1(pack_e2m1(codes)), codes)


def test_ties_up_variant_differs_only_on_ties():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(64, 256, generator=g).to(torch.bfloat16)
    p_rne, s_rne = quantize_mxfp4(x)
    p_up, s_up = quantize_mxfp4(x, rounding="ties_up")
    assert torch.equal(s_rne, s_up)
    c_rne, c_up = unpack_e2m1(p_rne), unpack_e2m1(p_up)
    differ = c_rne != c_up
    assert differ.any(), "randn bf16 data always contains some exact ties"
    qx = (x.float().reshape(64, -1, 32) * torch.exp2(-(s_rne.float() - 127))[..., None]).reshape(64, 256)
    frac = (qx.abs() * 4) % 2  # ties sit at odd multiples of 0.25 (below 2) or of 0.5 (2..4) or 1 (4..6)
    tie = ((qx.abs() < 2) & (frac == 1)) | ((qx.abs() >= 2) & (qx.abs() < 4) & ((qx.abs() * 2) % 2 == 1)) | (qx.abs() == 5)
    assert not (differ & ~tie).any()
