"""The uninitialised verdict: memory from torch.empty* poisoned with two bytes must leave the output
unchanged. A split-K accumulating into torch.empty and a K padding never written fail and name their
allocating line; files that
allocate with torch.empty and write all of it (aiter's public API, a workspace made at import) pass."""
from __future__ import annotations

import pytest

from fuzz.search.strategies import Case
from fuzz.submission import checks
from fuzz.submission.runner import SubmissionRunner
from fuzz.testing.explicit_plan import EXAMPLES, TIER

pytestmark = pytest.mark.slow  # a worker per example


def _uninitialised(name: str, case: Case) -> checks.Outcome:
    runner = SubmissionRunner(EXAMPLES / name, aiter="emulated", timeout=60)
    try:
        return checks.check_uninitialised(checks.Context(runner, TIER), case)
    finally:
        runner.close()


def _line_of(name: str, text: str) -> int:
    return next(i for i, line in enumerate((EXAMPLES / name).read_text().splitlines(), 1) if text in line)


def test_accumulating_into_torch_empty_fails_and_names_the_line():
    outcome = _uninitialised("accumulates_into_empty.py", Case(3, 64, 256, seed=1))
    assert outcome.status == "fail", outcome.summary
    line = _line_of("accumulates_into_empty.py", "torch.empty((a.shape[0]")
    assert f"allocated at line {line} " in outcome.summary
    assert "elements differ between torch.empty* filled with 0xFF and with 0x00" in outcome.summary


def test_a_padding_never_written_fails_and_names_the_helper_line():
    """The padding is allocated in a module beside the submission: the card names that file and line."""
    outcome = _uninitialised("k_tail_padding_uninitialised.py", Case(3, 64, 128, seed=3))  # K padded to 256
    assert outcome.status == "fail", outcome.summary
    line = _line_of("k_tail_padding.py", "a = allocate(")
    assert f"allocated at k_tail_padding.py line {line} " in outcome.summary, outcome.summary


@pytest.mark.parametrize("name", ["k_tail_padding.py", "correct_reference_style.py", "aiter_public_api.py", "cuda_prewarm.py"])
def test_files_that_write_what_they_allocate_pass(name):
    outcome = _uninitialised(name, Case(5, 128, 320, seed=2))
    assert outcome.status == "pass", outcome.summary


def test_memory_from_below_the_python_allocators_is_poisoned_too(tmp_path):
    """``x.new(m, n)`` (a legacy constructor, as ``torch.Tensor(m, n)`` or C++'s ``torch::empty``) never
    passes through torch.empty*: c10's CPU allocator fills it (junk words, then zeros), so a split-K
    accumulating into it fails, every time. Without the fill it read whatever the heap held: a pass or a fail by chance."""
    import shutil

    from fuzz.submission import poison

    if not poison.c10_fill_available():
        pytest.skip("this torch exports no c10 allocator fill flags")
    shutil.copy(EXAMPLES / "correct_reference_style.py", tmp_path)
    source = (EXAMPLES / "accumulates_into_empty.py").read_text()
    bug = "acc = torch.empty((a.shape[0], b.shape[0]), dtype=torch.float32, device=A.device)"
    assert bug in source
    (tmp_path / "legacy_new.py").write_text(source.replace(bug, "acc = b.float().new(a.shape[0], b.shape[0])"))
    runner = SubmissionRunner(tmp_path / "legacy_new.py", aiter="emulated", timeout=60)
    try:
        outcome = checks.check_uninitialised(checks.Context(runner, TIER), Case(3, 64, 256, seed=1))
    finally:
        runner.close()
    assert outcome.status == "fail", outcome.summary
    assert "allocated at none in the file itself" in outcome.summary
