"""fuzz.search.strategies: shapes keep their contracts, layouts and regimes are what they claim, cases are
deterministic and survive JSON, and everything shrinks to the simplest case."""
import hashlib
import json

import pytest
import torch
from hypothesis import Phase, find, given, settings

# Shrinking claims are about the strategies, not the active profile: no example database (a CI cache
# could replay a non-minimal example) and a fixed, generous budget.
SHRINK = settings(database=None, max_examples=500, phases=[Phase.generate, Phase.shrink])

from reference.oracle.e2m1 import TIE_POINTS
from fuzz.search.value_streams import LEGACY_STREAM, STREAMS, CounterStream, Mt19937Stream
from fuzz.search.strategies import (
    ALL_REGIMES,
    BENCHMARK_SHAPES,
    FIXED_MAGNITUDE_REGIMES,
    LAYOUTS,
    OFFICIAL_TEST_SHAPES,
    ROW_PITCH_PAD,
    SPECIAL_BITS,
    Case,
    FieldError,
    beyond_contract_shapes,
    cases,
    in_contract_shapes,
    official_cases,
    official_examples,
    production_shapes,
    regime_values,
    with_production_k,
)
from kernels.platform import detect
from reference import (
    accumulation_bound,
    acceptable_range,
    dequantize_mxfp4,
    e8m0_shuffle,
    e8m0_unshuffle,
    exact_gemm_from_inputs,
    quantize_mxfp4,
    unpack_e2m1,
    unshuffle_weight,
)

SMALL = dict(max_m=8, max_n=128, max_k=256)
TIER = detect()


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(torch.int16)


def regime_a(regime, m=8, k=256, exponent=0, seed=0, stream=LEGACY_STREAM) -> torch.Tensor:
    return Case(m, 64, k, a_regime=regime, a_exponent=exponent, seed=seed, stream=stream).build()[0][0]


@pytest.fixture(params=STREAMS)
def stream(request):
    """Each regime claim is checked on each value stream: the regimes are written once for both."""
    return request.param


def groups(x: torch.Tensor) -> torch.Tensor:
    return x.double().view(x.shape[0], -1, 32)


@given(in_contract_shapes(max_m=20, max_n=192, max_k=512))
def test_in_contract_shapes_obey_the_contract_and_the_caps(shape):
    m, n, k = shape
    assert 1 <= m <= 20 and 64 <= n <= 192 and 64 <= k <= 512
    assert n % 64 == 0 and k % 64 == 0


@given(beyond_contract_shapes(max_m=20, max_n=192, max_k=512))
def test_beyond_contract_shapes_break_the_contract_but_not_the_layouts(shape):
    m, n, k = shape
    assert 1 <= m <= 20 and n <= 192 and k <= 512
    assert n % 16 == 0 and k % 32 == 0
    assert n % 64 or k % 64


def test_shapes_and_cases_shrink_to_the_simplest():
    assert find(in_contract_shapes(), lambda s: True, settings=SHRINK) == (1, 64, 64)
    assert find(beyond_contract_shapes(), lambda s: True, settings=SHRINK) == (1, 64, 32)
    assert find(cases(), lambda c: True, settings=SHRINK) == Case(1, 64, 64)
    # A failure needing a K tail and two rows shrinks to exactly that.
    assert find(in_contract_shapes(), lambda s: s[0] > 1 and s[2] % 256, settings=SHRINK) == (2, 64, 64)


@given(production_shapes())
def test_production_shapes_reach_split_k_sizes_with_thin_n_and_small_m(shape):
    m, n, k = shape
    assert 1 <= m <= 16 and n in (64, 128) and 1536 <= k <= 8192 and k % 64 == 0


def test_production_shapes_reach_k_tails_official_pairs_and_shrink_to_the_smallest_failing_k():
    assert find(production_shapes(), lambda s: True, settings=SHRINK) == (1, 64, 1536)
    # A split-K bug that needs K >= 2048 off a 256 multiple: the smallest such K, one row, thin N.
    assert find(production_shapes(), lambda s: s[2] >= 2048 and s[2] % 256, settings=SHRINK) == (1, 64, 2112)
    assert find(production_shapes(), lambda s: s[2] == 7168, settings=SHRINK)[2] == 7168  # the official K
    assert find(production_shapes(k_multiple=256), lambda s: s[2] > 4096, settings=SHRINK)[2] % 256 == 0


