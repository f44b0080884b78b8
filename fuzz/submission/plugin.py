"""pytest plugin for fuzzing a submission file: options, the ``submission`` fixture, the verdict table
in the terminal summary and the JSON report.

Registered by the root conftest (``pytest_plugins = ["fuzz.submission.plugin"]``) and by
``mxfp4-fuzz check`` (``-p fuzz.submission.plugin``). Without ``--submission`` the tests of
``fuzz/test_submission.py`` skip with the reason "no --submission given".
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import event, target
from hypothesis.control import currently_in_test_context

from fuzz.report import tier_notes
from fuzz.submission.report_text import (  # noqa: F401  (EXIT_NOT_RUN, TEST_MODULE: this module's API too)
    DEFAULT_FAIL_ON,
    EXIT_NOT_RUN,
    FAIL_ON,
    TEST_MODULE,
    build_lines,
    final_exit_status,
    launch_lines,
    official_launches_not_fuzzed,
    test_name,
)

DEFAULT_REPORT = "mxfp4-fuzz-report.json"
# Tests that search again for one verdict's bugs (test name without "test_" -> the verdict they add to)
FURTHER_SEARCHES = {"correctness_past_known_bugs": "correctness"}
SECOND_M = {"stale_new_shape": 1}  # verdicts whose argument at this index is a second M for the case's N and K
NO_SUBMISSION = "no --submission given"
_SESSION = pytest.StashKey()
_ORDER = pytest.StashKey()  # the submission tests' names in the order they run
BUDGET_CUT = "the time budget ended the search: "  # a skip that ends a search with conclusive examples
PREDICTION_TESTS = ("mode_benchmark", "mode_leaderboard")  # the runner's modes: in the official check's budget share


class SubmissionFailure(AssertionError):
    """A verdict failed; the message is the failure card (an AssertionError, so Hypothesis shrinks it)."""


ERROR_TEXT_CAP = 6000


def error_line(text: str) -> str:
    """The exception of a failure that did not come from a check, in one line: pytest's first ``E`` line
    (the exception and its message; the last line of the text is often a library's hint, such as CUDA's
    "Compile with TORCH_USE_CUDA_DSA"), else the last line."""
    lines = text.strip().splitlines()
    raised = [line[1:].strip() for line in lines if line.startswith("E ")]
    return (raised[0] if raised else lines[-1])[:300] if lines else ""


def failure_type(failure_class: str) -> type:
    """The SubmissionFailure subclass of one class of failure (a NaN leak, K terms missing, a crash, ...):
    Hypothesis tells failures apart by exception type, so it shrinks and reports each class on its own
    and one bug does not hide another in the same verdict."""
    from fuzz.judge.attribution import failure_exception

    return failure_exception(failure_class, SubmissionFailure, suffix="Failure")


@dataclass
class VerdictRecord:
    verdict: str
    examples: int = 0
    inconclusive: int = 0
    failing: object = None  # the last failing Outcome: after shrinking, Hypothesis replays the minimal one last
    failures: dict = field(default_factory=dict)  # failure class -> its last (minimal) failing Outcome
    largest: dict = field(default_factory=dict)  # failure class -> its failing Outcome of the largest output seen
    launches: dict = field(default_factory=dict)  # launch configuration -> examples that ran it
    shapes: dict = field(default_factory=dict)  # (M, N, K) -> examples whose program built inputs of it
    reported: object = None  # a reported (documented) difference
    not_run: object = None  # the Outcome that left the verdict not run (too slow for the tier)
    passing: object = None  # the last passing Outcome, for its summary
    outcome: str = ""  # pytest's: passed | failed | skipped | error
    seconds: float = 0.0
    error: str = ""  # a failure that did not come from a check (Hypothesis Flaky/Unsatisfiable, a bug)
    error_text: str = ""  # its whole text (capped): the traceback a bug report needs
    cut_short: str = ""  # why the time budget ended the verdict's search early ("" when it did not)
    steered: int = 0  # drawn cases moved inside the shapes the file accepts (steering.py)
    compiled_shapes: int = 0  # examples whose cases moved to a shape already compiled, for time (a compiled tier)
    fallback: str = ""  # why the verdict judged a fallback, not what the runner runs (mark_hip_fallback)
    ours: str = ""  # a bug of ours broke the check (runner.WorkerBug): ERROR, never the file's FAIL

    def add(self, outcome) -> None:
        self.examples += 1
        for launch in outcome.launches:
            self.launches[launch] = self.launches.get(launch, 0) + 1
        for shape in outcome.shapes:
            self.shapes[tuple(shape)] = self.shapes.get(tuple(shape), 0) + 1
        if outcome.status == "fail":
            self.failures.pop(outcome.failure_class, None)  # re-inserted last: the latest class ends the dict
            self.failures[outcome.failure_class] = outcome
            # Shrinking ends on the smallest shape, where a layout bug's pattern (every 16th column, one tile
            # in four) no longer shows: the largest failing output seen keeps the pattern for the error map.
            if _output_size(outcome) > _output_size(self.largest.get(outcome.failure_class)):
                self.largest[outcome.failure_class] = outcome
        slot = {"fail": "failing", "reported": "reported", "pass": "passing", "not_run": "not_run",
                "inconclusive": None}[outcome.status]
        if slot is None:
            self.inconclusive += 1
        else:
            setattr(self, slot, outcome)

    @property
    def status(self) -> str:
        if self.fallback and self.outcome in ("passed", "failed"):
            return "NOT RUN"
        return self.own_status

    @property
    def own_status(self) -> str:
        """The status of the calls judged, whatever code served them."""
        if self.outcome == "skipped" and self.not_run is not None:
            return "NOT RUN"
        if self.outcome == "passed":
            return "REPORTED" if self.reported is not None else "PASS"
        return {"failed": "FAIL", "skipped": "SKIP", "error": "ERROR"}.get(self.outcome, self.outcome.upper())

    def line(self) -> str:
        if self.fallback and self.outcome in ("passed", "failed"):
            return f"{self.fallback}; the fallback: {self.own_status} {self.own_line()}"
        return self.own_line()

    def own_line(self) -> str:
        if self.outcome == "failed" and len(self.failures) > 1:
            return f"{len(self.failures)} distinct failures: " + "; ".join(
                f"[{cls or 'failure'}] {o.summary.splitlines()[0]}" for cls, o in self.failures.items())
        if self.outcome == "failed" and self.failing is not None:
            cut = f" (search cut short by the time budget after {self.examples} examples)" if self.cut_short else ""
            return self.failing.summary + cut
        if self.error:
            return self.error
        if self.outcome == "skipped" and self.not_run is not None:
            passed = self.examples - self.inconclusive - 1
            return self.not_run.summary + (f" (after {passed} passing examples)" if passed > 0 else "")
        latest = self.reported or self.passing
        if latest is None:
            return ""
        if self.examples > 1 or self.cut_short:
            skipped = f", {self.inconclusive} inconclusive" if self.inconclusive else ""
            cut = f" (cut short by the time budget: {self.cut_short})" if self.cut_short else ""
            moved = f", {self.steered} steered to accepted shapes" if self.steered else ""
            moved += (f", {self.compiled_shapes} at shapes already compiled (no time left to compile a new one)"
                      if self.compiled_shapes else "")
            return f"{self.examples} examples{skipped}{moved}{cut}; last: {latest.summary}"
        return latest.summary

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict, "status": self.status, "summary": self.line(), "examples": self.examples,
            "inconclusive": self.inconclusive, "seconds": round(self.seconds, 3), "cut_short": self.cut_short,
            "steered": self.steered, "compiled_shapes": self.compiled_shapes,
            "failure": None if self.failing is None or self.outcome != "failed" else self.failing.to_json(),
            "card_text": "" if self.failing is None or self.outcome != "failed" else self.failing.render(),
            "failures": [] if self.outcome != "failed" else [o.to_json() for o in self.failures.values()],
            "largest_failures": {} if self.outcome != "failed" else {
                cls: o.to_json() for cls, o in self.largest.items()
                if cls in self.failures and _output_size(o) > _output_size(self.failures[cls])},
            "launch_configs": [{"config": k, "examples": n} for k, n in self.launches.items()],
            "shapes": [{"m": m, "n": n, "k": k, "examples": count} for (m, n, k), count in self.shapes.items()],
            "reported": None if self.reported is None else self.reported.to_json(),
            "not_run": None if self.not_run is None else self.not_run.to_json(),
            "error_text": self.error_text,
        }


def _output_size(outcome) -> int:
    """Elements of the output an Outcome's error map covers (0 without one)."""
    emap = None if outcome is None or outcome.card is None else outcome.card.error_map
    return 0 if not emap else emap["rows"] * emap["cols"]


