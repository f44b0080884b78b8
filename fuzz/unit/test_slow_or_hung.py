"""Slow is not hung: the rule that decides when a submission's worker is killed (``patience.py``), the
worker's progress counters (``progress.py``), and the parent's receive loop on real pipes with tiny
fake workers that report progress on a schedule (no torch in them: each starts in milliseconds)."""
from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from fuzz.submission import progress
from fuzz.testing import fake_worker
from fuzz.submission.patience import OWN_STEP_SECONDS, RATE_SECONDS, Patience
from fuzz.submission.runner import RunResult, Worker


def report(step=1, launches=1, programs=0, grid=None, grid_done=0, seconds=0.0, launch_seconds=0.0,
           ours=False) -> dict:
    return {"progress": step, "ours": ours, "launches": launches, "programs": programs, "kernel": "quantize", "grid": grid,
            "grid_done": grid_done, "seconds": seconds, "launch_seconds": launch_seconds}


# ---------------------------------------------------------------------------------------------------
# The rule, on made-up timelines (seconds from the program's start)


def test_a_program_that_keeps_progressing_outlives_its_timeout():
    patience = Patience(timeout=10, hard_cap=100, start=0.0)
    for t in range(1, 50):
        patience.observe(report(programs=t), float(t))
        assert patience.verdict(t + 0.5) is None
    assert patience.wait(49.5) == pytest.approx(9.5)  # the next deadline: 10 s after the last progress


def test_no_progress_for_the_timeout_is_a_hang_even_after_progress():
    patience = Patience(timeout=10, hard_cap=100, start=0.0)
    patience.observe(report(programs=5), 3.0)
    assert patience.verdict(12.9) is None
    assert patience.verdict(13.0) == "timeout"
    assert Patience(timeout=10, hard_cap=100, start=0.0).verdict(10.0) == "timeout"  # never any progress


def test_a_step_of_ours_that_takes_longer_than_the_timeout_is_not_the_submission_hanging():
    """Building the inputs on a loaded machine: the hang rule waits OWN_STEP_SECONDS, then the call that
    follows is held to the timeout again."""
    patience = Patience(timeout=5, hard_cap=600, start=0.0)
    patience.observe(report(step=1, launches=0, ours=True), 1.0)
    assert patience.verdict(30.0) is None and patience.wait(30.0) == pytest.approx(1.0 + OWN_STEP_SECONDS - 30.0)
    assert patience.verdict(1.0 + OWN_STEP_SECONDS) == "timeout"  # ours, but stuck far too long
    patience.observe(report(step=2, launches=0), 40.0)  # the call begins
    assert patience.verdict(44.9) is None and patience.verdict(45.0) == "timeout"


def test_a_report_that_moves_no_counter_is_not_progress():
    patience = Patience(timeout=10, hard_cap=100, start=0.0)
    patience.observe(report(programs=5, seconds=1.0), 1.0)
    patience.observe(report(programs=5, seconds=9.0), 9.0)  # same counters, later
    assert patience.verdict(11.0) == "timeout"


def test_an_estimate_beyond_the_hard_cap_is_too_slow_once_the_timeout_has_passed():
    patience = Patience(timeout=10, hard_cap=100, start=0.0)
    patience.observe(report(programs=50, grid=10_000, grid_done=50, launch_seconds=5.0), 5.0)
    assert patience.estimate(5.0) == pytest.approx(5.0 + 9950 * 0.1)
    assert patience.verdict(9.0) is None  # within the timeout nothing changes: a fast call is never judged
    patience.observe(report(programs=90, grid=10_000, grid_done=90, launch_seconds=9.0), 9.5)
    assert patience.verdict(10.0) == "too_slow"


def test_an_estimate_within_the_hard_cap_is_waited_for():
    patience = Patience(timeout=10, hard_cap=100, start=0.0)
    patience.observe(report(programs=60, grid=100, grid_done=60, launch_seconds=6.0), 6.0)
    assert patience.estimate(6.0) == pytest.approx(10.0)
    patience.observe(report(programs=95, grid=100, grid_done=95, launch_seconds=9.5), 9.5)
    assert patience.verdict(10.5) is None


def test_no_estimate_before_the_launch_has_run_for_a_while():
    patience = Patience(timeout=10, hard_cap=100, start=0.0)
    patience.observe(report(programs=2, grid=10**9, grid_done=2, launch_seconds=RATE_SECONDS / 2), 9.9)
    assert patience.estimate(10.0) is None and patience.verdict(10.0) is None