def test_a_share_of_production_k_shrinks_back_to_small_shapes():
    mixed = with_production_k(in_contract_shapes(), production_shapes(), 20)
    assert find(mixed, lambda s: True, settings=SHRINK) == (1, 64, 64)
    assert find(mixed, lambda s: s[2] > 4096, settings=SHRINK)[2] > 4096


def test_every_class_regime_puts_every_bf16_class_in_every_row_of_both_operands(stream):
    A, B = Case(3, 64, 256, a_regime="every_class", b_regime="every_class", seed=5, stream=stream).build()[0][:2]
    for t in (A, B):
        x = t.float()
        finite_magnitude = torch.where(torch.isfinite(x), x.abs(), torch.zeros_like(x))
        assert torch.isnan(x).any(1).all() and torch.isinf(x).any(1).all()
        assert (finite_magnitude > 60000).any(1).all() and (x.abs() == 3.3895313892515355e38).any(1).all()
        assert ((x != 0) & (x.abs() < 2.0**-126)).any(1).all() and (x == 0).any(1).all()
        assert (bits(t) == -0x8000).any() and (torch.isinf(x) & (x < 0)).any()  # -0 and -Inf
    clamped = A.clone().clamp_(-60000, 60000)
    assert not torch.equal(bits(clamped), bits(A))


def test_scale_knob_reaches_gpu_sized_shapes_and_tails_stay_reachable():
    assert find(in_contract_shapes(scale=8), lambda s: s[2] > 4096, settings=SHRINK)[2] <= 8192
    m, n, k = find(in_contract_shapes(), lambda s: s[0] == 17 and s[1] % 128 and s[2] % 256, settings=SHRINK)
    assert (m, n % 128 != 0, k % 256 != 0) == (17, True, True)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_layouts_store_the_same_values_differently(layout):
    m, k = 5, 128
    reference_A = Case(m, 64, k, seed=3).build()[0][0]
    (A, *_), meta = Case(m, 64, k, layout=layout, seed=3).build()
    assert A.dtype == torch.bfloat16 and A.shape == (m, k)
    assert torch.equal(bits(A), bits(reference_A))
    expected = {
        "contiguous": ((k, 1), 0, True),
        "transposed": ((1, m), 0, True),
        "row_sliced": ((k + ROW_PITCH_PAD, 1), 0, True),
        "offset": ((k, 1), 64, True),
        "misaligned": ((k, 1), 1, False),
    }[layout]
    assert (A.stride(), A.storage_offset(), A.data_ptr() % 16 == 0) == expected
    assert meta["a_stride"] == list(expected[0]) and meta["a_16_byte_aligned"] == expected[2]


def test_storage_around_a_is_poisoned_with_quiet_nan():
    A = Case(3, 64, 64, layout="row_sliced").build()[0][0]
    whole_rows = torch.as_strided(A, (3, 64 + ROW_PITCH_PAD), A.stride(), A.storage_offset())
    assert torch.isnan(whole_rows[:, 64:]).all()
    A = Case(3, 64, 64, layout="misaligned").build()[0][0]
    before = torch.as_strided(A, (1,), (1,), 0)
    assert bits(before).item() == SPECIAL_BITS["nan"]


def test_ties_regime_puts_elements_exactly_on_e2m1_midpoints(stream):
    A = regime_a("ties", stream=stream)
    _, scales = quantize_mxfp4(A)
    qx = A.double() * torch.exp2(127.0 - scales.double()).repeat_interleave(32, dim=1)
    at_tie = torch.isin(qx.abs(), torch.tensor(TIE_POINTS, dtype=torch.float64))
    assert at_tie.float().mean() > 0.3
    # ... and so the two tie rules really disagree on it.
    assert not torch.equal(quantize_mxfp4(A)[0], quantize_mxfp4(A, rounding="ties_up")[0])


