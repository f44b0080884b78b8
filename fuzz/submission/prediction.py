"""The runner's benchmark and leaderboard modes as programs, and their judged outcome: what ``popcorn
submit`` would say before the fuzzed verdicts say anything (the ``test`` mode is the official verdict).

The runner (reference-kernels ``problems/amd_202602/eval.py``) spawns one worker process per mode that
imports the file once and serves every case of the mode in order, so module state carries from shape to
shape; our worker runs each program in a fresh module, so one program per mode is one mode:

* benchmark: a warm-up on the first benchmark shape, then each of the six benchmark shapes in order;
  each builds its inputs, makes the obligatory checked call on them (the object itself, not a clone),
  then ``TIMED_CALLS`` calls on the same object that nobody checks, and frees them;
* leaderboard: the same warm-up, then per shape the obligatory check and ``RECHECK_ITERATIONS``
  iterations that regenerate the inputs with seed + 13 (the new tuple made while the previous one is
  alive, then the previous one freed: Python rebinding), call, and check every output.

Each checked call is judged as the runner judges it: ``official_verdict`` (1e-2) against the exact
product rounded to bf16 (``_official_expected``); the first failure fails the mode, naming the shape and
the call. Seeds are the nominal ones (BENCHMARK_TESTS): the runner mixes a secret POPCORN_SEED in.

On the CPU tier N is narrowed to N / NARROWING (rounded down to a multiple of 64, the contract's; M, K and
seeds are the runner's), and a failure there is confirmed by the mode run again at the runner's N up to
the failing call before it is a FAIL (``confirm_at_runner_shape``; else NOT RUN):
building one input of a full benchmark shape costs seconds there (the reference quantizes B), and a
leaderboard mode builds 25. Dividing every N alike keeps the shapes distinct and in the runner's order of
sizes, so what the allocator hands back from one shape to the next stays as alike as narrowing allows (one
N for all made (32, 4096, 512) and (32, 2880, 512) the same shape). The verdict says so. A crash or hang fails the mode; too slow for the tier, a tier limit or the time
budget leave it NOT RUN with the reason (never FAIL).
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from fuzz.judge.verdicts import official_verdict
from fuzz.search.strategies import BENCHMARK_TESTS, Case
from fuzz.submission.budget import BudgetExhausted
from fuzz.submission.checks import (Context, Outcome, _official_expected, contract_problem,
                                    execute_judged, explain_wrong_output, tier_limited_call)
from fuzz.submission.program import Program
from fuzz.submission.runner_programs import (NARROWING, Checked, benchmark_program, leaderboard_program, mode_cases,
                                             narrowed)

MODE_VERDICTS = {"benchmark": "mode_benchmark", "leaderboard": "mode_leaderboard"}  # verdict = test name


def keyed_on_runner_n(ctx: Context) -> list[int]:
    """The runner's N values the file writes, where the tier would otherwise narrow them (the CPU tier)."""
    return runner_n_named(Path(ctx.runner.path)) if ctx.tier == "cpu" else []


def runner_case(case: Case) -> Case:
    """A narrowed mode case at the runner's own N (the same M, K and seed)."""
    for m, n, k, _ in BENCHMARK_TESTS:
        if (m, k) == (case.m, case.k) and narrowed(n) == case.n:
            return dataclasses.replace(case, n=n)
    return case


def _up_to(program: Program, out: str) -> Program:
    """``program`` cut after the call that returns ``out``."""
    cut = Program()
    cut.case_of = dict(program.case_of)
    for step, line in zip(program.steps, program.lines):
        cut._add(step, line)
        if step.get("out") == out:
            break
    return cut


