"""fuzz.judge.verdicts: a correct subject passes every rung, and each planted fault fails the rung meant to
catch it. The subjects here are pure torch (exact products, fp32 matmuls, deliberate bugs)."""
import pytest
import torch
from hypothesis import given, settings

from fuzz.judge.verdicts import (
    block_scaling,
    check_product,
    check_stage_a_quant,
    official_reference,
    official_verdict,
    row_independence,
    split_invariance,
    zero_blocks,
)
from fuzz.search.strategies import Case, cases, in_contract_shapes
from fuzz.testing.judge_subjects import (
    Subject,
    a_values,
    b_values,
    fp32_truncating_subject,
    reference_subject,
    rne,
)
from reference import (
    decode_e2m1,
    decode_e8m0,
    exact_gemm_from_inputs,
    quantize_mxfp4,
    round_to_bf16,
    unpack_e2m1,
)


def randn_data(m=8, n=64, k=64, seed=1, **kw):
    return Case(m, n, k, seed=seed, **kw).build()[0]


@settings(max_examples=8)
@given(cases(shapes=in_contract_shapes(max_m=6, max_n=128, max_k=320)))
def test_the_exact_product_rounded_once_passes_ours_and_the_official_check(case):
    data, _ = case.build()
    exact = exact_gemm_from_inputs(data)
    y = reference_subject(data)
    assert check_product(y, data, exact=exact).passed
    assert official_verdict(y, official_reference(exact)).passed


def test_rtz_models_truncation_exactly_rather_than_loosening():
    # K = 320: the bound is far below one bf16 ulp, so the rounding direction decides, and randn sums
    # of 320 MXFP4 products carry more bits than bf16 keeps (at K = 64 most are bf16 numbers already).
    data = randn_data(k=320)
    truncated, nearest = fp32_truncating_subject(data), reference_subject(data)
    assert check_product(truncated, data, rounding="rtz").passed
    assert not check_product(truncated, data, rounding="rne").passed
    # The RNE output fails the rtz check: "rtz" is a different range, not a wider one.
    assert not check_product(nearest, data, rounding="rtz").passed


def test_a_subject_accumulating_in_fp32_passes_at_k_7168():
    data = randn_data(m=2, n=64, k=7168)
    y = rne((a_values(data[0]).float() @ b_values(data).float().T).double())
    assert check_product(y, data).passed


@pytest.mark.parametrize(
    "fault",
    ["one_group_scale_doubled", "k_tail_dropped", "two_scale_columns_swapped", "nan_in_output", "inf_in_output"],
)
def test_planted_faults_fail_the_product_check(fault):
    data = randn_data(m=4, k=320, a_regime="grid", seed=4)
    a, b = a_values(data[0]), b_values(data)
    if fault == "one_group_scale_doubled":

        def bump(s):
            s[2, 3] += 1
            return s

        y = rne(a_values(data[0], bump) @ b.T)
    elif fault == "k_tail_dropped":
        y = rne(a[:, :256] @ b[:, :256].T)
    elif fault == "two_scale_columns_swapped":
        scales = quantize_mxfp4(data[0])[1]
        assert (scales[:, 0] != scales[:, 1]).any()  # otherwise the swap changes nothing
        y = rne(a_values(data[0], lambda s: s[:, [1, 0, *range(2, s.shape[1])]]) @ b.T)
    else:
        y = reference_subject(data).clone()
        y[1, 7] = float("nan") if fault == "nan_in_output" else float("inf")
    verdict = check_product(y, data)
    assert not verdict.passed
    assert verdict.worst["index"] != [] and verdict.details["failures"] >= 1
    if fault in ("nan_in_output", "inf_in_output"):
        assert verdict.details["failures"] == 1 and verdict.worst["index"] == [1, 7]


def test_wrong_shape_or_dtype_is_a_verdict_not_an_exception():
    data = randn_data()
    y = reference_subject(data)
    assert "shape" in check_product(y[:, :32], data).summary
    assert "dtype" in check_product(y.float(), data).summary
    assert not check_product(None, data).passed


def test_nonfinite_output_is_allowed_only_where_fp32_may_overflow():
    data = randn_data(m=2, n=64, k=64, a_regime="near_max", b_regime="near_max")
    exact = exact_gemm_from_inputs(data)
    assert exact.overflow_risk.all()
    y = torch.full((2, 64), float("nan"), dtype=torch.bfloat16)
    assert check_product(y, data, exact=exact).passed
    assert not check_product(y, randn_data(m=2)).passed


