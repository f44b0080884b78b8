"""Failures raised inside the emulated aiter that aiter's own code has at the runner's commit are the
file's (FAIL, the card naming aiter), never our stand-in failing (NOT RUN); a crash of ours stays ours.

The example passes aiter an empty scale slice where N < 32 (fuzz/examples/aiter_preshuffle_empty_scales.py,
the pattern of zx1993max's v55): a null-pointer load inside aiter's kernel, a GPU fault on the runner."""
from __future__ import annotations

import pytest

from fuzz.search.strategies import Case
from fuzz.submission import checks
from fuzz.testing.explicit_plan import EXAMPLES
from fuzz.submission.runner import SubmissionRunner
from kernels.platform import detect

pytestmark = pytest.mark.skipif(not detect().interpreter, reason=(
    "the null-pointer fault is the CPU tier's model (on a GPU the launch faults for real: "
    f"the GPU tier runs it compiled); this is the {detect().describe()}"))


@pytest.fixture(scope="module")
def ctx():
    runner = SubmissionRunner(EXAMPLES / "aiter_preshuffle_empty_scales.py", aiter="emulated", timeout=120)
    try:
        yield checks.Context(runner, "cpu")
    finally:
        runner.close()


def test_a_null_pointer_load_inside_aiters_kernel_is_the_files_device_fault(ctx):
    outcome = checks.check_beyond_contract(ctx, Case(2, 16, 512, seed=1))
    assert outcome.status == "fail", outcome.summary
    assert "illegal memory access" in outcome.summary and "null pointer" in outcome.summary
    assert "inside aiter's own" in outcome.summary


def test_the_same_file_is_correct_at_the_contracts_n(ctx):
    outcome = checks.check_correctness(ctx, Case(2, 64, 512, seed=2))
    assert outcome.status == "pass", outcome.summary
