"""The runner's prediction run by the worker before it is asked (runner.prelaunch, SubmissionRunner._speculated,
worker.speculated_requests): each verdict gets the answer of the very program it asks for, in any order, a
queued program's death is its own verdict's and no other's, and nothing is run twice.

The runner side is driven by a fake worker speaking the worker's protocol, so the order of answers, crashes
and requests is the test's to choose; the worker side builds its queue with the verdicts' own builder. The
whole path on a real GPU worker is ``test_speculation_on_a_gpu_gives_the_verdicts_of_asking`` (the gpu
profile runs it)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fuzz.submission import runner as runner_module
from fuzz.submission import worker as worker_module
from fuzz.submission.runner import RunResult, SubmissionRunner, Worker
from fuzz.submission.runner_programs import PREDICTION, prediction_steps
from fuzz.testing import fake_worker
from kernels.platform import detect

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "correct_reference_style.py"

# Answers the load with the programs it queues (the load's "then", unless told to refuse them), runs them in
# order (a name in "crash" ends the process instead of answering), then answers requests; every answer says
# which program it was and how many requests this process had read by then.
FAKE_WORKER = fake_worker.script("""
    read = 0

    def answer(name):
        responses.write(json.dumps({"ok": True, "records": [{"do": "reload"}, {"do": "call", "out": name,
                                    "read": read}], "seconds": 0.0, "counters": {}, "timing": {}}) + "\\n")
        responses.flush()

    for line in requests:
        request = json.loads(line)
        read += 1
        if request["op"] == "load":
            plan = request.get("plan", {})
            queued = [] if plan.get("refuse") else request.get("then", [])
            responses.write(json.dumps({"ok": True, "device": "cuda",
                                        "speculating": [e["name"] for e in queued]}) + "\\n")
            responses.flush()
            for entry in queued:  # what a queued program prints goes to its own files (worker.own_output)
                name, folder = entry["name"], entry["out_dir"]
                os.makedirs(folder, exist_ok=True)
                print(f"on the pipe while {name} ran", flush=True)
                if name in plan.get("crash", []):
                    open(os.path.join(folder, "stderr"), "w").write(f"dump of {name}")
                    sys.exit(9)
                open(os.path.join(folder, "stdout"), "w").write(f"printed by {name}")
                answer(name)
        else:
            answer("asked")