def test_worst_element_reports_the_error_in_bound_units_and_ulps():
    data = randn_data()
    exact = exact_gemm_from_inputs(data)
    y = reference_subject(data).clone()
    y[3, 9] = y[3, 9] * 2
    worst = check_product(y, data, exact=exact).worst
    assert worst["index"] == [3, 9] and worst["exact"] == exact.value[3, 9].item()
    assert worst["error_over_bound"] > 1e3 and 64 <= worst["error_ulps"] <= 128  # ulps of |2y|


def test_official_check_passes_an_error_that_ours_catches():
    data = randn_data()
    exact = exact_gemm_from_inputs(data)
    y = reference_subject(data).clone()
    # The largest output whose exact value is a bf16 number: its acceptable range is that one number.
    representable = round_to_bf16(exact.value) == exact.value
    big = torch.where(representable, exact.value.abs(), 0).argmax()
    y.view(-1).view(torch.int16)[big] += 1  # one bf16 ulp (< 1%) further from zero
    assert official_verdict(y, official_reference(exact)).passed
    assert not check_product(y, data, exact=exact).passed


def test_official_check_demands_nan_and_inf_agreement():
    ref = torch.tensor([[1.0, float("nan"), float("inf")]], dtype=torch.bfloat16)
    assert official_verdict(ref.clone(), ref).passed
    assert not official_verdict(torch.tensor([[1.0, 0.0, float("inf")]], dtype=torch.bfloat16), ref).passed
    assert not official_verdict(torch.tensor([[1.0, float("nan"), -float("inf")]], dtype=torch.bfloat16), ref).passed
    assert not official_verdict(torch.tensor([[1.03, float("nan"), float("inf")]], dtype=torch.bfloat16), ref).passed


def test_stage_check_accepts_the_reference_quantizer_bit_for_bit():
    A = randn_data(a_regime="ties")[0]
    assert check_stage_a_quant(*quantize_mxfp4(A), A).passed


def test_stage_check_names_ties_rounded_up():
    A = randn_data(a_regime="ties")[0]
    verdict = check_stage_a_quant(*quantize_mxfp4(A, rounding="ties_up"), A)
    d = verdict.details
    assert not verdict.passed and d["scale_mismatches"] == 0
    assert d["code_mismatches"] > 0 and d["code_mismatches_at_ties"] == d["code_mismatches"]
    assert d["matches_variant"] == ["quantize_mxfp4(scale_rule='even', rounding='ties_up')"]


def test_stage_check_separates_scale_mistakes_from_code_mistakes():
    A = randn_data(a_regime="scale_boundary")[0]
    verdict = check_stage_a_quant(*quantize_mxfp4(A, scale_rule="floor"), A)
    d = verdict.details
    assert d["scale_mismatches"] > 0 and d["code_mismatches_in_bad_scale_groups"] == d["code_mismatches"]
    assert "quantize_mxfp4(scale_rule='floor', rounding='rne')" in d["matches_variant"]


def test_stage_check_reports_the_first_mismatch_position_and_bad_shapes():
    A = randn_data()[0]
    packed, scales = quantize_mxfp4(A)
    packed = packed.clone()
    packed[2, 5] ^= 0x10  # flip a bit of element (2, 11)'s code
    d = check_stage_a_quant(packed, scales, A).details
    assert d["code_mismatches"] == 1 and d["scale_mismatches"] == 0
    first = d["first_code_mismatches"][0]
    assert (first["row"], first["col"]) == (2, 11)
    assert first["expected"] == int(unpack_e2m1(quantize_mxfp4(A)[0])[2, 11])
    assert not check_stage_a_quant(packed[:, :4], scales, A).passed


def split_k_subject(splits, drop_last=False):
    def run(data):
        a, b = a_values(data[0]).float(), b_values(data).float()
        chunks = torch.arange(a.shape[1]).chunk(splits)
        partials = [a[:, c] @ b[:, c].T for c in chunks[: -1 if drop_last else None]]
        return rne(torch.stack(partials).sum(0).double())

    return run