def draw_error_maps(records, report_path: Path) -> None:
    """Each failing card's error map as a PNG beside the report (``<report>.<verdict>-<n>.png``), its path
    put on the card (the terminal card and the report link it)."""
    import dataclasses

    from fuzz.report.png import write_map_png

    for record in records:
        if record.outcome != "failed":
            continue
        for n, outcome in enumerate([*record.failures.values(), record.failing, *record.largest.values()]):
            card = None if outcome is None else outcome.card
            if card is None or not card.error_map or card.error_map_png:
                continue
            png = report_path.with_name(f"{report_path.stem}.{record.verdict}-{n}.png")
            try:
                write_map_png(card.error_map, png)
            except OSError:  # a read-only folder: the report still says everything but the picture
                continue
            outcome.card = dataclasses.replace(card, error_map_png=str(png.resolve()))


class SubmissionSession:
    """The file under test, its runner and the verdicts so far. A plain class with a one-line repr:
    Hypothesis prints fixtures (dataclasses field by field) in every falsifying example."""

    def __init__(self, path: str, runner, tier: str, budget=None):
        from fuzz.submission.budget import Budget
        from fuzz.submission.steering import ShapeEvidence, Steering

        self.path, self.runner, self.tier = path, runner, tier
        self.started, self.started_epoch = time.perf_counter(), time.time()
        self.budget = budget if budget is not None else Budget(0, [])
        self.records: dict = {}  # verdict -> VerdictRecord, in test order
        self.known_at_second_search: dict = {}  # verdict -> failure classes its second search masks
        self.conclusive: dict = {}  # test name -> its examples that passed, failed or were reported
        self.checks: dict = {}  # test name -> {outcome status: seconds of its examples' checks}
        self.test_seconds: dict = {}  # test name -> pytest's duration of it
        self.test_ended: dict = {}  # test name -> when it ended, seconds after the budget's start (the time profile)
        # draws moved to the shapes the file answers (a session without a runner: unit tests of the plugin)
        self.steering = Steering(getattr(runner, "shape_evidence", None) or ShapeEvidence())
        self.moved_for_time: dict = {}  # (test, drawn case) -> (the case it ran as, whether time was short)
        self.second_m: dict = {}  # (test, case, drawn M) -> the compiled M it ran as (SECOND_M), or None
        self.moved_now = False  # whether the example being checked runs at a shape moved for time

    def begin(self, test: str) -> None:
        """The test of verdict (or further search) ``test`` begins: its share of the time budget. The runner's
        modes (prediction.py) share the official check's: what the runner would say comes first."""
        self.runner.verdict = test
        budgeted = "official" if test in PREDICTION_TESTS else test
        self.runner.deadline = self.budget.begin(budgeted)
        self.runner.kill_at = self.budget.kill_at.get(budgeted)

    def check(self, check, *args, masked=frozenset()) -> None:
        """``settle(check(context, *args))`` (a failure of a ``masked`` class counts as explored, not
        settled: a further search's known classes), or, when the time budget has no room for the example, the
        end of the test's search: its verdict stands on the examples it had (cut short), and is NOT RUN while
        it has none (never a FAIL for lack of time)."""
        from fuzz.submission.budget import NOT_RUN_REASON, BudgetExhausted

        __tracebackhide__ = True
        test = self.runner.verdict
        args = self._steered(test, args)
        started = time.perf_counter()
        in_programs = self._program_wall(test)
        from fuzz.submission.runner import WorkerBug

        try:
            outcome = check(self.context(), *args)
        except WorkerBug as bug:
            self.record(FURTHER_SEARCHES.get(test, test)).ours = str(bug).splitlines()[0]
            raise
        except BudgetExhausted as cut:
            self._spent(test, "budget_cut", started)
            verdict = FURTHER_SEARCHES.get(test, test)
            self.budget.note_cut(test, cut.why)
            if verdict == test:
                self.record(verdict).cut_short = self.record(verdict).cut_short or cut.why
            if self.conclusive.get(test, 0) == 0:
                if verdict != test:  # a further search with nothing to add: its verdict stands as it is
                    pytest.skip(f"the time budget ran out: {cut.why}")
                from fuzz.submission.checks import Outcome

                self.settle(Outcome(verdict, "not_run", NOT_RUN_REASON.format(budget=self.budget.seconds)
                                    + f": {cut.why}"))
            # The search ends here: a skip leaves Hypothesis at once (rejecting every later draw would make it draw
            # up to ten times max_examples first: seconds on a GPU), and the record keeps what the examples found
            # (``pytest_runtest_logreport`` turns this skip into the verdict's PASS or FAIL).
            pytest.skip(f"{BUDGET_CUT}{cut.why}")
        self._spent(test, outcome.status, started)
        if hasattr(self.runner, "note_judging"):  # the next example's gate counts this one's judging
            self.runner.note_judging(test, time.perf_counter() - started - (self._program_wall(test) - in_programs))
        self.record(FURTHER_SEARCHES.get(test, test)).compiled_shapes += self.moved_now
        if outcome.status in ("pass", "fail", "reported"):
            self.conclusive[test] = self.conclusive.get(test, 0) + 1
        if outcome.status == "fail" and outcome.failure_class in masked:
            return
        self.settle(outcome)

    def __repr__(self) -> str:
        return f"<submission {self.path}>"

    def record(self, verdict: str) -> VerdictRecord:
        return self.records.setdefault(verdict, VerdictRecord(verdict))

    def settle(self, outcome) -> None:
        """Record a check's outcome; raise its card when it failed; reject an inconclusive example; skip
        the test (NOT RUN, with the reason) when the tier was too slow to run it."""
        __tracebackhide__ = True  # pytest shows the card, not this frame
        seen = {launch for record in self.records.values() for launch in record.launches}
        self.record(outcome.verdict).add(outcome)
        if currently_in_test_context():
            for launch in outcome.launches:
                event(f"launch: {launch}")
            # Hypothesis's target phase mutates the examples that scored highest: toward configurations
            # (split-K stripe counts, block sizes, grid classes) no verdict has reached yet.
            if outcome.launches and outcome.status in ("pass", "fail", "reported"):  # not on a skip or reject
                target(float(sum(launch not in seen for launch in outcome.launches)),
                       label="launch configurations not reached before")
        if outcome.status == "fail":
            raise failure_type(outcome.failure_class)(outcome.render())
        if outcome.status == "not_run":
            pytest.skip(outcome.render())
        if outcome.status == "inconclusive" and self.every_call_raised():
            stats = self.runner.call_stats
            not_reached = type(outcome)(outcome.verdict, "not_run", f"not reached: every call raised "
                                        f"({stats['raised']} calls, none returned): {stats['last_error']} "
                                        "(see contract)", program=outcome.program)
            self.settle(not_reached)
        if outcome.status == "inconclusive":
            from hypothesis import reject

            reject()

    def every_call_raised(self, enough: int = 3) -> bool:
        """No call of the file has returned yet and several have raised: the verdicts that need a result
        cannot be reached (Hypothesis would otherwise reject example after example until Unsatisfiable)."""
        stats = self.runner.call_stats
        return stats["returned"] == 0 and stats["raised"] >= enough

    def _program_wall(self, test: str) -> float:
        """Wall seconds the runner's programs of ``test`` took so far (its time profile)."""
        return getattr(self.runner, "profile", {}).get(test, {}).get("program_wall", 0.0)

    def _spent(self, test: str, status: str, started: float) -> None:
        """Seconds of one example's check (programs and judging), by how it ended: the time profile."""
        spent = self.checks.setdefault(test, {})
        spent[status] = spent.get(status, 0.0) + time.perf_counter() - started

    def time_profile(self) -> dict:
        """Where the check's seconds went, per test: in all (pytest's duration: Hypothesis included), in
        its examples' checks by outcome, in programs (wall time here, and the worker's by step kind).
        ``hypothesis`` is what is left: drawing, shrinking bookkeeping, pytest."""
        tests = {}
        for test, seconds in self.test_seconds.items():
            spent = self.checks.get(test, {})
            programs = self.runner.profile.get(test, {})
            in_checks = sum(spent.values())
            wall = programs.get("program_wall", 0.0)
            tests[test] = {
                "seconds": round(seconds, 3), "ended": self.test_ended.get(test), "checks": {k: round(v, 3) for k, v in spent.items()},
                "programs": programs.get("programs", 0), "program_wall": round(wall, 3),
                "worker": {k: round(v, 3) for k, v in programs.get("worker", {}).items()},
                "judging": round(max(0.0, in_checks - wall), 3), "hypothesis": round(max(0.0, seconds - in_checks), 3),
            }
        return {"worker_start": round(self.runner.start_seconds, 3), "tests": tests}

    def phases(self) -> dict:
        """Epoch seconds of the command's start (cli.py; None when pytest was run directly), the budget's
        start, pytest's configure, the collection's end, the runner's creation, this session's start and
        the report. With the command's end, the benchmark splits a check's wall time into the
        interpreter's start, pytest's start, the session and the exit."""
        from fuzz.submission.report_text import command_start_epoch

        now_epoch, now = time.time(), time.perf_counter()
        command = command_start_epoch()
        return {"command": None if command is None else round(command, 3),
                "budget": round(now_epoch - (now - self.budget.start), 3),
                **{name: round(stamp, 3) for name, stamp in _STAMPS.items()},
                "session": round(self.started_epoch, 3), "report": round(now_epoch, 3)}

    def _steered(self, test: str, args: tuple) -> tuple:
        """``args`` with every Case (alone or in a list) moved to the shapes the file answers (steering.py)."""
        from fuzz.search.strategies import Case
        from fuzz.submission.steering import run_m_beside

        compiled: list = []  # whether each case was moved to a compiled shape
        tight: list = []  # whether each case's verdict had no time left to compile a new shape

        def one(arg):
            if isinstance(arg, Case):
                moved, was_moved = self.steering(test, arg)
                self.record(FURTHER_SEARCHES.get(test, test)).steered += was_moved
                ran, short = self._compiled_shape(test, moved)
                compiled.append(ran is not moved)
                tight.append(short)
                return ran
            if isinstance(arg, list):
                return [one(a) for a in arg]
            return arg

        steered = tuple(one(a) for a in args)
        at = SECOND_M.get(test)
        if at is not None and tight and tight[0]:  # its second M, at the moved case's N and K, compiled too
            first, drawn = steered[0], args[at]
            key = (test, first, drawn)
            if key not in self.second_m:
                self.second_m[key] = run_m_beside(first.m, first.n, first.k, drawn, self.runner.shapes_run)
            if self.second_m[key] is not None and self.second_m[key] != drawn:
                steered = (*steered[:at], self.second_m[key], *steered[at + 1:])
                compiled.append(True)
        self.moved_now = any(compiled)  # counted once the example ran (check)
        return steered

    def _compiled_shape(self, test: str, case):
        """(the case to run, whether the verdict was short of time for a compile): on a compiled tier, ``case`` at
        a shape already run (steering.nearest_run_shape) when the verdict's time left has no room for compiling
        a new one (budget.NEW_SHAPE_SECONDS), with a layout that ran at that shape (steering.compiled_layout: a new
        layout's strides can compile too); the same draw moved the same way ever after, so Hypothesis replays
        it into the same case."""
        from fuzz.submission.budget import NEW_SHAPE_SECONDS
        from fuzz.submission.steering import NEVER_MOVED_FOR_TIME, compiled_layout, nearest_run_shape

        if not getattr(self.runner, "compiles", False) or test in NEVER_MOVED_FOR_TIME:
            return case, False
        key = (test, case)
        if key not in self.moved_for_time:  # decided once, by the time left then: a replay runs the same case
            deadline = getattr(self.runner, "deadline", None)
            roomy = deadline is None or deadline - time.perf_counter() >= NEW_SHAPE_SECONDS
            moved = case
            if not roomy:  # at a shape already run, with a layout already run there (contiguous: the runner's)
                moved = nearest_run_shape(case, self.runner.shapes_run) or case
                moved = compiled_layout(moved, getattr(self.runner, "layouts_run", set()))
            self.moved_for_time[key] = moved, not roomy
        return self.moved_for_time[key]

    def context(self):
        from fuzz.submission.checks import Context

        return Context(self.runner, self.tier)

    def report(self, profile: str) -> dict:
        from fuzz.submission.outlook import outlook

        load = self.runner.load_report
        verdicts = [r.to_json() for r in self.records.values()]  # renders every card: once
        prediction, latent = outlook(verdicts)
        return {
            "submission": self.path,
            "prediction": prediction,  # what the runner would say per popcorn mode (fuzz/submission/outlook.py)
            "latent": latent,  # the other failures, each with its smallest case and why the runner misses it
            "tier": self.tier,
            "device": self.runner.device,
            "aiter": None if load is None else load.aiter,
            "aiter_detail": None if load is None else load.aiter_detail,
            "profile": profile,
            "loaded": None if load is None else load.ok,
            "load_error": None if load is None or load.ok else load.describe_error(),
            "documents_nondeterminism": None if load is None else load.nondeterministic,
            "verdicts": verdicts,
            "official_launches_not_fuzzed": official_launches_not_fuzzed(verdicts),
            "cpu_tier": tier_notes_json(self.runner.tier_notes),
            "hip_builds": getattr(self, "hip_builds", []),  # builds_gfx950: every build, its errors and kernels
            "kernelguard": getattr(self, "kernelguard", None),  # the bot's screening: classification and rules
            "time_profile": self.time_profile(),  # where the seconds went (fuzz/bench/time_to_verdict.py)
            "budget": self.budget.to_json(),  # the time budget, each verdict's deadline, the ones it cut short
            "steering": self.steering.to_json(),  # the shapes the file refuses (contract evidence), tests moved
            # helper processes that ran the runner's shapes to compile their kernels ahead (compile_ahead.py)
            "compile_ahead": None if getattr(self.runner, "compile_ahead", None) is None
            else self.runner.compile_ahead.describe(),
            # the runner's prediction, run by the worker before its verdicts asked (runner.prelaunch)
            "speculation": dict(getattr(self.runner, "speculation", {})) or None,
            "phases": self.phases(),  # epoch seconds: where the command's seconds went outside the session
            "timings": {
                "total_seconds": round(time.perf_counter() - self.started, 3),
                "worker_start_seconds": None if load is None else round(load.worker_start_seconds, 3),
                "module_exec_seconds": None if load is None else round(load.exec_seconds, 4),
                "programs_run": self.runner.run_count,
                "worker_restarts": self.runner.restarts,
                "timeouts": self.runner.hangs,
                "slow_programs": self.runner.slow_runs,
                "too_slow_programs": self.runner.too_slow,
                "timeout_seconds": self.runner.timeout,
                "hard_cap_seconds": self.runner.hard_cap,
            },
        }