""")


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """-> make(plan): a SubmissionRunner whose first worker is a fake that queued the prediction (``plan``:
    crash: names it dies in, refuse: queue nothing); its replacements are fakes with no queue."""
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE_WORKER)
    command = (sys.executable, str(script))
    made = []

    def launch(self):
        worker = Worker(4096, command=command)
        worker.send({"op": "load"})
        return worker

    monkeypatch.setattr(SubmissionRunner, "_launch", launch)

    def make(plan=None) -> SubmissionRunner:
        import tempfile

        worker = Worker(4096, command=command)
        folder = tempfile.TemporaryDirectory(prefix="mxfp4-fuzz-submission-")
        worker.speculation_dirs = {name: f"{folder.name}/speculated-{name}" for name in PREDICTION}
        worker.send({"op": "load", "then": [{"name": n, "out_dir": d} for n, d in worker.speculation_dirs.items()],
                     "plan": plan or {}})
        runner_module._PRELAUNCHED[(str(EXAMPLE), "auto")] = (worker, folder)
        runner = SubmissionRunner(EXAMPLE, timeout=30.0)
        made.append(runner)
        return runner

    yield make
    for runner in made:
        runner.close()


def steps(name: str) -> list:
    return prediction_steps(name, detect().tier)


OTHER = [{"do": "build", "slot": "d0", "case": {"m": 2, "n": 64, "k": 256}}]


def which(result: RunResult) -> tuple:
    """(the program the answer was for, the requests the fake had read when it answered)"""
    return result.records[0]["out"], result.records[0]["read"]


def test_each_verdict_takes_the_answer_of_its_own_program_and_nothing_runs_twice(fake):
    runner = fake()
    assert runner.load().ok
    answers = [runner.run(steps(name)) for name in PREDICTION]
    assert [which(answer) for answer in answers] == [(name, 1) for name in PREDICTION]
    assert [answer.stdout for answer in answers] == [f"printed by {name}" for name in PREDICTION]  # not the pipe's
    assert which(runner.run(OTHER)) == ("asked", 2)  # the first request after the load
    assert runner.speculation == {"queued": list(PREDICTION), "taken": list(PREDICTION), "dropped": []}
    assert "3 of 3 taken" in runner.describe_speculation()


def test_asking_for_another_program_first_keeps_the_queued_answers_for_their_verdicts(fake):
    runner = fake()
    assert which(runner.run(OTHER)) == ("asked", 2)
    assert which(runner.run(steps("leaderboard"))) == ("leaderboard", 1)
    assert which(runner.run(steps("official"))) == ("official", 1)
    assert runner.speculation["taken"] == ["leaderboard", "official"]


def test_a_queued_programs_crash_is_its_own_verdicts_death(fake):
    runner = fake({"crash": ["benchmark"]})
    assert which(runner.run(steps("official"))) == ("official", 1)
    died = runner.run(steps("benchmark"))
    assert died.kind == "crash" and died.exit_code == 9 and died.stderr == "dump of benchmark"
    assert runner.run(steps("benchmark")) is died  # a program that died is not run again
    # the leaderboard program was never run: asked for, it runs on the replacement worker
    assert which(runner.run(steps("leaderboard"))) == ("asked", 2)
    assert runner.speculation["taken"] == ["official", "benchmark"]


def test_a_crash_in_a_program_nobody_asked_for_yet_is_not_the_asking_verdicts(fake):
    runner = fake({"crash": ["benchmark"]})
    assert which(runner.run(OTHER)) == ("asked", 2)  # on the replacement: the crash was not this program's
    assert which(runner.run(steps("official"))) == ("official", 1)  # answered before the crash: kept
    assert which(runner.run(steps("benchmark"))) == ("asked", 3)  # dropped with the worker: run afresh
    assert runner.speculation["dropped"] == ["benchmark (crash)", "leaderboard"]
    assert "dropped with the worker: benchmark (crash), leaderboard" in runner.describe_speculation()


def test_a_worker_that_queued_nothing_is_asked_as_before(fake):
    runner = fake({"refuse": True})
    assert which(runner.run(steps("official"))) == ("asked", 2)
    assert runner.describe_speculation() == ""


def test_the_worker_queues_the_verdicts_own_programs_only_after_a_load_that_found_a_gpu(tmp_path):
    load = {"op": "load", "then": [{"name": name, "out_dir": str(tmp_path / name)} for name in PREDICTION],
            "then_options": {"report_every": 0.5}}
    assert worker_module.speculated_requests(load, {"ok": True, "device": "cpu"}) == []
    assert worker_module.speculated_requests(load, {"ok": False, "error": {}}) == []
    assert worker_module.speculated_requests({"op": "load"}, {"ok": True, "device": "cuda"}) == []
    queued = worker_module.speculated_requests(load, {"ok": True, "device": "cuda"})
    assert [r["speculated"] for r in queued] == list(PREDICTION)
    for request in queued:
        assert request["steps"] == [{"do": "reload"}, *steps(request["speculated"])]
        assert request["out_dir"] == str(tmp_path / request["speculated"]) and Path(request["out_dir"]).is_dir()
        assert request["report_every"] == 0.5
    assert json.dumps(queued)  # a request goes through the same JSON as any other


def test_a_speculated_programs_prints_go_to_its_own_files(tmp_path, monkeypatch):
    import os

    monkeypatch.setattr(sys, "stdout", os.fdopen(1, "w", closefd=False))  # as in the worker: fd 1, buffered
    with worker_module.own_output(str(tmp_path)):
        print("from python")  # still in the buffer when fd 1 goes back: flushed into the file first
        os.write(1, b"from fd 1")
        os.write(2, b"from fd 2")
    printed = (tmp_path / "stdout").read_text()
    assert "from python" in printed and "from fd 1" in printed and (tmp_path / "stderr").read_text() == "from fd 2"


def test_the_verdicts_build_their_programs_with_the_shared_builder():
    """The official verdict and the modes on a GPU ask for exactly what the worker queued (their keys match)."""
    from fuzz.submission import checks, prediction

    assert checks.official_program(checks.official_cases("nvidia")).steps == prediction_steps("official", "nvidia")
    for mode in ("benchmark", "leaderboard"):
        build = prediction.benchmark_program if mode == "benchmark" else prediction.leaderboard_program
        assert build(prediction.mode_cases("nvidia"))[0].steps == prediction_steps(mode, "nvidia")


GPU_ONLY = pytest.mark.skipif(detect().tier == "cpu", reason="the worker speculates only on a GPU (worker.py)")


@GPU_ONLY
def test_speculation_on_a_gpu_gives_the_verdicts_of_asking(tmp_path):
    """A check of an example with the prediction speculated and without: the same statuses, and every queued
    program taken by its verdict."""
    import os
    import subprocess

    def check(speculate: str) -> dict:
        report = tmp_path / f"report-{speculate}.json"
        subprocess.run([sys.executable, "-m", "fuzz.cli", "check", str(EXAMPLE), "--report", str(report)],
                       env={**os.environ, runner_module.SPECULATE_ENV: speculate}, capture_output=True, timeout=300)
        return json.loads(report.read_text())

    on, off = check("1"), check("0")
    assert {r["verdict"]: r["status"] for r in on["verdicts"]} == {r["verdict"]: r["status"] for r in off["verdicts"]}
    assert on["speculation"]["taken"] == list(PREDICTION) and off["speculation"]["queued"] == []
