"""The lane-order doubt (fuzz/submission/lane_order.py) tells a kernel that relies on a wave's lockstep (NOT RUN)
from one that reads memory it was not given or nobody wrote (the file's FAIL, said so): on a stand-in of the
worker whose outputs depend on what each variant of the program changes; and the worker's input guard
(allocator.BlockPool.place) puts the bytes it names right after an input's storage."""
from __future__ import annotations

import ctypes

import torch

from fuzz.search.strategies import Case
from fuzz.submission.allocator import GUARD_BYTES, BlockPool
from fuzz.submission.lane_order import LaneOrderDoubt
from fuzz.submission.program import Program
from reference import exact_gemm_from_inputs
from fuzz.judge.verdicts import official_reference
from fuzz.submission.judged import judged_inputs

CASE = Case(1, 64, 64, seed=3)


class Result:
    kind = "ok"

    def __init__(self, y):
        self.y = y

    def tensor(self, record):
        return self.y


class Worker:
    """A ctx whose file answers the exact product, except at ``lanes`` (where the output follows the lane order),
    ``reruns`` (where it changes from run to run) and ``past`` (where it follows the bytes past the inputs)."""

    def __init__(self, lanes=(), reruns=(), past=(), lds=()):
        data, _ = judged_inputs(CASE)
        self.exact = official_reference(exact_gemm_from_inputs(data)).to(torch.bfloat16)
        self.lanes, self.reruns, self.past, self.lds = lanes, reruns, past, lds
        self.runs = 0
        self.last_result = None
        self.lane_doubt = LaneOrderDoubt(self)

    def execute(self, program: Program):
        self.runs += 1
        order = next((s.get("hip_lanes") for s in program.steps if s["do"] == "call"), None) or "normal"
        guard = next((s.get("guard") for s in program.steps if s["do"] == "build"), None)
        y = self.exact.clone().view(-1)
        for column in self.lanes:
            y[column] = {"normal": 100.0, "reversed": 200.0, "rotated": 300.0}[order]
        for column in self.reruns:
            y[column] = float(self.runs * 1000)
        for column in self.past if guard is not None else ():
            y[column] = float(guard) * 10
        fill = next((s.get("hip_lds_fill") for s in program.steps if s["do"] == "call"), None)
        for column in self.lds:  # what a lockstep kernel read before its neighbour wrote: the LDS fill, any order
            y[column] = float("nan") if fill is None else float(fill)
        self.last_result = Result(y.view(self.exact.shape))
        return self.last_result, {"y": {"file": "y", "hip_cpu_launches": 1}}


def doubt(worker: Worker) -> str:
    program = Program.single_call(CASE)
    _, outputs = worker.execute(program)
    wrong = lambda out: not torch.equal(out, worker.exact)  # noqa: E731 -- the judge: any element off fails
    return worker.lane_doubt.failure(program, outputs, "y", CASE, wrong)


def test_a_failure_only_where_the_lane_order_changes_it_is_a_lockstep_doubt():
    worker = Worker(lanes=(3, 9))
    assert "relies on the lockstep" in doubt(worker) and worker.lane_doubt.take_note() == ""


def test_a_failure_that_follows_the_lds_fill_in_every_lane_order_is_a_lockstep_doubt():
    """CaptnJackSparrow 3309c00 (runner: test passed, max error 0.0): a one-wave block skips __syncthreads and reads
    the LDS its other lanes wrote; NaN here in every lane order, so only the fill run shows the doubt."""
    worker = Worker(lds=(3, 9))
    why = doubt(worker)
    assert "relies on the lockstep" in why and "LDS" in why, why
    assert worker.runs == 5  # the first run, two lane orders, the LDS fill, the input guard


def test_an_element_only_the_lds_fill_changes_is_doubted_beside_order_dependent_ones():
    """3309c00 warm: a few elements change with the lane order, the NaN ones (read before the lanes wrote) only
    with the fill; a doubt that skipped the fill where the orders disagree let the official FAIL stand."""
    worker = Worker(lanes=(3,), lds=(9,))
    assert "relies on the lockstep" in doubt(worker)


def test_memory_that_changes_from_run_to_run_or_past_the_inputs_is_the_files():
    for worker in (Worker(lanes=(3,), reruns=(3, 5)), Worker(lanes=(3,), past=(3,))):
        assert doubt(worker) == "", "the failure stands"
        note = worker.lane_doubt.take_note()
        assert "not a lane-order doubt" in note and "reads memory past" in note, note
        assert worker.lane_doubt.take_note() == ""  # said once


def test_a_failure_outside_the_doubtful_elements_stands_without_a_note():
    worker = Worker(lanes=(3,))
    program = Program.single_call(CASE)
    _, outputs = worker.execute(program)
    wrong_at_10 = lambda out: True  # noqa: E731 -- a judge that finds the order-independent elements wrong
    assert worker.lane_doubt.failure(program, outputs, "y", CASE, wrong_at_10) == ""
    assert worker.lane_doubt.take_note() == ""


def test_the_input_guard_follows_each_input_and_programs_ask_for_it():
    pool = BlockPool("cpu")
    t = torch.arange(40, dtype=torch.uint8).view(5, 8)[:, :6]
    placed = pool.place(t, guard=0xA5)
    assert torch.equal(placed, t) and placed.stride() == t.stride()
    storage = placed.untyped_storage()
    assert storage.nbytes() == t.untyped_storage().nbytes()
    after = ctypes.string_at(storage.data_ptr() + storage.nbytes(), GUARD_BYTES)
    assert after == b"\xa5" * GUARD_BYTES
    guarded = Program.single_call(CASE).with_input_guard(0x5A)
    builds = [s for s in guarded.steps if s["do"] == "build"]
    assert builds and all(s["guard"] == 0x5A for s in builds) and "0x5A bytes" in guarded.lines[0]
