"""Float atomic adds in a submission's kernels: found in a compiled kernel's TTIR (the NVIDIA tier) or
counted per address by the interpreter (the CPU tier), and judged as the runner judges them: the roundings
of bf16 atomic adds are the file's chosen accumulation (the runner's 1e-2 rule decides), anything beyond
them is a bug, and atomics in arrival order make repeat calls differ legally."""
from __future__ import annotations

import types

import torch

from fuzz.search.strategies import Case
from fuzz.submission import checks, run_records
from fuzz.judge.trace import float_atomic_adds
from reference import acceptable_range, accumulation_bound, exact_gemm_from_inputs, round_to_bf16

TTIR = """
%6 = tt.atomic_rmw fadd, acq_rel, gpu, %1, %5, %cst : (tensor<4x!tt.ptr<bf16>>, tensor<4xbf16>, tensor<4xi1>) -> tensor<4xbf16> loc(#loc1)
%9 = tt.atomic_rmw fadd, relaxed, gpu, %7, %8 : (!tt.ptr<f32>, f32) -> f32 loc(#loc2)
%10 = tt.atomic_rmw max, acq_rel, gpu, %7, %8 : (!tt.ptr<i32>, i32) -> i32 loc(#loc3)
"""


def test_float_atomic_adds_are_read_from_the_compiled_kernels_ttir():
    kernel = types.SimpleNamespace(asm={"ttir": TTIR}, hash="probe-1")
    assert float_atomic_adds(kernel) == ("bf16", "f32")  # an integer max is not a float add
    assert float_atomic_adds(types.SimpleNamespace(asm={"ttir": "tt.store %1"}, hash="probe-2")) == ()
    assert float_atomic_adds(None) == ()  # an interpreted launch returns no compiled kernel


def test_the_bf16_add_count_comes_from_the_interpreter_or_the_grid():
    assert run_records.bf16_atomic_adds({}) == (0, "", "")
    assert run_records.bf16_atomic_adds({"bf16_atomic_adds": 3})[0] == 3
    gpu = {"atomic_add_launches": [{"kernel": "k", "dtypes": ["bf16"], "programs": 8},
                                   {"kernel": "w", "dtypes": ["f32"], "programs": 99}]}
    adds, how, unobservable = run_records.bf16_atomic_adds(gpu)
    assert adds == 8 and "does not count them" in how and not unobservable
    unknown = {"atomic_add_launches": [{"kernel": "k", "dtypes": ["bf16"], "programs": None}]}
    assert "could not resolve the grid" in run_records.bf16_atomic_adds(unknown)[2]
    assert run_records.atomic_add_kernels(gpu, {}) == ["k", "w"]


def _split_k_in_bf16(case: Case, splits: int, drop_last: bool = False) -> torch.Tensor:
    """The case's product by ``splits`` stripes of exact partials, each added into bf16 (one rounding)."""
    data, _ = case.build()
    ex = exact_gemm_from_inputs(data)
    from reference import dequantize_mxfp4, e8m0_unshuffle

    a = dequantize_mxfp4(ex.a_q, ex.a_scales)
    b = dequantize_mxfp4(data[2], e8m0_unshuffle(data[4], case.n, case.k // 32))
    stripe = case.k // splits
    out = torch.zeros(case.m, case.n, dtype=torch.float64)
    for s in range(splits - (1 if drop_last else 0)):
        part = round_to_bf16(a[:, s * stripe:(s + 1) * stripe] @ b[:, s * stripe:(s + 1) * stripe].T)
        out = round_to_bf16(out + part)
    return out.to(torch.bfloat16)


def _context():
    return checks.Context(types.SimpleNamespace(path="split_k.py"), "cpu")


def test_bf16_roundings_within_the_runners_tolerance_pass_and_beyond_it_fail():
    small = Case(m=2, n=16, k=64, seed=3)  # short sums, 2 roundings: inside the runner's 1e-2 (found by search)
    y = _split_k_in_bf16(small, 2)
    ctx = _context()
    assert not ctx.judge(y, small).passed, "without the record the one-rounding bound applies"
    judged = ctx.judge(y, small, {"bf16_atomic_adds": 2})
    assert judged.passed and judged.official.passed
    assert "within the roundings of 2 bf16 atomic adds" in judged.summary
    # longer sums, 8 roundings: beyond 1e-2 relative somewhere, and outside the one-rounding bound of either
    # tier's fp32 model (at K = 4096 a GPU's u = 2^-23 bound is wider than the runner's 1e-2 itself)
    large = Case(m=16, n=64, k=1024, seed=2)
    judged = ctx.judge(_split_k_in_bf16(large, 8), large, {"bf16_atomic_adds": 8})
    assert not judged.passed and not judged.official.passed
    assert "exceed the runner's 1e-2 check" in judged.summary


def test_a_dropped_stripe_fails_even_with_the_roundings_allowed():
    case = Case(m=4, n=32, k=1024, seed=3)
    judged = _context().judge(_split_k_in_bf16(case, 4, drop_last=True), case, {"bf16_atomic_adds": 4})
    assert not judged.passed and "outside the roundings of 4 bf16 atomic adds" in judged.summary


def test_a_gpu_grid_bounds_the_adds_where_nobody_counts_them():
    case = Case(m=4, n=32, k=256, seed=1)
    y = _split_k_in_bf16(case, 4)
    data, _ = case.build()
    ex = exact_gemm_from_inputs(data)
    lo, hi = acceptable_range(ex, accumulation_bound(ex, bf16_atomic_adds=4))
    assert ((lo <= y.double()) & (y.double() <= hi)).all()
    record = {"atomic_add_launches": [{"kernel": "split_k", "dtypes": ["bf16"], "programs": 4}]}
    judged = _context().judge(y, case, record)
    assert "up to 4 bf16 atomic adds per element in split_k" in judged.summary
    unknown = {"atomic_add_launches": [{"kernel": "split_k", "dtypes": ["bf16"], "programs": None}]}
    judged = _context().judge(y, case, unknown)
    assert not judged.passed and "could not resolve the grid" in judged.unobservable
