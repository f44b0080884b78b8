"""The file reads torch.version as the runner's torch answers it (reference/emulation/runner_torch_version.py).

A real HIP file (CaptnJackSparrow/reference-kernels, runner: test, benchmark and leaderboard passed) builds its
MFMA kernel only ``if torch.version.hip``; here torch.version.hip was None, so its aiter fallback served every
call and the report said nothing of it."""
from __future__ import annotations

import pytest
import torch

from fuzz.search.strategies import Case
from fuzz.submission import checks
from fuzz.submission.runner import SubmissionRunner
from kernels.platform import detect
from reference.emulation import runner_torch_version

ROCM_TORCH = bool(getattr(torch.version, "hip", None))


@pytest.fixture
def view(tmp_path):
    if ROCM_TORCH:
        pytest.skip("a ROCm torch answers torch.version itself")
    path = tmp_path / "submission.py"
    assert runner_torch_version.install(str(path))
    try:
        yield path
    finally:
        runner_torch_version.uninstall()


def _run_as(path, source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, str(path), "exec"), namespace)
    return namespace


def test_the_files_code_reads_the_runners_torch_and_everything_else_this_machines(view, tmp_path):
    real_hip, real_cuda = torch.version.__dict__["hip"], torch.version.__dict__["cuda"]
    seen = _run_as(view, "import torch\nhip = torch.version.hip\ncuda = getattr(torch.version, 'cuda', 'absent')\n"
                         "from torch.version import hip as imported\nhas = hasattr(torch.version, 'hip')\n")
    assert seen["hip"] == seen["imported"] == runner_torch_version.RUNNER_VALUES["hip"] and seen["has"]
    assert seen["cuda"] is None
    beside = _run_as(tmp_path / "helper.py", "import torch\nhip = torch.version.hip\n")  # a module beside the file
    assert beside["hip"] == runner_torch_version.RUNNER_VALUES["hip"]
    elsewhere = _run_as(tmp_path / "sub" / "deeper.py", "import torch\nhip = torch.version.hip\n")
    assert elsewhere["hip"] == real_hip  # not the file's: a package it imports
    assert torch.version.hip == real_hip and torch.version.cuda == real_cuda  # torch, Triton, our code: unchanged
    reads = runner_torch_version.take_reads()
    assert set(reads) >= {"torch.version.hip at line 2", "torch.version.hip at line 4", "torch.version.hip at helper.py line 2"}
    assert reads["torch.version.hip at line 2"] == (real_hip, runner_torch_version.RUNNER_VALUES["hip"])
    assert ("torch.version.cuda at line 3" in reads) == (real_cuda is not None)  # read as None: recorded only if it differs
    assert runner_torch_version.take_reads() == {}


def test_uninstall_puts_torch_version_back(tmp_path):
    if ROCM_TORCH:
        pytest.skip("a ROCm torch answers torch.version itself")
    path = tmp_path / "submission.py"
    runner_torch_version.install(str(path))
    runner_torch_version.uninstall()
    assert type(torch.version).__name__ == "module" and not runner_torch_version.installed()
    assert _run_as(path, "import torch\nhip = torch.version.hip\n")["hip"] == torch.version.__dict__["hip"]


def test_a_file_that_gates_its_path_on_torch_version_hip_takes_the_runners_path(tmp_path):
    """The worker answers the file as the runner's torch: the gated path runs and the report names the read."""
    if ROCM_TORCH:
        pytest.skip("a ROCm torch answers torch.version itself")
    path = tmp_path / "gated.py"
    path.write_text("import torch\n\n\n"
                    "def custom_kernel(data):\n"
                    "    A, B = data[0], data[1]\n"
                    "    if torch.version.hip is None:  # 'the fallback': the runner never takes it\n"
                    "        raise RuntimeError('fallback taken')\n"
                    "    return (A.float() @ B.float().T).to(torch.bfloat16)\n")
    runner = SubmissionRunner(path, aiter="emulated", timeout=120)
    try:
        outcome = checks.check_contract(checks.Context(runner, detect().tier), [Case(2, 64, 64, seed=1)])
        reads = dict(runner.tier_notes.get("torch_version") or {})
    finally:
        runner.close()
    assert outcome is None or outcome.status != "fail", outcome
    assert list(reads) == ["torch.version.hip at line 6"], reads
    assert "'7.1." in reads["torch.version.hip at line 6"]