def confirm_at_runner_shape(ctx: Context, mode: str, call: Checked, failure: str) -> Outcome:
    """A mode that failed with N narrowed (the CPU tier), run again at the runner's own N up to the failing
    call (the same steps: the warm-up, the shapes before, the iterations before, so a failure that rests on
    what earlier calls left behind is reproduced too), and that call judged. It fails there too: the mode's
    FAIL, confirmed. It passes: NOT RUN (a file keyed on the runner's exact N may fail only narrowed). The
    time budget running out first: NOT RUN. A FAIL is never claimed from a shape the runner does not run."""
    verdict = MODE_VERDICTS[mode]
    build = benchmark_program if mode == "benchmark" else leaderboard_program
    full_program, full_checked = build([runner_case(c) for c in mode_cases(ctx.tier)])
    program = _up_to(full_program, call.out)
    full = next(c.case for c in full_checked if c.out == call.out)
    narrowed_note = f"with N narrowed to {call.case.n}"
    try:
        result, outputs = ctx.execute(program)
    except BudgetExhausted as cut:
        return ctx.outcome(verdict, "not_run", f"{mode} mode fails {narrowed_note} at {call.where}: {failure}; not "
                           f"confirmed at the runner's N={full.n}: {cut.why}", program)
    if result.kind != "ok":
        return ctx.death(verdict, program, result, full)
    limited = tier_limited_call(ctx, verdict, program, outputs)
    if limited is not None:
        return limited
    record = outputs[call.out]
    problem = contract_problem(record, full)
    confirmed = (f"{mode} mode fails at {call.where} with N narrowed to {call.case.n}, confirmed at the runner's "
                 f"({full.m},{full.n},{full.k}) seed {full.seed} (the mode run again at the runner's N up to that call)")
    if problem:
        return ctx.outcome(verdict, "fail", f"{confirmed}: the call {problem}", program, full)
    official = official_verdict(result.tensor(record), _official_expected(full).clone())
    if official.passed:
        return ctx.outcome(verdict, "not_run", f"{mode} mode fails {narrowed_note} at {call.where}: {failure}; run "
                           f"again at the runner's N={full.n} up to that call, it passes: not a FAIL the runner would "
                           "give, as far as this tier can tell", program)
    lines, kind = explain_wrong_output(result.tensor(record), full)
    return ctx.outcome(verdict, "fail", f"{confirmed}: {official.summary}", program, full, lines, official=official,
                       failure_class=kind, error_map=official.error_map)


def _conditions(ctx: Context, keyed: list[int], at_runner_n: bool = False, skipped: str = "") -> str:
    """How the mode's shapes relate to the runner's: ``keyed`` the runner's N the file names (``keyed_on_runner_n``),
    ``at_runner_n`` whether the mode ran at them, ``skipped`` why not where it did not."""
    named = ", ".join(map(str, keyed))
    if keyed and at_runner_n:
        cut = (f"the runner's own N on the CPU tier: the file names them ({named}), so what it keeps for those exact "
               "shapes (a config, a CUDA graph, a cache keyed on them) ran as the runner runs it; ")
    else:
        cut = f"N / {NARROWING} on the CPU tier (M, K and seeds the runner's); " if ctx.tier == "cpu" else ""
        if keyed:
            cut += (f"the file names the runner's N ({named}): what it keeps for those exact shapes (a config, a CUDA "
                    f"graph, a cache keyed on them) did not run here, narrowed{skipped}; ")
    return f"{cut}nominal seeds (the runner mixes in a secret POPCORN_SEED)"


PROJECTION_MARGIN = 1.5  # the benchmark shapes are not the test shapes: v55's benchmark mode ran past a plain projection


def projected_at_runner_n(ctx: Context, program: Program) -> float | None:
    """Worker seconds ``program`` (a mode at the runner's N) would take here, from the official check's builds and
    calls at the runner's shapes (shapes of the same sizes), with a margin; None before the official check ran them."""
    per = ctx.runner.runner_shape_seconds
    if per is None:
        return None
    kinds = [step["do"] for step in program.steps]
    return PROJECTION_MARGIN * (kinds.count("build") * per["build"] + kinds.count("call") * per["call"])