def test_split_invariance_accepts_a_reassociated_sum_and_catches_a_lost_split():
    data = randn_data(k=512)
    whole = split_k_subject(1)(data)
    verdict = split_invariance(split_k_subject(4)(data), whole, data, splits=4)
    assert verdict.passed and "bitwise_differences" in verdict.details
    lost = split_invariance(split_k_subject(4, drop_last=True)(data), whole, data, splits=4)
    assert not lost.passed and lost.summary.startswith("split result")


def test_row_independence_holds_for_the_reference_and_fails_a_batch_dependent_subject():
    data = randn_data(m=12, k=320)
    assert row_independence(Subject(reference_subject), data, rows=[0, 5, 11]).passed

    def truncates_when_alone(data):  # a different (wrong) path for M = 1
        return fp32_truncating_subject(data) if data[0].shape[0] == 1 else reference_subject(data)

    verdict = row_independence(Subject(truncates_when_alone), data, rows=[0, 5, 11])
    assert not verdict.passed and "computed alone" in verdict.summary


def narrow_exponent_subject(data):
    """Decodes A's scale bytes >= 0x90 one binade low: invisible at ordinary magnitudes."""
    packed, scales = quantize_mxfp4(data[0])
    factors = decode_e8m0(scales).double()
    factors = torch.where(scales >= 0x90, factors / 2, factors).repeat_interleave(32, dim=1)
    a = decode_e2m1(unpack_e2m1(packed)).double() * factors
    return rne(a @ b_values(data).T)


def test_block_scaling_exposes_a_scale_decoder_with_a_narrow_range():
    data = randn_data(layout="transposed")
    assert block_scaling(Subject(reference_subject), data, row=3, group=1, j=20).passed
    assert check_product(narrow_exponent_subject(data), data).passed
    verdict = block_scaling(Subject(narrow_exponent_subject), data, row=3, group=1, j=20)
    assert verdict.applicable and not verdict.passed and verdict.summary.startswith("perturbed input")


def test_block_scaling_is_not_applicable_when_the_block_would_overflow():
    verdict = block_scaling(Subject(reference_subject), randn_data(), row=0, group=0, j=200)
    assert not verdict.applicable and verdict.passed


def byte_zero_is_nan_subject(data):
    """Decodes E8M0 byte 0 as NaN, like the 0xFF NaN byte: an all-zero block poisons its row."""
    packed, scales = quantize_mxfp4(data[0])
    factors = torch.where(scales == 0, float("nan"), decode_e8m0(scales).double()).repeat_interleave(32, dim=1)
    return rne((decode_e2m1(unpack_e2m1(packed)).double() * factors) @ b_values(data).T)


def test_zero_blocks_predicts_the_change_and_catches_a_byte_zero_bug():
    data = randn_data(k=128)
    verdict = zero_blocks(Subject(reference_subject), data, blocks=[(1, 0), (1, 3), (6, 2)])
    assert verdict.passed and verdict.details["other_rows_changed"] == 0
    assert check_product(byte_zero_is_nan_subject(data), data).passed
    assert not zero_blocks(Subject(byte_zero_is_nan_subject), data, blocks=[(1, 0)]).passed


@pytest.mark.parametrize("tier, accepted, refused", [
    ("cpu", ("payload", "saturate"), ("canonical",)),
    ("nvidia", ("canonical", "payload", "canonical_max"), ("saturate",)),
    ("amd", ("payload", "saturate"), ("canonical",)),
])
def test_a_nan_of_a_may_follow_each_rule_its_tier_documents_but_nothing_else(tier, accepted, refused):
    from fuzz.judge.verdicts import check_product, check_stage_a_quant, nan_results
    from reference import exact_gemm_from_inputs, round_to_bf16

    assert set(nan_results(tier)) == set(accepted)
    data = Case(2, 64, 64, specials=((0, 5, "nan"), (1, 40, "-nan")), seed=3).build()[0]

    def output(rule):
        return round_to_bf16(exact_gemm_from_inputs(data, nan=rule).value).to(torch.bfloat16)

    for rule in accepted:
        verdict = check_product(output(rule), data, tier=tier)
        assert verdict.passed and "NaN rules" in verdict.summary, verdict.summary
        stage = check_stage_a_quant(*quantize_mxfp4(data[0], nan=rule), data[0], tier=tier)
        named = stage.details["nan_rule"]  # the first rule giving these bytes (canonical_max = canonical here)
        assert stage.passed and all(torch.equal(x, y) for x, y in
                                    zip(quantize_mxfp4(data[0], nan=named), quantize_mxfp4(data[0], nan=rule))), stage.summary
    for rule in refused:
        assert not check_product(output(rule), data, tier=tier).passed
        stage = check_stage_a_quant(*quantize_mxfp4(data[0], nan=rule), data[0], tier=tier)
        assert not stage.passed and stage.details["code_mismatches"] == 2 and "NaN" in stage.summary
    zeroed = (data[0].nan_to_num(0.0),) + data[1:]  # a NaN read as 0: no rule
    assert not check_product(round_to_bf16(exact_gemm_from_inputs(zeroed).value).to(torch.bfloat16), data, tier=tier).passed


