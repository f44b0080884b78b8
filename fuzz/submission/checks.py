"""The verdicts on a submission file: each ``check_*`` builds one program of calls, runs it in the
worker and judges it, returning an ``Outcome`` (pass, fail with a card, inconclusive, reported, or
not run).

Each verdict blames only its own hazard, so a submission gets exactly the verdicts it deserves:

- crashes and timeouts (hangs: no progress for the timeout) fail whichever verdict ran into them (the
  official harness would die too); a program that kept progressing but is too slow for the tier
  (Triton's interpreter: estimated beyond the hard cap) leaves its verdict not run, never failed, and
  a slow one that answers is judged as usual, its summary saying it was slow;
- a clean exception on an in-contract shape is the contract verdict's to report; the other verdicts
  call that example inconclusive (Hypothesis draws another);
- stale state is judged differentially: the output after a history of calls must equal, bit for bit,
  the output of a freshly executed module on the same values. A kernel that is wrong from the start
  is the correctness verdict's to report, not a stale-state failure.

A subject that documents non-determinism (a module-level ``NONDETERMINISTIC = True``, e.g. for
split-K with atomics) gets its determinism difference reported, not failed, and its stale-state
comparisons are made with the oracle instead of bit for bit.
"""
from __future__ import annotations

import dataclasses
import os
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import torch

from fuzz.judge.aiter_scale_reads import padding_lines
from fuzz.judge.attribution import explain, failure_class
from fuzz.judge.cards import FailureCard
from fuzz.judge.error_map import difference_map, launch_tiles
from fuzz.judge.verdicts import accumulation_model, check_product, official_reference, official_verdict
from fuzz.search.strategies import MAX_SEED, Case
from fuzz.submission.budget import BudgetExhausted
from fuzz.submission.judged import exact_product, judged_inputs
from fuzz.submission.lane_order import LaneOrderDoubt
from fuzz.submission.program import Program
from fuzz.submission.runner_programs import RECHECK_STEP, official_cases, official_program
from fuzz.submission.provenance import aiter_note, crash_in_stand_in, tier_limit, where_note
from fuzz.submission.run_records import (atomic_add_kernels, bf16_atomic_adds, count_calls, last_trace,
                                         launch_configs, merge_tier_notes, record_shape_evidence)

CPU_OFFICIAL_N = 128  # the CPU tier keeps the official M, K and seeds and narrows N
RECHECK_ITERATIONS = 4  # stale_recheck's iterations (the leaderboard mode's are runner_programs')
OUTPUT_TAIL_LINES = 12


@dataclass
class Outcome:
    verdict: str
    status: str  # pass | fail | inconclusive | reported | not_run (too slow for the tier: says nothing)
    summary: str
    card: FailureCard | None = None
    program: list = field(default_factory=list)  # the program in words
    output_tail: str = ""  # what the submission printed last (crashes and timeouts)
    failure_class: str = ""  # what kind of failure (attribution.FAILURE_CLASSES, crash, timeout): one bug per class
    launches: list = field(default_factory=list)  # the distinct Triton launch configurations the program ran
    shapes: list = field(default_factory=list)  # the distinct (M, N, K) of the program's inputs

    def render(self) -> str:
        if self.card is None:
            return f"{self.status.upper().replace('_', ' ')} {self.verdict}: {self.summary}"
        return self.card.render()

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict, "status": self.status, "summary": self.summary,
            "card": None if self.card is None else self.card.to_json(),
            "program": list(self.program), "output_tail": self.output_tail, "failure_class": self.failure_class,
            "card_text": "" if self.card is None else self.card.render(),
        }




def reseeded(case: Case, offset: int) -> Case:
    """The same case with other values."""
    return dataclasses.replace(case, seed=(case.seed + offset) % (MAX_SEED + 1))


