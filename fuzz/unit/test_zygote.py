"""Workers forked from the warm zygote are the workers a plain start gives: same environment, working
directory, argv, thread budget and stdio, and on a GPU host the same working CUDA device; their exit
status and death by signal reach the runner."""
from __future__ import annotations

import json
import os
import signal

import pytest
import torch

from fuzz.submission import zygote
from fuzz.submission.runner import SubmissionRunner

pytestmark = pytest.mark.skipif(not zygote.enabled(), reason="no zygote here (not Linux, or turned off)")

OBSERVER = """
import json, os, sys, threading
import torch
json.dump({"cwd": os.getcwd(), "marker": os.environ.get("MXFP4_FUZZ_TEST_MARKER"), "argv0": sys.argv[0],
           "threads": torch.get_num_threads(), "pid": os.getpid(), "sid": os.getsid(0),
           "stdin": os.path.realpath("/proc/self/fd/0"), "alive_threads": threading.active_count(),
           # CUDA initialised after the fork: a kernel runs and its result comes back (None without a GPU)
           "cuda": torch.arange(4.0, device="cuda").square().sum().item() if torch.cuda.is_available() else None,
           "cuda_initialised_here": torch.cuda.is_initialized()},
          open(os.environ["MXFP4_FUZZ_TEST_OUT"], "w"))
print("said on stdout")
def custom_kernel(data):
    if os.environ.get("MXFP4_FUZZ_TEST_CRASH"):
        os.kill(os.getpid(), signal.SIGSEGV)
    raise RuntimeError("not for calling")
import signal
"""


def _observe(tmp_path, name: str, plain: bool, monkeypatch) -> dict:
    path = tmp_path / "observer.py"
    path.write_text(OBSERVER)
    out = tmp_path / f"{name}.json"
    if plain:  # this process's workers start as plain processes from here on
        monkeypatch.setitem(zygote._ZYGOTE, "zygote", None)
    runner = SubmissionRunner(path, aiter="emulated", timeout=60,
                              env={"MXFP4_FUZZ_TEST_MARKER": name, "MXFP4_FUZZ_TEST_OUT": str(out)})
    try:
        report = runner.load()
        assert report.ok, report.describe_error()
        process = runner.worker.process
        seen = json.loads(out.read_text())
        seen["forked"] = isinstance(process, zygote.ZygoteProcess)
        runner.worker._drain(0.5)
        seen["stdout"] = runner.worker.stdout.since(0)[0]
    finally:
        runner.close()
    return seen


def test_a_forked_worker_sees_what_a_plain_one_sees(tmp_path, monkeypatch):
    forked = _observe(tmp_path, "forked", False, monkeypatch)
    plain = _observe(tmp_path, "plain", True, monkeypatch)
    assert forked.pop("forked") and not plain.pop("forked")
    assert forked.pop("marker") == "forked" and plain.pop("marker") == "plain"
    for seen in (forked, plain):
        assert seen.pop("sid") == seen.pop("pid")  # its own session: a timeout kills its whole group
        seen.pop("alive_threads")  # the worker's own watchdog threads, not compared
    assert forked == plain
    if torch.cuda.is_available():
        assert forked["cuda"] == 14.0 and forked["cuda_initialised_here"]


def test_a_forked_workers_death_by_signal_reaches_the_runner(tmp_path, monkeypatch):
    path = tmp_path / "observer.py"
    path.write_text(OBSERVER)
    runner = SubmissionRunner(path, aiter="emulated", timeout=60,
                              env={"MXFP4_FUZZ_TEST_OUT": str(tmp_path / "o.json")})
    try:
        assert runner.load().ok
        worker = runner.worker
        assert isinstance(worker.process, zygote.ZygoteProcess)
        assert worker.process.poll() is None
        os.kill(worker.process.pid, signal.SIGKILL)
        assert worker.process.wait(timeout=30) == -signal.SIGKILL
    finally:
        runner.close()


def test_the_zygote_is_off_when_asked(monkeypatch):
    monkeypatch.setenv(zygote.ENV, "0")
    assert not zygote.enabled()