def test_the_nan_rules_give_the_codes_their_hardware_gives():
    """payload: x86/numpy's quiet NaN codes; canonical: NVIDIA's 0x7FFFFFFF (+2 whatever the sign);
    saturate: +-6 by the NaN's sign. Scales do not depend on the rule outside all-NaN groups."""
    A = torch.zeros((1, 32), dtype=torch.bfloat16)
    A[0, 0] = 1.0
    A.view(torch.int16)[0, 1], A.view(torch.int16)[0, 2] = 0x7FC0, 0xFFC0 - 0x10000
    codes = {rule: unpack_e2m1(quantize_mxfp4(A, nan=rule)[0])[0, 1:3].tolist() for rule in ("payload", "canonical", "saturate")}
    assert codes == {"payload": [0x3, 0xB], "canonical": [0x4, 0x4], "saturate": [0x7, 0xF]}
    assert len({quantize_mxfp4(A, nan=rule)[1].item() for rule in codes}) == 1
    qx = (A.float() * 4.0)  # the CPU's own multiply keeps the payload: the payload rule is what it computes
    assert qx.view(torch.int32)[0, 1].item() == 0x7FC00000


@pytest.mark.parametrize("tier", ["cpu", "nvidia", "amd"])
def test_an_all_nan_groups_scale_is_the_quiet_nans_or_on_nvidia_the_canonical_nans(tier):
    """An all-NaN group's amax is a NaN; the even rule's bit trick gives byte 254 for the quiet NaN and
    byte 0 for the canonical 0x7FFFFFFF (the carry reaches the sign). aiter's tl.max on an H200 gives the
    latter (canonical_max), accepted there only; a kernel mapping the NaN amax to Inf gives 254 anywhere."""
    from fuzz.judge.verdicts import check_product, check_stage_a_quant
    from reference import exact_gemm_from_inputs, round_to_bf16

    nan_group = tuple((0, c, "nan" if c % 2 else "-nan") for c in range(32, 64))
    data = Case(2, 64, 64, specials=nan_group, seed=3).build()[0]
    scales = {rule: quantize_mxfp4(data[0], nan=rule)[1] for rule in ("payload", "canonical", "canonical_max")}
    assert scales["payload"][0, 1] == scales["canonical"][0, 1] == 254 and scales["canonical_max"][0, 1] == 0
    assert torch.equal(scales["payload"][:, :1], scales["canonical_max"][:, :1])  # other groups: the same
    output = round_to_bf16(exact_gemm_from_inputs(data, nan="canonical_max").value).to(torch.bfloat16)
    accepted = tier == "nvidia"
    assert check_product(output, data, tier=tier).passed == accepted
    assert check_stage_a_quant(*quantize_mxfp4(data[0], nan="canonical_max"), data[0], tier=tier).passed == accepted


