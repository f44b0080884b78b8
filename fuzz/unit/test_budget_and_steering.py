"""The time budget (``budget.py``: shares, deadlines, the "budget" death) and steering (``steering.py``:
the rules learned from refused shapes and how a drawn case is moved), on made-up timelines and
evidence; then one ``mxfp4-fuzz check`` of a file that refuses K % 256 != 0 under a small budget."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from fuzz.search.strategies import Case
from fuzz.submission.budget import FUZZ_FLOOR, GRACE, OFFICIAL_SHARE, RESERVE, UNCUT_CEILING, Budget
from fuzz.submission.patience import Patience
from fuzz.submission.steering import TIER_LIMIT, Rule, ShapeEvidence, Steering, nearest_run_shape, run_m_beside, steer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


# ---------------------------------------------------------------------------------------------------
# Budget


def test_no_budget_gives_no_deadline():
    budget = Budget(0, ["official", "contract"], start=0.0)
    assert not budget.on and budget.begin("official", now=1.0) is None and budget.begin("contract", now=2.0) is None


def test_official_first_then_shares_of_what_is_left_by_weight():
    order = ["loads", "official", "contract", "correctness", "aliasing", "kernelguard"]
    budget = Budget(100, order, start=0.0)
    assert budget.begin("loads", now=0.0) == budget.begin("official", now=1.0) == OFFICIAL_SHARE["cpu"] * 100  # one window
    assert 0.5 <= OFFICIAL_SHARE["cpu"] < 1.0  # the CPU tier's fuzzed verdicts keep a part of the budget
    # official ended at 40 s: contract (weight 1) of contract + correctness (3) + aliasing (1)
    assert budget.begin("contract", now=40.0) == pytest.approx(40.0 + (60.0 - RESERVE) / 5)
    assert budget.kill_at["contract"] == pytest.approx(budget.deadlines["contract"] + GRACE * ((60.0 - RESERVE) / 5))
    # contract used only 2 s: correctness gets 3/4 of what is left
    assert budget.begin("correctness", now=42.0) == pytest.approx(42.0 + (58.0 - RESERVE) * 3 / 4)
    assert budget.begin("kernelguard", now=99.0) == budget.end  # no share of its own: what is left
    assert all(at <= budget.end for at in budget.kill_at.values())


def test_a_late_start_still_gives_the_runners_check_its_share_of_what_is_left():
    budget = Budget(12, ["loads", "official", "contract"], start=0.0)  # torch's import took 7 s of 12
    assert budget.begin("loads", now=7.0) == budget.begin("official", now=7.5) == \
        pytest.approx(7.0 + OFFICIAL_SHARE["cpu"] * 5.0)
    on_time = Budget(12, ["loads", "official"], start=0.0)
    assert on_time.begin("loads", now=0.0) == OFFICIAL_SHARE["cpu"] * 12


def test_on_a_gpu_the_runners_prediction_comes_whole_first_and_programs_end_only_at_the_budgets_end():
    budget = Budget(12, ["loads", "official", "contract", "aliasing"], start=0.0, tier="nvidia")
    assert budget.begin("official", now=4.0) == 12.0 - RESERVE  # official and the modes: all but the reserve
    budget.begin("contract", now=9.0)
    assert budget.kill_at["official"] == budget.kill_at["contract"] == budget.end == 12.0
    assert budget.deadlines["contract"] < budget.end  # no program starts past its share, as before
    cpu = Budget(12, ["loads", "official", "contract", "aliasing", "correctness"], start=0.0, tier="cpu")
    assert cpu.begin("official", now=4.0) == 4.0 + OFFICIAL_SHARE["cpu"] * 8.0 and cpu.begin("contract", now=6.0) < cpu.kill_at["contract"] < 12


def test_a_gpus_default_budget_never_cuts_the_prediction_and_leaves_the_fuzzing_its_floor():
    order = ["loads", "official", "contract", "aliasing"]
    slow = Budget(12, order, start=0.0, tier="nvidia", uncut_prediction=True)
    assert slow.begin("loads", now=4.0) is None and slow.begin("official", now=6.0) is None  # runs to its end
    assert slow.kill_at["official"] is None
    # the prediction ended at 9.5 s: the fuzzed verdicts still get the floor, the end moves with it
    slow.begin("contract", now=9.5)
    assert slow.end == pytest.approx(9.5 + FUZZ_FLOOR + RESERVE)
    assert slow.extended == pytest.approx(slow.end - 12.0)
    assert slow.deadlines["contract"] == pytest.approx(9.5 + FUZZ_FLOOR / 2)  # contract and aliasing share it
    # ... but never past the ceiling: a prediction ending at 12 s leaves them what is left of it, one ending at 20 s nothing
    late = Budget(12, order, start=0.0, tier="nvidia", uncut_prediction=True)
    late.begin("contract", now=12.0)
    assert late.end == pytest.approx(UNCUT_CEILING)
    assert late.deadlines["contract"] == pytest.approx(12.0 + (UNCUT_CEILING - 12.0 - RESERVE) / 2)
    later = Budget(12, order, start=0.0, tier="nvidia", uncut_prediction=True)
    assert later.begin("contract", now=20.0) == 20.0 and later.left(20.0) < 0  # NOT RUN: the time ran out
    quick = Budget(12, order, start=0.0, tier="nvidia", uncut_prediction=True)
    quick.begin("official", now=4.0)
    quick.begin("contract", now=7.0)  # done early: the default's end stands
    assert quick.end == pytest.approx(12.0) and quick.to_json()["extended"] == 0.0
    # an explicit --budget (uncut_prediction False) or none at all ends everything as before
    assert Budget(12, order, start=0.0, tier="nvidia").begin("official", now=4.0) == 12.0 - RESERVE
    assert not Budget(0, order, start=0.0, tier="nvidia", uncut_prediction=True).uncut_prediction


def test_a_late_verdict_gets_no_time_not_negative_time():
    budget = Budget(10, ["contract", "aliasing"], start=0.0)
    assert budget.begin("contract", now=12.0) == 12.0


def test_patience_ends_a_program_at_the_deadline_and_one_estimated_past_it_early():
    patience = Patience(timeout=60, hard_cap=600, start=0.0, deadline=5.0)
    patience.observe({"progress": 1, "launches": 1, "programs": 1}, 1.0)
    assert patience.verdict(4.9) is None and patience.wait(4.9) == pytest.approx(0.1)
    assert patience.verdict(5.0) == "budget"
    # a launch of 1000 programs at 10 per second will not end by the deadline: ended at once
    early = Patience(timeout=60, hard_cap=600, start=0.0, deadline=30.0)
    early.observe({"progress": 1, "launches": 1, "programs": 20, "grid": 1000, "grid_done": 20,
                   "launch_seconds": 2.0}, 2.0)
    assert early.verdict(2.0) == "budget"
    # a hang is still a hang when the deadline is later
    hung = Patience(timeout=3, hard_cap=600, start=0.0, deadline=30.0)
    assert hung.verdict(3.0) == "timeout"


# ---------------------------------------------------------------------------------------------------
# Steering


def evidence(accepted, refused) -> ShapeEvidence:
    found = ShapeEvidence()
    for shape in accepted:
        found.add(shape, None)
    for shape in refused:
        found.add(shape, "ValueError: no")
    return found


def test_refusals_of_k_not_a_multiple_of_256_give_that_rule():
    found = evidence([(4, 64, 256), (4, 64, 512)], [(4, 64, 128), (2, 64, 320), (8, 128, 64)])
    assert found.rules() == [Rule("k", "multiple", 256)]
    assert "K % 256 == 0" in found.describe(found.rules())


def test_the_weakest_rule_that_explains_the_refusals_wins():
    # K % 128 and K % 256 both explain 320 and 448: the smaller divisor moves fewer cases
    found = evidence([(4, 64, 256), (4, 64, 1024)], [(4, 64, 320), (4, 64, 448)])
    assert found.rules() == [Rule("k", "multiple", 128)]


def test_a_bound_on_m_is_learned_from_large_m_refused():
    found = evidence([(1, 64, 256), (16, 64, 512), (32, 64, 256)], [(33, 64, 256), (40, 64, 512)])
    assert found.rules() == [Rule("m", "at_most", 32)]


def test_no_rule_from_one_refusal_or_from_refusals_an_accepted_call_contradicts():
    assert evidence([(4, 64, 256)], [(4, 64, 320)]).rules() == []
    # the same shapes both accepted and refused (a flaky refusal): nothing to learn
    assert evidence([(4, 64, 320), (4, 64, 448)], [(4, 64, 320), (4, 64, 448)]).rules() == []


def test_no_rule_while_every_call_raised():
    # a stand-in refusing every call (a real HIP file on the CPU model) once drew "M % 2048 == 0" from
    # nothing but refusals: with no accepted call there is no region the file answers to steer into
    assert evidence([], [(8, 128, 7168), (2, 64, 128), (33, 96, 320)]).rules() == []


def test_a_refusal_that_was_the_tiers_is_not_called_the_files():
    found = ShapeEvidence()
    found.add((4, 64, 256), None)
    for shape in [(4, 64, 320), (4, 64, 448)]:
        found.add(shape, f"{TIER_LIMIT}the emulated kernel's limit")
    assert found.describe(found.rules()).startswith("this tier cannot run shapes outside K % 128 == 0")
    found.add((4, 64, 192), "ValueError: no")
    assert found.describe(found.rules()).startswith("the file refuses shapes outside")


def test_steer_rounds_k_up_caps_m_and_drops_specials_that_no_longer_fit():
    case = Case(20, 64, 320, specials=((19, 5, "nan"), (2, 300, "inf")))
    moved = steer(case, [Rule("k", "multiple", 256), Rule("m", "at_most", 16)])
    assert (moved.m, moved.n, moved.k) == (16, 64, 512)
    assert moved.specials == ((2, 300, "inf"),)
    assert steer(Case(4, 64, 512), [Rule("k", "multiple", 256)]) == Case(4, 64, 512)


def test_a_draw_is_moved_once_and_always_the_same_way():
    found = evidence([(4, 64, 256)], [(4, 64, 64), (4, 64, 128)])
    steering = Steering(found)
    first, moved = steering("correctness", Case(2, 64, 192))
    assert moved and first.k == 256
    found.add((4, 64, 256), "ValueError: no")  # later evidence changes the rules ...
    found.add((4, 64, 1024), None)
    again, _ = steering("correctness", Case(2, 64, 192))
    assert again == first  # ... but not the case a replayed draw runs as
    assert steering("contract", Case(2, 64, 192)) == (Case(2, 64, 192), False)  # the contract is never steered


def test_a_shape_nothing_ran_moves_to_the_nearest_one_that_ran():
    run = {(8, 2112, 7168), (16, 3072, 1536), (256, 2880, 512), (4, 96, 256)}
    moved = nearest_run_shape(Case(20, 256, 1024, specials=((19, 5, "nan"), (3, 900, "inf"))), run)
    assert (moved.m, moved.n, moved.k) == (16, 3072, 1536) and moved.specials == ((3, 900, "inf"),)
    assert nearest_run_shape(Case(16, 3072, 1536), run) is None  # its own shape ran
    assert nearest_run_shape(Case(20, 256, 1024), set()) is None  # nothing ran
    transposed = nearest_run_shape(Case(2, 128, 512, layout="transposed", seed=5), run)
    assert (transposed.m, transposed.n, transposed.k, transposed.layout, transposed.seed) == (16, 3072, 1536, "transposed", 5)
    assert (nearest_run_shape(Case(2, 112, 256), run).n, ) == (96,)  # past the contract: any shape that ran


class _CompiledRunner:
    """What SubmissionSession reads of a runner on a compiled tier, with the verdict's deadline at ``left`` s."""

    def __init__(self, left: float):
        import time

        self.compiles, self.deadline = True, time.perf_counter() + left
        self.shapes_run = {(16, 3072, 1536)}