def check_mode(ctx: Context, mode: str) -> Outcome:
    """One of the runner's modes on its benchmark shapes (module docstring). On the CPU tier a file keyed on the
    runner's N runs at that N, not narrowed (kernelsanders #449: CUDA graphs captured at import for the six
    benchmark shapes and a B copy keyed on B's data_ptr; narrowed, its fallback served every call and the modes
    passed; at the runner's N the benchmark mode fails as the runner's did), where the time budget leaves room
    for it as projected from the official check's calls at the runner's shapes; otherwise narrowed, and the
    mode's line says what did not run and why. A run at the runner's N that the budget ends anyway is NOT RUN,
    saying so: never a narrowed PASS in its place."""
    build = benchmark_program if mode == "benchmark" else leaderboard_program
    keyed = keyed_on_runner_n(ctx)
    if not keyed:
        return judge_mode(ctx, mode, *build(mode_cases(ctx.tier)), _conditions(ctx, keyed))
    program, checked = build(mode_cases(ctx.tier, keyed=True))
    projected, room = projected_at_runner_n(ctx, program), ctx.runner.cap_now()
    unaffordable = ctx.runner.runner_shapes_unaffordable  # the official check could not run them either
    if not unaffordable and (projected is None or projected <= room):
        try:
            return judge_mode(ctx, mode, program, checked, _conditions(ctx, keyed, at_runner_n=True))
        except BudgetExhausted as cut:  # the check's wrapper makes it NOT RUN (cut short), with this reason
            raise BudgetExhausted(cut.verdict, f"{cut.why}; the mode ran at the runner's N, which the file names "
                                  f"({', '.join(map(str, keyed))}): narrowed, what it keeps for those shapes would "
                                  "not run") from cut
    skipped = (f" (the official check did not run the runner's shapes: {unaffordable})" if unaffordable
               else f" (at the runner's N the mode was projected at {projected:.0f} s from the official check's calls, "
               f"over the {room:.0f} s the time budget leaves: --budget 0 runs it there)")
    return judge_mode(ctx, mode, *build(mode_cases(ctx.tier)), _conditions(ctx, keyed, skipped=skipped))


# An integer literal standing alone (not part of a name, a float or a longer number)
_LITERAL = r"(?<![\w.]){}(?![\w.])"


def runner_n_named(path: Path) -> list[int]:
    """The runner's benchmark N values that the file's source writes as integer literals, when two or more are
    (a file keyed on the runner's shapes: per-shape configs, graphs captured at import); [] otherwise."""
    try:
        source = path.read_text(errors="replace")
    except OSError:
        return []
    found = sorted({n for _, n, _, _ in BENCHMARK_TESTS if re.search(_LITERAL.format(n), source)})
    return found if len(found) >= 2 else []


def judge_mode(ctx: Context, mode: str, program: Program, checked: list[Checked], conditions: str) -> Outcome:
    """Run one mode's program and judge its checked calls in order, as the runner does: the first failure
    fails the mode. ``conditions``: how its shapes and seeds relate to the runner's, for the passing line."""
    verdict = MODE_VERDICTS[mode]
    result, outputs, wanted = execute_judged(ctx, program, [call.case for call in checked])
    if result.kind != "ok":
        return ctx.death(verdict, program, result, checked[0].case)
    limited = tier_limited_call(ctx, verdict, program, outputs)
    if limited is not None:
        return limited
    for call, expected in zip(checked, wanted):
        record = outputs[call.out]
        problem = contract_problem(record, call.case)
        if problem:
            if runner_case(call.case) != call.case:
                return confirm_at_runner_shape(ctx, mode, call, f"the call {problem}")
            return ctx.outcome(verdict, "fail", f"{mode} mode fails at {call.where}: the call {problem}", program,
                               call.case)
        official = official_verdict(result.tensor(record), expected.clone())
        if official.passed:
            continue
        doubt = ctx.lane_doubt.failure(program, outputs, call.out, call.case,
                                       lambda out: not official_verdict(out, expected.clone()).passed)
        if doubt:
            return ctx.outcome(verdict, "not_run", f"{mode} mode: {call.where}: {official.summary}; {doubt}", program)
        if runner_case(call.case) != call.case:
            return confirm_at_runner_shape(ctx, mode, call, official.summary)
        lines, kind = explain_wrong_output(result.tensor(record), call.case)
        return ctx.outcome(verdict, "fail", f"{mode} mode fails at {call.where}: {official.summary}", program,
                           call.case, lines, official=official, failure_class=kind, error_map=official.error_map)
    calls = sum(1 for step in program.steps if step["do"] == "call")
    return ctx.outcome(verdict, "pass", f"{mode} mode passes: {len(checked)} checked calls of {calls} "
                       f"(a warm-up and the {len(BENCHMARK_TESTS)} benchmark shapes in the runner's order, one module); "
                       f"{conditions}", program)


def check_mode_benchmark(ctx: Context) -> Outcome:
    """The runner's benchmark mode on its benchmark shapes (module docstring)."""
    return check_mode(ctx, "benchmark")


def check_mode_leaderboard(ctx: Context) -> Outcome:
    """The runner's leaderboard mode on its benchmark shapes, KernelGuard apart (module docstring)."""
    return check_mode(ctx, "leaderboard")