class Context:
    """What every check needs: the runner, the tier, and whether the subject documents non-determinism."""

    def __init__(self, runner, tier: str):
        self.runner, self.tier = runner, tier
        self.subject = Path(runner.path).name
        self.lane_doubt = LaneOrderDoubt(self)  # does a failure rest on the order of a HIP wave's lanes

    @property
    def nondeterministic(self) -> bool:
        return self.runner.load().nondeterministic

    def may_vary(self, *records: dict) -> bool:
        """Outputs of these calls may differ legally: documented (NONDETERMINISTIC), or float atomic adds
        landing in arrival order."""
        return self.nondeterministic or bool(atomic_add_kernels(*records))

    def execute(self, program: Program):
        result = self.runner.run(program.steps)
        self.last_result = result  # its path traces go on the cards of this program's outcome
        outputs = {r["out"]: r for r in result.calls()} if result.kind == "ok" else {}
        merge_tier_notes(self.runner.tier_notes, outputs.values())
        count_calls(self.runner.call_stats, outputs.values())
        record_shape_evidence(self.runner.shape_evidence, program, outputs)
        return result, outputs

    @property
    def autotune_configs(self) -> int:
        """The most configs any autotuned kernel of the file has (1 when it autotunes nothing)."""
        return max([len(k["configs"]) for k in self.runner.tier_notes["autotune"].values()] + [1])

    def outcome(self, verdict, status, summary, program, case=None, lines=(), worst=None, official=None,
                result=None, failure_class="", error_map=None) -> Outcome:
        """An Outcome; a failing one gets a card for ``case`` with ``lines``, the program, for a crash or a
        timeout the last lines the submission printed, and for a wrong output its ``error_map`` with the
        output tiles of the program's Triton launches."""
        tail = result.tail(OUTPUT_TAIL_LINES) if result is not None and result.kind not in ("ok", "too_slow") else ""
        past = self.lane_doubt.take_note()  # a lane-order doubt set aside: the output reads past its inputs
        if status == "fail" and past:
            summary += past
        slow = getattr(self, "last_result", None)
        if slow is not None and slow.slow_note():
            summary = f"{summary}; {slow.slow_note()}"
        card = None
        ran = result if result is not None else getattr(self, "last_result", None)
        if status == "fail":
            if error_map is not None:
                launches = [launch for record in getattr(ran, "records", None) or []
                            for launch in record.get("launches_config", [])]
                error_map = {**error_map, "tiles": launch_tiles(launches)}
            why = list(lines) + list(dict.fromkeys(  # the emulated aiter read past what the file passed
                line for record in getattr(ran, "records", None) or [] for line in record.get("aiter_reads_past", [])))
            why += [f"program {line}" for line in program.numbered()]
            why += [f"output | {line}" for line in tail.splitlines()]
            card = FailureCard(
                case=case, subject=self.subject, path="", tier=self.tier, check=verdict, summary=summary,
                worst=worst, attribution=why, official_passed=None if official is None else official.passed,
                official_summary="" if official is None else official.summary,
                trace=last_trace(ran), error_map=error_map)
        return Outcome(verdict, status, summary, card, program.numbered(), tail,
                       failure_class if status == "fail" else "", launch_configs(ran), program.shapes())

    def death(self, verdict: str, program: Program, result, case: Case) -> Outcome:
        """A crash or a hang fails the verdict; a too-slow run leaves it not run."""
        running = program.line_of(result.step)
        step_case = case
        if result.step is not None and 0 <= result.step < len(program.steps):
            slot = program.steps[result.step].get("slot")
            step_case = program.case_of.get(slot, case) if slot else case
        summary = result.describe_death() + (f" during {running}" if running else "")
        if result.kind == "too_slow":
            where = "CPU" if self.tier == "cpu" else f"the {self.tier} tier"
            return self.outcome(verdict, "not_run", f"not reached on {where}: {summary}", program, result=result)
        ours = crash_in_stand_in(result.stderr, self.runner.path) if result.signal_name else None
        if ours is not None:
            return self.outcome(verdict, "not_run", f"not runnable on this tier: {summary} inside {ours}, a stand-in "
                                "of ours (its kernel reads through raw pointers; past what the file passed, the CPU "
                                "faults where the GPU reads whatever lies there): ours to tell apart, not the "
                                "file's verdict", program, result=result)
        return self.outcome(verdict, "fail", summary, program, step_case, result=result, failure_class=result.kind)

    # -- judging one output ---------------------------------------------------------------------

    def judge(self, y: torch.Tensor, case: Case, record: dict | None = None) -> "Judgement":
        """Our oracle and the official 1e-2 check on output y of ``case``: RNE on every tier (the CPU
        tier's interpreter is patched to convert as compiled Triton does).

        An output built by bf16 atomic adds (``record`` says so) went through one bf16 rounding per add:
        where it fails the one-rounding bound but lies within the bound of those roundings, the error is
        the file's chosen accumulation, not a wrong index or scale, and the runner's own rule decides
        (its 1e-2 check on this output; measured: 2 to 8 bf16 adds fail it at the runner's K = 7168)."""
        data, _ = judged_inputs(case)  # on the CPU: the reference's NaN payload semantics hold there (see README)
        exact = exact_product(data)
        official = official_verdict(y, official_reference(exact))
        v = check_product(y, data, rounding="rne", exact=exact, **accumulation_model())
        summary = f"{v.summary} [rounded to nearest even]"
        adds, how, unobservable = bf16_atomic_adds(record or {})
        if v.passed or adds < 2 and not unobservable:
            return Judgement(v.passed, summary, v.worst, official, error_map=v.error_map)
        if unobservable:
            return Judgement(False, summary, v.worst, official, unobservable)
        within = check_product(y, data, rounding="rne", exact=exact, bf16_atomic_adds=adds, **accumulation_model())
        if not within.passed:
            return Judgement(False, f"{summary}; outside the roundings of {how} too: {within.summary}", within.worst,
                             official, error_map=within.error_map)
        rule = "the runner's 1e-2 check passes this output" if official.passed else \
            f"they exceed the runner's 1e-2 check ({official.summary}): accumulate the partials in fp32"
        return Judgement(official.passed, f"{summary}; within the roundings of {how}, and {rule}", v.worst, official,
                         error_map=None if official.passed else v.error_map)


@dataclass(frozen=True)
class Judgement:
    passed: bool
    summary: str
    worst: dict | None
    official: object  # the official verdict on the same output
    unobservable: str = ""  # a failure this tier cannot confirm (NOT RUN, naming why)
    error_map: dict | None = None  # where the output is wrong (fuzz.judge.error_map), when it failed


def tier_limited_call(ctx, verdict: str, program, outputs: dict):
    """A NOT RUN outcome when a call of the program raised because of the tier (no ROCm, an unmodelled
    API), else None: what the CPU cannot run says nothing about the runner."""
    for record in outputs.values():
        reason = tier_limit(record.get("exception"))
        if reason:
            return ctx.outcome(verdict, "not_run", reason, program)
    return None


def contract_problem(record: dict, case: Case) -> str | None:
    """What is wrong with a call's return value by the contract (type, shape, dtype, device), if anything."""
    issue = contract_issue(record, case)
    return None if issue is None else issue[1]


# The kinds of contract breach, each its own failure class (one exception type each, like correctness's)
CONTRACT_CLASSES = ("raises", "unreadable", "not_a_tensor", "wrong_shape", "wrong_dtype", "wrong_device")


