"""The judge's exact product computed on the fastest device (fuzz.submission.judged.exact_product): on a
GPU the same product as on the CPU, every field back on the CPU."""
import dataclasses

import pytest
import torch

from fuzz.search.strategies import Case
from fuzz.submission import judged
from reference import exact_gemm_from_inputs


@pytest.mark.parametrize("m, n, k", [(8, 256, 7168), (33, 128, 512)])
def test_the_exact_product_is_the_cpus_whatever_device_computes_it(m, n, k):
    data, _ = judged.judged_inputs(Case(m, n, k))
    a = data[0].clone()
    a.view(torch.int16).view(-1)[::101] = 0x7FC0  # NaNs: the NaN rule's codes must match too
    data = (a, *data[1:])
    want = exact_gemm_from_inputs(data)
    got = judged.exact_product(data)
    for field in dataclasses.fields(want):
        w, g = getattr(want, field.name), getattr(got, field.name)
        if isinstance(w, torch.Tensor):
            assert g.device.type == "cpu", field.name
            # exact: each product of two MXFP4 values fits float64, and these rows' scales span few binades,
            # so the float64 sums are exact in any order
            torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True, msg=field.name)
        else:
            assert w == g, field.name


def test_an_expected_output_asked_for_twice_is_computed_once_and_a_cancelled_one_again(monkeypatch):
    """The official tests' expected outputs are started at a session's start (prefetch, on a GPU) and asked
    for again when the official program runs: one computation; one cancelled before it started (the program
    died) is computed when asked for again."""
    import threading

    from fuzz.submission import checks

    computed, gate = [], threading.Event()

    def slow(case):
        gate.wait(10)
        computed.append(case)
        return torch.full((case.m, case.n), float(case.k))

    monkeypatch.setattr(checks, "_expected_now", slow)
    monkeypatch.setattr(checks, "_expected", checks.OrderedDict())
    first, second, third = Case(1, 64, 64, seed=91), Case(2, 64, 64, seed=92), Case(3, 64, 128, seed=93)
    running = checks.expected_future(first)
    assert checks.expected_future(first) is running
    queued = checks.expected_future(second)
    assert queued.cancel()  # not started: the thread is busy with the first
    gate.set()
    assert torch.equal(checks._official_expected(first), torch.full((1, 64), 64.0))
    assert torch.equal(checks._official_expected(second), torch.full((2, 64), 64.0))
    assert torch.equal(checks._official_expected(third), torch.full((3, 64), 128.0))
    assert computed == [first, second, third]