def test_subnormal_regime_is_bf16_subnormals_with_some_smallest_normals(stream):
    a = regime_a("subnormal", stream=stream).double().abs()
    assert ((a > 0) & (a < 2.0**-126)).float().mean() > 0.9
    assert (a >= 2.0**-126).any() and (a < 2.0**-125).all()
    assert (quantize_mxfp4(regime_a("subnormal", stream=stream))[1] == 0).all()


def test_grid_regime_is_exactly_representable(stream):
    A = regime_a("grid", exponent=-5, stream=stream)
    assert torch.equal(dequantize_mxfp4(*quantize_mxfp4(A)), A.double())


def test_scale_boundary_regime_straddles_the_even_rule_carry(stream):
    amax = groups(regime_a("scale_boundary", m=32, stream=stream)).abs().amax(-1)
    mantissa = amax / torch.exp2(torch.floor(torch.log2(amax)))
    assert ((mantissa >= 1.5) & (mantissa <= 1.7578125)).all()
    assert (mantissa < 1.75).any() and (mantissa >= 1.75).any()


def test_near_max_regime_reaches_the_scale_carry_and_stays_finite(stream):
    A = regime_a("near_max", stream=stream)
    assert torch.isfinite(A).all() and (A.double().abs() >= 2.0**124).all()
    assert (quantize_mxfp4(A)[1] == 254).any()


def test_group_regimes_shape_their_groups(stream):
    zero = groups(regime_a("zero_groups", stream=stream))
    all_zero = (zero == 0).all(-1)
    assert all_zero.any() and not all_zero.all()
    assert torch.signbit(zero[all_zero]).any()  # -0 groups occur
    constant = groups(regime_a("constant_groups", stream=stream))
    assert (constant == constant[..., :1]).all()
    magnitude_codes = unpack_e2m1(quantize_mxfp4(regime_a("outlier", stream=stream))[0]) & 0x7
    assert ((magnitude_codes != 0).view(8, -1, 32).sum(-1) == 1).all()


def test_value_regimes_have_their_advertised_distributions(stream):
    assert (regime_a("sparse", stream=stream) == 0).float().mean() > 0.8
    assert (regime_a("uniform", exponent=3, stream=stream).double().abs() <= 8).all()
    def group_spread(regime):  # amax over median magnitude per 32-group: about 3.5 for randn
        g = groups(regime_a(regime, stream=stream)).abs()
        return g.amax(-1) / g.median(-1).values

    assert (group_spread("heavy_tailed") > 16).float().mean() > 0.5
    assert (group_spread("randn") > 16).float().mean() < 0.05
    hot = regime_a("one_hot", m=16, stream=stream)
    assert ((hot != 0).sum(1) == 1).all()


def test_exponent_scales_a_regime_by_an_exact_power_of_two(stream):
    base = regime_a("randn", seed=5, stream=stream).double()
    assert torch.equal(regime_a("randn", exponent=-20, seed=5, stream=stream).double(), base * 2.0**-20)
    assert torch.equal(regime_a("randn", exponent=90, seed=5, stream=stream).double(), base * 2.0**90)


def test_one_hot_b_makes_the_acceptable_range_a_single_value(stream):
    data, _ = Case(4, 64, 256, b_regime="one_hot", seed=2, stream=stream).build()
    exact = exact_gemm_from_inputs(data)
    lo, hi = acceptable_range(exact, accumulation_bound(exact))
    nonzero = exact.value != 0  # at 0 only the underflow allowance (~2^-116) is left
    assert nonzero.float().mean() > 0.5
    assert torch.equal(lo[nonzero], exact.value[nonzero]) and torch.equal(hi[nonzero], exact.value[nonzero])


def test_specials_are_placed_with_exact_quiet_bit_patterns():
    specials = ((0, 3, "nan"), (1, 0, "-nan"), (2, 63, "inf"), (2, 5, "-inf"), (0, 1, "-0"))
    A = Case(3, 64, 64, layout="transposed", specials=specials).build()[0][0]
    for row, col, kind in specials:
        assert bits(A[row, col]).item() == torch.tensor(SPECIAL_BITS[kind], dtype=torch.int32).to(torch.int16).item()
    assert int(torch.isnan(A).sum()) == 2