def contract_issue(record: dict, case: Case) -> tuple[str, str] | None:
    """(CONTRACT_CLASSES kind, what is wrong) for a call's return value, or None when it keeps the contract."""
    if "exception" in record:
        e = record["exception"]
        located = f" [device fault {e['located']}]" if e.get("located") else ""  # runner._locate_fault
        return "raises", f"raised {e['type']}: {e['message']}" + where_note(e) + located + aiter_note(e)
    if "inspect_error" in record:
        e = record["inspect_error"]
        return "unreadable", f"returned a {record['type']} that cannot be copied: {e['type']}: {e['message']}"
    if "file" not in record:
        return "not_a_tensor", f"returned a {record['type']}, not a torch.Tensor"
    if record["shape"] != [case.m, case.n]:
        return "wrong_shape", f"returned shape {tuple(record['shape'])}, expected (M, N) = ({case.m}, {case.n})"
    if record["dtype"] != "torch.bfloat16":
        return "wrong_dtype", f"returned dtype {record['dtype']}, expected torch.bfloat16"
    if record["device"] != record["input_device"]:
        return "wrong_device", f"returned a tensor on {record['device']}, A is on {record['input_device']}"
    return None


def _bits_equal(x: torch.Tensor, y: torch.Tensor) -> bool:
    return x.shape == y.shape and x.dtype == y.dtype and torch.equal(x.view(torch.int16), y.view(torch.int16))


def _differing(x: torch.Tensor, y: torch.Tensor) -> int:
    return int((x.view(torch.int16) != y.view(torch.int16)).sum())


# ---------------------------------------------------------------------------------------------------
# The checks


def check_loads(ctx: Context) -> Outcome:
    """The file exists, compiles, its imports resolve and it defines custom_kernel: one clear line
    naming the stage that failed, never a traceback of torch internals."""
    report = ctx.runner.load()
    if not report.ok:
        reason = tier_limit(report.error)
        if reason:
            return Outcome("loads", "not_run", f"{reason}; loading stopped there")
        return Outcome("loads", "fail", report.describe_error())
    flag = ", documents non-determinism (NONDETERMINISTIC = True)" if report.nondeterministic else ""
    fresh = ("each program forks from the loaded module" if report.fresh_module == "fork" else
             "each program executes the file afresh")
    return Outcome("loads", "pass", f"loaded with aiter {report.aiter}{flag}; worker start "
                   f"{report.worker_start_seconds:.1f} s, module code {report.exec_seconds * 1000:.0f} ms ({fresh})")


def _expected_now(case: Case) -> torch.Tensor:
    data, _ = judged_inputs(case)
    return official_reference(exact_product(data))


_EXPECTED_KEPT = 48  # the official tests, the modes' checked calls (7 + 25) and room to spare
_expected: OrderedDict = OrderedDict()  # case -> Future of its expected output, most recent last
_expecting: list = []  # the one thread that computes them, started on first use


def expected_future(case: Case) -> Future:
    """The expected output of ``case`` (the exact product rounded to bf16) as a Future computed on this
    process's expecting thread, shared by every caller: a case asked for twice is computed once."""
    future = _expected.get(case)
    if future is None or future.cancelled():
        if not _expecting:
            _expecting.append(ThreadPoolExecutor(1, thread_name_prefix="mxfp4-fuzz-expected"))
        future = _expected[case] = _expecting[0].submit(_expected_now, case)
        while len(_expected) > _EXPECTED_KEPT:
            _expected.popitem(last=False)
    _expected.move_to_end(case)
    return future


def _official_expected(case: Case) -> torch.Tensor:
    """The exact product rounded to bf16: the same official cases for every file a process checks."""
    return expected_future(case).result()


def prefetch_official_expected(tier: str) -> None:
    """Start computing the official tests' expected outputs now (a session's start, while the worker loads
    the file). On a GPU host the first of them also starts this process's CUDA context: 0.4 to 2.1 s of the
    official verdict's judging on the H100 host (stop 50), which the worker's load now hides. Not on the CPU
    tier: there the narrowed run comes first and the runner's shapes may not run at all, and the thread would
    take the core the worker loads on."""
    if tier == "cpu" or os.environ.get("MXFP4_FUZZ_PREFETCH", "1") == "0":  # 0: off (A/B timings)
        return
    for case in official_cases(tier):
        expected_future(case)


def execute_judged(ctx: "Context", program: Program, cases: list) -> tuple:
    """Run ``program`` and, meanwhile on the expecting thread of this process, the expected outputs of
    ``cases`` (the runner's shapes: on the CPU tier each costs as much as the worker's build of the same
    inputs, 25 of them in a leaderboard mode) -> (result, outputs, [expected per case], [] when the program
    did not end ok)."""
    expecting = [expected_future(case) for case in cases]
    try:
        result, outputs = ctx.execute(program)
        wanted = [future.result() for future in expecting] if result.kind == "ok" else []
    finally:
        for future in expecting:  # a death or the budget: what has not started is not needed
            future.cancel()
    return result, outputs, wanted


def explain_wrong_output(y: torch.Tensor, case: Case) -> tuple[list[str], str]:
    """(the attribution's lines, its failure class) for a failing output at ``case``: correctness and the
    runner's verdicts (official, the modes) say "which stage is wrong" alike (a seconds-long pass of the
    oracle, paid only on a failure)."""
    data, _ = judged_inputs(case)
    findings = explain(y, data, **accumulation_model())
    return [finding.text for finding in findings], failure_class(findings)


def judge_official(ctx: Context, cases: list):
    """Runs the official program on ``cases`` -> (Outcome or None when every test passed, result, program)."""
    program = official_program(cases)
    result, outputs, wanted = execute_judged(ctx, program, cases)
    if result.kind != "ok":
        return ctx.death("official", program, result, cases[0]), result, program
    limited = tier_limited_call(ctx, "official", program, outputs)
    if limited is not None:
        return limited, result, program
    doubted = None  # a test whose failure rests on the lane order: a later test may still fail for sure
    for i, (case, expected) in enumerate(zip(cases, wanted)):
        record = outputs[f"y{i}"]
        problem = contract_problem(record, case)
        if problem:
            return ctx.outcome("official", "fail", f"test {i}: {problem}", program, case), result, program
        official = official_verdict(result.tensor(record), expected.clone())
        if not official.passed:
            doubt = ctx.lane_doubt.failure(program, outputs, f"y{i}", case,
                                           lambda out: not official_verdict(out, expected.clone()).passed)
            if doubt:
                doubted = doubted or ctx.outcome("official", "not_run", f"test {i}: {official.summary}; {doubt}", program)
                continue
            lines, kind = explain_wrong_output(result.tensor(record), case)
            return (ctx.outcome("official", "fail", f"test {i}: {official.summary}", program, case, lines,
                                official=official, failure_class=kind, error_map=official.error_map),
                    result, program)
    return doubted, result, program


