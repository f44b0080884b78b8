"""The runner's prediction per popcorn mode and the latent bugs apart (fuzz/submission/prediction.py runs
the modes, fuzz/submission/outlook.py reads the report): on made-up verdict rows (fast), and on the
example submissions in fuzz/examples/ with the modes' real programs (slow: a worker per example)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from fuzz.search.strategies import BENCHMARK_SHAPES, BENCHMARK_TESTS, Case
from fuzz.submission import checks, leaderboard_gate, outlook, prediction, runner_programs
from fuzz.testing.explicit_plan import EXAMPLES, TIER, run_plan
from fuzz.submission.plugin import VerdictRecord
from fuzz.submission.runner import SubmissionRunner


def _row(verdict: str, status: str, summary: str = "", case: Case | None = None, failure_class: str = "") -> dict:
    failure = {"summary": summary, "failure_class": failure_class, "card": {"case": case.to_json() if case else None}}
    return {"verdict": verdict, "status": status, "summary": summary,
            "failure": failure if status == "FAIL" else None, "failures": [failure] if status == "FAIL" else []}


PASSING_MODES = [_row("loads", "PASS"), _row("official", "PASS", "passes"), _row("mode_benchmark", "PASS", "passes"),
                 _row("mode_leaderboard", "PASS", "passes")]


def test_the_modes_are_read_from_their_verdicts_and_kernelguard_fails_the_leaderboard_naming_the_rule():
    guard = _row("kernelguard", "FAIL", "KernelGuard 0.3.2 (profile default): POINTER_REPLAY (critical), the "
                 "leaderboard would filter this file")
    predicted = outlook.predict(PASSING_MODES + [guard])
    assert [predicted[m]["status"] for m in ("test", "benchmark", "leaderboard")] == ["PASS", "PASS", "FAIL"]
    assert "KernelGuard filters it" in predicted["leaderboard"]["reason"]
    assert "POINTER_REPLAY" in predicted["leaderboard"]["reason"]
    failing = [PASSING_MODES[0], PASSING_MODES[1], _row("mode_benchmark", "FAIL", "benchmark mode fails at x"),
               _row("mode_leaderboard", "NOT RUN", "the time budget ran out")]
    predicted = outlook.predict(failing)
    assert predicted["benchmark"] == {"status": "FAIL", "reason": "benchmark mode fails at x", "verdict": "mode_benchmark"}
    assert predicted["leaderboard"]["status"] == "NOT RUN" and "budget" in predicted["leaderboard"]["reason"]
    unloaded = outlook.predict([_row("loads", "FAIL", "SyntaxError at line 3"), _row("official", "SKIP")])
    assert {p["status"] for p in unloaded.values()} == {"FAIL"} and "does not load" in unloaded["test"]["reason"]
    # our worker broke around the load (ERROR): nothing is known of the file, no mode is failed for it
    broken = outlook.predict([_row("loads", "ERROR", "WorkerBug: a bug of ours"), _row("official", "ERROR")])
    assert {p["status"] for p in broken.values()} == {"NOT RUN"} and "itself raised" in broken["test"]["reason"]


@pytest.mark.parametrize("verdict, case, says", [
    ("correctness", Case(2, 64, 320), "K % 256 != 0: no runner shape has it"),
    ("correctness", Case(2, 64, 512), "M = 2: no runner shape has it"),
    ("correctness", Case(4, 2880, 512, layout="row_sliced"), "the runner passes contiguous randn inputs"),
    ("correctness", Case(4, 2880, 512, specials=((0, 0, "nan"),)), "the runner passes contiguous randn inputs"),
    ("correctness", Case(4, 2880, 512, scale_pad_fill=0xFF), "the runner passes contiguous randn inputs"),
    ("correctness", Case(4, 2880, 512), "another seed"),
    ("contract", Case(2, 64, 512), "N = 64: no runner shape has it"),
    ("aliasing", Case(1, 64, 64), "the harness checks each output before the next call"),
    ("stale_in_place", Case(1, 64, 64), "the harness never writes inputs in place"),
    ("immutability", Case(1, 64, 64), "never looks at the inputs again"),
    ("determinism", Case(1, 64, 64), "the runner never compares two calls"),
    ("contract_beyond", Case(1, 64, 96), "beyond the stated contract: the runner never calls it"),
    ("uninitialised", Case(1, 64, 64), "depends on what torch.empty returns"),
    ("stale_reallocated", Case(1, 64, 64), "did not reach it in the prediction"),
    ("stale_new_shape", Case(1, 64, 64), "did not reach it in the prediction"),
])
def test_each_latent_bug_says_why_the_runner_misses_it(verdict, case, says):
    entries = outlook.latent(PASSING_MODES + [_row(verdict, "FAIL", "wrong", case, "some_class")],
                             outlook.predict(PASSING_MODES))
    (entry,) = entries
    assert says in entry["why_runner_misses"] and not entry["may_block"], entry
    assert entry["case"]["m"] == case.m and entry["failure_class"] == "some_class"


def test_a_stateful_or_value_failure_beside_a_failing_mode_may_be_that_mode_s_bug():
    rows = PASSING_MODES[:2] + [_row("mode_benchmark", "FAIL", "x"), PASSING_MODES[3],
                                _row("stale_reallocated", "FAIL", "stale", Case(1, 64, 64)),
                                _row("correctness", "FAIL", "wrong", Case(4, 64, 64)),
                                _row("aliasing", "FAIL", "aliased", Case(1, 64, 64))]
    prediction, entries = outlook.outlook(rows)
    assert [(e["verdict"], e["may_block"]) for e in entries] == [("stale_reallocated", True), ("correctness", True),
                                                                ("aliasing", False)]
    build = outlook.latent(PASSING_MODES + [_row("builds_gfx950", "FAIL", "error at line 25")], prediction)
    assert build[0]["may_block"] and "no fallback" in build[0]["why_runner_misses"]  # the runner's fallback decides
    headline = outlook.headline(prediction, entries)
    assert "blocks the submission: benchmark" in headline and "latent (the runner does not see them today): 1 " \
        "(aliasing)" in headline


def test_the_page_opens_with_the_prediction_and_the_many_file_table_has_its_column():
    from fuzz.report.page import report_body, summary_html
    from fuzz.submission.many import summary_table

    rows = PASSING_MODES + [_row("aliasing", "FAIL", "aliased", Case(1, 64, 64))]
    prediction, entries = outlook.outlook(rows)
    body = report_body({"submission": "/x/a.py", "prediction": prediction, "latent": entries, "verdicts": rows})
    assert body.index("What the runner would say") < body.index("<th>verdict</th><th>status</th>")
    assert "the harness checks each output before the next call" in body
    row = {"file": "/x/a.py", "tier": "cpu", "seconds": 3.0, "verdicts": {"aliasing": "FAIL"}, "error": None,
           "runner": {"test": "PASS", "benchmark": "PASS", "leaderboard": "FAIL"}, "latent": 1}
    assert "pass/pass/FAIL" in summary_table([row]) and "runner t/b/l" in summary_table([row])
    assert "<th>leaderboard</th>" in summary_html({"files": [row]}, [None])


def test_the_modes_are_the_runner_s_programs():
    assert BENCHMARK_SHAPES == tuple(t[:3] for t in BENCHMARK_TESTS) and BENCHMARK_TESTS[0] == (4, 2880, 512, 4565)
    cases = runner_programs.mode_cases("gpu")
    program, checked = runner_programs.benchmark_program(cases)
    calls = [step for step in program.steps if step["do"] == "call"]
    assert len(checked) == 7 and len(calls) == 7 * (1 + runner_programs.TIMED_CALLS)
    assert [c.case for c in checked] == [cases[0]] + cases  # the warm-up is the first benchmark shape
    program, checked = runner_programs.leaderboard_program(cases)
    assert len(checked) == 1 + 6 * (1 + runner_programs.RECHECK_ITERATIONS)
    assert [c.case.seed for c in checked[1:5]] == [4565, 4578, 4591, 4604]  # seed + 13 every iteration
    kinds = [step["do"] for step in program.steps]
    first = kinds.index("build", kinds.index("free"))  # shape 1's first build after the warm-up
    assert kinds[first:first + 5] == ["build", "call", "build", "free", "call"]  # the new tuple, then the old freed
    assert {c.n for c in runner_programs.mode_cases("cpu")} == {128, 256, 448, 192}  # N / 16 to a multiple of 64, shapes kept apart


# -- the examples -------------------------------------------------------------------------------------

# example -> (test, benchmark, leaderboard) predicted, and the latent verdicts it lists (not "may block")
EXPECTED = {
    "correct_reference_style.py": (("PASS", "PASS", "PASS"), set()),
    "aliased_output.py": (("PASS", "PASS", "PASS"), {"aliasing"}),
    "wrong_tail.py": (("PASS", "PASS", "PASS"), {"correctness", "contract_beyond"}),
    "wrong_at_m4.py": (("PASS", "FAIL", "FAIL"), set()),
    "wrong_at_runner_n.py": (("PASS", "FAIL", "FAIL"), set()),  # the CPU tier runs its modes at the runner's N
    "pointer_replay_output.py": (("PASS", "PASS", "FAIL"), {"stale_in_place"}),  # rechecks come back at old addresses
    "last_call_replay.py": (("PASS", "PASS", "FAIL"), {"stale_in_place"}),  # only KernelGuard's filter
    "stale_data_ptr_cache.py": (("PASS", "PASS", "FAIL"), {"stale_in_place"}),  # a recheck gets an earlier B_q address back
}
_STATUS = {"pass": "passed", "fail": "failed", "reported": "passed", "not_run": "skipped"}


def verdict_rows(name: str) -> list:
    """The report's verdict rows of one example: loads, official, the two modes, the explicit plan's verdicts
    and KernelGuard's screening."""
    runner = SubmissionRunner(EXAMPLES / name, aiter="emulated", timeout=60)
    try:
        ctx = checks.Context(runner, TIER)
        outcomes = [checks.check_loads(ctx), checks.check_official(ctx), prediction.check_mode_benchmark(ctx),
                    prediction.check_mode_leaderboard(ctx), *run_plan(ctx, only=("correctness", "contract_beyond",
                    "aliasing", "stale_in_place", "stale_reallocated")).values()]
    finally:
        runner.close()
    statuses = {o.verdict: o.status.upper() for o in outcomes}
    screening = leaderboard_gate.screen((EXAMPLES / name).read_text(), "default")
    outcomes.append(checks.Outcome("kernelguard", *leaderboard_gate.verdict(screening, statuses)))
    rows = []
    for outcome in outcomes:
        record = VerdictRecord(outcome.verdict)
        record.add(outcome)
        record.outcome = _STATUS[outcome.status]
        rows.append(record.to_json())
    return rows


