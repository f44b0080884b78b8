"""Each interpreter patch: the divergence is there on stock Triton, and gone with the patch.

References: torch's CPU conversions (RNE, subnormals kept) and fp32 arithmetic, and the outputs of the
same kernels compiled on the H200 (docs/results/interpreter_vs_compiled_*.npz, recorded with
``python -m fuzz.selfcheck.interpreter_check record``). A NaN output is compared as NaN: payloads are a backend's.
"""
from __future__ import annotations

import glob
import os

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from fuzz.selfcheck import interpreter_check as check
from reference.emulation import triton_interpreter

pytestmark = pytest.mark.skipif(not triton.knobs.runtime.interpret,
                                reason="interpreter patches apply to the Triton interpreter (CPU tier) only")

RECORDED = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "results",
                                         "interpreter_vs_compiled_*.npz")))


@pytest.fixture
def stock():
    """Stock Triton for the duration of a test; the patches come back afterwards whatever happens."""
    names = triton_interpreter.installed()
    triton_interpreter.uninstall()
    try:
        yield
    finally:
        triton_interpreter.install(names)


def torch_reference(name, inputs):
    x = inputs[0]
    return {
        "bf16_to_fp32": lambda: x.float(),
        "bf16_to_fp16": lambda: x.half(),
        "fp16_to_bf16": lambda: x.bfloat16(),
        "fp32_to_bf16": lambda: x.bfloat16(),
        "bf16_mul": lambda: (x.float() * inputs[1].float()).bfloat16(),
        "bf16_add": lambda: (x.float() + inputs[1].float()).bfloat16(),
        "bf16_less": lambda: (x < inputs[1]).bfloat16(),
        "bf16_row_max": lambda: x.max(1).values,
        "not_and_on_tensors": lambda: ((~(x > 0)).to(torch.int8) + 2 * ((x < 1) & (x > -1)).to(torch.int8)),
    }[name]()


DIVERGENT = ["bf16_to_fp32", "fp16_to_bf16", "fp32_to_bf16", "bf16_mul", "bf16_add", "bf16_less", "bf16_row_max",
             "not_and_on_tensors"]


def run(name):
    kernel, inputs, constexprs, dtype = check.cases()[name]
    return check.run_case(kernel, inputs, constexprs, dtype, "cpu"), inputs, dtype


# Divergences that come from the host's numpy, not from Triton: numpy's float32 exp2(127.0) was one ulp high
# on the 2-core box until numpy 2.4 (2.4.6 gives 2^127 there). Where the probe sees none, the gate leaves
# the patch off, which is right; these tests then check that it is off rather than that it diverges.
HOST_DEPENDENT = {"exp2_of_integers"}


def numpy_exp2_is_exact() -> bool:
    return float(np.exp2(np.float32(127.0))) == 2.0 ** 127


def expected_patches() -> set:
    return {p.name for p in triton_interpreter.PATCHES if p.name not in HOST_DEPENDENT or not numpy_exp2_is_exact()}


def test_every_patch_is_installed_and_its_probe_sees_the_divergence_on_stock(stock):
    for patch in triton_interpreter.PATCHES:
        if patch.name in HOST_DEPENDENT and numpy_exp2_is_exact():
            assert not patch.diverges(), f"{patch.name}: the probe disagrees with numpy itself"
            continue
        assert patch.diverges(), f"{patch.name}: stock Triton {triton.__version__} no longer diverges; drop the patch"


def test_the_patched_interpreter_reports_its_patches():
    assert set(triton_interpreter.installed()) == expected_patches()


@pytest.mark.parametrize("name", DIVERGENT + ["bf16_to_fp16"])
def test_patched_interpreter_matches_torch_bit_for_bit(name):
    y, inputs, dtype = run(name)
    table = check.compare(y, check._bits(torch_reference(name, inputs)), dtype)
    assert table["wrong"] == 0, table


@pytest.mark.parametrize("name", DIVERGENT)
def test_stock_interpreter_diverges(name, stock):
    try:
        y, inputs, dtype = run(name)
    except triton.runtime.interpreter.InterpreterError:  # `not` on a tensor gives a Python bool: no .to()
        assert name == "not_and_on_tensors"
        return
    assert check.compare(y, check._bits(torch_reference(name, inputs)), dtype)["wrong"] > 0