def test_a_moved_draw_keeps_its_layout_only_where_that_layout_ran():
    from fuzz.submission.budget import NEW_SHAPE_SECONDS
    from fuzz.submission.plugin import SubmissionSession

    runner = _CompiledRunner(NEW_SHAPE_SECONDS / 2)
    runner.layouts_run = {(16, 3072, 1536, "contiguous"), (16, 3072, 1536, "transposed")}
    session = SubmissionSession("f.py", runner, "nvidia")
    (kept,) = session._steered("correctness", (Case(20, 256, 1024, layout="transposed", seed=3),))
    (made,) = session._steered("correctness", (Case(20, 256, 1024, layout="row_sliced", seed=3),))
    (own,) = session._steered("correctness", (Case(16, 3072, 1536, layout="offset", seed=3),))  # its own shape ran
    assert (kept.m, kept.layout) == (16, "transposed") and (made.m, made.layout) == (16, "contiguous")
    assert (own.m, own.layout, own.seed) == (16, "contiguous", 3)
    roomy = SubmissionSession("f.py", _CompiledRunner(NEW_SHAPE_SECONDS * 2), "nvidia")
    assert roomy._steered("correctness", (Case(20, 256, 1024, layout="row_sliced"),))[0].layout == "row_sliced"


def test_a_verdict_without_time_to_compile_runs_its_draw_at_a_compiled_shape_and_always_the_same_way():
    from fuzz.submission.budget import NEW_SHAPE_SECONDS
    from fuzz.submission.plugin import SubmissionSession

    session = SubmissionSession("f.py", _CompiledRunner(NEW_SHAPE_SECONDS / 2), "nvidia")
    (moved,) = session._steered("aliasing", (Case(20, 256, 1024, seed=3),))
    assert (moved.m, moved.n, moved.k, moved.seed) == (16, 3072, 1536, 3)
    assert session.moved_now  # counted in the verdict's line once the example has run (SubmissionSession.check)
    session.runner.deadline += 100  # time to spare now: a new draw keeps its shape, a replayed one its move
    assert session._steered("aliasing", (Case(20, 256, 1024, seed=4),)) == (Case(20, 256, 1024, seed=4),)
    assert session._steered("aliasing", (Case(20, 256, 1024, seed=3),)) == (moved,)
    assert session._steered("contract_beyond", (Case(20, 240, 1024),)) == (Case(20, 240, 1024),)  # past the contract
    roomy = SubmissionSession("f.py", _CompiledRunner(NEW_SHAPE_SECONDS * 2), "nvidia")
    assert roomy._steered("aliasing", (Case(20, 256, 1024),)) == (Case(20, 256, 1024),)