def tier_notes_json(notes: dict) -> dict:
    """What the CPU tier stood in for (the report says it, so a verdict is read with it in mind)."""
    return {
        "device_emulated": notes["device_emulated"],  # tensors on "cuda" lived on the CPU, torch.cuda modelled
        "autotune": {kernel: {"configs": k["configs"], "checked": sorted(k["checked"])}
                     for kernel, k in notes["autotune"].items()},
        "compat_shims": dict(notes["shims"]),  # runner-era Triton rules our newer Triton needed restored
        "hip_cpu": dict(notes.get("hip_cpu") or {}),  # the file's HIP run on the CPU model: launches, calls
        "hip_not_run": dict(notes.get("hip_not_run") or {}),  # what the runner builds or runs, not run here: why
        "aiter_not_run": dict(notes.get("aiter_not_run") or {}),  # real aiter names the emulation lacks, asked for
        "hip_code_objects": dict(notes.get("hip_code_objects") or {}),  # prebuilt code objects run by a stand-in
        "torch_version": dict(notes.get("torch_version") or {}),  # the file's reads of torch.version, answered as the runner's
        "hip_fallback": notes.get("hip_fallback", ""),  # what that means for the verdicts (mark_hip_fallback)
    }


# Verdicts judged on the file's calls: where the file's HIP did not run here and its fallback served, they judge
# code the runner does not run. loads, builds_gfx950 (the runner's build itself) and kernelguard (static) stand.
NOT_ON_CALLS = ("loads", "builds_gfx950", "kernelguard")