def test_reaching_the_hard_cap_while_progressing_is_too_slow():
    patience = Patience(timeout=10, hard_cap=30, start=0.0)
    for t in range(1, 30):
        patience.observe(report(launches=t), float(t))  # compiled launches: no grid, no estimate
    assert patience.verdict(29.9) is None
    assert patience.verdict(30.0) == "too_slow"


def test_without_a_hard_cap_above_the_timeout_progress_does_not_extend_it():
    """The GPU default (hard cap = timeout): today's fixed timeout, progress or not."""
    patience = Patience(timeout=10, hard_cap=10, start=0.0)
    patience.observe(report(programs=9), 9.0)
    assert patience.verdict(10.0) == "timeout"
    assert Patience(timeout=10, hard_cap=5, start=0.0).hard_cap == 10


def test_the_words_for_hung_slow_and_too_slow():
    hung = RunResult("timeout", seconds=13, timeout=10, hard_cap=100,
                     progress={"programs": 7, "launches": 2, "kernel": "quantize", "since_progress": 10.0})
    assert hung.describe_death() == ("timeout: no progress for 10 s (hung, not slow), worker killed (before that: "
                                     "7 interpreted Triton programs in 2 launches, the last of quantize)")
    fixed = RunResult("timeout", seconds=10, timeout=10, hard_cap=10, progress={"since_progress": 0.5})
    assert fixed.describe_death() == "timeout: no answer within 10 s, worker killed"
    too_slow = RunResult("too_slow", seconds=12, timeout=10, hard_cap=100, progress={
        "programs": 1200, "launches": 1, "kernel": "quantize", "grid": 100_000, "grid_done": 1200, "rate": 100.0,
        "estimate": 1000.4})
    assert too_slow.describe_death() == (
        "too slow (estimated at least 1000 s, hard cap 100 s): 1200 interpreted Triton programs in 12 s, "
        "100 programs/s; 1200 of 100000 programs of quantize done; worker killed")
    slow = RunResult("ok", seconds=42, timeout=10, hard_cap=100, progress={"programs": 4200, "launches": 4, "rate": 100.0})
    assert slow.slow_note() == ("slow: 42 s, over the 10 s timeout but never that long without progress; "
                                "4200 interpreted Triton programs in 4 launches, 100 programs/s")
    assert RunResult("ok", seconds=9, timeout=10).slow_note() == ""


# ---------------------------------------------------------------------------------------------------
# The worker's counters


def test_interpreted_program_instances_and_launches_are_counted(monkeypatch):
    import triton
    import triton.language as tl
    import torch
    from triton.runtime import interpreter
    from triton.runtime.jit import JITFunction

    import kernels  # noqa: F401  (the CPU tier's interpreter)

    for owner, name in [(interpreter.GridExecutor, "__call__"), (interpreter.InterpreterBuilder, "set_grid_dim"),
                        (interpreter.InterpreterBuilder, "set_grid_idx"), (JITFunction, "run")]:
        monkeypatch.setattr(owner, name, vars(owner)[name])  # put back after the test
    monkeypatch.setattr(progress, "_installed", [])
    monkeypatch.setattr(progress, "COUNTERS", progress.Counters())
    progress.install()

    @triton.jit
    def add_one(x_ptr):
        i = tl.program_id(0) * 2 + tl.program_id(1)
        tl.store(x_ptr + i, tl.load(x_ptr + i) + 1)

    from kernels.platform import detect

    x = torch.zeros(6, dtype=torch.int32, device=detect().device)
    add_one[(3, 2)](x)
    add_one[(2, 1)](x)
    snapshot = progress.COUNTERS.snapshot()
    assert x.tolist() == [2, 1, 2, 1, 1, 1]  # (3, 2): each once; (2, 1): i = 0 and 2 again
    assert (snapshot["launches"], snapshot["kernel"]) == (2, "add_one")
    if detect().interpreter:  # program instances are visible in the interpreter only; a GPU runs them unseen
        assert (snapshot["programs"], snapshot["grid"], snapshot["grid_done"]) == (8, 2, 2)