def test_stale_new_shapes_second_m_moves_to_one_that_ran_at_the_same_n_and_k():
    from fuzz.submission.budget import NEW_SHAPE_SECONDS
    from fuzz.submission.plugin import SubmissionSession

    assert run_m_beside(16, 3072, 1536, 40, {(16, 3072, 1536), (64, 3072, 1536), (32, 2880, 512)}) == 64
    assert run_m_beside(16, 3072, 1536, 40, {(16, 3072, 1536), (32, 2880, 512)}) is None
    runner = _CompiledRunner(NEW_SHAPE_SECONDS / 2)
    runner.shapes_run = {(16, 3072, 1536), (64, 3072, 1536)}
    session = SubmissionSession("f.py", runner, "nvidia")
    case, other_m = session._steered("stale_new_shape", (Case(20, 256, 1024, seed=3), 7))
    assert (case.m, case.n, case.k, other_m) == (16, 3072, 1536, 64) and session.moved_now
    runner.shapes_run.add((8, 3072, 1536))  # later runs change nothing for a draw already decided
    assert session._steered("stale_new_shape", (Case(20, 256, 1024, seed=3), 7)) == (case, 64)
    roomy = SubmissionSession("f.py", _CompiledRunner(NEW_SHAPE_SECONDS * 2), "nvidia")
    assert roomy._steered("stale_new_shape", (Case(20, 256, 1024), 7)) == (Case(20, 256, 1024), 7)