@pytest.mark.parametrize("fill", [0, 0x7F, 0xFF, "random"])
def test_scale_padding_holds_the_fill_and_real_scales_are_untouched(fill, stream):
    data, _ = Case(2, 80, 96, scale_pad_fill=fill, seed=9, stream=stream).build()
    _, B, B_q, B_shuffle, B_scale_sh = data
    raw = B_scale_sh.view(torch.uint8)
    assert torch.equal(e8m0_unshuffle(raw, 80, 3), quantize_mxfp4(B)[1])
    is_pad = e8m0_shuffle(torch.zeros(80, 3, dtype=torch.uint8), fill=1) == 1
    if fill == "random":
        assert len(raw[is_pad].unique()) > 100
    else:
        assert (raw[is_pad] == fill).all()


def test_beyond_contract_k_has_no_shuffled_weight():
    data, meta = Case(2, 80, 96).build()
    assert data[3] is None and meta["b_shuffle"] is False and meta["in_contract"] is False
    data, meta = Case(2, 80, 128).build()
    assert torch.equal(unshuffle_weight(data[3]).view(torch.uint8), data[2].view(torch.uint8))
    assert "N%64!=0 (beyond contract)" in meta["tails"]


@settings(max_examples=10)
@given(cases(shapes=in_contract_shapes(**SMALL)))
def test_cases_survive_json_and_build_deterministically(case):
    text = json.dumps(case.to_json())
    assert Case.from_json(json.loads(text)) == case
    first, meta = case.build()
    second, _ = case.build()
    assert meta["in_contract"]
    for x, y in zip(first, second):
        assert x.stride() == y.stride() and x.storage_offset() == y.storage_offset()
        assert torch.equal(x.view(torch.uint8) if x.element_size() == 1 else bits(x),
                           y.view(torch.uint8) if y.element_size() == 1 else bits(y))


def test_different_seeds_give_different_values(stream):
    assert not torch.equal(regime_a("randn", seed=1, stream=stream), regime_a("randn", seed=2, stream=stream))


def test_official_cases_respect_the_budget_and_come_tests_first():
    assert official_cases(0) == []
    everything = [(c.m, c.n, c.k) for c in official_cases(float("inf"))]
    assert everything[:4] == list(OFFICIAL_TEST_SHAPES)
    assert set(everything) == set(OFFICIAL_TEST_SHAPES) | set(BENCHMARK_SHAPES)
    assert [(c.m, c.n, c.k) for c in official_cases(5e7)] == [(4, 2880, 512), (32, 2880, 512)]


def test_official_examples_run_first_in_order():
    seen = []

    @official_examples(5e7)
    @settings(max_examples=1, phases=[Phase.explicit, Phase.generate], database=None)
    @given(case=cases(shapes=in_contract_shapes(**SMALL)))
    def record(case):
        seen.append(case)

    record()
    assert seen[:2] == official_cases(5e7) and len(seen) == 3


