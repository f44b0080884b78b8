"""fuzz.judge.attribution: every planted fault is explained by the hypothesis that describes it."""
import torch

from fuzz.judge.attribution import FAILURE_CLASSES, describe_span, explain, failure_class, ranges
from fuzz.search.strategies import Case
from fuzz.testing.judge_subjects import (
    a_values,
    b_values,
    fp32_truncating_subject,
    reference_subject,
    rne,
)
from reference import e8m0_unshuffle, exact_gemm


def data_for(m=6, n=128, k=320, seed=2, **kw):
    return Case(m, n, k, seed=seed, **kw).build()[0]


def kinds(findings):
    return {f.kind: f for f in findings}


def test_a_correct_output_has_nothing_to_explain():
    data = data_for()
    assert explain(reference_subject(data), data) == []


def test_a_doubled_a_group_scale_is_named_with_its_row_and_group():
    data = data_for()

    def bump(scales):
        scales[4, 7] += 1
        return scales

    y = rne(a_values(data[0], bump) @ b_values(data).T)
    finding = kinds(explain(y, data))["group_scale"]
    assert finding.params == {"operand": "A", "group": 7, "j": 1, "rows": [[4, 5]]}
    assert "k in [224, 256)" in finding.text


def test_a_halved_b_group_scale_is_named_with_its_column():
    data = data_for(m=10)
    b = b_values(data)
    b[37, 64:96] /= 2
    y = rne(a_values(data[0]) @ b.T)
    finding = kinds(explain(y, data))["group_scale"]
    assert finding.params == {"operand": "B", "group": 2, "j": -1, "columns": [[37, 38]]}


def test_a_dropped_k_tail_is_named():
    data = data_for(k=320)
    a, b = a_values(data[0]), b_values(data)
    finding = kinds(explain(rne(a[:, :256] @ b[:, :256].T), data))["k_range_missing"]
    assert (finding.params["k0"], finding.params["k1"]) == (256, 320)
    assert "K tail dropped: only whole 128/256-wide K tiles summed" in finding.params["names"]


def test_a_lost_last_k_split_is_named():
    # K = 192 in two splits of 96: the missing range matches no tile tail, only the split.
    data = data_for(k=192)
    a, b = a_values(data[0]), b_values(data)
    finding = kinds(explain(rne(a[:, :96] @ b[:, :96].T), data))["k_range_missing"]
    assert (finding.params["k0"], finding.params["k1"]) == (96, 192)
    assert finding.params["names"] == ["the last K-split lost (K split 2 ways, stripes of 96)"]


def test_truncation_instead_of_rne_is_named_and_the_reverse_too():
    data = data_for()
    assert kinds(explain(fp32_truncating_subject(data), data))["rounding"].params == {"fits": "rtz"}
    assert kinds(explain(reference_subject(data), data, rounding="rtz"))["rounding"].params == {"fits": "rne"}


def test_ties_rounded_up_in_a_is_named():
    data = data_for(a_regime="ties")
    A, _, B_q, _, B_scale_sh = data
    y = rne(exact_gemm(A, B_q, e8m0_unshuffle(B_scale_sh, 128, 10), rounding="ties_up").value)
    variants = [f.params["variant"] for f in explain(y, data) if f.kind == "variant"]
    assert variants == ["ties_up"]


def test_a_scale_rule_mistake_is_named():
    data = data_for(a_regime="scale_boundary")
    A, _, B_q, _, B_scale_sh = data
    y = rne(exact_gemm(A, B_q, e8m0_unshuffle(B_scale_sh, 128, 10), scale_rule="floor").value)
    variants = [f.params["variant"] for f in explain(y, data) if f.kind == "variant"]
    assert "scale_floor" in variants and "ties_up" not in variants


def test_layout_misreads_of_b_are_named():
    data = data_for(k=256)
    A, _, B_q, B_shuffle, B_scale_sh = data
    scales = e8m0_unshuffle(B_scale_sh, 128, 8)
    shuffled_as_plain = rne(exact_gemm(A, B_shuffle, scales).value)
    scales_as_plain = rne(exact_gemm(A, B_q, B_scale_sh.view(torch.uint8)[:128, :8]).value)
    assert {f.params.get("variant") for f in explain(shuffled_as_plain, data)} >= {"b_shuffle_as_b_q"}
    assert {f.params.get("variant") for f in explain(scales_as_plain, data)} >= {"b_scale_not_unshuffled"}