def test_on_a_compiled_tier_a_program_at_a_new_shape_is_not_started_without_time_to_compile(tmp_path):
    import time

    from fuzz.submission.budget import NEW_SHAPE_SECONDS, BudgetExhausted
    from fuzz.submission.program import Program
    from fuzz.submission.runner import SubmissionRunner

    runner = SubmissionRunner(EXAMPLES / "correct_reference_style.py")
    try:
        runner.device, runner.triton_launches, runner.verdict = "cuda", 1, "aliasing"  # a compiled tier, Triton
        runner.shapes_run = {(16, 3072, 1536)}
        runner.deadline = time.perf_counter() + NEW_SHAPE_SECONDS / 2
        new, known = Program.single_call(Case(20, 256, 1024)), Program.single_call(Case(16, 3072, 1536))
        with pytest.raises(BudgetExhausted):
            runner._budget_gate("new", new.steps)
        assert runner._budget_gate("known", known.steps) is None
        runner.verdict = "mode_benchmark"  # the runner's own programs are never held back by the guess
        assert runner._budget_gate("new", new.steps) is None
        runner.verdict, runner.triton_launches = "aliasing", 0  # a file that launches no Triton compiles nothing
        assert runner._budget_gate("new", new.steps) is None
        runner.device, runner.triton_launches = "cpu", 1  # the CPU tier interprets: nothing to compile
        assert runner._budget_gate("new", new.steps) is None
    finally:
        runner.close()