def _shapes(cases: list) -> str:
    return ", ".join(f"({c.m},{c.n},{c.k})" for c in cases)


def call_seconds(result) -> dict:
    """out name -> seconds of each call of a run (empty unless it ran to the end), less what the CPU model
    spent building the file's HIP in it: a one-time cost (cached after), not one that grows with N."""
    if result.kind != "ok":
        return {}
    return {r["out"]: max(0.0, r.get("seconds", 0.0) - sum(b.get("seconds", 0.0) for b in r.get("hip_builds", [])))
            for r in result.calls()}


def projected_seconds(result, cases: list, reduced: list, wider=None) -> float:
    """What the runner's shapes would take here, from runs of narrowed ones.

    From one run (``result`` at the ``reduced`` shapes): each call's time scaled by how much wider its N
    is, an upper estimate where cost grows at most in proportion to N (interpreted GEMM programs, emulated
    GEMMs) and a gross overestimate where it does not (a quantizer of A launches the same grid whatever N
    is). With a second run at wider shapes (``wider`` = (result, shapes)), each call's time is fitted as
    a + b * N through the two points (b >= 0) and read at the runner's N."""
    first = call_seconds(result)
    second = call_seconds(wider[0]) if wider is not None else {}
    total = 0.0
    for i, (full, small) in enumerate(zip(cases, reduced)):
        t1 = first.get(f"y{i}", 0.0)
        if wider is None:
            total += t1 * full.n / small.n
            continue
        n2, t2 = wider[1][i].n, second.get(f"y{i}", 0.0)
        slope = max(0.0, (t2 - t1) / (n2 - small.n))
        total += max(t1, t2) + slope * (full.n - max(small.n, n2))
    return total


def check_official(ctx: Context) -> Outcome:
    """The official test mode: the runner's four test shapes with their seeds, one after another in one
    process, one call each on new inputs, each output against the exact product rounded to bf16 with
    rtol = atol = 1e-2. Real files choose kernels and configs from tables keyed on the runner's exact
    (M, N, K), so only those shapes are the runner's check.

    Where Triton interprets, the four tests run first with N narrowed to CPU_OFFICIAL_N (a cost probe);
    the runner's shapes then run unless the probe projects them past the hard cap (proportionally to N,
    then, if that is past it, from a second probe at twice the N: see ``projected_seconds``). A verdict from the
    narrowed shapes alone says so: a pass is a pass at those shapes, and a failure there is not called an
    official FAIL until the runner's shapes confirm it (not run otherwise)."""
    cases = official_cases(ctx.tier)
    narrowed = None  # (outcome or None, program, shapes) of the narrowed run, where the tier has one
    if ctx.tier == "cpu":
        reduced = [dataclasses.replace(c, n=CPU_OFFICIAL_N) for c in cases]
        small_outcome, small_result, small_program = judge_official(ctx, reduced)
        if small_outcome is not None and small_outcome.status == "not_run":
            return small_outcome
        narrowed = small_outcome, small_program, reduced
        projected = projected_seconds(small_result, cases, reduced)
        how = "the narrowed run"
        cap = ctx.runner.cap_now()  # the hard cap, or less where the time budget's deadline comes first
        if small_result.kind == "ok" and projected > cap:
            # Proportional to N is an overestimate when the cost does not grow with N: a second narrowed run
            # at twice the N tells how it grows (its own verdict is not used: the runner's shapes decide).
            wider = [dataclasses.replace(c, n=2 * CPU_OFFICIAL_N) for c in cases]
            try:
                _, wider_result, _ = judge_official(ctx, wider)
            except BudgetExhausted as cut:  # the narrowed run's verdict stands, with why the runner's shapes did not run
                ctx.runner.runner_shapes_unaffordable = (f"projected {projected:.0f} s from {how}; the second narrowed "
                                                         f"run that would refine it did not fit: {cut.why}")
                return narrowed_official(ctx, narrowed, f"the runner's shapes {_shapes(cases)} were not run here: "
                                         f"{ctx.runner.runner_shapes_unaffordable}")
            if wider_result.kind == "ok":
                projected = projected_seconds(small_result, cases, reduced, (wider_result, wider))
                how = f"narrowed runs at N={CPU_OFFICIAL_N} and N={2 * CPU_OFFICIAL_N}"
        cap = ctx.runner.cap_now()
        limit = (f"the hard cap of {ctx.runner.hard_cap:g} s" if cap >= ctx.runner.hard_cap else
                 f"the {cap:.0f} s the time budget leaves (--budget 0 lifts it)")
        if small_result.kind == "ok" and projected > cap:  # a crash or hang: the runner's shapes decide
            ctx.runner.runner_shapes_unaffordable = f"projected {projected:.0f} s from {how}, over {limit}"
            return narrowed_official(ctx, narrowed, f"the runner's shapes {_shapes(cases)} were not run here: "
                                     f"{ctx.runner.runner_shapes_unaffordable}")
    try:
        outcome, result, program = judge_official(ctx, cases)
        if result is not None and result.kind == "ok":
            ctx.runner.runner_shape_seconds = {kind: result.timing.get(kind, 0.0) / len(cases) for kind in ("build", "call")}
    except BudgetExhausted as cut:
        if narrowed is None:
            raise
        ctx.runner.runner_shapes_unaffordable = f"not finished here: {cut.why}"
        return narrowed_official(ctx, narrowed, f"the runner's shapes were {ctx.runner.runner_shapes_unaffordable}")
    if outcome is None:
        return ctx.outcome("official", "pass", f"official check passes on the runner's shapes {_shapes(cases)}", program)
    if outcome.status == "not_run" and narrowed is not None:
        return narrowed_official(ctx, narrowed, outcome.summary)
    return outcome


