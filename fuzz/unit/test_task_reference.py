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
    ours = object()
    package = types.SimpleNamespace(generate_input=ours)
    task_reference.provide(package)
    assert package.generate_input is ours
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
