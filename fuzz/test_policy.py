"""The expected-path policy on a real benchmark shape: the dispatcher must serve it from the path
kernels/path_policy.json names for this tier. A fallback that keeps results correct but serves a
benchmark shape from a slower path is a perf regression no correctness check sees.

On the CPU tier only the cheapest benchmark shape runs (the interpreter needs ~5 s for it)."""
import pytest

from fuzz.judge.policy import check_policy, load_policy
from fuzz.subjects.fuzzing import TIER
from kernels import configs, dispatch, fused
from reference import generate_input

BENCHMARKS = configs.OFFICIAL_SHAPES[4:]
AFFORDABLE = BENCHMARKS[:1] if TIER.interpreter else BENCHMARKS


@pytest.mark.parametrize("shape", AFFORDABLE, ids=lambda s: "x".join(map(str, s)))
def test_benchmark_shape_is_served_by_the_policy_path(shape):
    ok, why = fused.requirements()
    if not ok:
        pytest.skip(why)
    load_policy()
    d = dispatch.Dispatcher()
    d(generate_input(*shape, seed=0, device=TIER.device))
    check_policy(d.last, TIER.tier)