def narrowed_official(ctx: Context, narrowed: tuple, reason: str) -> Outcome:
    """The official verdict from the narrowed run alone (the runner's shapes not run, for ``reason``): a pass
    says so; a failure is not confirmed, so not run."""
    small_outcome, small_program, reduced = narrowed
    where = f"N narrowed to {CPU_OFFICIAL_N}: {_shapes(reduced)}"
    if small_outcome is None:
        return ctx.outcome("official", "pass", f"passes with {where} (not the runner's check: {reason})", small_program)
    return ctx.outcome("official", "not_run", f"fails with {where} ({small_outcome.summary}); not confirmed at the "
                       f"runner's shapes: {reason}", small_program)


def check_contract(ctx: Context, cases: list) -> Outcome:
    """In-contract shapes called one after another in one module (as the harness runs its tests):
    every call returns a bf16 torch.Tensor of shape (M, N) on A's device, without an exception."""
    program = Program()
    for i, case in enumerate(cases):
        program.build(f"d{i}", case)
        program.call(f"d{i}", f"y{i}")
        program.free(f"d{i}")
    result, outputs = ctx.execute(program)
    if result.kind != "ok":
        return ctx.death("contract", program, result, cases[0])
    limited = tier_limited_call(ctx, "contract", program, outputs)
    if limited is not None:
        return limited
    for i, case in enumerate(cases):
        issue = contract_issue(outputs[f"y{i}"], case)
        if issue:
            return ctx.outcome("contract", "fail", f"call {i + 1} on an in-contract shape {issue[1]}", program, case,
                               failure_class=issue[0])
    return ctx.outcome("contract", "pass", f"{len(cases)} in-contract calls returned bf16 (M, N) tensors", program)


def check_beyond_contract(ctx: Context, case: Case) -> Outcome:
    """A shape outside the stated contract (N % 64 != 0 or K % 64 != 0): a correct result or a clean
    exception; garbage, a crash or a hang fails."""
    program = Program.single_call(case)
    result, outputs = ctx.execute(program)
    if result.kind != "ok":
        return ctx.death("contract_beyond", program, result, case)
    record = outputs["y"]
    error = record.get("exception")
    if error and case.k % 64 and "'NoneType' object" in error["message"] and not error["device_fault"]:
        # K % 64 != 0 has no (16, 16)-shuffled weight: B_shuffle is None here (Case.build). A call raising on it
        # refuses cleanly wherever it raised: in the file's code, or in aiter's given the file's None (aiter's
        # own code dereferences B as the emulation's does), not "the emulated aiter failed"
        return ctx.outcome("contract_beyond", "pass", f"refused cleanly: K = {case.k} has no preshuffled B "
                           f"(B_shuffle is None) and the call raised on it: {error['type']}: "
                           f"{error['message'].splitlines()[0][:160]}", program)
    if error and tier_limit(error):  # raised because of this tier (no ROCm, an unmodelled API): not a refusal
        return ctx.outcome("contract_beyond", "not_run", tier_limit(error), program)
    if error and not error["device_fault"]:
        return ctx.outcome("contract_beyond", "pass", f"refused cleanly: {error['type']}: {error['message']}", program)
    issue = contract_issue(record, case)
    if issue:
        return ctx.outcome("contract_beyond", "fail", f"beyond the contract the call {issue[1]}", program, case,
                           failure_class=issue[0])
    judgement = ctx.judge(result.tensor(record), case, record)
    if judgement.unobservable:
        return ctx.outcome("contract_beyond", "not_run", f"{judgement.unobservable}: {judgement.summary}", program)
    doubt = "" if judgement.passed else ctx.lane_doubt.failure(
        program, outputs, "y", case, lambda out: not ctx.judge(out, case, record).passed)
    if doubt:
        return ctx.outcome("contract_beyond", "not_run", f"{judgement.summary}; {doubt}", program)
    if not judgement.passed:
        return ctx.outcome("contract_beyond", "fail", f"returned a wrong result instead of refusing: {judgement.summary}",
                           program, case, worst=judgement.worst, official=judgement.official,
                           failure_class="wrong_result", error_map=judgement.error_map)
    return ctx.outcome("contract_beyond", "pass", f"correct result: {judgement.summary}", program)


def check_correctness(ctx: Context, case: Case) -> Outcome:
    """``_correctness_once`` for every config of the file's autotuned kernels (the GPU picks one by
    timing, the CPU cannot know which: each is a variant the runner may run); the first failing config
    is the verdict. A file that autotunes nothing makes one call."""
    outcome = _correctness_once(ctx, case, None)
    choices = ctx.autotune_configs
    for choice in range(1, choices):
        if outcome.status != "pass":
            break
        outcome = _correctness_once(ctx, case, choice)
    if choices > 1 and outcome.status == "pass":
        outcome.summary += f" [each of the {choices} autotune configs]"
    return outcome


