"""pytest-xdist support (fuzz/host/parallel.py, fuzz/submission/merge.py): each worker pinned to one device
with faked device counts, its thread share, the controller's device plan, and one submission report
merged from the workers' parts."""
import time

import pytest

from fuzz.host import parallel
from fuzz.submission.merge import merge
from fuzz.testing.explicit_plan import EXAMPLES


def pinned(environ, worker, workers=2, cores=2):
    env = dict(environ)
    parallel.pin(env, worker, workers, cores)
    return env


@pytest.mark.parametrize("count", [1, 2, 4, 8])
def test_each_worker_sees_one_device_round_robin(count):
    plan = {parallel.PLAN_VAR: parallel.plan({}, count)}
    seen = [pinned(plan, f"gw{i}", workers=2 * count)["CUDA_VISIBLE_DEVICES"] for i in range(2 * count)]
    assert seen == [str(i % count) for i in range(2 * count)]


def test_the_controllers_visible_devices_are_the_ones_handed_out():
    plan = parallel.plan({"CUDA_VISIBLE_DEVICES": "4,6"}, 2)
    assert plan == "CUDA_VISIBLE_DEVICES:4,6"
    env = pinned({parallel.PLAN_VAR: plan, "CUDA_VISIBLE_DEVICES": "4,6"}, "gw1")
    assert env["CUDA_VISIBLE_DEVICES"] == "6"


def test_hip_visible_devices_is_narrowed_and_cuda_visible_devices_removed():
    # ROCm applies HIP_VISIBLE_DEVICES and then CUDA_VISIBLE_DEVICES: the worker keeps only the first
    controller = {"HIP_VISIBLE_DEVICES": "1,2,3", "CUDA_VISIBLE_DEVICES": "0,1,2"}
    env = pinned({**controller, parallel.PLAN_VAR: parallel.plan(controller, 3)}, "gw2", workers=3)
    assert env["HIP_VISIBLE_DEVICES"] == "3" and "CUDA_VISIBLE_DEVICES" not in env


def test_no_gpu_no_device_variables_and_one_thread_per_core():
    env = pinned({parallel.PLAN_VAR: parallel.plan({}, 0)}, "gw0", workers=2, cores=2)
    assert not any(var in env for var in parallel.DEVICE_VARS)
    assert all(env[var] == "1" for var in parallel.THREAD_VARS)
    assert pinned({}, "gw0", workers=4, cores=16)["OMP_NUM_THREADS"] == "4"
    assert pinned({}, "gw0", workers=8, cores=2)["OMP_NUM_THREADS"] == "1"  # never zero