def test_rtz_rounding_is_truncation_and_keeps_nan():
    y, inputs, _ = run("fp32_to_bf16_rtz")
    x = inputs[0]
    expected = (x.view(torch.int32) >> 16).to(torch.int16)
    finite = ~torch.isnan(x)
    assert torch.equal(y.view(torch.int16)[finite], expected[finite])
    assert torch.isnan(y[~finite]).all()


@triton.jit
def _exp2(x_ptr, y_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    tl.store(y_ptr + offsets, tl.exp2(tl.load(x_ptr + offsets)))


def exp2_of_every_fp32_exponent():
    """(x, tl.exp2(x), 2^x exactly) for every integer x from -160 to 130 (fp32 0, subnormals, normals, Inf)."""
    x = torch.zeros(512)
    x[:291] = torch.arange(-160, 131, dtype=torch.float32)
    y = torch.empty_like(x)
    _exp2[(1,)](x, y, 512)
    return x[:291], y[:291], torch.ldexp(torch.ones(291, dtype=torch.float64), x[:291].long()).float()


def test_exp2_of_an_integer_is_the_exact_power_of_two():
    _, y, exact = exp2_of_every_fp32_exponent()
    assert torch.equal(y, exact)


def test_stock_exp2_of_127_is_one_ulp_high(stock):
    if numpy_exp2_is_exact():
        pytest.skip(f"this host's numpy {np.__version__} computes exp2(127.0) exactly: the patch is off here")
    x, y, exact = exp2_of_every_fp32_exponent()
    wrong = x[y != exact].tolist()
    assert wrong == [127.0] and y[x == 127].view(torch.int32).item() == 0x7F000001


def test_fp64_and_int32_narrow_with_one_rounding():
    y, inputs, _ = run("fp64_to_bf16")
    x = inputs[0]
    # the inputs sit 2^-30 relative above fp32 values: a double rounding through fp32 would lose that
    near = torch.from_numpy(triton_interpreter.f32_to_bf16_bits(
        triton_interpreter._to_f32_round_to_odd(x.numpy())).astype("int16"))
    assert torch.equal(y.view(torch.int16), near)
    ties_up = x.float().bfloat16()  # double rounding: fp64 -> fp32 -> bf16
    assert not torch.equal(y.view(torch.int16), ties_up.view(torch.int16))
    y, inputs, _ = run("int32_to_bf16")
    exact = inputs[0].double()
    assert ((y.double() - exact).abs() <= (ties_up.new_tensor(1.0).double() * exact.abs() * 2.0**-8)).all()


@triton.jit
def _rank0_index(o_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    r = tl.arange(0, N)
    tl.store(o_ptr + pid * N + r[:, None], pid[None, :] + r[:, None])


def test_rank0_index_is_accepted_as_the_runners_triton_did_and_reported():
    triton_interpreter.reset_shims()
    out = torch.zeros(2 * 4, dtype=torch.int32)
    _rank0_index[(2,)](out, N=4)
    assert out.tolist() == [0, 1, 2, 3, 1, 2, 3, 4]
    assert "index_rank0_tensor" in triton_interpreter.shims_used()
    assert __file__.rsplit("/", 1)[-1] in triton_interpreter.shims_used()["index_rank0_tensor"]


def test_rank0_index_is_rejected_by_stock_triton(stock):
    with pytest.raises(triton.runtime.interpreter.InterpreterError, match="too many indices"):
        _rank0_index[(1,)](torch.zeros(4, dtype=torch.int32), N=4)


@triton.jit
def _scalar_mask_block_store(o_ptr, M, n_cols, BLOCK: tl.constexpr):
    # aiter's fused quant + shuffle idiom: the scale column is a program id, indexed as a rank-0 tensor
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rows = pid_m * BLOCK + tl.arange(0, BLOCK)
    mask = (rows < M)[:, None] & (pid_n < n_cols)[None, :]
    tl.store(o_ptr + rows[:, None] * 4 + pid_n[None, :], tl.where(mask, 1, 0).to(tl.int8), mask=mask)
    tail = (tl.arange(0, BLOCK) < 3) & (pid_n < 2)  # a scalar comparison broadcast into a block mask
    tl.store(o_ptr + 4 * 2 * BLOCK + pid_n * BLOCK + tl.arange(0, BLOCK), tl.full((BLOCK,), 2, tl.int8), mask=tail)


def _run_scalar_mask_block_store():
    out = torch.zeros(4 * 2 * 8 + 4 * 8, dtype=torch.int8)
    _scalar_mask_block_store[(2, 4)](out, 13, 3, BLOCK=8)
    return out


def test_a_scalar_comparison_broadcast_into_a_block_is_a_boolean_mask():
    out = _run_scalar_mask_block_store()
    rows = out[:64].view(16, 4)
    assert rows[:13, :3].eq(1).all() and rows[13:].eq(0).all() and rows[:, 3].eq(0).all()
    tails = out[64:].view(4, 8)
    assert tails[:2, :3].eq(2).all() and tails[:2, 3:].eq(0).all() and tails[2:].eq(0).all()


def test_stock_interpreter_makes_an_int32_mask_of_a_scalar_comparison(stock):
    with pytest.raises(triton.runtime.interpreter.InterpreterError, match="mask has unsupported dtype|too many indices"):
        _run_scalar_mask_block_store()


@triton.jit
def _bf16_atomic_add(o_ptr, x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(o_ptr + offs % 2, tl.load(x_ptr + tl.program_id(0) * BLOCK + offs).to(tl.bfloat16))


def test_bf16_atomic_add_accumulates_each_add_rounded_to_nearest_even():
    x = torch.tensor([1.0, 2.0 ** -8, 1.0, 3 * 2.0 ** -9, 256.0, 1.0, -256.0, 0.5], dtype=torch.float32)
    out = torch.zeros(2, dtype=torch.bfloat16)
    _bf16_atomic_add[(2,)](out, x, BLOCK=4)
    expected = torch.zeros(2, dtype=torch.bfloat16)
    for program in range(2):  # the interpreter runs programs in order; within one, lanes in order
        for lane in range(4):
            i = program * 4 + lane
            expected[lane % 2] = (expected[lane % 2].float() + x[i].bfloat16().float()).bfloat16()
    assert out.view(torch.int16).tolist() == expected.view(torch.int16).tolist()
    # each add is rounded to bf16 on its own (1 + 5 * 2^-9 loses its last bits), so this is not the fp32 sum
    assert out[1].item() != float(x[1::2].sum())


def test_stock_interpreter_rejects_bf16_atomics(stock):
    with pytest.raises(triton.runtime.interpreter.InterpreterError, match="Unsupported data type"):
        _bf16_atomic_add[(1,)](torch.zeros(2, dtype=torch.bfloat16), torch.ones(4), BLOCK=4)


DEVICE_MODULE = """
import triton
import triton.language as tl
from triton.language import core  # the kernel's module does not hold tl.core: only this call patches it

@triton.jit
def device_add(x):
    return x + 1
"""


@triton.jit
def _calls_device_function(o_ptr):
    tl.store(o_ptr, interp_device_module.device_add(tl.load(o_ptr)))  # noqa: F821 (bound by the test)


@pytest.mark.parametrize("patched", [True, False])
def test_device_function_calls_leave_triton_language_as_it_was(patched, request, tmp_path, monkeypatch):
    if not patched:
        request.getfixturevalue("stock")
    (tmp_path / "interp_device_module.py").write_text(DEVICE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import interp_device_module

    monkeypatch.setitem(globals(), "interp_device_module", interp_device_module)
    # A patched launch starts from the install-time language (compiled_frontend_check puts it back),
    # whatever an earlier stock launch in this process leaked: so does this test (CI's xdist worker once
    # ran it after such a leak and saw the put-back as 64 changed names).
    if patched and "language" in triton_interpreter._frontend:
        triton_interpreter._restore_language()
    before = dict(vars(tl.core))
    _calls_device_function[(1,)](torch.zeros(1, dtype=torch.int32))
    changed = [n for n, v in vars(tl.core).items() if before.get(n) is not v]
    for name in changed:  # leave the process as it was for the tests after this one
        setattr(tl.core, name, before[name])
    assert (changed == []) == patched, changed


@pytest.mark.skipif(not RECORDED, reason="no recorded compiled outputs in docs/results (record them on a GPU)")
def test_patched_interpreter_equals_compiled_triton_on_the_recorded_gpu_tables():
    result = check.compare_file(RECORDED[-1])
    wrong = {name: row for name, row in result["tables"].items() if row.get("wrong", 1)}
    assert not wrong, wrong


@triton.autotune(configs=[triton.Config({"B": 4}), triton.Config({"B": 8}), triton.Config({"B": 16})], key=["n"])
@triton.jit
def _autotuned_add_block(x_ptr, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x_ptr + i, tl.load(x_ptr + i, mask=i < n) + B, mask=i < n)


def _launch_autotuned() -> float:
    x = torch.zeros(16)
    _autotuned_add_block[lambda meta: (triton.cdiv(16, meta["B"]),)](x, 16)
    return x[0].item()


def test_autotune_runs_the_chosen_config_and_reports_every_config():
    triton_interpreter.reset_autotune_report()
    try:
        ran = []
        for choice in range(4):
            triton_interpreter.set_autotune_choice(choice)
            ran.append(_launch_autotuned())
    finally:
        triton_interpreter.set_autotune_choice(0)
    assert ran == [4.0, 8.0, 16.0, 4.0]  # choice modulo the kernel's number of configs
    report = triton_interpreter.autotune_report()["_autotuned_add_block"]
    assert len(report["configs"]) == 3 and report["ran"] == [0, 1, 2]
    assert triton.testing.do_bench(lambda: None) == 1.0


def test_autotune_needs_a_gpu_on_stock_triton(stock):
    _autotuned_add_block.cache.clear()  # an earlier test's tuning result would skip the benchmark
    with pytest.raises(RuntimeError, match="active drivers"):
        _launch_autotuned()


@triton.jit
def _not_on_int32(x_ptr):
    i = tl.arange(0, 4)
    tl.store(x_ptr + i, (not tl.load(x_ptr + i)).to(tl.int32))


def test_not_on_a_non_boolean_tensor_is_rejected_naming_the_line():
    # the frontend check sees it first (compiled Triton cannot bitcast int32 to int1 for `not`)
    with pytest.raises(triton_interpreter.FrontendRejects, match=r"test_triton_interpreter.py:\d+: (?s:.*)bitcast"):
        _not_on_int32[(1,)](torch.zeros(4, dtype=torch.int32))


@triton.jit
def _asserts_at_compile_time(x_ptr, EVEN: tl.constexpr):
    tl.static_assert(EVEN, "this kernel compiles only when EVEN")
    i = tl.arange(0, 4)
    tl.store(x_ptr + i, tl.load(x_ptr + i) + 1)


def test_a_failed_static_assert_is_the_compiled_frontends_rejection_not_the_interpreters_failure():
    """compiled Triton refuses the launch at compile time (CompileTimeAssertionFailure, a kind of
    CompilationError): a FrontendRejects naming the kernel, not the interpreter's AssertionError, which read
    as our stand-in failing (NOT RUN) where the runner's compile fails (the file's, or aiter's own)."""
    x = torch.zeros(4)
    _asserts_at_compile_time[(1,)](x, EVEN=True)
    assert x.tolist() == [1.0] * 4
    with pytest.raises(triton_interpreter.FrontendRejects, match=r"(?s)_asserts_at_compile_time.*only when EVEN"):
        _asserts_at_compile_time[(1,)](x, EVEN=False)


PLAIN_GLOBAL = 4  # not a tl.constexpr: compiled Triton refuses to read it inside @jit


@triton.jit
def _reads_a_plain_global(x_ptr):
    i = tl.arange(0, 4)
    tl.store(x_ptr + i, tl.load(x_ptr + i) + PLAIN_GLOBAL)


@triton.jit
def _calls_a_device_function(x_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(x_ptr + i, _device_plus_one(tl.load(x_ptr + i)))


@triton.jit
def _device_plus_one(x):
    return x + 1


def test_what_the_compiled_frontend_rejects_raises_naming_the_line():
    line = next(i for i, text in enumerate(open(__file__).read().splitlines(), 1) if "+ PLAIN_GLOBAL)" in text)
    with pytest.raises(triton_interpreter.FrontendRejects, match=rf"test_triton_interpreter.py:{line}: (?s:.*)PLAIN_GLOBAL"):
        _reads_a_plain_global[(1,)](torch.zeros(4))
    x = torch.zeros(8)
    _calls_a_device_function[(1,)](x, N=8)  # device functions are compiled as JITFunctions: accepted
    assert x.tolist() == [1.0] * 8


def test_stock_interpreter_runs_what_the_compiled_frontend_rejects(stock):
    x = torch.zeros(4)
    _reads_a_plain_global[(1,)](x)
    assert x.tolist() == [4.0] * 4


def test_bf16_atomic_adds_are_counted_per_address():
    out, x = torch.zeros(2, dtype=torch.bfloat16), torch.ones(12)
    triton_interpreter.reset_bf16_atomic_adds()
    _bf16_atomic_add[(3,)](out, x, BLOCK=4)  # three programs, each adding twice into each of two cells
    assert triton_interpreter.bf16_atomic_adds_per_element() == 6
    assert out.tolist() == [6.0, 6.0]
    triton_interpreter.reset_bf16_atomic_adds()
    assert triton_interpreter.bf16_atomic_adds_per_element() == 0


@triton.jit
def _bf16_atomic_add_tile(o_ptr, x_ptr, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows, cols = tl.arange(0, BM), tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :])
    tl.atomic_add(o_ptr + rows[:, None] * stride + cols[None, :] * 2, x, mask=cols[None, :] < BN - 1)


def test_a_tile_of_distinct_bf16_cells_adds_as_lane_by_lane():
    """The one-pass path (distinct cells of a strided tile, masked lanes left alone) against the
    element-by-element rule."""
    out = torch.zeros(4, 40, dtype=torch.bfloat16)
    x = (torch.randn(4, 16, generator=torch.Generator().manual_seed(0)) * 100).to(torch.bfloat16)
    for _ in range(3):
        _bf16_atomic_add_tile[(1,)](out, x, 40, BM=4, BN=16)
    expected = torch.zeros(4, 40, dtype=torch.bfloat16)
    for _ in range(3):
        expected[:, 0:30:2] = (expected[:, 0:30:2].float() + x[:, :15].float()).bfloat16()
    assert out.view(torch.int16).tolist() == expected.view(torch.int16).tolist()


@triton.jit
def _copies_a_row(src_ptr, dst_ptr, stride, ROW: tl.constexpr, ACTIVE: tl.constexpr):
    i = tl.arange(0, 16)
    tl.store(dst_ptr + i, tl.load(src_ptr + ROW * stride + i, mask=(i < 16) & ACTIVE, other=0))


def test_a_load_through_an_empty_tensors_null_pointer_is_a_modelled_device_fault():
    """torch gives a tensor with no elements data_ptr() 0 and a launch passes it on: the GPU faults (a memory
    access fault the run reports), where the interpreter's raw read ended the process with SIGSEGV (v55 at
    N = 16: its scale view x[:N // 32] is empty). A masked-off lane is never dereferenced, on a GPU either."""
    storage = torch.arange(64, dtype=torch.float32).reshape(4, 16)
    empty, out = storage[:0], torch.full((16,), -1.0)
    assert empty.numel() == 0 and empty.data_ptr() == 0
    with pytest.raises(Exception, match="illegal memory access") as caught:
        _copies_a_row[(1,)](empty, out, 16, ROW=1, ACTIVE=True)
    cause = caught.value if isinstance(caught.value, triton_interpreter.NullPointerFault) else caught.value.__cause__
    assert isinstance(cause, triton_interpreter.NullPointerFault) and "test_triton_interpreter.py" in str(cause)
    _copies_a_row[(1,)](empty, out, 16, ROW=1, ACTIVE=False)
    assert out.tolist() == [0.0] * 16
    _copies_a_row[(1,)](storage, out, 16, ROW=1, ACTIVE=True)
    assert out.tolist() == list(range(16, 32))