def _correctness_once(ctx: Context, case: Case, autotune_choice) -> Outcome:
    """One fresh call; the output against the exact product and the accumulation bound (the oracle
    ladder), with the official 1e-2 verdict on the same output beside it. A failure carries the
    attribution's findings and its class (``attribution.failure_class``)."""
    program = Program.single_call(case, autotune_choice)
    result, outputs = ctx.execute(program)
    if result.kind != "ok":
        return ctx.death("correctness", program, result, case)
    record = outputs["y"]
    if "exception" in record:
        return ctx.outcome("correctness", "inconclusive", contract_problem(record, case), program)
    if "file" not in record:
        return ctx.outcome("correctness", "fail", contract_problem(record, case), program, case)
    y = result.tensor(record)
    judgement = ctx.judge(y, case, record)
    if judgement.passed:
        return ctx.outcome("correctness", "pass", judgement.summary, program)
    if judgement.unobservable:
        return ctx.outcome("correctness", "not_run", f"{judgement.unobservable}: {judgement.summary}", program)
    doubt = ctx.lane_doubt.failure(program, outputs, "y", case, lambda out: not ctx.judge(out, case, record).passed)
    if doubt:
        return ctx.outcome("correctness", "not_run", f"{judgement.summary}; {doubt}", program)
    lines, own_class = explain_wrong_output(y, case)
    lines = lines + padding_lines(record.get("trace", []), case.scale_pad_fill)
    tuned = record.get("autotune", {})
    lines = lines + [f"autotuned {kernel}: config {r['ran'][0]} of {len(r['configs'])}: {r['configs'][r['ran'][0]]}"
                           for kernel, r in tuned.items() if r["ran"]]
    summary = judgement.summary + (f" (autotune config {autotune_choice or 0})" if tuned else "")
    kind, note = _class_at_this_shape(ctx, case, autotune_choice, own_class)
    return ctx.outcome("correctness", "fail", summary, program, case, lines + note, judgement.worst,
                       judgement.official, failure_class=kind, error_map=judgement.error_map)


def _class_at_this_shape(ctx: Context, case: Case, autotune_choice, own: str) -> tuple[str, list[str]]:
    """The failure class, kept stable across value regimes: when the same shape and layout with plain
    randn inputs fails too, its class is the failing example's.

    Why: Hypothesis tells bugs apart by exception type (one per class). Adversarial values (one-hot,
    sparse, outliers) leave a shape bug too few wrong elements to recognise (a dropped K range read
    as a wrong layout, or as plain wrong values), so while shrinking it one bug would surface as
    several "distinct" failures. A bug that only some values trigger passes the randn probe and keeps
    the class of its own output."""
    plain = dataclasses.replace(case, a_regime="randn", b_regime="randn", a_exponent=0, b_exponent=0,
                                specials=(), scale_pad_fill=0)
    if plain == case:
        return own, []
    kept = ctx.last_result  # the card's path trace is the failing program's, not the probe's
    program = Program.single_call(plain, autotune_choice)
    result, outputs = ctx.execute(program)
    ctx.last_result = kept
    record = outputs.get("y", {})
    if result.kind != "ok" or "file" not in record:
        return own, []
    y = result.tensor(record)
    if ctx.judge(y, plain, record).passed:
        return own, []
    _, kind = explain_wrong_output(y, plain)
    if kind == own:
        return own, []
    return kind, [f"failure class {kind} (not {own}): the same shape and layout with randn inputs fails as {kind}"]


def check_immutability(ctx: Context, case: Case) -> Outcome:
    """Every input tensor (its whole storage) byte-identical after the call. The official harness
    passes a clone, so a kernel that writes into its inputs passes there and corrupts a caller here."""
    program = Program.single_call(case)
    result, outputs = ctx.execute(program)
    if result.kind != "ok":
        return ctx.death("immutability", program, result, case)
    record = outputs["y"]
    if "exception" in record:
        return ctx.outcome("immutability", "inconclusive", contract_problem(record, case), program)
    if record["mutated"]:
        changed = ", ".join(m["input"] + ("" if m["inside_elements"] else " (only outside its elements)")
                            for m in record["mutated"])
        return ctx.outcome("immutability", "fail", f"the call wrote into its inputs: {changed}", program, case,
                           ["the official harness calls custom_kernel on a clone and checks against the original, "
                            "so it cannot see this"])
    return ctx.outcome("immutability", "pass", "all five inputs byte-identical after the call", program)


def check_aliasing(ctx: Context, case: Case) -> Outcome:
    """A second call (other values, same shape) must not overwrite the tensor the first call returned."""
    program = Program()
    program.build("d1", case)
    program.call("d1", "y1")
    program.build("d2", reseeded(case, 1))
    program.call("d2", "y2")
    result, outputs = ctx.execute(program)
    if result.kind != "ok":
        return ctx.death("aliasing", program, result, case)
    first, second = outputs["y1"], outputs["y2"]
    if "exception" in first or "exception" in second or "file" not in first or "file" not in second:
        return ctx.outcome("aliasing", "inconclusive", "a call did not return a tensor", program)
    if "y1" in second["overwritten"] or "y1" in second["shares_memory_with"]:
        how = "overwrote" if "y1" in second["overwritten"] else "returned the same storage as"
        lines = ["the official harness checks each output before the next call, so it cannot see this"]
        held = second.get("overwritten_files", {}).get("y1") or second["file"]  # what the caller holds as y1 now
        judgement = ctx.judge(torch.load(held, weights_only=True), case, first)
        lines.append(f"the oracle on the first result as the caller now holds it: {judgement.summary}")
        return ctx.outcome("aliasing", "fail", f"call 2 {how} the tensor call 1 returned: the caller's first "
                           "result changes after it was returned", program, case, lines,
                           error_map=judgement.error_map)
    return ctx.outcome("aliasing", "pass", "the first output is untouched by the second call", program)