def test_reports_go_out_when_a_step_begins_and_as_counters_move_and_never_after_the_run():
    sent = []
    counters = progress.Counters()
    counters.start_run(sent.append, interval=float("inf"))  # by time: never
    counters.begin_step(1)
    counters.launch("quantize")
    counters.program()
    counters.start_run(sent.append, interval=0.0)  # by time: on every move
    counters.begin_step(2)
    counters.launch("quantize")
    counters.program()
    counters.stop_reports()
    counters.program()
    counters.begin_step(3)
    assert [(m["progress"], m["launches"], m["programs"]) for m in sent] == [(1, 0, 0), (2, 0, 0), (2, 1, 0), (2, 1, 1)]


# ---------------------------------------------------------------------------------------------------
# The parent's receive loop on real pipes


FAKE_WORKER = fake_worker.script("""
    out = responses
    for line in requests:
        plan, start = json.loads(line), time.perf_counter()
        for i in range(1, plan["reports"] + 1):
            time.sleep(plan["every"])
            done, now = i * plan["per_report"], time.perf_counter() - start
            out.write(json.dumps({"progress": 1, "launches": 1 if plan["grid"] else i, "programs": done,
                                  "kernel": "fake", "grid": plan["grid"], "grid_done": done, "seconds": now,
                                  "launch_seconds": now}) + "\\n")
            out.flush()
        time.sleep(plan["then_sleep"])
        out.write(json.dumps({"ok": True}) + "\\n")
        out.flush()
""")

PLANS = {  # name: (what the fake does, timeout, hard cap)
    "slow": (dict(reports=12, every=0.15, per_report=10, grid=120, then_sleep=0), 1.0, 20.0),
    "hung": (dict(reports=2, every=0.1, per_report=10, grid=10**6, then_sleep=60), 0.5, 20.0),
    "too_slow": (dict(reports=100, every=0.1, per_report=10, grid=10**6, then_sleep=0), 0.5, 5.0),
    "hard_cap": (dict(reports=100, every=0.1, per_report=0, grid=None, then_sleep=0), 0.5, 1.5),
    "no_slow_rule": (dict(reports=100, every=0.1, per_report=10, grid=1000, then_sleep=0), 0.5, None),
}


def run_fake(script, plan, timeout, hard_cap):
    worker = Worker(4096, command=(sys.executable, str(script)))
    try:
        return worker.request(plan, timeout, hard_cap)
    finally:
        worker.close()


@pytest.fixture(scope="module")
def fakes(tmp_path_factory) -> dict:
    script = tmp_path_factory.mktemp("fake_worker") / "fake_worker.py"
    script.write_text(FAKE_WORKER)
    with ThreadPoolExecutor(len(PLANS)) as pool:  # they mostly sleep
        futures = {name: pool.submit(run_fake, script, *args) for name, args in PLANS.items()}
        return {name: future.result() for name, future in futures.items()}


def test_a_slow_worker_is_waited_for_past_its_timeout(fakes):
    assert isinstance(fakes["slow"], dict) and fakes["slow"]["ok"], fakes["slow"]


def test_a_worker_that_stops_progressing_is_killed_as_hung(fakes):
    result = fakes["hung"]
    assert isinstance(result, RunResult) and result.kind == "timeout", result
    assert result.progress["programs"] == 20 and result.progress["since_progress"] >= 0.5
    assert result.seconds < 5 and "no progress for 0.5 s (hung, not slow)" in result.describe_death()
    assert result.step == 1


def test_a_worker_estimated_beyond_the_hard_cap_is_killed_as_too_slow_early(fakes):
    result = fakes["too_slow"]
    assert isinstance(result, RunResult) and result.kind == "too_slow", result
    assert result.progress["estimate"] > 5.0 and result.seconds < 5.0  # not waited for until the cap
    assert result.describe_death().startswith("too slow (estimated at least")


def test_a_worker_still_progressing_at_the_hard_cap_is_too_slow(fakes):
    result = fakes["hard_cap"]
    assert isinstance(result, RunResult) and result.kind == "too_slow", result
    assert 1.5 <= result.seconds < 5
    assert "still running at the hard cap of 1.5 s" in result.describe_death()


def test_without_a_hard_cap_a_progressing_worker_still_times_out(fakes):
    result = fakes["no_slow_rule"]
    assert isinstance(result, RunResult) and result.kind == "timeout", result
    assert result.describe_death() == "timeout: no answer within 0.5 s, worker killed"


def test_the_fake_speaks_the_workers_protocol():
    """The fake's progress reports carry the keys the real worker's snapshot has."""
    assert set(json.loads(json.dumps(progress.Counters().snapshot()))) == set(report())