@pytest.fixture(scope="module")
def reports() -> dict:
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(EXPECTED, pool.map(lambda name: outlook.outlook(verdict_rows(name)), EXPECTED)))


@pytest.mark.slow  # a worker per example
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_example_gets_its_predicted_modes_and_latent_bugs(reports, name):
    predicted, entries = reports[name]
    modes, latent = EXPECTED[name]
    assert tuple(predicted[m]["status"] for m in ("test", "benchmark", "leaderboard")) == modes, predicted
    assert {e["verdict"] for e in entries if not e["may_block"]} == latent, entries
    for entry in entries:
        assert entry["case"] is not None and entry["why_runner_misses"], entry


@pytest.mark.slow
def test_what_fails_where_is_named(reports):
    m4 = reports["wrong_at_m4.py"][0]
    assert "warm-up on (4," in m4["benchmark"]["reason"] and "obligatory check" in m4["benchmark"]["reason"]
    replay = reports["pointer_replay_output.py"][0]["leaderboard"]["reason"]
    assert "recheck iteration" in replay and "POINTER_REPLAY" in replay, replay
    assert "LAST_CALL_REPLAY" in reports["last_call_replay.py"][0]["leaderboard"]["reason"]
    (tail,) = [e for e in reports["wrong_tail.py"][1] if e["verdict"] == "correctness"]
    assert "K % 256 != 0: no runner shape has it" in tail["why_runner_misses"]
    (alias,) = reports["aliased_output.py"][1]
    assert alias["why_runner_misses"] == "the harness checks each output before the next call"


