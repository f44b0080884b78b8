"""Batched launches (reference/emulation/triton_batched.py) give the bytes of the stock one-by-one loop,
and batch or fall back, with the recorded reason, where they should."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

from reference import generate_input
from reference.emulation import triton_batched

pytestmark = pytest.mark.skipif(not triton.knobs.runtime.interpret,
                                reason="batching runs the Triton interpreter's programs (CPU tier) only")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SHAPES = [(1, 64, 256), (13, 192, 512)]
SINGLE = "a single program"


def _bytes(value) -> list:
    if isinstance(value, torch.Tensor):
        return [value.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes()]
    if isinstance(value, (tuple, list)):
        return [b for v in value for b in _bytes(v)]
    return [repr(value)]


def both_ways(monkeypatch, call):
    """(bytes one by one, bytes batched, the batched run's report); ``call`` builds its own inputs."""
    out = {}
    for flag in ("0", "1"):
        monkeypatch.setenv(triton_batched.ENV, flag)
        triton_batched.reset_report()
        out[flag] = (_bytes(call()), triton_batched.report())
    assert all(r["batched"] == 0 for r in out["0"][1].values())  # the switch turns batching off
    return out["0"][0], out["1"][0], out["1"][1]


def assert_same_and(monkeypatch, call, batched=(), fallbacks=None):
    """Identical bytes; every kernel of ``batched`` batched every launch; ``fallbacks``: kernel -> the
    reason each of its launches fell back with."""
    sequential, together, report = both_ways(monkeypatch, call)
    assert sequential == together
    for name in batched:
        assert report[name]["sequential"] == 0 and report[name]["batched"] > 0, report
    for name, reason in (fallbacks or {}).items():
        assert report[name]["batched"] == 0 and set(report[name]["reasons"]) == {reason}, report
    return report


# ---------------------------------------------------------------------------------------------------
# (a) the example submissions' Triton kernels


def import_example(name: str):
    sys.path.insert(0, str(EXAMPLES))  # for `from task import ...` and the examples' own imports
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(EXAMPLES))


# example -> (kernels batched at 13x192x512, {kernel: reason} falling back there); at 1x64x256 most grids
# are one program ("a single program")
EXAMPLE_OUTCOMES = {
    "triton_fused_quant_shuffle": (["_quantize_shuffled"], {}),
    "triton_fused_quant_shuffle_wrong": (["_quantize_shuffled"], {}),
    "triton_quant_uint8_scale": (["_quantize_a"], {}),
    "triton_quant_uint8_scale_wrong": (["_quantize_a"], {}),
    "triton_waves_per_eu": (["_quantize_a"], {}),
    "triton_waves_per_eu_wrong": (["_quantize_a"], {}),
    "triton_plain_casts": (["_mxfp4_gemm"], {}),
    "own_triton_gfx950_asm": (["_mxfp4_gemm"], {}),
    "per_group_quant_slow": (["_quantize_group"], {}),
    "autotune_one_bad_config": (["_copy_rows"], {}),
    "triton_atomic_split_k": ([], {"_split_k_gemm": "create_atomic_rmw"}),
    "triton_atomic_split_k_wrong": ([], {"_split_k_gemm": "create_atomic_rmw"}),
    # torch only: the same bytes, nothing launched (triton_e2m1 holds device functions that
    # triton_fused_quant_shuffle calls; k_tail_padding_uninitialised returns torch.empty's bytes by design)
    "split_k_drops_last_stripe": ([], {}), "k_tail_padding": ([], {}),
}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", sorted(EXAMPLE_OUTCOMES))
def test_example_kernels_give_the_same_bytes_batched(name, shape, monkeypatch, aiter_info):
    example = import_example(name)
    report = assert_same_and(monkeypatch, lambda: example.custom_kernel(generate_input(*shape, seed=sum(shape))),
                             *EXAMPLE_OUTCOMES[name] if shape == SHAPES[1] else ((), None))
    if shape == SHAPES[0]:
        for kernel in EXAMPLE_OUTCOMES[name][0]:
            if kernel in report and report[kernel]["sequential"]:
                assert set(report[kernel]["reasons"]) <= {SINGLE, "no program ran"}, report
    elif not EXAMPLE_OUTCOMES[name][0] and not EXAMPLE_OUTCOMES[name][1]:
        assert report == {}


