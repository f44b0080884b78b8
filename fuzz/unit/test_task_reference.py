"""The task's own reference module as files import it (reference/emulation/task_reference.py): the worker adds
the names our ``reference`` package lacks (ref_kernel, check_implementation) and keeps ours; a file that
imports them loads and passes (it used to be "loads FAIL: cannot import name 'ref_kernel'", a real file the
runner ran)."""
from __future__ import annotations

import types
from pathlib import Path

import pytest

from reference.emulation import task_reference

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_provide_adds_what_is_missing_and_keeps_ours():
    def ours(m, n, k, seed, device="cpu"):
        return device

    package = types.SimpleNamespace(generate_input=ours)
    task_reference.provide(package)
    assert package.generate_input.oracle is ours  # ours, defaulting to the tier's device (the next test)
    assert package.ref_kernel is task_reference.ref_kernel
    assert package.check_implementation is task_reference.check_implementation


@pytest.mark.slow  # a worker
def test_a_file_using_the_task_reference_loads_and_passes():
    from fuzz.submission import checks
    from fuzz.submission.runner import SubmissionRunner
    from fuzz.testing.explicit_plan import TIER

    runner = SubmissionRunner(EXAMPLES / "task_reference_user.py", aiter="emulated", timeout=300)
    try:
        ctx = checks.Context(runner, TIER)
        loads, official = checks.check_loads(ctx), checks.check_official(ctx)
    finally:
        runner.close()
    assert loads.status == "pass", loads.summary
    assert official.status == "pass", official.summary


def test_generate_input_is_made_on_the_tiers_device_unless_the_caller_names_one():
    """The task's generate_input makes its tensors on the GPU; ours defaults to the CPU. A file building inputs at
    import (graphs, warm-ups) gets them on the tier's device; our callers, naming a device, keep theirs."""
    seen = []

    def oracle(m, n, k, seed, device="cpu", scale_pad_fill=0):
        seen.append((m, n, k, seed, device, scale_pad_fill))

    package = types.SimpleNamespace(generate_input=oracle)
    task_reference.provide(package, "cuda")
    package.generate_input(4, 64, 64, 7)
    package.generate_input(m=4, n=64, k=64, seed=7)  # the runner calls it with the test's keyword arguments
    package.generate_input(4, 64, 64, 7, device="cpu", scale_pad_fill=255)
    task_reference.provide(package, "cuda")  # twice (a second worker program): still one wrapper deep
    package.generate_input(4, 64, 64, 8)
    assert seen == [(4, 64, 64, 7, "cuda", 0), (4, 64, 64, 7, "cuda", 0), (4, 64, 64, 7, "cpu", 255),
                    (4, 64, 64, 8, "cuda", 0)]
    assert package.generate_input.oracle is oracle