def test_wrong_n_tail_columns_are_located_relative_to_tiles():
    data = data_for(n=192)
    y = reference_subject(data).clone()
    y[:, 128:] *= 3
    finding = kinds(explain(y, data))["rows_columns"]
    assert finding.params["columns"] == [[128, 192]]
    assert "columns n >= 128 (the tail past the last full tile of 128)" in finding.text
    assert "all 6 rows" in finding.text


def test_wrong_m_tail_rows_are_located_relative_to_tiles():
    data = data_for(m=12)
    y = reference_subject(data).clone()
    y[8:] = 0
    finding = kinds(explain(y, data))["rows_columns"]
    assert "rows m >= 8 (the tail past the last full tile of 8)" in finding.text


def test_nan_outputs_are_counted():
    data = data_for()
    y = reference_subject(data).clone()
    y[2, 3] = float("nan")
    y[5, 100] = float("inf")
    finding = kinds(explain(y, data))["nonfinite"]
    assert finding.params == {"nan": 1, "inf": 1}


def test_one_wrong_element_is_not_blamed_on_a_k_range_or_a_group_scale():
    data = data_for()
    for error_ulps in (1, 2, 3, 5, 8):
        y = reference_subject(data).clone()
        y.view(-1).view(torch.int16)[77] += error_ulps
        found = kinds(explain(y, data))
        assert set(found) == {"rows_columns"}, found
        assert found["rows_columns"].params == {"rows": [[0, 1]], "columns": [[77, 78]], "full_block": True,
                                                   "everywhere": False, "partial_tile": False}


def test_ranges_and_spans_read_naturally():
    assert ranges([0, 1, 2, 5, 7, 8]) == [[0, 3], [5, 6], [7, 9]]
    assert describe_span([3], 10, "rows", "m", ()) == "rows 3"
    assert describe_span(list(range(4)), 10, "rows", "m", ()) == "rows m < 4"
    assert describe_span([1, 2, 5], 10, "rows", "m", ()) == "rows [1, 3) 5"


def test_a_vanished_a_group_is_named_as_contributing_nothing():
    data = data_for()

    def drop(values):
        values[2, 32:64] = 0  # row 2 loses K-group 1 entirely, e.g. its scale byte decoded as 0
        return values

    y = rne(drop(a_values(data[0])) @ b_values(data).T)
    finding = kinds(explain(y, data))["group_scale"]
    assert finding.params["group"] == 1 and finding.params["rows"] == [[2, 3]]
    assert "contributes nothing" in finding.text


def test_each_kind_of_wrong_output_gets_its_own_failure_class():
    data = data_for(m=12, n=192, k=320)
    a, b = a_values(data[0]), b_values(data)
    right = reference_subject(data)
    nan_rows, tail_cols, everywhere = right.clone(), right.clone(), right.clone()
    nan_rows[8:] = float("nan")
    tail_cols[:, 128:] *= 3
    everywhere = (everywhere.double() + 1000).to(torch.bfloat16)
    classes = {name: failure_class(explain(y, data)) for name, y in {
        "nan_rows": nan_rows, "k_tail": rne(a[:, :256] @ b[:, :256].T), "tail_cols": tail_cols,
        "everywhere": everywhere}.items()}
    assert classes == {"nan_rows": "nonfinite", "k_tail": "k_terms_missing", "tail_cols": "partial_tile",
                       "everywhere": "wrong_everywhere"}
    assert set(classes.values()) <= set(FAILURE_CLASSES)


def test_each_failure_class_raises_its_own_assertion_error_type():
    from fuzz.submission.plugin import SubmissionFailure, failure_type

    kinds_ = {failure_type(c) for c in (*FAILURE_CLASSES, "crash", "timeout")}
    assert len(kinds_) == len(FAILURE_CLASSES) + 2 and all(issubclass(t, SubmissionFailure) for t in kinds_)
    assert failure_type("k_terms_missing").__name__ == "KTermsMissingFailure"
    assert failure_type("") is SubmissionFailure and failure_type("nonfinite") is failure_type("nonfinite")