def test_a_zygote_that_ends_before_forking_leaves_a_plain_worker_not_a_death(tmp_path, monkeypatch):
    """The fork is asked for without waiting (the prelaunch); a zygote that then ends without forking
    answers pid 0, and the runner starts that worker as a plain process: the file loads, nothing died."""
    from fuzz.submission.runner import OUTPUT_CAP, PACKAGE_ROOT, Worker

    path = tmp_path / "observer.py"
    path.write_text(OBSERVER)
    env = {"MXFP4_FUZZ_TEST_OUT": str(tmp_path / "o.json")}
    dying = zygote.Zygote(str(PACKAGE_ROOT), dict(os.environ, **env))
    monkeypatch.setitem(zygote._ZYGOTE, "zygote", dying)
    runner = SubmissionRunner(path, aiter="emulated", timeout=60, env=env)
    try:
        runner.standby = Worker(OUTPUT_CAP, env=env)  # asked of the zygote, still importing torch
        runner.standby.send({"op": "load", "path": str(path), "aiter": "emulated", "device": runner.device,
                             "task_fallback": str(tmp_path)})
        assert isinstance(runner.standby.process, zygote.ZygoteProcess)
        dying.process.kill()
        dying.process.wait(30)
        report = runner.load()
        assert report.ok, report.describe_error()
        assert not isinstance(runner.worker.process, zygote.ZygoteProcess)  # started plainly
        assert zygote._ZYGOTE["zygote"] is None  # and so are the workers after it
    finally:
        runner.close()


def test_a_poisoned_fork_falls_back_to_plain_workers(tmp_path, monkeypatch):
    """Something in the zygote may start CUDA's driver without torch.cuda.is_initialized() saying so (importing
    torch.utils.cpp_extension where CUDA_HOME exists asks torch.cuda.is_available(): every check failed to load
    on the H100 host, stop 50). The worker then answers torch's "Cannot re-initialize CUDA in forked
    subprocess": the runner turns the zygote off and starts that worker again as a plain process."""
    from fuzz.submission import runner as runner_module

    path = tmp_path / "observer.py"
    path.write_text(OBSERVER)
    stock = runner_module.Worker.receive
    poisoned = []

    def receive(self, timeout):
        answer = stock(self, timeout)
        if isinstance(self.process, zygote.ZygoteProcess) and not poisoned:
            poisoned.append(self.process.pid)
            return {"internal": "Traceback ...\nRuntimeError: Cannot re-initialize CUDA in forked subprocess. To use "
                                "CUDA with multiprocessing, you must use the 'spawn' start method"}
        return answer

    monkeypatch.setattr(runner_module.Worker, "receive", receive)
    before = dict(zygote._ZYGOTE)  # this test turns the zygote off: later tests get it back as it was
    runner = SubmissionRunner(path, aiter="emulated", timeout=60, env={"MXFP4_FUZZ_TEST_OUT": str(tmp_path / "o.json")})
    try:
        report = runner.load()
        assert poisoned and report.ok, report.describe_error()
        assert not isinstance(runner.worker.process, zygote.ZygoteProcess)
    finally:
        runner.close()
        zygote._ZYGOTE.clear()
        zygote._ZYGOTE.update(before)


STDLIB_JIT = """
import torch
import triton
import triton.language as tl


@triton.jit
def _row_max(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(y_ptr, tl.max(tl.abs(tl.load(x_ptr + offsets)), axis=0))  # tl.max: one of Triton's own @jit


def custom_kernel(data):
    A = data[0]
    y = torch.zeros(1, dtype=torch.float32, device=A.device)
    _row_max[(1,)](A[0, :32].float().contiguous(), y, BLOCK=32)
    return y
"""

AS_THE_COMMAND = """
import json, os, sys
os.environ.pop("TRITON_INTERPRET", None)  # the command line asks for its worker before anything chose the mode
from fuzz.submission import runner
from fuzz.submission.program import Program
from fuzz.search.strategies import Case
runner.prelaunch(sys.argv[1], "emulated")
r = runner.SubmissionRunner(sys.argv[1], aiter="emulated", timeout=60)
program = Program()
program.build("d", Case(2, 64, 64, seed=1))
program.call("d", "y")
result = r.run(program.steps)
print(json.dumps([c.get("exception", {}).get("message") for c in result.calls()]))
r.close()
"""


def test_a_worker_the_command_asked_for_before_choosing_the_tier_runs_tritons_own_jit_functions(tmp_path):
    """The command starts the zygote before anything imported torch to choose the Triton mode: a zygote that
    preloaded Triton then gave every CPU-tier worker compiled stdlib @jit functions, and a kernel calling
    tl.max raised "Cannot call @triton.jit'd outside of the scope of a kernel" (stop 51: godzmk's official)."""
    import subprocess
    import sys

    from fuzz.submission.runner import PACKAGE_ROOT

    path = tmp_path / "stdlib_jit.py"
    path.write_text(STDLIB_JIT)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", AS_THE_COMMAND, str(path)], capture_output=True, text=True,
                          timeout=300, cwd=PACKAGE_ROOT, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [None], done.stdout[-2000:]