# sha256 (first 16 hex digits) of regime_values' bf16 bits for (seed, rows, k, exponent), recorded when
# the regimes were written in place (2026-12-01). A saved corpus case is a seed, not tensors: if these
# change, every stored case replays different values. Change them only together with the corpus.
REGIME_DIGESTS = {
    "randn/3x256": "f07df24a6c48438d",
    "randn/17x2048": "a0262a743a024f5d",
    "randn/64x4096": "d75e67941731ae25",
    "uniform/3x256": "c90e9ed954baa104",
    "uniform/17x2048": "de019f47e5210c3f",
    "uniform/64x4096": "0cdcaa8d8d5d3574",
    "sparse/3x256": "458793c3621f4aa0",
    "sparse/17x2048": "97e7b4ec73bd44b9",
    "sparse/64x4096": "49168a2574af68fd",
    "zero_groups/3x256": "fd226646b930d6f0",
    "zero_groups/17x2048": "e39f964b490266d4",
    "zero_groups/64x4096": "8a9224faf7c70bf2",
    "constant_groups/3x256": "8c86b31048a49ea9",
    "constant_groups/17x2048": "961c15d8f3b23f58",
    "constant_groups/64x4096": "fef1063ee32ecd52",
    "one_hot/3x256": "37270297d70c6588",
    "one_hot/17x2048": "68ab3cd5a071fcff",
    "one_hot/64x4096": "cd44891d0d4114f2",
    "grid/3x256": "43310d35dc6688b8",
    "grid/17x2048": "058b3ce355fcef70",
    "grid/64x4096": "52908ca9d4e12139",
    "outlier/3x256": "0ea974981ab33512",
    "outlier/17x2048": "e6a1b7c998cbb80a",
    "outlier/64x4096": "d6f0ae2fe5707e6f",
    "ties/3x256": "425ce54b507c7bb3",
    "ties/17x2048": "2bb2198db4c95921",
    "ties/64x4096": "b2fea520ea75c2db",
    "scale_boundary/3x256": "7a186d95e94b8780",
    "scale_boundary/17x2048": "b90a41a33e2315f0",
    "scale_boundary/64x4096": "150d8ad82c8f1e33",
    "heavy_tailed/3x256": "2bb758789dfc0930",
    "heavy_tailed/17x2048": "2552c64086d2210d",
    "heavy_tailed/64x4096": "40a10e1799f38bb1",
    "subnormal/3x256": "e5e8b68ef446aea0",
    "subnormal/17x2048": "725f626a1cc8c039",
    "subnormal/64x4096": "94c54705e748a726",
    "near_max/3x256": "d43fb83c5f5080f3",
    "near_max/17x2048": "12f6deb7ab4ff3f5",
    "near_max/64x4096": "af3093672873e918",
    "every_class/3x256": "2b9b7fc282c84fff",
    "every_class/17x2048": "019e7927bd215e7e",
    "every_class/64x4096": "a96b92499caa0c85",
}
REGIME_DIGEST_DRAWS = ((3, 256, 0, 1), (17, 2048, -5, 7), (64, 4096, 3, 123))  # rows, k, exponent, seed


@pytest.mark.parametrize("regime", sorted(ALL_REGIMES))
def test_a_seed_draws_the_same_values_as_when_the_corpus_was_saved(regime):
    for rows, k, exponent, seed in REGIME_DIGEST_DRAWS:
        exponent = 0 if regime in FIXED_MAGNITUDE_REGIMES else exponent
        x = regime_values(regime, Mt19937Stream(seed), rows, k, exponent)
        digest = hashlib.sha256(x.view(torch.int16).numpy().tobytes()).hexdigest()[:16]
        assert digest == REGIME_DIGESTS[f"{regime}/{rows}x{k}"], (regime, rows, k)


# The counter stream's digests, recorded on the CPU when the stream was written (2026-12-01). The same
# test on a GPU tier checks that the device draws the same bits: that is what lets a case found on a
# GPU replay anywhere.
COUNTER_REGIME_DIGESTS = {
    "constant_groups/3x256": "4a70d8e999aea976",
    "constant_groups/17x2048": "e9f944caa99ec27b",
    "constant_groups/64x4096": "11e7b32fa56ad3b8",
    "every_class/3x256": "3088a3199d6813c1",
    "every_class/17x2048": "4be53fbb895d5733",
    "every_class/64x4096": "88ee64ac0186345f",
    "grid/3x256": "83334a54d2dfc57c",
    "grid/17x2048": "018c848ae86a371f",
    "grid/64x4096": "a9be52f7e0e2ccff",
    "heavy_tailed/3x256": "8e418ed1c1b8c288",
    "heavy_tailed/17x2048": "19eae13c2db26c7d",
    "heavy_tailed/64x4096": "9297a49a3059a816",
    "near_max/3x256": "6d831e5a272be60c",
    "near_max/17x2048": "7068542ade343390",
    "near_max/64x4096": "f8f0dd0c8109a8ce",
    "one_hot/3x256": "8cfdb4c9f14820df",
    "one_hot/17x2048": "990117ca9b84abc3",
    "one_hot/64x4096": "035fc9faeace26cb",
    "outlier/3x256": "b59325f9e87a12f4",
    "outlier/17x2048": "d2a0fd67ec930392",
    "outlier/64x4096": "58a66a782f6a3528",
    "randn/3x256": "c80c269fbb5603e5",
    "randn/17x2048": "b1c204bb12f5bfc4",
    "randn/64x4096": "d786d5708793c5b1",
    "scale_boundary/3x256": "96e592bb2bc8189e",
    "scale_boundary/17x2048": "89fe945ac32f5c40",
    "scale_boundary/64x4096": "45a2c27bcaaee994",
    "sparse/3x256": "1ea9aa2956547281",
    "sparse/17x2048": "3ec1d0895db3eae2",
    "sparse/64x4096": "1fe3c99a127e140d",
    "subnormal/3x256": "1e80ae89652c9872",
    "subnormal/17x2048": "800cfab8e073b364",
    "subnormal/64x4096": "80b6207bc9c963bc",
    "ties/3x256": "0da4f50a42134d1b",
    "ties/17x2048": "f1853a70ae5e4362",
    "ties/64x4096": "81668c0a23f24493",
    "uniform/3x256": "f6492f7c3a33caf5",
    "uniform/17x2048": "62bc3f9977b8d499",
    "uniform/64x4096": "872104bdac73ef09",
    "zero_groups/3x256": "d132fa214f4f71e9",
    "zero_groups/17x2048": "c29bcb8b44117581",
    "zero_groups/64x4096": "5ee8482a731d25f8",
}