def test_a_file_keyed_on_the_runners_n_runs_its_modes_there(tmp_path):
    """On the CPU tier the modes narrow N; a file that writes the runner's N values (a per-shape config, CUDA
    graphs captured at import for the exact shapes) has code narrowed modes would not run, so its modes run at
    the runner's N, and the line says so."""
    keyed = tmp_path / "keyed.py"
    keyed.write_text("CONFIGS = {(4, 2880, 512): 1, (16, 2112, 7168): 2}\nSCALE = 2880.5\nname_7168 = 0\n")
    # 7168 is written as a K here, and is a runner's N too; 2880.5 and name_7168 are not the literal
    assert prediction.runner_n_named(keyed) == [2112, 2880, 7168]
    plain = tmp_path / "plain.py"
    plain.write_text("BLOCK = 2880\n")
    assert prediction.runner_n_named(plain) == []  # one value alone says little

    class Runner:
        path = str(keyed)

    ctx = type("Ctx", (), {"tier": "cpu", "runner": Runner()})()
    assert prediction.keyed_on_runner_n(ctx) == [2112, 2880, 7168]
    assert "the runner's own N on the CPU tier: the file names them (2112, 2880, 7168)" in prediction._conditions(ctx, prediction.keyed_on_runner_n(ctx), at_runner_n=True)
    # no room for the runner's N: narrowed, and the line says what did not run
    line = prediction._conditions(ctx, prediction.keyed_on_runner_n(ctx), skipped=" (projected at 99 s)")
    assert "N / 16 on the CPU tier" in line and "names the runner's N (2112, 2880, 7168)" in line and "99 s" in line
    Runner.path = str(plain)
    assert prediction.keyed_on_runner_n(ctx) == [] and "names the runner" not in prediction._conditions(ctx, [])
    ctx.tier = "gpu"
    Runner.path = str(keyed)
    assert prediction.keyed_on_runner_n(ctx) == []  # the GPU tier runs the runner's N anyway
    assert "N / 16" not in prediction._conditions(ctx, prediction.keyed_on_runner_n(ctx))