def check_determinism(ctx: Context, case: Case) -> Outcome:
    """The same input object twice: bitwise the same output. A documented non-deterministic subject
    (``NONDETERMINISTIC = True``) gets the difference reported, not failed."""
    program = Program()
    program.build("d", case)
    program.call("d", "y1")
    program.call("d", "y2")
    result, outputs = ctx.execute(program)
    if result.kind != "ok":
        return ctx.death("determinism", program, result, case)
    first, second = outputs["y1"], outputs["y2"]
    if "file" not in first or "file" not in second:
        return ctx.outcome("determinism", "inconclusive", "a call did not return a tensor", program)
    y1, y2 = result.tensor(first), result.tensor(second)
    if _bits_equal(y1, y2):
        return ctx.outcome("determinism", "pass", "two calls on the same input gave bitwise the same output", program)
    summary = f"two calls on the same input differ in {_differing(y1, y2)} of {y1.numel()} elements"
    if ctx.nondeterministic:
        return ctx.outcome("determinism", "reported", summary + " (documented: NONDETERMINISTIC = True)", program)
    atomics = atomic_add_kernels(first, second)
    if atomics:  # the runner checks values, not repeatability: atomics in arrival order are legal there
        return ctx.outcome("determinism", "reported", summary + f" (float atomic adds in {', '.join(atomics)}: a GPU "
                           "adds them in arrival order; both outputs are judged by the other verdicts)", program)
    doubt = ctx.lane_doubt.difference(program, outputs, "y1", "y2")
    if doubt:
        return ctx.outcome("determinism", "not_run", f"{summary}; {doubt}", program)
    return ctx.outcome("determinism", "fail", summary, program, case,
                       ["a split-K kernel with atomics may document this with a module-level NONDETERMINISTIC = True"],
                       error_map=difference_map(y2, y1))


# -- memory nobody wrote -----------------------------------------------------------------------------

POISONS = ("ff", "00")  # 0xFF is NaN in every float dtype; 0x00 is what a fresh CPU allocation tends to hold


def check_uninitialised(ctx: Context, case: Case) -> Outcome:
    """The same case twice, each time in a fresh module whose torch.empty* memory (at import and during
    the call) is filled with another byte: bitwise the same output, or the output read memory nobody
    wrote (on the runner: whatever the caching allocator last held there)."""
    program = Program()
    for pattern in POISONS:
        program.poison(pattern)
        program.reload()
        program.build(f"d_{pattern}", case)
        program.call(f"d_{pattern}", f"y_{pattern}")
    result, outputs = ctx.execute(program)
    if result.kind != "ok":
        return ctx.death("uninitialised", program, result, case)
    pattern = None
    for step, record in zip(program.steps, result.records):  # a fresh module under a poison that failed to load
        pattern = step.get("pattern", pattern)
        if step["do"] == "reload" and record.get("error"):
            error = record["error"]
            return ctx.outcome("uninitialised", "fail", f"the file's import depends on memory nobody wrote: with "
                               f"torch.empty* filled with 0x{pattern.upper()} it raised {error['type']}: "
                               f"{error['message'].splitlines()[0][:200] if error['message'] else ''}",
                               program, case, failure_class="uninitialised")
    first, second = (outputs[f"y_{p}"] for p in POISONS)
    if "file" not in first or "file" not in second:
        return ctx.outcome("uninitialised", "inconclusive", "a call did not return a tensor", program)
    sites = {}
    for record in (first, second):
        for site, count in record.get("poisoned_allocations", {}).items():
            sites[site] = max(sites.get(site, 0), count)
    where = ", ".join(f"{site} ({count}x)" for site, count in sorted(sites.items())) or "none in the file itself"
    y1, y2 = result.tensor(first), result.tensor(second)
    if _bits_equal(y1, y2):
        return ctx.outcome("uninitialised", "pass", f"the same output whatever torch.empty* held (poisoned "
                           f"allocations: {where})", program)
    judged = [ctx.judge(y, case, record) for y, record in ((y1, first), (y2, second))]
    if ctx.may_vary(first, second) and all(j.passed for j in judged):
        return ctx.outcome("uninitialised", "pass", "the outputs differ but both are correct (atomics in arrival "
                           f"order; poisoned allocations: {where})", program)
    doubt = ctx.lane_doubt.difference(program, outputs, *(f"y_{p}" for p in POISONS))
    if doubt:
        return ctx.outcome("uninitialised", "not_run", f"the outputs differ; {doubt}", program)
    summary = (f"the output depends on memory nobody wrote: {_differing(y1, y2)} of {y1.numel()} elements differ "
               f"between torch.empty* filled with 0xFF and with 0x00 (torch's other CPU allocations: junk words and "
               f"zeros); allocated at {where}")
    lines = [f"oracle, 0x{p.upper()} poison: {j.summary}" for p, j in zip(POISONS, judged)]
    worst = next((j for j in judged if not j.passed), judged[0])
    return ctx.outcome("uninitialised", "fail", summary, program, case, lines, worst.worst, worst.official,
                       failure_class="uninitialised", error_map=worst.error_map or difference_map(y1, y2))


# -- stale state -------------------------------------------------------------------------------------


def _fresh(program: Program, case: Case, name: str) -> None:
    """Append: a fresh module computes ``case`` into output ``name`` (the reference for the history)."""
    program.reload()
    program.build(f"{name}_inputs", case)
    program.call(f"{name}_inputs", name)


def _against_fresh(ctx: Context, verdict: str, program: Program, result, outputs, probe: str, fresh: str,
                   what: str, earlier=()) -> Outcome | None:
    """None when probe equals the fresh output; otherwise the failing (or inconclusive) Outcome."""
    case = program.case_of[probe]
    got, want = outputs[probe], outputs[fresh]
    if contract_problem(want, case):
        return ctx.outcome(verdict, "inconclusive", f"fresh call {contract_problem(want, case)}", program)
    problem = contract_problem(got, case)
    if problem:
        return ctx.outcome(verdict, "fail", f"{what}: the call {problem}; a fresh module returns a correct tensor",
                           program, case)
    y, y_fresh = result.tensor(got), result.tensor(want)
    if _bits_equal(y, y_fresh):
        return None
    judgement = ctx.judge(y, case, got)
    if ctx.may_vary(got, want) and (judgement.passed or judgement.unobservable
                                    or not ctx.judge(y_fresh, case, want).passed):
        return None
    doubt = ctx.lane_doubt.difference(program, outputs, probe, fresh)
    if doubt:
        return ctx.outcome(verdict, "not_run", f"{what}: the output differs from a fresh module's; {doubt}", program)
    lines = [f"the oracle on this output: {judgement.summary}"]
    lines += [f"it is bitwise the output {name} of an earlier call: a replay of a recorded result"
              for name in earlier if "file" in outputs[name] and _bits_equal(y, result.tensor(outputs[name]))]
    summary = f"{what}: the output differs from a fresh module's on the same values in {_differing(y, y_fresh)} of {y.numel()} elements"
    return ctx.outcome(verdict, "fail", summary, program, case, lines, judgement.worst, judgement.official,
                       error_map=judgement.error_map or difference_map(y, y_fresh))