def mark_hip_fallback(records: dict, notes: dict, builds: list) -> str:
    """Where the runner would build or run the file's HIP and it did not run here while the file's calls still
    returned (the file caught the failure and fell back), every verdict judged on those calls is NOT RUN,
    its own result kept in its line: the runner runs the HIP, not the fallback. Unless builds_gfx950 found
    that the HIP does not build for gfx950 either: then the runner falls back too, and the verdicts stand.
    Returns the note for the report ("" when nothing was marked or there was nothing to mark)."""
    hip, aiter = bool(notes.get("hip_not_run")), bool(notes.get("aiter_not_run"))
    if not hip and not aiter:
        return ""
    if hip and not aiter and builds and not any(b.get("ok") or b.get("not_checked") for b in builds):
        # the file's own build errors: the runner falls back too (an aiter module the emulation lacks it does not)
        return ("its HIP does not build for gfx950 either (builds_gfx950): the runner falls back too, so the "
                "verdicts judge what it runs")
    served = (f"its fallback served {notes['hip_fallback_calls']} calls" if notes.get("hip_fallback_calls") else
              "the file's calls went on without it (an error code of the model's, raised by the file itself)")
    if hip:
        reason = f"its HIP did not run here (the hip lines say why) and {served}: the runner runs the HIP"
    else:  # the file caught the emulation's AiterNotEmulated and went on: the runner's aiter has that code
        reason = (f"aiter code the runner has did not run here (the aiter lines say why) and {served}: the runner "
                  "runs aiter's")
    marked = []
    for record in records.values():
        if record.verdict not in NOT_ON_CALLS and record.outcome in ("passed", "failed"):
            record.fallback = reason
            marked.append(record.verdict)
    return (f"NOT RUN {', '.join(marked)}: they judge the fallback, not the {'HIP' if hip else 'aiter code'} the "
            "runner runs" if marked else "")