def test_a_keyed_mode_is_projected_from_the_official_checks_calls():
    """The mode at the runner's N costs its builds and calls at the official check's per-step seconds."""
    program, _ = runner_programs.benchmark_program(runner_programs.mode_cases("cpu", keyed=True))
    assert {c.n for c in runner_programs.mode_cases("cpu", keyed=True)} == {2880, 2112, 4096, 7168, 3072}

    class Runner:
        runner_shape_seconds = None

    ctx = type("Ctx", (), {"tier": "cpu", "runner": Runner()})()
    assert prediction.projected_at_runner_n(ctx, program) is None  # no official run yet: no projection
    Runner.runner_shape_seconds = {"build": 2.0, "call": 0.5}
    assert prediction.projected_at_runner_n(ctx, program) == prediction.PROJECTION_MARGIN * (7 * 2.0 + 28 * 0.5)


def test_the_runners_shapes_draw_on_the_gpu_there_and_from_mt19937_on_the_cpu_tier():
    """On a GPU the runner's cases use the counter stream, drawn on the device (mt19937 draws on the host: 3 to
    5 s of an H100 check went to the runner's inputs); the CPU tier keeps mt19937. Shapes and seeds are the same."""
    from fuzz.search.value_streams import LEGACY_STREAM
    from fuzz.submission.runner_programs import mode_cases

    cpu, gpu = mode_cases("cpu", keyed=True), mode_cases("nvidia")
    assert {c.stream for c in cpu} == {LEGACY_STREAM} and {c.stream for c in gpu} == {"counter"}
    assert [(c.m, c.n, c.k, c.seed) for c in cpu] == [(c.m, c.n, c.k, c.seed) for c in gpu]