def _history_inconclusive(outputs, names) -> bool:
    return any("exception" in outputs[n] for n in names)


def check_stale_in_place(ctx: Context, case: Case) -> Outcome:
    """New values written in place into the same tensors (same objects, same addresses) between two
    calls: a cache keyed on id(), data_ptr() or shapes serves the old result."""
    new = reseeded(case, 1)
    program = Program()
    program.build("d", case)
    program.call("d", "y1")
    program.write("d", new)
    program.call("d", "y2")
    _fresh(program, new, "y2_fresh")
    result, outputs = ctx.execute(program)
    if result.kind != "ok":
        return ctx.death("stale_in_place", program, result, new)
    if _history_inconclusive(outputs, ["y1"]):
        return ctx.outcome("stale_in_place", "inconclusive", "the first call raised", program)
    failed = _against_fresh(ctx, "stale_in_place", program, result, outputs, "y2", "y2_fresh",
                            "after new values were written in place", earlier=["y1"])
    return failed or ctx.outcome("stale_in_place", "pass", "new values in the same tensors give the fresh result", program)


def _reuse_note(result, first: int, second: int, roles=range(5), noun="inputs") -> str:
    """How many inputs the second build got back at the first build's addresses."""
    builds = [r for r in result.records if r["do"] == "build"]
    a, b = builds[first]["pointers"], builds[second]["pointers"]
    reused = sum(1 for i in roles if a[i] is not None and a[i] == b[i])
    return f"{reused} of {len(roles)} {noun} at their old addresses"


def _stale_after_reallocation(ctx: Context, verdict: str, case: Case, new: Case, roles, noun: str, what: str,
                              earlier) -> Outcome:
    """Call on ``case``, free its inputs, call on ``new`` built into the freed blocks, and compare with a
    fresh module on ``new``; ``what(reuse)`` says what happened, for the card."""
    program = Program()
    program.build("d1", case)
    program.call("d1", "y1")
    program.free("d1")
    program.build("d2", new)
    program.call("d2", "y2")
    _fresh(program, new, "y2_fresh")
    result, outputs = ctx.execute(program)
    if result.kind != "ok":
        return ctx.death(verdict, program, result, new)
    reuse = _reuse_note(result, 0, 1, roles=roles, noun=noun)
    if _history_inconclusive(outputs, ["y1"]):
        return ctx.outcome(verdict, "inconclusive", "the first call raised", program)
    failed = _against_fresh(ctx, verdict, program, result, outputs, "y2", "y2_fresh", what(reuse), earlier=earlier)
    return failed or ctx.outcome(verdict, "pass", f"{what(reuse)}: the fresh result", program)


def check_stale_reallocated(ctx: Context, case: Case) -> Outcome:
    """The inputs freed and new ones of the same sizes allocated (new objects at the old addresses, as
    the caching allocator hands them out): a cache keyed on data_ptr() serves stale data."""
    return _stale_after_reallocation(
        ctx, "stale_reallocated", case, reseeded(case, 1), range(5), "inputs",
        lambda reuse: f"after the inputs were freed and reallocated ({reuse})", earlier=["y1"])


def check_stale_new_shape(ctx: Context, case: Case, other_m: int) -> Outcome:
    """A different shape (another M, same N and K) in reallocated inputs: B's tensors come back at
    the old addresses with new values, A is new. Caches keyed on B's address, or on (N, K), go stale."""
    return _stale_after_reallocation(
        ctx, "stale_new_shape", case, dataclasses.replace(reseeded(case, 1), m=other_m), range(1, 5),
        "of B's tensors", lambda reuse: f"after a call with M={case.m}, a call with M={other_m} ({reuse})",
        earlier=())


def check_stale_recheck(ctx: Context, case: Case, iterations: int = RECHECK_ITERATIONS) -> Outcome:
    """The leaderboard's recheck loop: inputs regenerated with seed, seed+13, seed+26, ... (each new
    tuple allocated while the previous one is alive, then the previous one freed), every output
    checked. Addresses alternate between two sets, so an address-keyed cache goes stale from the
    third iteration on."""
    cases = [reseeded(case, RECHECK_STEP * i) for i in range(iterations)]
    program = Program()
    program.build("d0", cases[0])
    program.call("d0", "y0")
    for i in range(1, iterations):
        program.build(f"d{i}", cases[i])
        program.free(f"d{i - 1}")
        program.call(f"d{i}", f"y{i}")
    for i in range(1, iterations):
        _fresh(program, cases[i], f"y{i}_fresh")
    result, outputs = ctx.execute(program)
    if result.kind != "ok":
        return ctx.death("stale_recheck", program, result, case)
    if _history_inconclusive(outputs, [f"y{i}" for i in range(iterations)]):
        return ctx.outcome("stale_recheck", "inconclusive", "a call raised", program)
    for i in range(1, iterations):
        failed = _against_fresh(ctx, "stale_recheck", program, result, outputs, f"y{i}", f"y{i}_fresh",
                                f"recheck iteration {i} (seed {cases[i].seed})", earlier=[f"y{j}" for j in range(i)])
        if failed:
            return failed
    return ctx.outcome("stale_recheck", "pass", f"{iterations} recheck iterations all give the fresh result", program)