def pytest_addoption(parser):
    group = parser.getgroup("mxfp4-fuzz", "MXFP4 GEMM fuzzing")
    group.addoption("--submission", metavar="FILE", default=None,
                    help="fuzz this popcorn submission file (custom_kernel(data)) in a worker subprocess")
    group.addoption("--submission-report", metavar="PATH", default=DEFAULT_REPORT,
                    help=f"where to write the submission's JSON report (default {DEFAULT_REPORT})")
    group.addoption("--kernelguard-profile", metavar="PROFILE", default="default",
                    help="the KernelGuard rule profile of the kernelguard verdict (default, strict, generic, "
                         "sol-execbench; the bot's is default)")
    group.addoption("--fail-on", choices=FAIL_ON, default=DEFAULT_FAIL_ON,
                    help="what makes the exit code nonzero: any (default: a predicted mode failure exits 1, "
                         "KernelGuard's filter alone 7, latent bugs alone 8), runner (only a predicted mode "
                         "failure or the filter), latent (only latent bugs: 8)")
    group.addoption("--strict-resources", action="store_true", default=False,
                    help="builds_gfx950: fail (not just report) a HIP kernel that spills registers or uses scratch")
    group.addoption("--submission-timeout", metavar="SECONDS", type=float, default=None,
                    help="how long one program of calls may go without progress before the worker is "
                         "killed as hung (default 60 on the CPU tier, 300 on a GPU)")
    group.addoption("--budget", metavar="SECONDS", type=float, default=None,
                    help="the check's time budget: every verdict ends within it, official first, and says how many "
                         "examples ran and whether the budget cut it short (default 80 on the CPU tier, 12 on a "
                         "GPU, counted from the command's start; 0: no budget, the profile's example counts decide)")
    group.addoption("--submission-hard-cap", metavar="SECONDS", type=float, default=None,
                    help="how long a program that keeps progressing (Triton programs interpreted, launches) "
                         "may run in all; beyond it, or estimated beyond it, its verdict is NOT RUN "
                         "(default 10 x the timeout where Triton interprets; on a GPU the timeout is the cap)")