def test_a_programs_estimate_counts_the_judging_and_a_first_program_takes_the_other_verdicts_medians(tmp_path):
    import time

    from fuzz.submission.budget import BudgetExhausted
    from fuzz.submission.program import Program
    from fuzz.submission.runner import SubmissionRunner

    runner = SubmissionRunner(EXAMPLES / "correct_reference_style.py")
    try:
        runner.verdict = "correctness"
        assert runner.estimate() == 0.0  # nothing ran yet
        runner.durations = {"official": [9.0, 9.0, 9.0], "contract": [0.2, 0.4, 0.3]}
        runner.note_judging("contract", 0.5)
        assert runner.estimate() == pytest.approx(0.3 + 0.5)  # the fuzzed verdicts', never the prediction's
        runner.durations["correctness"] = [1.0]
        for seconds in (0.1, 0.1, -1.0, 2.0, 0.1, 0.1):  # the last five, never negative
            runner.note_judging("correctness", seconds)
        assert runner.judging["correctness"] == [0.1, 0.0, 2.0, 0.1, 0.1]
        assert runner.estimate() == pytest.approx(1.0 + 0.1)
        program = Program.single_call(Case(16, 3072, 1536))
        runner.deadline = time.perf_counter() + 0.9  # the program fits; its judging would not
        with pytest.raises(BudgetExhausted):
            runner._budget_gate("p", program.steps)
        runner.deadline = time.perf_counter() + 5.0
        assert runner._budget_gate("p", program.steps) is None
    finally:
        runner.close()


def test_the_session_tells_the_runner_what_an_example_spent_outside_its_programs():
    from fuzz.submission.checks import Outcome
    from fuzz.submission.plugin import SubmissionSession

    class Runner:
        verdict, deadline, profile, path = "contract", None, {}, "f.py"

        def __init__(self):
            self.judged = []

        def note_judging(self, verdict, seconds):
            self.judged.append((verdict, seconds))

    def check(context, case):  # a program of 0.2 s and about 0.05 s of judging
        runner.profile["contract"] = {"program_wall": 0.2}
        time.sleep(0.25)
        return Outcome("contract", "pass", "")

    import time

    runner = Runner()
    session = SubmissionSession("f.py", runner, "cpu")
    session.check(check, Case(16, 256, 256))
    [(verdict, seconds)] = runner.judged
    assert verdict == "contract" and 0.04 <= seconds < 0.2


# ---------------------------------------------------------------------------------------------------
# One check, end to end


@pytest.mark.slow
def test_a_small_budget_ends_every_verdict_without_a_false_fail_and_steers_past_refusals(tmp_path):
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "fuzz.cli", "check", str(EXAMPLES / "refuses_k_not_256.py"),
                           "--aiter", "emulated", "--report", str(report), "--budget", "40"],
                          capture_output=True, text=True, timeout=600)
    data = json.loads(report.read_text())
    verdicts = {v["verdict"]: v for v in data["verdicts"]}
    # the only failure can be the true one: the contract allows K % 64 == 0 and the file refuses it (on a loaded
    # machine the budget may end the contract's search before it draws such a K: never a false FAIL either way)
    failed = {v for v, r in verdicts.items() if r["status"] == "FAIL"}
    assert failed <= {"contract"}, done.stdout[-3000:]
    for name, record in verdicts.items():
        if record["cut_short"] and record["status"] == "FAIL":
            # a failure found before the budget ran out (its shrinking cut short) stands; never one for lack of time
            assert "case " in record["card_text"] and not record["card_text"].startswith("FAIL budget"), (name, record)
        elif record["cut_short"]:
            assert record["status"] in ("PASS", "NOT RUN"), (name, record)
        if record["status"] == "NOT RUN" and "budget" in record["summary"]:
            assert record["examples"] - record["inconclusive"] <= 1, (name, record)  # the NOT RUN outcome itself
        if record["status"] == "PASS" and name not in ("loads", "official", "kernelguard"):
            assert record["examples"] - record["inconclusive"] >= 1, (name, record)  # never PASS on nothing
    assert data["budget"]["seconds"] == 40 and "budget      40 s" in done.stdout
    if failed:  # the refusals were seen: the later verdicts' draws are steered past them
        assert "K % 256 == 0" in data["steering"]["note"], data["steering"]
        assert sum(record["steered"] for record in verdicts.values()) > 0, data["steering"]