@pytest.mark.parametrize("regime", sorted(ALL_REGIMES))
def test_the_counter_stream_draws_the_recorded_values_on_every_device_here(regime):
    for device in sorted({"cpu", TIER.device}):
        for rows, k, exponent, seed in REGIME_DIGEST_DRAWS:
            exponent = 0 if regime in FIXED_MAGNITUDE_REGIMES else exponent
            x = regime_values(regime, CounterStream(seed, device), rows, k, exponent)
            assert x.device.type == torch.device(device).type
            digest = hashlib.sha256(x.view(torch.int16).cpu().numpy().tobytes()).hexdigest()[:16]
            assert digest == COUNTER_REGIME_DIGESTS[f"{regime}/{rows}x{k}"], (regime, rows, k, device)


def test_a_counter_case_builds_the_same_task_tuple_on_the_cpu_and_on_the_tiers_device():
    if TIER.device == "cpu":
        pytest.skip("needs a GPU: on the CPU tier there is one device (the digests above pin the CPU's values)")
    case = Case(7, 192, 320, layout="row_sliced", a_regime="outlier", b_regime="ties", b_exponent=-3,
                specials=((0, 5, "nan"), (6, 300, "-inf")), scale_pad_fill="random", seed=11, stream="counter")
    here, _ = case.build(TIER.device)
    there, _ = case.build("cpu")
    for x, y in zip(here, there):
        if x is None:
            continue
        assert x.device.type == torch.device(TIER.device).type and y.device.type == "cpu"
        assert torch.equal(x.cpu().contiguous().view(torch.uint8), y.contiguous().view(torch.uint8))


def test_the_stream_is_part_of_a_case_and_the_legacy_stream_keeps_stored_cases_as_they_were():
    legacy = Case(3, 64, 128, seed=4)
    assert "stream" not in legacy.to_json() and "stream" not in legacy.describe()
    assert Case.from_json(legacy.to_json()) == legacy and legacy.stream == "mt19937"
    counter = Case(3, 64, 128, seed=4, stream="counter")
    assert counter.to_json()["stream"] == "counter" and "stream=counter" in counter.describe()
    assert Case.from_json(json.loads(json.dumps(counter.to_json()))) == counter
    assert counter.id() != legacy.id()
    assert not torch.equal(bits(counter.build()[0][0]), bits(legacy.build()[0][0]))
    with pytest.raises(FieldError, match="stream"):
        Case.from_json({**counter.to_json(), "stream": "philox"})
    with pytest.raises(FieldError, match="stream"):
        Case(3, 64, 128, stream=1)


def test_cases_carry_the_stream_they_were_drawn_for():
    seen = find(cases(shapes=in_contract_shapes(**SMALL), stream="counter"), lambda c: True, settings=SHRINK)
    assert seen == Case(1, 64, 64, stream="counter")