_STAMPS: dict = {}  # epoch seconds of this process's steps before the session: the report's phases


def pytest_configure(config):
    _STAMPS.setdefault("configure", time.time())
    # xdist's mark, known here also when the check runs without xdist's plugin (cli.py loads only what it needs)
    config.addinivalue_line("markers", "xdist_group(name): run the tests of one group on one xdist worker")
    if config.getoption("--submission", default=None):
        from fuzz.host.parallel import is_xdist_controller
        from reference.emulation.aiter_modes import name_runner_aiter

        name_runner_aiter(config.getoption("--aiter", default="auto"))

        if is_xdist_controller(config):  # the workers fuzz, the controller merges their reports
            from fuzz.submission.merge import MergedSubmissionReporter

            config.pluginmanager.register(MergedSubmissionReporter(config), "mxfp4-fuzz-submission-reporter")
        else:
            config.pluginmanager.register(SubmissionReporter(config), "mxfp4-fuzz-submission-reporter")


def _session(config) -> SubmissionSession | None:
    return config.stash.get(_SESSION, None)


def budget_seconds(config, tier: str) -> float:
    """--budget, or the tier's default; 0 (no budget) under pytest-xdist, whose workers each run a part
    of the verdicts and could not share one budget."""
    from fuzz.submission.budget import DEFAULT_SECONDS

    chosen = config.getoption("--budget", default=None)
    if chosen is None:
        chosen = 0.0 if hasattr(config, "workerinput") else DEFAULT_SECONDS["cpu" if tier == "cpu" else "gpu"]
    if chosen < 0:
        raise pytest.UsageError(f"--budget must be >= 0 seconds, got {chosen:g}")
    return chosen


