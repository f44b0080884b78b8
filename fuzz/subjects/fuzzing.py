"""How our kernel paths are fuzzed, as every kernels/ test does it: the subjects of this tier, the
shapes and cases each one is fuzzed with, and ``run_and_judge`` (one case: build, run, assert the
path that served it, the oracle's verdict, a failure card when it fails). Used by fuzz/test_paths.py,
fuzz/test_integrity.py, the NaN table and the GPU benchmark run. A subject this tier cannot run raises
``SubjectUnavailable``; the tests turn it into a skip (fuzz/testing/subjects.py)."""
import time

import torch
from hypothesis import event, strategies as st, target
from hypothesis.control import currently_in_test_context

from fuzz.judge import attribution, verdicts
from fuzz.judge.cards import FailureCard
from fuzz.judge.trace import trace_calls
from fuzz.judge.verdicts import accumulation_model
from fuzz.search import profiles, strategies
from fuzz.search.value_streams import default_stream
from fuzz.subjects.kernel_subjects import all_subjects
from kernels import faults
from kernels.platform import detect
from reference import exact_gemm_from_inputs

SUBJECTS = {s.name: s for s in all_subjects()}
TIER = detect()


class SubjectUnavailable(RuntimeError):
    """The subject cannot run on this tier; the message says why."""


def available_subject(name):
    s = SUBJECTS[name]
    ok, why = s.available()
    if not ok:
        raise SubjectUnavailable(f"{s.name} cannot run on the {TIER.tier} tier: {why}")
    return s


def subject_shapes(subject, production: bool = True):
    """In-contract shapes within the profile's caps that the subject serves (K a multiple of its
    k_multiple), a share of them at production K (``profiles.production_caps``); shrinks toward
    (1, 64, k_multiple)."""
    caps = profiles.shape_caps()
    large = {k: v for k, v in profiles.production_caps().items() if k.startswith("max_")}
    small = st.tuples(
        strategies.rows(caps["max_m"]),
        st.integers(1, caps["max_n"] // 64).map(lambda u: 64 * u),
        st.integers(1, max(1, caps["max_k"] // subject.k_multiple)).map(lambda u: subject.k_multiple * u),
    )
    share = profiles.production_caps()["share"] if production else 0
    return strategies.with_production_k(small, strategies.production_shapes(**large, k_multiple=subject.k_multiple), share)


def subject_cases(subject, production: bool = True):
    specials = strategies.SPECIAL_KINDS if subject.places_nan else tuple(s for s in strategies.SPECIAL_KINDS if "nan" not in s)
    # On a GPU the values are drawn there (the counter stream): drawing B on the host was half of an
    # example's time. The stream is recorded in the case, so a saved case replays the same on any tier.
    return strategies.cases(shapes=subject_shapes(subject, production), specials_kinds=specials,
                            stream=default_stream(TIER.device))


def run_and_judge(subject, case: strategies.Case, phases: dict | None = None):
    """Run subject on case; on failure return a FailureCard (explained), else None. ``phases``, when
    given, accumulates the seconds spent building the inputs, in the subject and in the oracle (the
    device is synchronized between them, so a kernel's time is its own)."""
    clock = _PhaseClock(phases)
    data, meta = case.build(TIER.device)
    clock.lap("build")
    with faults.poison_allocations(), trace_calls() as trace:  # unwritten elements are NaN, never lucky zeros
        y, info = subject.run(data)
    clock.lap("subject")
    assert info.path == subject.expected_path, (
        f"{subject.name} was served by {info.path!r}, expected {subject.expected_path!r}: {subject.last_dispatch}")
    if currently_in_test_context():  # also called outside Hypothesis (corpus replay, regime sweep)
        event(f"{subject.name}: {info.config}")
        target(float(info.splits), label="split-K stripes")
    # The exact product on the tier's device: fp64 products are exact and the sums' error is in the
    # bound, so the verdict does not depend on where it is computed (and a GPU computes it in ms).
    exact = exact_gemm_from_inputs(data, nan=verdicts.nan_results()[0])
    verdict = verdicts.check_product(y, data, splits=info.splits, rounding=info.rounding,
                                   **accumulation_model(), exact=exact)
    clock.lap("oracle")
    if verdict.passed:
        return None
    cpu_data = tuple(t if t is None else t.cpu() for t in data)
    exact = exact_gemm_from_inputs(cpu_data, nan=verdicts.nan_results()[0])
    verdict = verdicts.check_product(y, cpu_data, splits=info.splits, rounding=info.rounding,
                                   **accumulation_model(), exact=exact)
    assert not verdict.passed, f"the oracle's verdict depends on its device ({TIER.device} failed, cpu passed): {case.describe()}"
    official = verdicts.official_verdict(y, verdicts.official_reference(exact))
    findings = attribution.explain(y.cpu(), cpu_data, rounding=info.rounding, splits=info.splits,
                                   **accumulation_model(), exact=exact)
    return FailureCard.from_verdicts(case, subject, TIER.tier, verdict, official, findings,
                                     trace=trace.render().splitlines())


class _PhaseClock:
    """Seconds per phase into a dict (nothing at all when there is none)."""

    def __init__(self, phases: dict | None):
        self.phases = phases
        self.last = time.perf_counter() if phases is not None else 0.0

    def lap(self, name: str) -> None:
        if self.phases is None:
            return
        if TIER.device == "cuda":
            torch.cuda.synchronize()
        now = time.perf_counter()
        self.phases[name] = self.phases.get(name, 0.0) + now - self.last
        self.last = now
