"""How long the runner's official shapes would take on the CPU tier, from narrowed runs
(fuzz/submission/checks.py ``projected_seconds``): proportional to N from one run, fitted a + b * N from
two, so a cost that does not grow with N (a quantizer of A) is not projected past the hard cap."""
from __future__ import annotations

import pytest

from fuzz.search.strategies import Case
from fuzz.submission.checks import projected_seconds
from fuzz.submission.runner import RunResult

FULL = [Case(8, 2112, 7168), Case(16, 3072, 1536)]
NARROW = [Case(8, 128, 7168), Case(16, 128, 1536)]
WIDER = [Case(8, 256, 7168), Case(16, 256, 1536)]


def run(*seconds) -> RunResult:
    return RunResult("ok", records=[{"do": "call", "out": f"y{i}", "seconds": s} for i, s in enumerate(seconds)])


def test_one_run_scales_each_call_by_its_n():
    assert projected_seconds(run(10.0, 2.0), FULL, NARROW) == pytest.approx(10 * 2112 / 128 + 2 * 3072 / 128)


def test_a_cost_that_does_not_grow_with_n_is_projected_flat():
    """A per-(row, group) quantizer: the same seconds at N = 128 and 256, so about that at the runner's N."""
    assert projected_seconds(run(10.0, 2.0), FULL, NARROW, (run(10.0, 1.9), WIDER)) == pytest.approx(10.0 + 2.0)
    # timing noise is extrapolated as growth (conservative): 0.2 s more at 256 is 0.2 s per 128 columns
    assert projected_seconds(run(10.0,), FULL[:1], NARROW[:1], (run(10.2,), WIDER[:1])) == \
        pytest.approx(10.2 + 0.2 * (2112 - 256) / 128)


def test_a_cost_that_grows_with_n_is_fitted_through_both_runs():
    # 1 s fixed + 1 s per 128 columns: 2 s at 128, 3 s at 256 -> 1 + 2112 / 128 at the runner's N
    assert projected_seconds(run(2.0, 2.0), FULL, NARROW, (run(3.0, 3.0), WIDER)) == \
        pytest.approx((1 + 2112 / 128) + (1 + 3072 / 128))


def test_a_run_that_did_not_finish_projects_nothing():
    assert projected_seconds(RunResult("timeout"), FULL, NARROW) == 0.0


def test_the_cpu_models_build_of_the_files_hip_is_not_projected():
    """zx1993max v27 builds its load_inline extension inside its first call: 12 s of compiler on a cold
    cache, once. Scaled by N it projected the runner's shapes far past the budget, and the official check
    was left NOT RUN; the build's seconds (no_rocm's attempt) are left out of the call's."""
    built = RunResult("ok", records=[{"do": "call", "out": "y0", "seconds": 12.5,
                                      "hip_builds": [{"api": "load_inline", "seconds": 12.0}]},
                                     {"do": "call", "out": "y1", "seconds": 0.25, "hip_builds": []}])
    assert projected_seconds(built, FULL, NARROW) == pytest.approx(0.5 * 2112 / 128 + 0.25 * 3072 / 128)
