"""A program that asks for a fresh module mid-way (the stale verdicts' "a fresh module's output on the same
values") runs each part in its own child forked from the module loaded once (worker.fork_segments,
run_segments) instead of executing the file again: the same records and outputs as executing it afresh, the
file's import run once, a death reported at the program's own step."""
from __future__ import annotations

import os

import pytest

from fuzz.search.strategies import Case
from fuzz.submission.program import Program
from fuzz.submission.worker import fork_segments, merged_answers

FILE = '''
import os
import signal
import torch

with open(os.environ["MXFP4_FUZZ_TEST_IMPORTS"], "a") as log:
    log.write("executed\\n")
CALLS = []  # module state: a fresh module starts with none


def custom_kernel(data):
    A, B = data[0], data[1]
    CALLS.append(1)
    if A.shape[0] == 3 and os.environ.get("MXFP4_FUZZ_TEST_CRASH"):
        os.kill(os.getpid(), signal.SIGSEGV)
    return torch.full((A.shape[0], B.shape[0]), float(len(CALLS)), dtype=torch.bfloat16, device=A.device)
'''


def step(do, **fields):
    return {"do": do, **fields}


def test_the_cuts():
    whole = [step("build", slot="a"), step("call", slot="a", out="y")]
    assert fork_segments(whole) == [(0, whole)]
    parts = [step("reload"), step("build", slot="a"), step("call", slot="a", out="y"),
             step("reload"), step("build", slot="b"), step("call", slot="b", out="z")]
    assert fork_segments(parts) == [(0, parts[:3]), (3, parts[3:])]
    # a part that uses what an earlier part made, or a poisoned program, stays whole
    shared = [*parts[:3], step("reload"), step("call", slot="a", out="z")]
    assert fork_segments(shared) == [(0, shared)]
    freed = [*parts[:3], step("reload"), step("free", slot="a")]
    assert fork_segments(freed) == [(0, freed)]
    poisoned = [step("poison", pattern="ff"), *parts]
    assert fork_segments(poisoned) == [(0, poisoned)]


def test_the_parts_counters_add_up_from_what_each_child_inherited():
    """Each part's child starts from the loaded module's counts (here 5 programs, 1 launch); the program's count
    is that plus every part's own advance (3 + 4 programs, 1 + 2 launches)."""
    def part(programs, launches, seconds):
        return {"records": [{"do": "call"}], "seconds": seconds, "timing": {"call": seconds},
                "counters": {"programs": programs, "launches": launches, "seconds": seconds, "kernel": "k"}}

    merged = merged_answers([part(8, 2, 1.0), part(9, 3, 2.0)], {"programs": 5, "launches": 1})
    assert merged["counters"] == {"programs": 12, "launches": 4, "seconds": 3.0, "kernel": "k"}
    assert merged["seconds"] == 3.0 and merged["timing"] == {"call": 3.0} and len(merged["records"]) == 2


def _program() -> Program:
    program = Program()
    for m in (1, 2, 3):
        if m > 1:
            program.reload()
        program.build(f"d{m}", Case(m, 64, 64, seed=m))
        program.call(f"d{m}", f"y{m}")
        program.call(f"d{m}", f"y{m}_again")
    return program


def _run(tmp_path, fork: str, crash: bool = False):
    from fuzz.submission.runner import SubmissionRunner

    path = tmp_path / "stateful.py"
    path.write_text(FILE)
    imports = tmp_path / f"imports_{fork}_{crash}.txt"
    env = {"MXFP4_FUZZ_FORK": fork, "MXFP4_FUZZ_TEST_IMPORTS": str(imports)}
    if crash:
        env["MXFP4_FUZZ_TEST_CRASH"] = "1"
    runner = SubmissionRunner(path, aiter="emulated", timeout=120, env=env)
    try:
        assert runner.load().ok
        fresh = runner.load().fresh_module
        result = runner.run(_program().steps)
        outputs = {r["out"]: float(result.tensor(r).float().mean()) for r in result.calls() if "file" in r} \
            if result.kind == "ok" else {}
    finally:
        runner.close()
    return fresh, result, outputs, imports.read_text().count("executed")


def _forks_here() -> bool:
    from kernels.platform import detect

    return hasattr(os, "fork") and detect().device == "cpu"  # a GPU tier executes afresh: CUDA survives no fork


@pytest.mark.skipif(not _forks_here(), reason="the worker forks only on the CPU tier (CUDA does not survive a fork)")
def test_parts_in_forks_give_what_executing_the_file_again_gives(tmp_path):
    fresh, forked, outputs, executed = _run(tmp_path, "1")
    assert fresh == "fork"
    assert outputs == {"y1": 1.0, "y1_again": 2.0, "y2": 1.0, "y2_again": 2.0, "y3": 1.0, "y3_again": 2.0}
    assert executed == 1  # the loaded module only: no part executed the file again
    fresh, reloaded, same, executed = _run(tmp_path, "0")
    assert fresh == "reload" and same == outputs and executed == 4  # the load, then each program's three
    assert [r["do"] for r in forked.records] == [r["do"] for r in reloaded.records]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_death_in_a_later_part_names_the_programs_step(tmp_path):
    _, result, _, _ = _run(tmp_path, "1", crash=True)
    assert result.kind == "crash" and result.signal_name == "SIGSEGV"
    assert _program().line_of(result.step) == "step 10 (y3 = custom_kernel(d3))"
