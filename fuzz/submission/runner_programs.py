"""The runner's own programs: the official test mode's four tests and the benchmark and leaderboard modes'
calls, as worker programs (``program.Program``) on a tier's cases. Nothing here judges.

One builder for everyone who runs them: the official verdict and the modes (``checks.py``,
``prediction.py``) and the worker that starts them before it is asked (``worker.py``, speculation in
``runner.py``). The runner takes a speculated answer only for the very steps its verdict asks for, so a
builder shared by both sides is what makes the answer usable, not what makes it right.
"""
from __future__ import annotations

import dataclasses

from fuzz.search.strategies import BENCHMARK_TESTS, MAX_SEED, Case
from fuzz.search.value_streams import runner_case_stream
from fuzz.submission.program import Program

OFFICIAL_TESTS = ((8, 2112, 7168, 124), (16, 3072, 1536, 6635), (64, 3072, 1536, 45), (256, 2880, 512, 78))
RECHECK_STEP = 13  # the leaderboard's seed increment between timed iterations
TIMED_CALLS = 3  # the runner's minimum of timed calls per benchmark shape
RECHECK_ITERATIONS = 3  # the runner's minimum of reseeded, rechecked iterations per leaderboard shape
NARROWING = 16  # the CPU tier's N divisor
# What a worker may run before it is asked, in the order the check asks: the runner's prediction
PREDICTION = ("official", "benchmark", "leaderboard")


@dataclasses.dataclass(frozen=True)
class Checked:
    """One call whose output the runner checks: the output's name, its inputs' case, and where it is in words."""
    out: str
    case: Case
    where: str


def official_cases(tier: str) -> list[Case]:
    """The runner's four test shapes with their seeds, drawn from the tier's runner stream."""
    stream = runner_case_stream(tier)
    return [Case(m, n, k, seed=seed, stream=stream) for m, n, k, seed in OFFICIAL_TESTS]


def official_program(cases: list) -> Program:
    program = Program()
    for i, case in enumerate(cases):  # nothing freed: whether the real allocator reuses addresses between
        program.build(f"d{i}", case)  # tests is left to chance there; stale_reallocated checks it for sure
        program.call(f"d{i}", f"y{i}")
    return program


def mode_cases(tier: str, keyed: bool = False) -> list[Case]:
    """The benchmark shapes with their nominal seeds, N divided by NARROWING on the CPU tier unless the file is
    ``keyed`` on the runner's N (``prediction.runner_n_named``): narrowed, what it keeps for those exact shapes
    would not run."""
    narrow = tier == "cpu" and not keyed
    stream = runner_case_stream(tier)
    return [Case(m, narrowed(n) if narrow else n, k, seed=seed, stream=stream) for m, n, k, seed in BENCHMARK_TESTS]


def narrowed(n: int) -> int:
    """N / NARROWING rounded down to the contract's multiple of 64 (never below 64): a narrowed shape must
    still be one the file has to serve."""
    return max(64, n // NARROWING // 64 * 64)


def _shape(case: Case) -> str:
    return f"({case.m},{case.n},{case.k}) seed {case.seed}"


def _timed_shape(program: Program, slot: str, case: Case, where: str) -> Checked:
    """Build ``slot``, the obligatory checked call, TIMED_CALLS unchecked calls on the same object, free."""
    program.build(slot, case)
    program.call(slot, f"{slot}_checked")
    for t in range(TIMED_CALLS):
        program.call(slot, f"{slot}_timed{t + 1}")
    program.free(slot)
    return Checked(f"{slot}_checked", case, f"{where}, call 1 (the obligatory check)")


def benchmark_program(cases: list[Case]) -> tuple[Program, list[Checked]]:
    """The benchmark mode: the warm-up on the first shape, then every shape; -> (program, checked calls)."""
    program = Program()
    checked = [_timed_shape(program, "warmup", cases[0], f"warm-up on {_shape(cases[0])}")]
    for i, case in enumerate(cases):
        checked.append(_timed_shape(program, f"b{i + 1}", case, f"benchmark shape {i + 1} {_shape(case)}"))
    return program, checked


def leaderboard_program(cases: list[Case]) -> tuple[Program, list[Checked]]:
    """The leaderboard mode: the warm-up, then per shape the obligatory check and RECHECK_ITERATIONS
    iterations on inputs regenerated with seed + 13, each output checked; -> (program, checked calls)."""
    program = Program()
    checked = [_timed_shape(program, "warmup", cases[0], f"warm-up on {_shape(cases[0])}")]
    for i, case in enumerate(cases):
        where = f"benchmark shape {i + 1} ({case.m},{case.n},{case.k})"
        slot = f"s{i + 1}_0"
        program.build(slot, case)
        program.call(slot, f"{slot}_y")
        checked.append(Checked(f"{slot}_y", case, f"{where} seed {case.seed}, call 1 (the obligatory check)"))
        for j in range(1, RECHECK_ITERATIONS + 1):
            again = dataclasses.replace(case, seed=(case.seed + RECHECK_STEP * j) % (MAX_SEED + 1))
            previous, slot = slot, f"s{i + 1}_{j}"
            program.build(slot, again)
            program.free(previous)
            program.call(slot, f"{slot}_y")
            checked.append(Checked(f"{slot}_y", again, f"{where} seed {again.seed}, call {j + 1} (recheck "
                                   f"iteration {j}: seed + {RECHECK_STEP * j})"))
        program.free(slot)
    return program, checked


MODE_PROGRAMS = {"benchmark": benchmark_program, "leaderboard": leaderboard_program}


def prediction_steps(name: str, tier: str) -> list:
    """The steps the check's verdict ``name`` (one of PREDICTION) runs on ``tier`` for a file not keyed on the
    runner's N: the official test mode at the runner's shapes, or a mode on its benchmark shapes."""
    if name == "official":
        return official_program(official_cases(tier)).steps
    return MODE_PROGRAMS[name](mode_cases(tier))[0].steps