# ---------------------------------------------------------------------------------------------------
# A device fault ends the program and the worker (runner.py, session.py)


@pytest.mark.slow
def test_a_device_fault_ends_the_program_and_the_next_program_gets_a_fresh_worker(tmp_path):
    """A lost GPU context makes every later step raise, ours too: the program stops at the faulting call,
    and the next program runs on a new worker (not on the poisoned one, where each verdict after it read
    "a bug of ours"). A CUDA error's words stand in for the fault here."""
    from fuzz.submission.program import Program
    from fuzz.submission.runner import SubmissionRunner

    path = tmp_path / "faults_once.py"
    path.write_text("import os\nfrom task import input_t, output_t\n"
                    "def custom_kernel(data: input_t) -> output_t:\n"
                    "    raise RuntimeError('CUDA error: an illegal memory access was encountered')\n")
    runner = SubmissionRunner(path, aiter="emulated", timeout=60)
    try:
        program = Program()
        for i in range(2):
            program.build(f"d{i}", Case(1, 64, 64, seed=i))
            program.call(f"d{i}", f"y{i}")
        result = runner.run(program.steps)
        assert result.kind == "ok"
        calls = result.calls()
        assert [c["out"] for c in calls] == ["y0"] and calls[0]["exception"]["device_fault"], calls
        assert calls[0]["program_ended"] == "device fault"
        assert runner.worker is None  # dropped: the next program starts on another
        again = runner.run(Program.single_call(Case(1, 64, 64)).steps)
        assert again.kind == "ok" and runner.restarts == 1
    finally:
        runner.close()


def test_the_check_loads_only_the_plugins_it_needs_unless_asked_for_more(monkeypatch):
    """Autoloaded third-party pytest plugins cost 2 s of a check's start on the H200 host; a user who names
    plugins (-p X), asks for xdist (-n) or set the variable keeps pytest's own loading."""
    from fuzz.cli import AUTOLOAD_ENV, own_plugins_only

    monkeypatch.delenv(AUTOLOAD_ENV, raising=False)
    assert own_plugins_only([]) and own_plugins_only(["-k", "stale", "-p", "no:cacheprovider", "-pno:randomly"])
    assert not own_plugins_only(["-p", "pytest_timeout"]) and not own_plugins_only(["-pxdist.plugin"])
    assert not own_plugins_only(["-n", "2"]) and not own_plugins_only(["--numprocesses=2"])
    monkeypatch.setenv(AUTOLOAD_ENV, "0")
    assert not own_plugins_only([])


def test_a_check_budget_counts_from_its_commands_start_and_only_for_that_process(monkeypatch):
    """cli.run stamps "EPOCH:PID"; a process that inherited another's stamp (a worker, a nested run) ignores it."""
    import os
    import time

    from fuzz.submission.plugin import command_started
    from fuzz.submission.report_text import COMMAND_START_ENV, command_start_epoch

    monkeypatch.setenv(COMMAND_START_ENV, f"{time.time() - 3.0!r}:{os.getpid()}")
    assert command_start_epoch() == pytest.approx(time.time() - 3.0, abs=0.5)
    assert time.perf_counter() - command_started() == pytest.approx(3.0, abs=0.5)
    monkeypatch.setenv(COMMAND_START_ENV, f"{time.time()!r}:{os.getpid() + 1}")
    assert command_start_epoch() is None and command_started() is None
    monkeypatch.setenv(COMMAND_START_ENV, "garbage")
    assert command_start_epoch() is None


