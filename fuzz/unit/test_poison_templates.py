"""A poisoned program (the uninitialised verdict's) runs each part in a child of a template that executed the
file once under that part's pattern (worker.poison_parts, PoisonTemplate): the same verdicts and outputs as
executing the file afresh per example, the import paid once per pattern, import-time allocations poisoned."""
from __future__ import annotations

import os

import pytest

from fuzz.search.strategies import Case
from fuzz.submission import checks
from fuzz.submission.worker import poison_parts
from fuzz.testing.explicit_plan import TIER

pytestmark = pytest.mark.slow  # a worker per check

# A workspace made at import and never written: its bytes reach the output (a FAIL only if the import's
# allocations are poisoned); IMPORTS counts the file's executions.
READS_ITS_IMPORT_WORKSPACE = '''
import os
import torch

with open(os.environ["MXFP4_FUZZ_TEST_IMPORTS"], "a") as log:
    log.write("executed\\\\n")
WORKSPACE = torch.empty(64, dtype=torch.float32)


def custom_kernel(data):
    A, B = data[0], data[1]
    y = torch.zeros(A.shape[0], B.shape[0], dtype=torch.float32, device=A.device)
    return (y + WORKSPACE[0]).to(torch.bfloat16)
'''


def step(do, **fields):
    return {"do": do, **fields}


def test_the_cuts():
    part = [step("poison", pattern="ff"), step("reload"), step("build", slot="a"), step("call", slot="a", out="y")]
    other = [step("poison", pattern="00"), step("reload"), step("build", slot="b"), step("call", slot="b", out="z")]
    assert poison_parts([step("reload"), *part, *other]) == [(1, "ff", part), (5, "00", other)]
    assert poison_parts([step("reload"), step("build", slot="a")]) is None  # no poison
    shared = [step("poison", pattern="00"), step("reload"), step("call", slot="a", out="z")]
    assert poison_parts([step("reload"), *part, *shared]) is None  # a part using another's slot
    twice = [*part[:2], step("reload"), *part[2:]]
    assert poison_parts([step("reload"), *twice]) is None  # a second fresh module inside a part


def _uninitialised(tmp_path, source: str, templates: str, cases: list) -> tuple:
    from fuzz.submission.runner import SubmissionRunner

    path = tmp_path / "subject.py"
    path.write_text(source)
    imports = tmp_path / f"imports_{templates}.txt"
    env = {"MXFP4_FUZZ_FORK": "1", "MXFP4_FUZZ_POISON_TEMPLATES": templates, "MXFP4_FUZZ_TEST_IMPORTS": str(imports)}
    runner = SubmissionRunner(path, aiter="emulated", timeout=120, env=env)
    try:
        outcomes = [checks.check_uninitialised(checks.Context(runner, TIER), case) for case in cases]
    finally:
        runner.close()
    return outcomes, imports.read_text().count("executed")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_templates_judge_as_executing_the_file_afresh_and_import_once_per_pattern(tmp_path):
    from kernels.platform import detect

    if detect().device != "cpu":
        pytest.skip("the worker forks only on the CPU tier (CUDA does not survive a fork)")
    cases = [Case(2, 64, 64, seed=1), Case(3, 64, 128, seed=2), Case(5, 128, 64, seed=3)]
    with_templates, executed = _uninitialised(tmp_path, READS_ITS_IMPORT_WORKSPACE, "1", cases)
    afresh, executed_afresh = _uninitialised(tmp_path, READS_ITS_IMPORT_WORKSPACE, "0", cases)
    assert [o.status for o in with_templates] == [o.status for o in afresh] == ["fail"] * 3
    assert executed == 1 + 2  # the load, then one import per pattern for all three examples
    assert executed_afresh == 1 + 2 * 3  # the load, then two imports per example
    clean = READS_ITS_IMPORT_WORKSPACE.replace("torch.empty(64", "torch.zeros(64")
    passed, _ = _uninitialised(tmp_path, clean, "1", cases[:1])
    assert [o.status for o in passed] == ["pass"], passed[0].summary


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_an_import_that_fails_under_a_poison_ends_the_program_as_executing_afresh_does(tmp_path):
    from kernels.platform import detect

    if detect().device != "cpu":
        pytest.skip("the worker forks only on the CPU tier (CUDA does not survive a fork)")
    refuses_nan = READS_ITS_IMPORT_WORKSPACE.replace(
        "WORKSPACE = torch.empty(64, dtype=torch.float32)",
        "WORKSPACE = torch.empty(64, dtype=torch.float32)\n"
        "assert int(WORKSPACE.view(torch.int32)[0]) != -1, 'poisoned'")  # 0xFF bytes; the unpoisoned load passes
    cases = [Case(2, 64, 64, seed=1), Case(3, 64, 128, seed=2)]
    with_templates, _ = _uninitialised(tmp_path, refuses_nan, "1", cases)
    afresh, _ = _uninitialised(tmp_path, refuses_nan, "0", cases)
    assert [(o.status, o.summary) for o in with_templates] == [(o.status, o.summary) for o in afresh]
    assert with_templates[0].status == "fail", with_templates[0].summary  # it raised KeyError in the check before
    assert "with torch.empty* filled with 0xFF it raised AssertionError: poisoned" in with_templates[0].summary