def pytest_collection_modifyitems(session, config, items):
    """The verdicts' test order, for the time budget's shares."""
    names = [test_name(item.nodeid) for item in items if TEST_MODULE in item.nodeid.split("::")[0]]
    config.stash[_ORDER] = list(dict.fromkeys(names))
    _STAMPS["collected"] = time.time()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    found = _session(item.config)
    if found is not None and TEST_MODULE in item.nodeid.split("::")[0]:
        found.begin(test_name(item.nodeid))


def command_started() -> float | None:
    """The command's start (cli.py's epoch stamp) on this process's perf_counter clock, or None."""
    from fuzz.submission.report_text import command_start_epoch

    stamp = command_start_epoch()
    return None if stamp is None else time.perf_counter() - max(0.0, time.time() - stamp)


def _start(config) -> SubmissionSession:
    from kernels.platform import detect
    from fuzz.submission.budget import Budget
    from fuzz.submission.runner import DEFAULT_TIMEOUT, SubmissionRunner

    tier = detect().tier
    timeout = config.getoption("--submission-timeout") or DEFAULT_TIMEOUT["cpu" if tier == "cpu" else "gpu"]
    path = str(Path(config.getoption("--submission")).resolve())
    aiter = config.getoption("--aiter", default="auto")
    _STAMPS["runner"] = time.time()
    runner = SubmissionRunner(path, aiter=aiter, timeout=timeout, hard_cap=config.getoption("--submission-hard-cap"),
                              compiles_ahead=True)
    # the budget counts from the command's start (mxfp4-fuzz check), else from the worker's (prelaunched or not)
    started = command_started() or getattr(runner.standby, "sent", None)
    order = [test for test in config.stash.get(_ORDER, []) if test not in PREDICTION_TESTS]
    # a GPU's default budget never cuts the runner's prediction (budget.py: uncut_prediction)
    uncut = tier != "cpu" and config.getoption("--budget", default=None) is None
    budget = Budget(budget_seconds(config, tier), order, start=started, tier=tier, uncut_prediction=uncut)
    session = SubmissionSession(path, runner, tier, budget)
    config.stash[_SESSION] = session
    from fuzz.submission.checks import prefetch_official_expected

    prefetch_official_expected(tier)  # while the worker loads the file
    return session


@pytest.fixture(scope="session")
def submission_session(request) -> SubmissionSession:
    """The submission under test (its worker is started on first use); skips without --submission."""
    if not request.config.getoption("--submission"):
        pytest.skip(NO_SUBMISSION)
    return _session(request.config) or _start(request.config)


@pytest.fixture(scope="session")
def submission(submission_session) -> SubmissionSession:
    """The loaded submission; skips when the file did not load (test_loads reports why; the report
    says NOT RUN when the tier was the reason: no ROCm, an unmodelled CUDA API)."""
    if not submission_session.runner.load().ok:
        pytest.skip("the submission did not load (see test_loads)")
    return submission_session


