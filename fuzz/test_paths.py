"""Every path of kernels/ that can run on this tier, fuzzed against the oracle ladder.

Each test draws a ``Case`` (shape, layout of A, value regimes, special values, scale padding), runs
one subject, asserts which path served it, and checks the output against the exact product within
the derived bound. A failure is shrunk by Hypothesis, explained (attribution), saved to
fuzz/corpus/ and reported as a failure card with the official 1e-2 verdict beside ours.
"""
import pytest
from hypothesis import given, strategies as st
from hypothesis.control import current_build_context, currently_in_test_context

from fuzz.judge import attribution, verdicts
from fuzz.judge.cards import FailureCard
from fuzz.search import strategies
from fuzz.subjects import corpus
from fuzz.subjects.fuzzing import SUBJECTS, TIER, run_and_judge, subject_cases
from fuzz.testing.subjects import available_or_skip


@pytest.fixture(params=sorted(SUBJECTS), scope="module")
def subject(request):
    return available_or_skip(request.param)


class WrongProduct(AssertionError):
    """A kernel path's output failed the oracle; the message is the failure card."""


def report(card: FailureCard, case):
    """Save the minimal case (only on Hypothesis's final replay, not on every shrink step) and fail
    with the card's failure class as the exception type (``KTermsMissingWrongProduct``, ...), so that
    Hypothesis shrinks and reports each kind of wrong separately instead of the first bug hiding the
    others."""
    __tracebackhide__ = True  # pytest shows the card, not this frame
    if not currently_in_test_context() or current_build_context().is_final:
        root = corpus.CORPUS_DIR.parents[1]
        png = corpus.save_map(case, card)  # the error map beside the case, before the card names it
        card = FailureCard(**{**card.__dict__, "error_map_png": str(png.relative_to(root)) if png else ""})
        path = corpus.save(case, card)
        card = FailureCard(**{**card.__dict__, "corpus_file": str(path.relative_to(root))})
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
    verdict = verdicts.check_stage_a_quant(packed.cpu(), scales.cpu(), A.cpu())
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
