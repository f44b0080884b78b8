"""The NaN/Inf measurement tool (fuzz.selfcheck.nan_check) on this tier: every placement the strategies draw,
classified against the oracle's NaN rules."""
from fuzz.selfcheck import nan_check
from fuzz.judge import verdicts
from fuzz.subjects.kernel_subjects import all_subjects
from kernels.platform import detect


def test_the_fused_quantizer_follows_a_rule_this_tier_accepts_on_every_special_placement():
    fused = next(s for s in all_subjects() if s.name == "fused")
    if not fused.available()[0]:
        return
    accepted = set(verdicts.nan_results())
    seen = set()
    for kind, label, case in nan_check.cases():
        A = case.build(detect().device)[0][0]
        rules = nan_check.matching_rules(*fused.quantize_a(A), A)
        assert rules & accepted, f"{label}: the fused quantizer matched {sorted(rules)}, the tier accepts {sorted(accepted)}"
        if "nan" in kind.lower():
            assert rules != set(nan_check.NAN_RESULTS), f"{label}: a NaN case every rule matches says nothing"
        assert nan_check.multiply_rule(A) & accepted
        seen.add(kind)
    assert seen == set(nan_check.COLUMNS)


def test_a_quantizer_following_no_accepted_rule_is_a_problem():
    table = {"accepted_rules": ["payload"], "unmatched": ["q: nan in randn"], "gemm": {},
             "quantizers": {"q": {"nan": [["canonical"], ["payload"]]}}}
    problems = nan_check.verdict(table)
    assert problems[0] == "q: nan in randn: matches no NaN rule"
    assert "follows ['canonical'] in 1 cases" in problems[1]