class SubmissionReporter:
    """Collects pytest's outcome per verdict, writes the JSON report and the terminal table."""

    def __init__(self, config):
        self.config = config
        self.report_path = Path(config.getoption("--submission-report"))

    def pytest_runtest_logreport(self, report):
        session = _session(self.config)
        if session is None or TEST_MODULE not in report.nodeid.split("::")[0]:
            return
        if report.when == "call" or (report.when == "setup" and not report.passed):
            name = test_name(report.nodeid)
            session.test_seconds[name] = session.test_seconds.get(name, 0.0) + report.duration
            session.test_ended[name] = round(time.perf_counter() - session.budget.start, 3)  # on the budget's clock
            record = session.record(FURTHER_SEARCHES.get(name, name))
            if name in FURTHER_SEARCHES:  # it can only add failures to its verdict
                record.seconds += report.duration
                known = session.known_at_second_search.get(record.verdict, frozenset())
                ended = report.failed or (report.skipped and BUDGET_CUT in str(report.longrepr))
                if ended and set(record.failures) - known:  # only a new failure class fails it
                    record.outcome = "failed"
                return
            record.outcome = "error" if report.when == "setup" and report.failed else report.outcome
            if report.failed and record.ours:  # our bug, not the file's: ERROR with its own exit code
                record.outcome = "error"
            if report.skipped and BUDGET_CUT in str(report.longrepr) and session.conclusive.get(name):
                record.outcome = "failed" if record.failures else "passed"  # the search, cut short, stands
            load = session.runner.load_report
            if report.skipped and record.not_run is None and load is not None and not load.ok:
                from fuzz.submission.checks import Outcome
                from fuzz.submission.provenance import tier_limit

                reason = tier_limit(load.error)
                if reason:  # the file could not load because of the tier: this verdict is NOT RUN, not SKIP
                    record.not_run = Outcome(record.verdict, "not_run", f"{reason}; the file did not load")
            record.seconds += report.duration
            if report.failed and record.failing is None and report.longreprtext:
                record.error = error_line(report.longreprtext)
                record.error_text = report.longreprtext[-ERROR_TEXT_CAP:]
            if name == PREDICTION_TESTS[-1]:  # the three modes are known: say so now, not after the fuzzing
                self.print_prediction(session, early=True)

    def print_prediction(self, session, early: bool = False) -> None:
        """The runner's prediction per mode (and, at the end, the latent bugs), through the terminal reporter."""
        from fuzz.submission.outlook import outlook, lines

        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None:
            return
        prediction, latent = outlook([r.to_json() for r in session.records.values()])
        if early:  # KernelGuard screens last: its part of the leaderboard comes with the final summary
            prediction["leaderboard"].pop("kernelguard", None)
        text = lines(prediction, [] if early else latent)
        if early:
            text[0] = text[0].split("  |  ")[0] + "  (predicted now; KernelGuard's screening and the fuzzed verdicts follow)"
        terminal.ensure_newline()
        for line in text:
            terminal.write_line(line)

    def pytest_sessionfinish(self, session):
        found = _session(self.config)
        if found is None:
            return
        found.runner.tier_notes["hip_fallback"] = mark_hip_fallback(
            found.records, found.runner.tier_notes, getattr(found, "hip_builds", []))
        session.exitstatus = final_exit_status(session.exitstatus, {r.verdict: r.status for r in found.records.values()},
                                               self.config.getoption("--fail-on"))
        draw_error_maps(found.records.values(), self.report_path)
        from fuzz.search import profiles

        text = json.dumps(found.report(profiles.active()), indent=2, default=str)
        if hasattr(self.config, "workeroutput"):  # an xdist worker: its part goes to the controller (merge.py)
            from fuzz.submission.merge import WORKEROUTPUT_KEY

            self.config.workeroutput[WORKEROUTPUT_KEY] = json.loads(text)
        else:
            self.report_path.write_text(text + "\n")
        found.runner.close(wait=False)  # nothing more is asked of its processes: killed, not waited for

    def pytest_terminal_summary(self, terminalreporter):
        found = _session(self.config)
        if found is None:
            return
        write = terminalreporter.write_line
        terminalreporter.section("mxfp4-fuzz submission report")
        load = found.runner.load_report
        aiter = load.aiter_detail if load is not None and load.ok else "-"
        write(f"submission  {found.path}")
        runner = found.runner
        slow = (f", {runner.slow_runs} slow (over the {runner.timeout:g} s timeout, progressing)" if runner.slow_runs
                else "") + (f", {runner.too_slow} too slow (NOT RUN)" if runner.too_slow else "")
        write(f"tier {found.tier}, {aiter}; {runner.run_count} programs{slow}, "
              f"{runner.restarts} worker restarts, {time.perf_counter() - found.started:.1f} s")
        self.print_prediction(found)
        width = max([len(v) for v in found.records] + [8])
        for record in found.records.values():
            line = record.line().splitlines()[0] if record.line() else ""
            write(f"  {record.verdict:<{width}}  {record.status:<8}  {line[:150]}")
        if self.config.getoption("tbstyle") == "no":  # mxfp4-fuzz check: pytest printed no failure sections
            for record in found.records.values():
                if record.status == "FAIL" and record.failing is not None:
                    for failing in record.failures.values() or [record.failing]:
                        write("")
                        for line in failing.render().splitlines():
                            write(line)
        for build in getattr(found, "hip_builds", []):  # builds_gfx950's figures (the table shows one line)
            for line in build_lines(build):
                write(line)
        for line in launch_lines([r.to_json() for r in found.records.values()]):
            write(line)
        for line in tier_notes.lines(tier_notes_json(runner.tier_notes)):
            write(line)
        if found.steering.note:
            write(f"steering    {found.steering.note}")
        if getattr(runner, "compile_ahead", None) is not None:
            write(f"compiled    {runner.compile_ahead.describe()}")
        if getattr(runner, "describe_speculation", None) is not None and runner.describe_speculation():
            write(f"speculated  {runner.describe_speculation()}")
        if found.budget.on:
            cut = [v for v in found.budget.cut if v not in FURTHER_SEARCHES]
            uncut = (f"; the runner's prediction ran uncut (a GPU's default), the fuzzed verdicts got "
                     f"{found.budget.extended:.1f} s more" if found.budget.extended > 0.05 else
                     "; the runner's prediction ran uncut (a GPU's default)" if found.budget.uncut_prediction else "")
            write(f"budget      {found.budget.seconds:g} s (--budget SECONDS; 0: none){uncut}: "
                  + (f"cut short {', '.join(cut)}" if cut else "no verdict cut short"))
        write(f"report      {self.report_path.resolve()}")
