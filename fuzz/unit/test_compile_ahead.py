"""Compile-ahead helpers (fuzz/submission/compile_ahead.py): how many start, that each runs its share of
the cases through the file and nothing else, that the CPU tier's helpers stop at load, and that stopping
them leaves no process and no folder behind."""
from __future__ import annotations

import json
import os
import time

import pytest

from fuzz.search.strategies import Case
from fuzz.submission import compile_ahead
from fuzz.submission.runner import TASK_FALLBACK, Worker

RECORDER = """
import json, os
def custom_kernel(data):
    A, B = data[0], data[1]
    with open(os.environ["MXFP4_FUZZ_TEST_CALLS"], "a") as f:
        f.write(json.dumps([A.shape[0], B.shape[0], A.shape[1], os.getpid()]) + "\\n")
    return A.new_zeros(A.shape[0], B.shape[0])
"""


@pytest.fixture
def host(monkeypatch, tmp_path):
    """A host of our making: its cores, an empty registry of checks, and whether a GPU device file exists."""
    monkeypatch.delenv(compile_ahead.ENV, raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    for hiding in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        monkeypatch.delenv(hiding, raising=False)  # a host of our making shows its GPU
    monkeypatch.setenv("MXFP4_FUZZ_THREAD_REGISTRY", str(tmp_path / "registry"))
    device_file = tmp_path / "nvidiactl"

    def make(cores: int, gpu: bool):
        monkeypatch.setenv("MXFP4_FUZZ_CORES", str(cores))
        if gpu:
            device_file.write_text("")
        monkeypatch.setattr(compile_ahead, "GPU_DEVICE_FILES", (str(device_file),))

    return make


@pytest.mark.parametrize("cores, gpu, cases, expected", [
    (16, True, 10, compile_ahead.MAX_HELPERS),  # alone on the H200 host: capped
    (4, True, 10, 2),  # four cores: two beyond the check's pytest and worker
    (2, True, 10, 0),  # eight checks on 16 cores get two each: none to spare
    (16, True, 3, 3),  # never more helpers than cases
    (16, False, 10, 0),  # no GPU device file: nothing compiles (the CPU tier interprets)
])
def test_helpers_are_the_spare_cores_of_a_gpu_host(host, cores, gpu, cases, expected):
    host(cores, gpu)
    assert compile_ahead.helper_count(cases) == expected


@pytest.mark.parametrize("variable", ["CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"])
@pytest.mark.parametrize("value", ["", "-1"])
def test_no_helpers_where_the_user_hid_the_gpus(host, monkeypatch, variable, value):
    host(16, True)
    monkeypatch.setenv(variable, value)
    assert compile_ahead.helper_count(10) == 0
    monkeypatch.setenv(variable, "0")  # one GPU pinned (the many-file command does that): helpers as usual
    assert compile_ahead.helper_count(10) == compile_ahead.MAX_HELPERS


def test_the_variable_fixes_the_number(host, monkeypatch):
    host(2, False)
    monkeypatch.setenv(compile_ahead.ENV, "3")
    assert compile_ahead.helper_count(10) == 3
    assert compile_ahead.helper_count(2) == 2
    monkeypatch.setenv(compile_ahead.ENV, "0")
    assert compile_ahead.helper_count(10) == 0
    monkeypatch.setenv(compile_ahead.ENV, "-1")
    with pytest.raises(ValueError, match="must be >= 0"):
        compile_ahead.helper_count(10)


def test_the_runner_cases_are_officials_after_the_first_then_the_benchmarks():
    cases = compile_ahead.runner_cases()
    assert len(cases) == compile_ahead.RUNNER_CASES
    assert [(c.m, c.n, c.k) for c in cases[:4]] == [(16, 3072, 1536), (64, 3072, 1536), (256, 2880, 512),
                                                    (4, 2880, 512)]  # (8, 2112, 7168): the worker's own first


def test_helpers_started_with_the_prelaunched_worker_take_the_first_official_case_too():
    cases = compile_ahead.runner_cases(first=True)
    assert len(cases) == compile_ahead.RUNNER_CASES + 1 and (cases[0].m, cases[0].n, cases[0].k) == (8, 2112, 7168)
    assert [(c.m, c.n, c.k) for c in cases[1:]] == [(c.m, c.n, c.k) for c in compile_ahead.runner_cases()]


def test_the_runner_adopts_the_helpers_prelaunch_started(tmp_path, monkeypatch):
    """The command starts the helpers with its worker, before pytest; the check's runner takes both over
    and starts no second set when the file has loaded."""
    from fuzz.submission import runner as runner_module

    path = tmp_path / "recorder.py"
    path.write_text(RECORDER)
    monkeypatch.setenv("MXFP4_FUZZ_TEST_CALLS", str(tmp_path / "calls.jsonl"))
    monkeypatch.setenv(compile_ahead.ENV, "1")
    runner_module.prelaunch(str(path), "emulated")
    started = runner_module._PRELAUNCHED_AHEAD.get((str(path.resolve()), "emulated"))
    assert started is not None and started.first
    runner = runner_module.SubmissionRunner(path, aiter="emulated", timeout=60, compiles_ahead=True)
    try:
        assert runner.compile_ahead is started and runner.standby is not None
        assert runner.load().ok
        assert runner.compile_ahead is started  # not a second set
        _wait(started)
        from kernels.platform import detect

        if detect().device == "cpu":
            assert compile_ahead.CPU_TIER in started.describe()  # nothing compiles here: it ended at load
        else:  # the first official case too (H100, stop 51: "10 of 10 calls returned")
            assert f"{compile_ahead.RUNNER_CASES + 1} of {compile_ahead.RUNNER_CASES + 1} calls returned" \
                in started.describe(), started.describe()
    finally:
        runner.close()
    assert not runner_module._PRELAUNCHED_AHEAD


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purpose
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait(ahead, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not ahead.finished() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ahead.finished(), ahead.describe()


def test_each_helper_runs_its_share_and_nothing_is_left(tmp_path, monkeypatch):
    path = tmp_path / "recorder.py"
    path.write_text(RECORDER)
    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv("MXFP4_FUZZ_TEST_CALLS", str(calls))
    cases = [Case(2, 64, 64), Case(3, 64, 128), Case(5, 128, 64)]
    ahead = compile_ahead.CompileAhead(str(path), "auto", 2, str(TASK_FALLBACK), Worker, cases=cases, require_gpu=False)
    try:
        _wait(ahead)
    finally:
        ahead.stop()
    seen = [json.loads(line) for line in calls.read_text().splitlines()]
    assert sorted(tuple(s[:3]) for s in seen) == sorted((c.m, c.n, c.k) for c in cases)
    by_helper = {}
    for m, n, k, pid in seen:
        by_helper.setdefault(pid, []).append((m, n, k))
    assert sorted(by_helper.values()) == sorted([[(2, 64, 64), (5, 128, 64)], [(3, 64, 128)]])  # cases[i::2]
    assert "2 of 2 calls returned" in ahead.describe() and "1 of 1 calls returned" in ahead.describe()
    assert not any(_alive(pid) for pid in by_helper)
    assert not os.path.exists(ahead.folder.name)


def test_on_the_cpu_tier_a_helper_ends_at_load(tmp_path, monkeypatch):
    path = tmp_path / "recorder.py"
    path.write_text(RECORDER)
    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv("MXFP4_FUZZ_TEST_CALLS", str(calls))
    ahead = compile_ahead.CompileAhead(str(path), "auto", 1, str(TASK_FALLBACK), Worker, cases=[Case(2, 64, 64)])
    try:
        _wait(ahead)
    finally:
        ahead.stop()
    if ahead.outcomes != [compile_ahead.CPU_TIER]:
        pytest.skip(f"this host has a GPU: the helper did not stop at load ({ahead.describe()})")
    assert not calls.exists()
    assert "ended at load" in ahead.describe()


def test_stop_ends_a_helper_still_running(tmp_path, monkeypatch):
    path = tmp_path / "sleeper.py"
    path.write_text("import time\ndef custom_kernel(data):\n    time.sleep(600)\n")
    ahead = compile_ahead.CompileAhead(str(path), "auto", 1, str(TASK_FALLBACK), Worker, cases=[Case(2, 64, 64)],
                                       require_gpu=False)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not ahead.workers[0].process.pid:
        time.sleep(0.05)
    time.sleep(2.0)  # loaded and inside the call by now, or nearly
    pid = ahead.workers[0].process.pid
    started = time.monotonic()
    ahead.stop()
    assert time.monotonic() - started < 10
    assert ahead.finished()
    assert pid and not _alive(pid)
    assert ahead.outcomes == [compile_ahead.ENDED]  # the check's doing, not the helper's death