def test_outside_xdist_nothing_is_pinned(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert parallel.pin_this_worker() == {}


def test_pinning_happens_before_torch_touches_a_device():
    """The root conftest pins before importing kernels: in a worker the first CUDA query sees the pin."""
    import pathlib

    conftest = (pathlib.Path(__file__).resolve().parents[2] / "conftest.py").read_text()
    assert conftest.index("parallel.pin_this_worker()") < conftest.index("import kernels")


def _partial(verdicts, programs=3, autotune=None, loaded=True):
    return {
        "submission": "s.py", "prediction": {}, "latent": [],  # the merge computes them again from every row
        "tier": "cpu", "device": "cpu", "aiter": "emulated", "aiter_detail": "emulated aiter", "profile": "smoke", "loaded": loaded, "load_error": None, "documents_nondeterminism": False,
        "verdicts": [{"verdict": v, "status": s, "summary": f"{v} {s}", "card_text": ""} for v, s in verdicts],
        "cpu_tier": {"device_emulated": True, "autotune": autotune or {}, "compat_shims": {}},
        "hip_builds": [],
        "official_launches_not_fuzzed": [],
        "kernelguard": None,
        "timings": {"total_seconds": 1.0, "worker_start_seconds": 0.5, "module_exec_seconds": 0.01,
                    "programs_run": programs, "worker_restarts": 1, "timeouts": 0, "slow_programs": 0,
                    "too_slow_programs": 0, "timeout_seconds": 60.0, "hard_cap_seconds": 600.0},
    }


def test_merged_report_has_the_serial_schema_in_test_order():
    a = _partial([("contract", "PASS"), ("loads", "PASS")], autotune={"k": {"configs": 2, "checked": [0]}})
    b = _partial([("official", "FAIL"), ("loads", "PASS")], programs=4, autotune={"k": {"configs": 2, "checked": [1]}})
    merged = merge([a, b], ["loads", "official", "contract"], total_seconds=9.0)
    assert set(merged) == set(a)
    assert set(merged["timings"]) == set(a["timings"])
    assert [v["verdict"] for v in merged["verdicts"]] == ["loads", "official", "contract"]
    assert merged["prediction"]["test"]["status"] == "FAIL" and list(merged)[:3] == ["submission", "prediction", "latent"]
    assert merged["timings"]["programs_run"] == 7 and merged["timings"]["total_seconds"] == 9.0
    assert merged["cpu_tier"]["autotune"]["k"]["checked"] == [0, 1]


def test_the_merged_table_says_what_the_tier_stood_in_for():
    """Under xdist the summary printed device and autotune lines only: the hip, aiter and torch lines a verdict
    refers to were dropped."""
    from fuzz.submission.merge import summary_lines

    a = _partial([("loads", "PASS")])
    b = _partial([("official", "NOT RUN")])
    b["cpu_tier"].update({"hip_not_run": {"load_inline(k) at s.py:9": "no clang++ here"},
                          "torch_version": {"torch.version.hip at line 3": "answered '7.1.25421'"},
                          "hip_fallback": "its HIP did not run here and its fallback served 2 calls"})
    merged = merge([a, b], ["loads", "official"], total_seconds=2.0)
    text = "\n".join(summary_lines(merged, 2, cards=False))
    assert "hip         did not run here: load_inline(k) at s.py:9: no clang++ here" in text
    assert "torch       torch.version.hip at line 3" in text and "fallback served 2 calls" in text


def test_a_verdict_recorded_twice_keeps_the_worse_row():
    merged = merge([_partial([("loads", "PASS")]), _partial([("loads", "FAIL")])], ["loads"], 1.0)
    assert [v["status"] for v in merged["verdicts"]] == ["FAIL"]


def test_the_kernelguard_row_is_answered_with_every_workers_verdicts():
    """The worker that ran kernelguard saw no stale verdict (another worker ran it): the merge answers the
    replay rule with the stale_in_place FAIL of the other worker."""
    screening = {"profile": "default", "kernelguard": "0.3.2", "classification": "hacked", "should_filter": True,
                 "filter_reason": "POINTER_REPLAY", "rules": [{"rule": "POINTER_REPLAY", "severity": "critical",
                                                               "evidence": "data_ptr-keyed output"}]}
    first = {**_partial([("loads", "PASS"), ("kernelguard", "FAIL")]), "kernelguard": screening}
    second = _partial([("stale_in_place", "FAIL")])
    merged = merge([first, second], ["loads", "stale_in_place", "kernelguard"], 1.0)
    row = next(v for v in merged["verdicts"] if v["verdict"] == "kernelguard")
    assert row["status"] == "FAIL" and "a bug to fix" in row["summary"] and "stale_in_place FAIL" in row["summary"]
    assert merged["kernelguard"] == screening


def test_serial_and_merged_runs_end_with_the_same_exit_codes():
    from fuzz.submission.leaderboard_gate import EXIT_FILTERED
    from fuzz.submission.report_text import EXIT_NOT_RUN, EXIT_OURS, final_exit_status

    assert final_exit_status(0, {"loads": "PASS", "official": "NOT RUN"}) == EXIT_NOT_RUN
    assert final_exit_status(1, {"loads": "PASS", "kernelguard": "FAIL"}) == EXIT_FILTERED
    assert final_exit_status(1, {"official": "FAIL", "kernelguard": "FAIL"}) == 1  # a real failure stays 1
    assert final_exit_status(0, {"loads": "PASS", "kernelguard": "REPORTED"}) == 0
    assert final_exit_status(2, {"loads": "NOT RUN"}) == 2  # pytest's own codes are left alone
    # a check of ours broke (ERROR): its own code, below anything the file earned, above NOT RUN
    assert final_exit_status(1, {"official": "PASS", "aliasing": "ERROR", "correctness": "NOT RUN"}) == EXIT_OURS
    assert final_exit_status(1, {"official": "FAIL", "aliasing": "ERROR"}) == 1


def test_a_worker_that_breaks_twice_is_an_error_of_ours_not_the_file_s_fail(monkeypatch):
    """The worker answering "internal" (our code raised inside it) on a program and again on a fresh worker:
    WorkerBug, which the plugin turns into the verdict's ERROR (exit EXIT_OURS), never a FAIL."""
    from fuzz.search.strategies import Case
    from fuzz.submission import runner as runner_module
    from fuzz.submission.program import Program

    answers = []

    def broken(self, *args, **kwargs):
        answers.append(1)
        self.sent = time.perf_counter()
        return {"internal": "Traceback ...\nKeyError: 'x' (in our worker)"}

    sub = runner_module.SubmissionRunner(EXAMPLES / "correct_reference_style.py", aiter="emulated", timeout=60)
    try:
        monkeypatch.setattr(runner_module.Worker, "request", broken, raising=False)
        program = Program.single_call(Case(1, 64, 64))
        with pytest.raises(runner_module.WorkerBug, match="a bug of ours"):
            sub.run(program.steps, 60)
        assert len(answers) == 2  # once more on a fresh worker before the error is called ours
    finally:
        sub.close()


def test_a_worker_that_breaks_while_loading_is_an_error_of_ours_not_the_files_loads_fail(monkeypatch, tmp_path):
    """Our worker raising around the file's load (a SyntaxError of ours once read as "loads FAIL" and failed
    every predicted mode): WorkerBug, the verdict's ERROR, never the file's FAIL."""
    from fuzz.submission import runner as runner_module

    path = tmp_path / "submission.py"  # no task.py beside it: the worker loads our stand-in, made to break
    path.write_text("def custom_kernel(data):\n    return data[0]\n")
    monkeypatch.setattr(runner_module, "TASK_FALLBACK", tmp_path / "missing" / "task.py")
    sub = runner_module.SubmissionRunner(path, aiter="emulated", timeout=60)
    try:
        with pytest.raises(runner_module.WorkerBug, match="a bug of ours"):
            sub.load()
    finally:
        sub.close()


def test_fail_on_tells_a_predicted_mode_failure_from_a_latent_bug():
    """--fail-on any (default): a predicted mode failure 1, KernelGuard alone 7, latent bugs alone 8;
    runner: latent bugs do not count; latent: only they count."""
    from fuzz.submission.leaderboard_gate import EXIT_FILTERED
    from fuzz.submission.report_text import EXIT_LATENT, EXIT_NOT_RUN, EXIT_OURS, final_exit_status

    mode = {"official": "PASS", "mode_benchmark": "FAIL", "aliasing": "PASS"}
    hidden = {"official": "PASS", "mode_benchmark": "PASS", "aliasing": "FAIL", "correctness": "NOT RUN"}
    both = {"mode_leaderboard": "FAIL", "stale_in_place": "FAIL"}
    assert [final_exit_status(1, mode, rule) for rule in ("any", "runner", "latent")] == [1, 1, 0]
    assert [final_exit_status(1, hidden, rule) for rule in ("any", "runner", "latent")] == \
        [EXIT_LATENT, EXIT_NOT_RUN, EXIT_LATENT]
    assert [final_exit_status(1, both, rule) for rule in ("any", "runner", "latent")] == [1, 1, EXIT_LATENT]
    guard = {"kernelguard": "FAIL", "aliasing": "FAIL"}
    assert [final_exit_status(1, guard, rule) for rule in ("any", "runner", "latent")] == \
        [EXIT_FILTERED, EXIT_FILTERED, EXIT_LATENT]
    assert final_exit_status(1, {"loads": "FAIL"}, "runner") == 1  # a file that does not load fails every mode
    assert final_exit_status(1, {"aliasing": "ERROR"}, "runner") == EXIT_OURS  # a broken check is never a pass
    with pytest.raises(ValueError):
        final_exit_status(0, {}, "sometimes")


def test_header_comes_from_a_worker_that_loaded_the_file():
    merged = merge([_partial([], loaded=None), _partial([("loads", "PASS")], loaded=True)], ["loads"], 1.0)
    assert merged["loaded"] is True


def test_path_benchmarks_refuse_to_run_under_xdist():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "pytest", "fuzz/bench/test_bench_paths.py", "-n", "2",
                           "--benchmark-enable", "-q"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
    assert "cannot run under pytest-xdist" in proc.stderr


@pytest.mark.parametrize("count, expected", [(0, None), (1, 1), (8, 8)])
def test_n_auto_is_one_worker_per_gpu_where_there_are_gpus(monkeypatch, count, expected):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    assert parallel.auto_workers() == expected


@pytest.mark.slow
def test_a_submission_fuzzed_by_two_workers_gets_one_report(tmp_path):
    import json
    import subprocess
    import sys

    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", "fuzz/test_submission.py", "-n", "2", "-q",
                           "--submission", "fuzz/examples/wrong_tail.py", "--submission-report", str(report),
                           "-k", "loads or official or correctness or determinism"],
                          capture_output=True, text=True, timeout=600)
    merged = json.loads(report.read_text())
    statuses = {v["verdict"]: v["status"] for v in merged["verdicts"]}
    assert statuses == {"loads": "PASS", "official": "PASS", "correctness": "FAIL", "determinism": "PASS"}, proc.stdout
    assert list(statuses) == ["loads", "official", "correctness", "determinism"]  # test order, not finishing order
    assert {"submission", "tier", "verdicts", "cpu_tier", "hip_builds", "timings"} <= set(merged)
    from fuzz.submission.report_text import EXIT_LATENT

    assert proc.returncode == EXIT_LATENT and "mxfp4-fuzz submission report" in proc.stdout  # K % 256: latent
    assert merged["prediction"]["test"]["status"] == "PASS" and merged["latent"][0]["verdict"] == "correctness"