def test_scale_byte_zero_may_read_as_zero_only_where_tritons_software_dot_scaled_runs():
    """Subnormal blocks quantize to scale byte 0 (2^-127); Triton's tl.dot_scaled lowering on sm_90 reads
    it as 0. The nvidia tier accepts both products, the others only 2^-127; NaN leaking in fails anywhere."""
    from fuzz.judge.verdicts import check_product
    from reference import exact_gemm_from_inputs, round_to_bf16

    data = Case(3, 64, 128, a_regime="subnormal", b_regime="randn", b_exponent=100, seed=4).build()[0]
    flushed = round_to_bf16(exact_gemm_from_inputs(data, byte0="zero").value).to(torch.bfloat16)
    exact = round_to_bf16(exact_gemm_from_inputs(data).value).to(torch.bfloat16)
    assert not torch.equal(flushed, exact)
    assert check_product(flushed, data, tier="nvidia").passed and check_product(exact, data, tier="nvidia").passed
    verdict = check_product(flushed, data, tier="nvidia")
    assert not check_product(flushed, data, tier="cpu").passed and not check_product(flushed, data, tier="amd").passed
    leaked = flushed.clone()
    leaked[0, 0] = float("nan")
    assert not check_product(leaked, data, tier="nvidia").passed
    assert verdict.details["alternatives_matched"] == ["canonical/zero"] and "E8M0 byte 0 = 0" in verdict.summary


def test_a_mutant_reproducing_a_tiers_accepted_byte0_rule_is_equivalent_there_only():
    """byte0_as_zero is what sm_90's software tl.dot_scaled does: on the nvidia tier it cannot be killed
    by a correct suite, so --mutants skips it with the reason; on the tiers that decode 2^-127 it must die."""
    from fuzz.selfcheck.mutants import MUTANTS

    equivalent = {(m.name, tier) for m in MUTANTS for tier in ("cpu", "nvidia", "amd") if m.equivalence(tier)}
    assert equivalent == {("byte0_as_zero", "nvidia")}
    reason = next(m for m in MUTANTS if m.name == "byte0_as_zero").equivalence("nvidia")
    assert "E8M0 byte 0 as 0" in reason and "gfx950" in reason


def _top_scale_data():
    """Inputs whose A has a block with amax in [1.75 * 2^127, 2^128) (s = 127) and an Inf in another."""
    data = list(randn_data(m=2, n=64, k=64, seed=5))
    A = data[0].clone()
    A[0, :32] = 3.0e38
    A[1, 40] = float("inf")
    data[0] = A
    return tuple(data)


def test_a_quantizer_whose_exp2_flushes_2_to_the_minus_127_passes():
    """godzmk's own Triton quantizer on the H200: tl.exp2(-127) is 0 there (ex2.approx.ftz) as on gfx950 (a bare
    v_exp_f32), so a block with scale 2^127 quantizes to zeros; the oracle kept 2^-127 and called it a FAIL."""
    data = _top_scale_data()
    kept, flushed = (exact_gemm_from_inputs(data, scale127=r) for r in ("kept", "flushed"))
    assert not torch.equal(kept.value.nan_to_num(), flushed.value.nan_to_num())
    y = round_to_bf16(flushed.value).to(torch.bfloat16)
    verdict = check_product(y, data, tier="nvidia")
    assert verdict.passed, verdict.summary
    assert "2^-127 flushed" in verdict.summary or verdict.details.get("alternatives_matched")
    kept_y = round_to_bf16(kept.value).to(torch.bfloat16)
    assert check_product(kept_y, data, tier="cpu").passed  # the interpreter keeps the subnormal: still right
    wrong = y.clone()
    wrong[0, 0] = -wrong[0, 0] if float(wrong[0, 0]) != 0 else 1.0
    assert not check_product(wrong, data, tier="nvidia").passed  # an element wrong under both readings fails


def test_the_flushed_reading_zeroes_finite_elements_and_makes_inf_a_nan():
    A = torch.ones(2, 64, dtype=torch.bfloat16)
    A[0, :32] = 3.0e38
    A[0, 3] = float("inf")
    (kept, scales_kept), (flushed, scales_flushed) = (quantize_mxfp4(A, scale127=r) for r in ("kept", "flushed"))
    assert torch.equal(scales_kept, scales_flushed) and int(scales_kept[0, 0]) == 254
    codes_kept, codes_flushed = unpack_e2m1(kept), unpack_e2m1(flushed)
    assert int(codes_kept[0, 0]) == 0x4 and int(codes_flushed[0, 0]) == 0  # 3e38 * 2^-127 = 1.76 -> 2.0; * 0 -> 0
    assert int(codes_kept[0, 3]) == 0x7 and int(codes_flushed[0, 3]) == 0x3  # Inf -> 6; Inf * 0 = NaN -> 1.5
    assert torch.equal(codes_kept[:, 32:], codes_flushed[:, 32:])  # other blocks alike
