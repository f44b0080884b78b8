"""Every path of kernels/ that can run on this tier, fuzzed against the oracle ladder.

Each test draws a ``Case`` (shape, layout of A, value regimes, special values, scale padding), runs
one subject, asserts which path served it, and checks the output against the exact product within
the derived bound. A failure is shrunk by Hypothesis, explained (attribution), saved to
fuzz/corpus/ and reported as a failure card with the official 1e-2 verdict beside ours.
"""
import time

import pytest
import torch
from hypothesis import event, given, strategies as st, target
from hypothesis.control import current_build_context, currently_in_test_context

from fuzz import attribution, corpus, oracle, profiles, strategies
from fuzz.cards import FailureCard
from fuzz.subjects import accumulation_model, all_subjects
from fuzz.trace import trace_calls
from fuzz.value_streams import default_stream
from kernels import faults
from kernels.platform import detect

SUBJECTS = {s.name: s for s in all_subjects()}
TIER = detect()


def available_subject(name):
    s = SUBJECTS[name]
    ok, why = s.available()
    if not ok:
        pytest.skip(f"{s.name} cannot run on the {TIER.tier} tier: {why}")
    return s


@pytest.fixture(params=sorted(SUBJECTS), scope="module")
def subject(request):
    return available_subject(request.param)


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
    exact = oracle.exact_gemm_from_inputs(data, nan=oracle.nan_results()[0])
    verdict = oracle.check_product(y, data, splits=info.splits, rounding=info.rounding,
                                   **accumulation_model(), exact=exact)
    clock.lap("oracle")
    if verdict.passed:
        return None
    cpu_data = tuple(t if t is None else t.cpu() for t in data)
    exact = oracle.exact_gemm_from_inputs(cpu_data, nan=oracle.nan_results()[0])
    verdict = oracle.check_product(y, cpu_data, splits=info.splits, rounding=info.rounding,
                                   **accumulation_model(), exact=exact)
    assert not verdict.passed, f"the oracle's verdict depends on its device ({TIER.device} failed, cpu passed): {case.describe()}"
    official = oracle.official_verdict(y, oracle.official_reference(exact))
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


class WrongProduct(AssertionError):
    """A kernel path's output failed the oracle; the message is the failure card."""


def report(card: FailureCard, case):
    """Save the minimal case (only on Hypothesis's final replay, not on every shrink step) and fail
    with the card's failure class as the exception type (``KTermsMissingWrongProduct``, ...), so that
    Hypothesis shrinks and reports each kind of wrong separately instead of the first bug hiding the
    others."""
    __tracebackhide__ = True  # pytest shows the card, not this frame
    if not currently_in_test_context() or current_build_context().is_final:
        path = corpus.save(case, card)
        card = FailureCard(**{**card.__dict__, "corpus_file": str(path.relative_to(corpus.CORPUS_DIR.parents[1]))})
    raise attribution.failure_exception(card.failure_class, WrongProduct)(card.render())


@given(data=st.data())
def test_path_output_within_the_bound(subject, data):
    case = data.draw(subject_cases(subject), label="case")
    card = run_and_judge(subject, case)
    if card is not None:
        report(card, case)


@pytest.mark.parametrize("operand", ["A", "B"])
@pytest.mark.parametrize("regime", strategies.REGIME_NAMES)
def test_every_regime_once_through_the_dispatcher(regime, operand):
    """A deterministic sweep: each value regime, on each operand, once, on a shape with a K tail
    (K % 256 != 0) and an N tail (N % 128 != 0). Random generation may not draw a rare regime in a
    short run; this sweep always does."""
    subject = SUBJECTS["dispatch"]
    ok, why = subject.available()
    if not ok:
        pytest.skip(why)
    regimes = {"a_regime": regime} if operand == "A" else {"b_regime": regime}
    case = strategies.Case(3, 192, 320, **regimes, seed=7)
    card = run_and_judge(subject, case)
    if card is not None:
        pytest.fail(card.render(), pytrace=False)


@given(data=st.data())
def test_stage_a_quantization_is_bit_exact(subject, data):
    if subject.quantize_a is None:
        pytest.skip(f"{subject.name} exposes no A quantizer")
    case = data.draw(subject_cases(subject, production=False), label="case")  # per group: K's size is moot
    A = case.build(TIER.device)[0][0]
    packed, scales = subject.quantize_a(A)
    verdict = oracle.check_stage_a_quant(packed.cpu(), scales.cpu(), A.cpu())
    if not verdict.passed:
        report(FailureCard.from_verdicts(case, subject, TIER.tier, verdict), case)


def test_replayed_corpus_case(corpus_case):
    """Saved failures run first (``pytest fuzz`` collects this file's corpus cases before generating)."""
    failures = []
    for subject in SUBJECTS.values():
        if not subject.available()[0] or corpus_case.k % subject.k_multiple:
            continue
        card = run_and_judge(subject, corpus_case)
        if card is not None:
            failures.append(card.render())
    assert not failures, "\n\n".join(failures)
