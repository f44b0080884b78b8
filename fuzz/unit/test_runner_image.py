"""Imports judged by the runner's image (reference/emulation/runner_image.py): a module the runner has
and this machine lacks is NOT RUN naming its package; a module neither has fails, as on the runner."""
from __future__ import annotations

import importlib.util

import pytest

from fuzz.submission import checks
from fuzz.testing.explicit_plan import EXAMPLES, TIER
from fuzz.submission.runner import SubmissionRunner
from reference.emulation.runner_image import runner_has


def test_the_image_names_the_package_behind_each_module():
    assert runner_has("_mlir") == runner_has("_mlir.ir") == runner_has("flydsl") == "flydsl"
    assert runner_has("triton") == "pytorch-triton-rocm" and runner_has("aiter_meta") == "aiter"
    assert runner_has("no_such_package_anywhere") is None


def _loads(path) -> checks.Outcome:
    runner = SubmissionRunner(path, aiter="emulated")
    try:
        return checks.check_loads(checks.Context(runner, TIER))
    finally:
        runner.close()


@pytest.mark.slow  # a worker
@pytest.mark.skipif(importlib.util.find_spec("_mlir") is not None, reason="this machine has _mlir (flydsl)")
def test_a_package_only_the_runner_has_is_not_run_naming_it():
    outcome = _loads(EXAMPLES / "runner_only_package.py")
    assert outcome.status == "not_run", outcome.summary
    assert "the runner has flydsl (_mlir), this machine does not" in outcome.summary


@pytest.mark.slow  # a worker
def test_a_module_the_runner_lacks_too_fails_as_on_the_runner(tmp_path):
    path = tmp_path / "imports_nothing_real.py"
    path.write_text("import mxfp4_fuzz_no_such_module\n\ndef custom_kernel(data):\n    return data[0]\n")
    outcome = _loads(path)
    assert outcome.status == "fail", outcome.summary
    assert "No module named 'mxfp4_fuzz_no_such_module'" in outcome.summary