def test_a_launch_configuration_names_kernel_config_stripes_and_grid_class():
    from fuzz.submission.run_records import launch_config

    ours = {"kernel": "fused_mxfp4_gemm_kernel", "grid": [1, 2], "constexprs": {"BLOCK_K": 256, "SPLIT_K": 256},
            "scalars": {"M": 1, "K": 320}}
    aiters = {"kernel": "_gemm_a16wfp4_preshuffle_kernel", "grid": [4 * 80], "scalars": {},
              "constexprs": {"BLOCK_SIZE_K": 256, "NUM_KSPLIT": 4, "GRID_MN": 80}}
    assert launch_config(ours) == "fused_mxfp4_gemm_kernel[BLOCK_K=256] stripes=2 < 256 programs"
    assert launch_config(aiters) == "_gemm_a16wfp4_preshuffle_kernel[BLOCK_SIZE_K=256 NUM_KSPLIT=4] stripes=4 >= 256 programs"


def test_the_report_names_the_official_launch_configurations_fuzzing_never_reached():
    from fuzz.submission.plugin import launch_lines, official_launches_not_fuzzed

    def verdict(name, *configs):
        return {"verdict": name, "launch_configs": [{"config": c, "examples": 1} for c in configs]}

    split = "k[BK=256] stripes=4 >= 256 programs"
    whole = "k[BK=256] stripes=1 < 256 programs"
    verdicts = [verdict("loads", split), verdict("official", whole, split), verdict("correctness", whole)]
    assert official_launches_not_fuzzed(verdicts) == [split]  # loads' launches are not fuzzing
    assert any(line.startswith("unfuzzed") and split in line for line in launch_lines(verdicts))
    verdicts.append(verdict("contract", split))
    assert official_launches_not_fuzzed(verdicts) == []
    assert launch_lines(verdicts)[-1].startswith("unfuzzed    none")
    assert official_launches_not_fuzzed([verdict("correctness", split)]) == []  # no official check ran


def test_examples_that_reach_a_new_launch_configuration_score_higher(monkeypatch):
    """settle() scores each example by the launch configurations no verdict had reached, for
    Hypothesis's target phase to mutate toward."""
    from hypothesis import given, settings, strategies as st

    from fuzz.submission import plugin
    from fuzz.submission.checks import Outcome

    scores = []
    monkeypatch.setattr(plugin, "target", lambda score, label: scores.append((score, label)))
    session = plugin.SubmissionSession("x.py", runner=None, tier="cpu")
    launches = iter([["a", "b"], ["a"], ["b", "c"]])

    @settings(max_examples=3, database=None)
    @given(st.integers(0, 1000))
    def run(_):
        session.settle(Outcome("correctness", "pass", "ok", launches=next(launches)))

    run()
    assert [s for s, _ in scores] == [2.0, 0.0, 1.0]
    assert {label for _, label in scores} == {"launch configurations not reached before"}


def test_each_contract_breach_is_its_own_failure_class():
    from fuzz.search.strategies import Case
    from fuzz.submission.checks import CONTRACT_CLASSES, contract_issue

    case = Case(3, 64, 64)
    ok = {"file": "y.pt", "shape": [3, 64], "dtype": "torch.bfloat16", "device": "cuda:0", "input_device": "cuda:0"}
    records = {
        "raises": {"exception": {"type": "ValueError", "message": "K % 256", "device_fault": False}},
        "unreadable": {"type": "Weird", "inspect_error": {"type": "TypeError", "message": "no"}},
        "not_a_tensor": {"type": "list"},
        "wrong_shape": {**ok, "shape": [4, 64]},
        "wrong_dtype": {**ok, "dtype": "torch.float32"},
        "wrong_device": {**ok, "device": "cpu"},
    }
    assert tuple(records) == CONTRACT_CLASSES
    for kind, record in records.items():
        assert contract_issue(record, case)[0] == kind
    assert contract_issue(ok, case) is None