# A kernel's fault surfaces where the GPU is next waited for; the file stands in for both sites here: with
# launches synchronous (the locating run's environment) it raises at its "launch", else later, at a sync.
FAULTS_LATE = """import os

import torch
from task import input_t, output_t


def launch():
    raise RuntimeError("CUDA error: an illegal memory access was encountered")  # the faulting launch


def custom_kernel(data: input_t) -> output_t:
    if os.environ.get("CUDA_LAUNCH_BLOCKING") == "1":
        if os.environ.get("MXFP4_FUZZ_TEST_NO_RECUR"):  # a race: it does not fault again
            return torch.zeros(data[0].shape[0], data[1].shape[0], dtype=torch.bfloat16, device=data[0].device)
        launch()
    raise RuntimeError("CUDA error: an illegal memory access was encountered (at a later sync)")  # surfaced
"""


@pytest.mark.slow
@pytest.mark.parametrize("recurs", [True, False])
def test_a_device_fault_is_located_at_its_launch_by_running_the_program_again_synchronously(tmp_path, recurs):
    from fuzz.submission.program import Program
    from fuzz.submission.runner import SubmissionRunner

    path = tmp_path / "faults_late.py"
    path.write_text(FAULTS_LATE)
    runner = SubmissionRunner(path, aiter="emulated", timeout=60,
                              env={} if recurs else {"MXFP4_FUZZ_TEST_NO_RECUR": "1"})
    runner.locate_faults = True  # the CPU tier has no asynchronous faults: forced, to run the mechanism here
    try:
        result = runner.run(Program.single_call(Case(1, 64, 64)).steps)
        error = result.calls()[0]["exception"]
        assert error["device_fault"] and runner.located == 1
        lines = FAULTS_LATE.splitlines()
        if recurs:
            assert lines[error["where"]["line"] - 1].strip().endswith("# the faulting launch")
            assert lines[error["surfaced"]["where"]["line"] - 1].strip().endswith("# surfaced")
            assert "synchronous" in error["located"]
        else:
            assert lines[error["where"]["line"] - 1].strip().endswith("# surfaced")
            assert error["located"].startswith("not located") and "surfaced" not in error
    finally:
        runner.close()


def test_faults_are_located_on_a_gpu_only_and_a_few_per_check(tmp_path):
    from fuzz.submission.runner import LOCATE_CAP, SubmissionRunner

    path = tmp_path / "f.py"
    path.write_text("def custom_kernel(data):\n    return None\n")
    assert not SubmissionRunner(path, aiter="emulated", device="cpu").locate_faults
    assert SubmissionRunner(path, aiter="emulated", device="cuda").locate_faults and 1 <= LOCATE_CAP <= 3


# A Triton kernel that stores far outside any allocation: an illegal address, reported at the next wait.
FAULTS_ON_A_GPU = """import torch
import triton
import triton.language as tl
from task import input_t, output_t


@triton.jit
def far_store(out_ptr):
    tl.store(out_ptr + (1 << 40), 1.0)


def custom_kernel(data: input_t) -> output_t:
    A, B = data[0], data[1]
    out = torch.zeros(A.shape[0], B.shape[0], dtype=torch.bfloat16, device=A.device)
    far_store[(1,)](out)  # the faulting launch
    return (A.float() @ B.float().T).to(torch.bfloat16)  # its fault surfaces at a later wait
"""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA or ROCm device: a real asynchronous fault")
def test_a_real_gpu_fault_is_located_at_the_files_launch(tmp_path):
    from fuzz.submission.program import Program
    from fuzz.submission.provenance import tier_limit
    from fuzz.submission.runner import SubmissionRunner

    path = tmp_path / "faults_on_a_gpu.py"
    path.write_text(FAULTS_ON_A_GPU)
    runner = SubmissionRunner(path, aiter="emulated", timeout=120)
    try:
        result = runner.run(Program.single_call(Case(4, 64, 64)).steps)
        faulted = [c for c in result.calls() if (c.get("exception") or {}).get("device_fault")]
        assert faulted, result.calls()
        error = faulted[0]["exception"]
        assert "located" in error and runner.located == 1, error
        assert error["where"] and FAULTS_ON_A_GPU.splitlines()[error["where"]["line"] - 1].strip().endswith(
            "# the faulting launch"), error
        assert tier_limit(error) is None  # the file's own kernel: its FAIL, not ours
    finally:
        runner.close()
