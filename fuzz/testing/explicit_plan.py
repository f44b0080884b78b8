"""Every verdict of the submission runner once, on explicit small cases (no Hypothesis): the tables the
example tests compare against (fuzz/unit/test_submission_examples.py, test_tier_divergence_examples.py,
test_uninitialised.py) and a quick way to see what a file gets."""
from __future__ import annotations

from pathlib import Path

from fuzz.search.strategies import Case
from fuzz.submission import checks
from kernels.platform import detect

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TIER = detect().tier  # the tier the verdicts are worded for
VERDICTS = ("official", "contract", "contract_beyond", "correctness", "immutability", "aliasing", "determinism",
            "stale_in_place", "stale_reallocated", "stale_new_shape", "stale_recheck", "uninitialised")


def run_plan(ctx, m: int = 2, only=None) -> dict:
    """Every verdict (or those named in ``only``) once, on explicit small cases with first dimension ``m``;
    -> verdict -> Outcome."""
    k_tail = 320  # K % 256 != 0
    plan = {
        "official": lambda: checks.check_official(ctx),
        "contract": lambda: checks.check_contract(ctx, [Case(m, 64, 64, seed=1), Case(m + 1, 128, 128, seed=2)]),
        "contract_beyond": lambda: checks.check_beyond_contract(ctx, Case(m, 64, 96, seed=3)),
        "correctness": lambda: checks.check_correctness(ctx, Case(m, 64, k_tail, layout="row_sliced", seed=4)),
        "immutability": lambda: checks.check_immutability(
            ctx, Case(m, 64, 128, a_regime="every_class", b_regime="every_class", seed=5)),
        "aliasing": lambda: checks.check_aliasing(ctx, Case(m, 64, 128, seed=6)),
        "determinism": lambda: checks.check_determinism(ctx, Case(m, 64, 128, seed=7)),
        "stale_in_place": lambda: checks.check_stale_in_place(ctx, Case(m, 64, 128, seed=8)),
        "stale_reallocated": lambda: checks.check_stale_reallocated(ctx, Case(m, 64, 128, seed=9)),
        "stale_new_shape": lambda: checks.check_stale_new_shape(ctx, Case(m, 64, 128, seed=10), m + 1),
        "stale_recheck": lambda: checks.check_stale_recheck(ctx, Case(m, 64, 128, seed=11)),
        "uninitialised": lambda: checks.check_uninitialised(ctx, Case(m, 64, 128, seed=12)),
    }
    return {name: check() for name, check in plan.items() if only is None or name in only}