# ---------------------------------------------------------------------------------------------------
# (b) our kernels: the fused path (both quantizers, with and without split K) and the A quantizer


@pytest.mark.parametrize("shape", [(13, 192, 512), (3, 64, 768)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("splits", [1, 2])
@pytest.mark.parametrize("quantizer", ["portable", "gfx950"])
def test_our_fused_path_and_quantizer_give_the_same_bytes_batched(quantizer, splits, shape, monkeypatch):
    from kernels import configs, fused

    m, n, k = shape

    def call():
        data = generate_input(m, n, k, 7, scale_pad_fill=0xFF)
        split_k, parts = configs.align_splits(k, 256, splits)
        cfg = configs.FusedConfig(16, 32, 256, splits=parts, split_k=split_k if parts > 1 else 0)
        return fused.fused_gemm(data[0], data[3], data[4], n, cfg, quantizer), fused.quantize_a(data[0], quantizer)

    assert_same_and(monkeypatch, call, batched=["fused_mxfp4_gemm_kernel", "quantize_tile_kernel"])


# ---------------------------------------------------------------------------------------------------
# (c) the emulated aiter Triton kernels (the "kernels" mode of aiter's public Triton API)


@pytest.mark.parametrize("shape", [(13, 128, 512), (16, 256, 512)], ids=lambda s: "x".join(map(str, s)))
def test_emulated_aiter_triton_kernels_give_the_same_bytes_batched(shape, monkeypatch):
    from fuzz.testing.fixtures_aiter import emulated, preshuffled_views, unshuffled_b

    vectorized = emulated("ops.triton._vectorized")
    quant = emulated("ops.triton.quant")
    a16wfp4 = emulated("ops.triton.gemm.basic.gemm_a16wfp4")
    afp4wfp4 = emulated("ops.triton.gemm.basic.gemm_afp4wfp4")
    vectorized.set_mode("kernels")

    def call():
        data = generate_input(*shape, seed=sum(shape))
        packed, scales = unshuffled_b(data)
        shuffled, shuffled_scales = preshuffled_views(data)
        a_codes, a_scales = quant.dynamic_mxfp4_quant(data[0])
        return (a_codes, a_scales, a16wfp4.gemm_a16wfp4(data[0], packed, scales),
                afp4wfp4.gemm_afp4wfp4(a_codes, packed, a_scales, scales),
                a16wfp4.gemm_a16wfp4_preshuffle(data[0], shuffled, shuffled_scales))

    report = assert_same_and(monkeypatch, call)
    assert sum(r["batched"] for r in report.values()) >= 3, report  # the quantizer and the GEMMs batch


# ---------------------------------------------------------------------------------------------------
# (d) the interpreter divergence catalogue's kernels, and the patched operations batched


@pytest.mark.parametrize("case", ["bf16_to_fp32", "bf16_to_fp16", "fp16_to_bf16", "fp32_to_bf16", "fp32_to_bf16_rtz",
                                  "fp64_to_bf16", "int32_to_bf16", "bf16_mul", "bf16_add", "bf16_maximum",
                                  "bf16_less", "bf16_row_max", "not_and_on_tensors"])
def test_divergence_catalogue_kernels_give_the_same_bytes_batched(case, monkeypatch):
    from fuzz.selfcheck import interpreter_check as check

    kernel, inputs, constexprs, dtype = check.cases()[case]
    assert_same_and(monkeypatch, lambda: check.run_case(kernel, inputs, constexprs, dtype, "cpu"),
                    batched=[kernel.fn.__name__] if inputs[0].numel() > check.BLOCK or case == "bf16_row_max" else [])


@triton.jit
def _patched_operations(x_ptr, b_ptr, o_ptr, s_ptr, c_ptr, d_ptr, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :])  # bf16
    wide = x.to(tl.float32)
    mixed = tl.where(cols[None, :] % 3 == 0, wide, -0.0 * wide)
    y = tl.maximum(mixed, tl.minimum(-mixed, 0.0)) + tl.exp2(tl.floor(wide * 4.0))  # signed zeros, exact exp2
    tl.store(o_ptr + rows[:, None] * BN + cols[None, :], (x * x + x).to(tl.bfloat16))  # bf16 arithmetic
    tl.store(s_ptr + rows, tl.sum(x, axis=1))  # bf16 tree sum
    tl.store(s_ptr + 1024 + rows, tl.max(x, axis=1))
    tl.store(s_ptr + 2048 + rows, tl.sum(y, axis=1).to(tl.bfloat16))
    tl.store(s_ptr + 3072 + rows, tl.argmax(wide, axis=1).to(tl.bfloat16))
    tl.store(s_ptr + 4096 + pid, tl.sum(tl.sum(wide, axis=0), axis=0).to(tl.bfloat16))
    scan = tl.cumsum(x, axis=1)  # bf16 scan
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], scan)
    b = tl.load(b_ptr + cols[:, None] * BN + cols[None, :])
    acc = tl.dot(wide, b)  # fp32 dot
    left, right = tl.split(tl.reshape(tl.trans(acc), (BN, BM // 2, 2)))
    joined = tl.reshape(tl.join(right, left), (BN, BM))
    tl.store(d_ptr + rows[None, :] + cols[:, None] * 1024, joined + tl.cumsum(tl.trans(wide), axis=0))


def test_patched_bf16_reductions_scans_dot_and_shape_ops_give_the_same_bytes_batched(monkeypatch):
    def call():
        g = torch.Generator().manual_seed(3)
        x = (torch.randn(64, 32, generator=g) * torch.exp2(torch.randint(-8, 8, (64, 32), generator=g).float()))
        x[::5, ::7] = 0.0
        x = x.to(torch.bfloat16)
        b = torch.randn(32, 32, generator=g)
        o, c = torch.empty_like(x), torch.empty_like(x)
        s = torch.zeros(5000, dtype=torch.bfloat16)
        d = torch.zeros(32, 1024)
        _patched_operations[(4,)](x, b, o, s, c, d, BM=16, BN=32)
        return o, s[:4100], c, d[:, :64]

    assert_same_and(monkeypatch, call, batched=["_patched_operations"])


# ---------------------------------------------------------------------------------------------------
# (e) programs that are not independent, or not batchable: the stock loop runs, and says why


@triton.jit
def _reads_previous_program(x_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
    previous = tl.load(x_ptr + offs - BLOCK, mask=offs >= BLOCK, other=0)  # what program pid-1 stored
    tl.store(x_ptr + offs, previous * 2 + tl.load(x_ptr + offs))


@triton.jit
def _same_address(x_ptr):
    tl.store(x_ptr, tl.program_id(0) + 1)


@triton.jit
def _branch_on_program(x_ptr):
    pid = tl.program_id(0)
    if pid % 2 == 0:
        tl.store(x_ptr + pid, pid)


@triton.jit
def _loop_bound_from_program(x_ptr):
    pid = tl.program_id(0)
    total = 0
    for i in range(pid):
        total += i
    tl.store(x_ptr + pid, total)


@triton.jit
def _atomic(x_ptr):
    tl.atomic_add(x_ptr + tl.program_id(0) % 2, 1)


@triton.jit
def _printing(x_ptr):
    tl.device_print("pid", tl.program_id(0))
    tl.store(x_ptr + tl.program_id(0), 1)


DEPENDENT = {
    "_reads_previous_program": (lambda x: _reads_previous_program[(4,)](x, BLOCK=8), "a program loads what another program stores"),
    "_same_address": (lambda x: _same_address[(4,)](x), "two programs store to the same address"),
    "_branch_on_program": (lambda x: _branch_on_program[(4,)](x),
                           "`if`/`while`/bool() on a value that differs between programs"),
    "_loop_bound_from_program": (lambda x: _loop_bound_from_program[(4,)](x),
                                 "range()/int()/an index on a value that differs between programs"),
    "_atomic": (lambda x: _atomic[(4,)](x), "create_atomic_rmw"),
    "_printing": (lambda x: _printing[(4,)](x), "create_print"),
}


@pytest.mark.parametrize("name", sorted(DEPENDENT))
def test_dependent_or_unbatchable_programs_fall_back_naming_why(name, monkeypatch, capfd):
    launch, reason = DEPENDENT[name]

    def call():
        x = torch.arange(32, dtype=torch.int32)
        launch(x)
        return x

    assert_same_and(monkeypatch, call, fallbacks={name: reason})


@triton.jit
def _split_grid(x_ptr, SPLIT: tl.constexpr):
    tile = tl.program_id(0)
    part = tl.program_id(1)
    total = 0
    for k in range(part * SPLIT, part * SPLIT + SPLIT):  # the loop bound differs between parts only
        total += k
    tl.store(x_ptr + part * 16 + tile, total + tile)


def test_a_loop_bound_that_differs_along_one_grid_axis_batches_in_groups(monkeypatch):
    def call():
        x = torch.zeros(64, dtype=torch.int32)
        _split_grid[(16, 3)](x, SPLIT=4)
        return x

    assert_same_and(monkeypatch, call, batched=["_split_grid"])


@triton.jit
def _gathers_other_programs_stores(x_ptr, idx_ptr):
    pid = tl.program_id(0)
    tl.store(x_ptr + pid, pid)
    index = tl.load(idx_ptr + pid)
    tl.store(x_ptr + 8 + pid, tl.load(x_ptr + index))  # programs 2 reads what program 0 stored


def test_a_failed_attempt_leaves_memory_as_the_stock_loop_does(monkeypatch):
    def call():
        x = torch.full((16,), -1, dtype=torch.int32)
        _gathers_other_programs_stores[(4,)](x, torch.tensor([0, 1, 0, 3], dtype=torch.int32))
        return x

    assert_same_and(monkeypatch, call, fallbacks={"_gathers_other_programs_stores": "a program loads what another program stores"})


def test_progress_counts_every_program_of_a_batched_launch(monkeypatch):
    from triton.runtime import interpreter
    from triton.runtime.jit import JITFunction

    from fuzz.submission import progress

    for owner, name in [(interpreter.GridExecutor, "__call__"), (interpreter.InterpreterBuilder, "set_grid_dim"),
                        (interpreter.InterpreterBuilder, "set_grid_idx"), (JITFunction, "run")]:
        monkeypatch.setattr(owner, name, vars(owner)[name])
    monkeypatch.setattr(progress, "_installed", [])
    monkeypatch.setattr(progress, "COUNTERS", progress.Counters())
    progress.install()
    triton_batched.reset_report()
    x = torch.zeros(64, dtype=torch.int32)
    _split_grid[(16, 3)](x, SPLIT=4)
    snapshot = progress.COUNTERS.snapshot()
    assert triton_batched.report()["_split_grid"]["batched"] == 1
    assert (snapshot["programs"], snapshot["grid"], snapshot["grid_done"], snapshot["launches"]) == (48, 48, 48, 1)


@triton.jit
def _add_one(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)


def test_a_chunks_programs_count_as_begun_together_for_the_progress_rate(monkeypatch):
    """The stock loop counts a chunk's first program, then the chunk runs inside it: a rate read after it would
    charge the whole chunk to one program (a 4.7 s run estimated at minutes, ended by the time budget). While a
    chunk runs, programs_begun() is its end; the worker's progress snapshot counts that."""
    from fuzz.submission import progress

    monkeypatch.setenv(triton_batched.ENV, "1")
    monkeypatch.setenv(triton_batched.CHUNK_ENV, "4")
    seen = []
    attempt = triton_batched._Launch._attempt

    def spy(self, args, programs):
        seen.append(triton_batched.programs_begun())
        return attempt(self, args, programs)

    monkeypatch.setattr(triton_batched._Launch, "_attempt", spy)
    x = torch.zeros(10 * 8)
    _add_one[(10,)](x, x.numel(), BLOCK=8)
    assert torch.equal(x, torch.ones_like(x))
    assert seen == [4, 8, 10]  # each chunk's programs begun at once (the last chunk is the grid's end)
    assert triton_batched.programs_begun() == 0  # outside a launch

    counters = progress.Counters()
    counters.grid, counters.grid_done = 10, 1
    monkeypatch.setattr(triton_batched, "_begun", {"programs": 4})
    assert counters.snapshot()["grid_done"] == 4
    counters.grid = None  # a compiled launch: no grid counted
    assert counters.snapshot()["grid_done"] == 1
