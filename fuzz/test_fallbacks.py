"""Fallback behaviour under fault injection (kernels/faults.py), the expected-path policy
(fuzz/judge/policy.py) and the path trace (fuzz/judge/trace.py).

Every fallback edge of the dispatcher is fuzzed over small shapes and fault kinds: the next path serves,
its output meets the oracle bound under its own RunInfo (rounding, splits), the failure is remembered
per shape (the faulty run() is called once per shape), and nothing a failed path wrote comes back.
Edges into aiter paths skip where aiter (real or emulated) is not importable; the "aiter missing" edge
and the fault classes run everywhere, with a second fused configuration (split-K, so the workspace
and fold run too) as the path that takes over.
"""
import builtins
import contextlib
import io
import importlib.util
import math
import re
import sys
import textwrap

import pytest
import torch
from hypothesis import given, strategies as st

from fuzz.judge import trace as trace_mod
from fuzz.judge.policy import TIERS, PolicyViolation, check_policy, load_policy
from fuzz.judge.trace import trace_calls
from kernels import aiter_helper, asm, configs, dispatch, faults, fused
from kernels.dispatch import CallRecord, NoPathError
from kernels.faults import FaultSpecError, poison_mask
from kernels.path import FunctionPath, RunInfo
from kernels.platform import detect
from reference import acceptable_range, accumulation_bound, exact_gemm_from_inputs, generate_input

DEVICE = detect().device
BENCHMARK_SHAPES = configs.OFFICIAL_SHAPES[4:]


def outside_bound(y, data, info) -> torch.Tensor:
    """Elements of ``y`` outside the oracle's bound for the path that produced it."""
    ex = exact_gemm_from_inputs(tuple(t.cpu() for t in data))
    lo, hi = acceptable_range(ex, accumulation_bound(ex, info.splits), info.rounding)
    y = y.detach().cpu().double()
    assert y.shape == ex.value.shape
    return ~((lo <= y) & (y <= hi))


def assert_meets_bound(y, data, info):
    bad = outside_bound(y, data, info)
    assert not bad.any(), f"{int(bad.sum())} elements outside the bound ({info.path}), first at {bad.nonzero()[0].tolist()}"


def _split_k_run(data):
    A, _, _, B_shuffle, B_scale_sh = data
    n, k = B_shuffle.shape[0], A.shape[1]
    split_k, splits = configs.align_splits(k, 256, 2)
    cfg = configs.FusedConfig(16, 32, 256, splits=splits, split_k=split_k if splits > 1 else 0)
    return fused.fused_gemm(A, B_shuffle, B_scale_sh, n, cfg, "portable"), RunInfo("fused-splitk", cfg.describe(), splits)


# Takes over from a faulty fused path on every machine: a different tile and, for K > 256, split-K
# partials in a torch.empty workspace plus the fold.
SPLITK = FunctionPath("fused-splitk", fused.requirements, _split_k_run)

shapes = st.tuples(st.integers(1, 8), st.sampled_from([32, 64, 96]), st.sampled_from([64, 192, 256, 320, 512]))
# Faults that make a path fail, so the dispatcher must move on.
failing = st.one_of(
    st.sampled_from(sorted(faults.EXCEPTIONS)).map(lambda e: f"raise({e})"),
    st.floats(0, 1).map(lambda f: f"partial({f:.3f})"),
    st.just("unavailable"),
)


def _input(shape, seed):
    return generate_input(*shape, seed=seed, device=DEVICE)


def _check_served(d, data, expect, faulty, calls=2, reason="injected fault"):
    """``expect`` serves every call within the bound, returns nothing leaked, and the faulty path's
    run() happened at most once for the shape however often it is called."""
    shape = dispatch.check_contract(data)
    for _ in range(calls):
        y = d(data)
        rec = d.last
        assert rec.info.path == expect, f"served by {rec.info.path!r}, fallbacks {rec.fallbacks}"
        assert_meets_bound(y, data, rec.info)
        assert not d.pool.aliases(y), "the dispatcher returned a buffer a failed path had written"
        assert not poison_mask(y).any()
        reasons = dict(rec.fallbacks)
        assert reason in reasons[faulty], rec.fallbacks
    wrapper = d.faulty(faulty)
    expected_runs = 0 if wrapper.fault.kind in ("unavailable", "noaiter") else 1
    assert wrapper.runs[shape] == expected_runs, f"{faulty} run() {wrapper.runs[shape]} times for {shape}: a retry storm"
    assert d.calls.get(faulty, 0) == expected_runs


# --- each fallback edge of the dispatcher ----------------------------------------------------------------

AITER_EDGES = {
    # edge: (paths made unavailable before it, the faulty path, the path expected to take over)
    "fused->helper": ((), "fused", "helper"),
    "helper->asm": (("fused",), "helper", "asm"),
    "asm->a4w4": (("fused", "helper"), "asm", "a4w4"),
}
_BY_NAME = {p.name: p for p in dispatch.DEFAULT_PATHS}


@pytest.mark.parametrize("edge", sorted(AITER_EDGES))
def test_fallback_edge_into_an_aiter_path(edge):
    off, faulty, nxt = AITER_EDGES[edge]
    for name in (faulty, nxt):
        ok, why = _BY_NAME[name].requirements()
        if not ok:
            pytest.skip(f"{name} path unavailable here: {why}")
    # The fused path does not import aiter, so hiding aiter is a fault only for the aiter paths.
    kinds = failing if faulty == "fused" else st.one_of(failing, st.just("noaiter"))

    # K % 256 == 0: the helper path refuses other K itself, which would mask the injected fault.
    @given(shape=st.tuples(st.integers(1, 8), st.sampled_from([32, 64, 96]), st.sampled_from([256, 512])),
           seed=st.integers(0, 2**16), fault=kinds)
    def check(shape, seed, fault):
        spec = ",".join([f"{p}:unavailable" for p in off] + [f"{faulty}:{fault}"])
        reason = "import" if fault == "noaiter" else "injected fault"
        _check_served(faults.faulty_dispatcher(spec), _input(shape, seed), nxt, faulty, reason=reason)

    check()


@given(shape=shapes, seed=st.integers(0, 2**16), fault=failing)
def test_fused_fault_without_aiter_is_a_clear_no_path_error(shape, seed, fault):
    before = {n: m for n, m in sys.modules.items() if n.split(".")[0] == "aiter"}
    d = faults.faulty_dispatcher(f"fused:{fault},*:noaiter")
    data = _input(shape, seed)
    for _ in range(2):
        with pytest.raises(NoPathError) as err:
            d(data)
        message = str(err.value)
        assert re.search(r"fused: .*injected fault", message)
        for name in ("helper", "asm", "a4w4"):
            assert re.search(rf"{name}: unavailable: .*(aiter|import)", message), message
    assert d.faulty("fused").runs[shape] == (0 if fault == "unavailable" else 1)
    assert {n: m for n, m in sys.modules.items() if n.split(".")[0] == "aiter"} == before


@given(shape=shapes, seed=st.integers(0, 2**16))
def test_fused_serves_when_aiter_is_missing(shape, seed):
    d = faults.faulty_dispatcher("*:noaiter")
    data = _input(shape, seed)
    y = d(data)
    assert d.last.info.path == "fused"
    assert_meets_bound(y, data, d.last.info)
    assert [name for name, _ in d.last.fallbacks] == []


@given(shapes_=st.lists(shapes, min_size=1, max_size=2, unique=True), seed=st.integers(0, 2**16), fault=failing,
       when=st.sampled_from(["", "@K%256!=0", "@M<=4", "@N==64&K>128"]))
def test_fused_fault_falls_back_once_per_shape(shapes_, seed, fault, when):
    if fault == "unavailable":
        when = ""  # shape-independent by grammar
    d = faults.faulty_dispatcher(f"fused:{fault}{when}", [fused.PATH, SPLITK])
    wrapper = d.faulty("fused")
    inputs = [_input(s, seed) for s in shapes_]
    for _ in range(2):
        for shape, data in zip(shapes_, inputs):
            y = d(data)
            fires = wrapper.fault.applies(shape)
            assert d.last.info.path == ("fused-splitk" if fires else "fused")
            assert_meets_bound(y, data, d.last.info)
            assert not d.pool.aliases(y) and not poison_mask(y).any()
    for shape in shapes_:
        fires = wrapper.fault.applies(shape)
        want = 2 if not fires else (0 if fault == "unavailable" else 1)
        assert wrapper.runs[shape] == want, f"fused run() {wrapper.runs[shape]} times for {shape}, expected {want}"


# --- each fault class is caught ------------------------------------------------------------------------

@given(shape=shapes, seed=st.integers(0, 2**16), what=st.sampled_from(faults.GARBAGE))
def test_garbage_output_is_flagged_by_the_oracle(shape, seed, what):
    d = faults.faulty_dispatcher(f"fused:garbage({what})", [fused.PATH])
    data = _input(shape, seed)
    y = d(data)
    assert d.last.info.details["faults"] == (f"fused:garbage({what})",)
    bad = outside_bound(y, data, d.last.info)
    rows, cols = faults.garbage_tile(*y.shape)
    assert bad[rows, cols].any(), "the oracle accepted a tile of garbage"
    bad[rows, cols] = False
    assert not bad.any(), "elements outside the garbage tile were flagged: the fault wrote elsewhere"


@given(shape=shapes, seed=st.integers(0, 2**16), fraction=st.floats(0, 1))
def test_partial_write_then_raise_leaks_nothing(shape, seed, fraction):
    d = faults.faulty_dispatcher(f"fused:partial({fraction})", [fused.PATH, SPLITK])
    data = _input(shape, seed)
    _check_served(d, data, "fused-splitk", "fused")
    (leaked,) = d.pool.buffers.values()
    written = math.ceil(d.faulty("fused").fault.arg * shape[0])
    assert poison_mask(leaked).sum() == (shape[0] - written) * shape[1], "the fault did not leave a half-written buffer"


def test_leak_checks_catch_a_path_that_returns_the_pooled_buffer():
    d = faults.faulty_dispatcher("fused:partial(0.5)", [fused.PATH])
    data = _input((4, 64, 256), 0)
    with pytest.raises(NoPathError):
        d(data)
    def leaky(data):
        return d.pool.get((4, 64), torch.bfloat16, data[0].device), RunInfo("leaky")

    d.paths.append(FunctionPath("leaky", lambda: (True, ""), leaky))
    y = d(data)
    assert d.pool.aliases(y)
    assert poison_mask(y)[2:].all() and outside_bound(y, data, d.last.info)[2:].all()


@given(shape=shapes, seed=st.integers(0, 2**16), seconds=st.floats(0.001, 0.03))
def test_slow_path_is_reported_with_its_time(shape, seed, seconds):
    d = faults.faulty_dispatcher(f"fused:slow({seconds})", [fused.PATH])
    data = _input(shape, seed)
    with trace_calls() as trace:
        y = d(data)
    info = d.last.info
    assert info.path == "fused" and info.details["faults"] == (f"fused:slow({seconds})",)
    assert seconds <= info.details["elapsed_s"] < seconds + 120  # a sanity bound, not a perf threshold
    (event,) = [e for e in trace.of("path") if e.detail]
    assert event.detail == f"fault fused:slow({seconds})" and event.elapsed_s >= seconds
    assert d.faulty("fused").log[-1].fired
    assert_meets_bound(y, data, info)


@given(shape=shapes, seed=st.integers(0, 2**16))
def test_poisoned_allocations_show_every_element_is_written(shape, seed):
    data = _input(shape, seed)
    d = faults.faulty_dispatcher("*:poison", [SPLITK])
    y = d(data)
    info = d.last.info
    # split-K: the fp32 workspace and the folded output; otherwise the output alone
    assert info.details["poisoned_allocations"] >= (2 if info.splits > 1 else 1), "nothing was poisoned"
    assert not poison_mask(y).any()
    assert_meets_bound(y, data, info)


def _forgetful(data):
    """Writes only row 0 of its output: the bug poisoning exists to expose."""
    m, n = data[0].shape[0], data[3].shape[0]
    out = torch.empty((m, n), dtype=torch.bfloat16, device=data[0].device)
    y, _ = fused.run(data)
    out[0] = y[0]
    return out, RunInfo("forgetful")


def test_poison_exposes_an_unwritten_output_and_does_not_leak():
    data = _input((3, 64, 256), 7)
    with faults.poison_allocations(modules=[sys.modules[__name__]]):
        y, info = _forgetful(data)
    assert poison_mask(y)[1:].all() and not poison_mask(y)[0].any()
    assert outside_bound(y, data, info)[1:].all()
    assert torch is sys.modules["torch"] and fused.torch is torch and asm.torch is torch


# --- the spec grammar ----------------------------------------------------------------------------------

conds = st.builds(lambda v, mod, op, x: f"{v}{'%' + str(mod) if mod else ''}{op}{x}",
                  st.sampled_from("MNKmnk"), st.sampled_from([None, 32, 256, 512]),
                  st.sampled_from(["==", "!=", "<=", ">=", "<", ">"]), st.integers(0, 9999))
entries = st.one_of(
    st.builds(lambda t, k: f"{t}:{k}", st.sampled_from(["fused", "helper", "asm", "a4w4", "*"]),
              st.sampled_from(["unavailable", "noaiter", "poison"])),
    st.builds(lambda t, k, when: f" {t} : {k} " + (f"@ {' & '.join(when)}" if when else ""),
              st.sampled_from(["fused", "helper", "*"]),
              st.one_of(st.sampled_from(["raise", "partial", "garbage", "slow"]),
                        st.sampled_from(sorted(faults.EXCEPTIONS)).map(lambda e: f"raise({e})"),
                        st.sampled_from(faults.GARBAGE).map(lambda g: f"garbage({g})"),
                        st.floats(0, 1).map(lambda f: f"partial({f})"),
                        st.floats(0, 600).map(lambda f: f"slow({f})")),
              st.lists(conds, max_size=3)),
)


@given(spec=st.lists(entries, min_size=1, max_size=4).map(",".join))
def test_every_valid_spec_parses_and_round_trips(spec):
    plan = faults.parse(spec)
    assert len(plan.faults) == spec.count(",") + 1
    assert faults.parse(str(plan)) == plan
    d = faults.faulty_dispatcher(plan)
    assert [p.name for p in d.paths] == ["fused", "helper", "asm", "a4w4"]


@pytest.mark.parametrize("spec, message", [
    ("fused:explode", "unknown fault kind 'explode'"),
    ("fused", "not of the form target:kind"),
    ("fused:raise@Q>1", "condition 'Q>1' is not"),
    ("fused:raise@K%0==1", "modulus of 0"),
    ("fused:unavailable@K>1", "'unavailable' does not depend on the shape"),
    ("fused:raise(Boom)", "unknown exception 'Boom'"),
    ("fused:garbage(purple)", "unknown garbage 'purple'"),
    ("fused:slow(-1)", r"slow argument must be in \[0.0, 600.0\]"),
    ("fused:partial(half)", "partial takes a number"),
    ("fused:poison(1)", "'poison' takes no argument"),
    ("fused:raise,,asm:unavailable", "empty entry"),
    ("fsued:raise", "targets no path: the paths are fused, helper, asm, a4w4"),
])
def test_a_bad_spec_is_a_clear_error(spec, message):
    with pytest.raises(FaultSpecError, match=message):
        faults.faulty_dispatcher(spec)


def test_the_environment_variable_sets_the_faults(monkeypatch, capsys):
    monkeypatch.setenv(faults.ENV_VAR, "fused:raise(MemoryError)@M==2, helper:unavailable")
    d = faults.faulty_dispatcher()
    assert str(d.plan) == "fused:raise(MemoryError)@M==2,helper:unavailable"
    assert faults.main([]) == 0 and "fused:raise(MemoryError)@M==2" in capsys.readouterr().out
    monkeypatch.setenv(faults.ENV_VAR, "fused:sideways")
    assert faults.main([]) == 2 and "unknown fault kind 'sideways'" in capsys.readouterr().err


def test_the_command_line_runs_a_shape_and_reports_what_the_oracle_sees(capsys):
    assert faults.main(["fused:garbage(nan)", "--shape", "2", "32", "64", "--calls", "1"]) == 1
    assert "served by 'fused'" in (out := capsys.readouterr().out) and "64 elements outside the oracle bound" in out
    assert faults.main(["", "--shape", "2", "32", "64", "--calls", "1"]) == 0
    assert "0 elements outside the oracle bound, 0 poisoned; returned a leaked pool buffer: False" in capsys.readouterr().out


# --- the expected-path policy ---------------------------------------------------------------------------

def test_the_policy_covers_exactly_the_benchmark_shapes_and_expects_fused():
    policy = load_policy()
    assert sorted(policy.benchmark) == sorted(BENCHMARK_SHAPES)
    for shape in BENCHMARK_SHAPES:
        assert {tier: policy.expected(shape, tier) for tier in TIERS} == {tier: ("fused", True) for tier in TIERS}
    assert policy.expected((8, 2112, 7168), "amd") == ("fused", False)  # a test shape: the default rule


def test_a_benchmark_record_served_by_a_slower_path_fails_with_the_reasons():
    record = CallRecord((16, 2112, 7168), RunInfo("a4w4", "aiter heuristic"), [
        ("fused", "raised RuntimeError: LDS overflow"), ("helper", "unavailable: aiter missing"),
        ("asm", "failed before for this shape: raised ValueError: no kernel")])
    with pytest.raises(PolicyViolation) as err:
        check_policy(record, "amd")
    assert str(err.value).startswith(
        "benchmark shape (16,2112,7168) served by 'a4w4' after 'fused' raised RuntimeError: LDS overflow; "
        "'helper' unavailable: aiter missing; 'asm' failed before for this shape: raised ValueError: no kernel; "
        "policy expects 'fused' on tier amd — a silent perf regression")
    assert check_policy(CallRecord((16, 2112, 7168), RunInfo("fused")), "amd") is None
    note = check_policy(CallRecord((8, 2112, 7168), RunInfo("asm"), [("fused", "raised RuntimeError: x")]), "cpu")
    assert note.startswith("shape (8,2112,7168) served by 'asm' after 'fused' raised RuntimeError: x")
    with pytest.raises(PolicyViolation, match="a path the policy does not rank"):
        check_policy(CallRecord((4, 2880, 512), RunInfo("mystery")), "nvidia")


def _fake_data(m, n, k):
    """Right shapes and dtypes, no values: enough for the dispatcher's contract check."""
    scale_rows, scale_cols = -(-n // 256) * 256, -(-(k // 32) // 8) * 8
    return (torch.empty(m, k, dtype=torch.bfloat16), torch.empty(n, k, dtype=torch.bfloat16),
            torch.empty(n, k // 2, dtype=torch.uint8), torch.empty(n, k // 2, dtype=torch.uint8),
            torch.empty(scale_rows, scale_cols, dtype=torch.uint8))


def _fake_path(name):
    def run(data):
        return torch.zeros(data[0].shape[0], data[3].shape[0], dtype=torch.bfloat16), RunInfo(name, "fake")
    return FunctionPath(name, lambda: (True, "fake"), run)


@given(shape=st.sampled_from(BENCHMARK_SHAPES), tier=st.sampled_from(TIERS), fault=failing,
       slower=st.sampled_from(["helper", "asm", "a4w4"]))
def test_a_benchmark_shape_falling_back_fails_the_policy(shape, tier, fault, slower):
    d = faults.faulty_dispatcher(f"fused:{fault}", [_fake_path("fused"), _fake_path(slower)])
    d(_fake_data(*shape))
    with pytest.raises(PolicyViolation) as err:
        check_policy(d.last, tier)
    text = str(err.value)
    assert text.startswith(f"benchmark shape ({','.join(map(str, shape))}) served by {slower!r} after 'fused' ")
    assert f"injected fault fused:{faults.parse_fault('fused:' + fault).kind}" in text
    assert "policy expects 'fused'" in text and "silent perf regression" in text
    clean = faults.faulty_dispatcher("", [_fake_path("fused"), _fake_path(slower)])
    clean(_fake_data(*shape))
    assert check_policy(clean.last, tier) is None


# --- the path trace -------------------------------------------------------------------------------------

def _hooks():
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    return (vars(JITFunction)["run"], vars(InterpretedFunction)["run"], vars(FunctionPath)["run"],
            vars(faults.FaultyPath)["run"], builtins.__import__)


@given(shape=shapes, seed=st.integers(0, 2**16))
def test_trace_shows_the_fused_kernel_and_its_constexprs(shape, seed):
    m, n, k = shape
    cfg = configs.choose(m, n, k)
    data = _input(shape, seed)
    with trace_calls():  # the hooks go in on a process's first trace and stay
        pass
    hooks = _hooks()
    with trace_calls() as trace:
        dispatch.Dispatcher()(data)
    assert _hooks() == hooks  # a later trace installs nothing again (no hook wraps another)
    assert [(e.kind, e.name) for e in trace.events] == [("path", "fused"), ("triton", "fused_mxfp4_gemm_kernel")]
    kernel = trace.events[1]
    assert kernel.depth == 1 and kernel.grid == cfg.grid(m, n)
    assert {k: kernel.constexprs[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "PARTIALS")} == {
        "BLOCK_M": cfg.block_m, "BLOCK_N": cfg.block_n, "BLOCK_K": cfg.block_k, "PARTIALS": cfg.splits > 1}
    assert kernel.scalars == {"M": m, "N": n, "K": k, "SCALE_COLS": data[4].shape[1] * 32, "SPLIT_K": cfg.split_k or k}
    assert kernel.options["num_warps"] == cfg.num_warps
    line = trace.render().splitlines()[1]
    tiles, stripes = cfg.grid(m, n)
    assert line.startswith(f"  fused_mxfp4_gemm_kernel[grid=({tiles},{stripes})] BLOCK_M={cfg.block_m} BLOCK_N={cfg.block_n}")
    assert "QUANTIZER=" in line and f"num_warps={cfg.num_warps}" in line


def test_trace_shows_the_failed_path_and_the_one_that_served():
    data = _input((3, 64, 512), 1)
    d = faults.faulty_dispatcher("fused:raise(ValueError)", [fused.PATH, SPLITK])
    with trace_calls() as trace:
        d(data)
    lines = trace.render().splitlines()
    assert lines[0].startswith("path fused [fault fused:raise(ValueError)] !! ValueError: injected fault")
    assert lines[1].startswith("path fused-splitk -> BM16xBN32xBK256 splits=2")
    assert lines[2].startswith("  fused_mxfp4_gemm_kernel[grid=(2,2)] BLOCK_M=16 BLOCK_N=32 BLOCK_K=256 PARTIALS=True")
    assert " M=3 N=64 K=512 SCALE_COLS=512 SPLIT_K=256 " in lines[2]
    hooks = _hooks()
    with pytest.raises(NoPathError), trace_calls():
        faults.faulty_dispatcher("fused:unavailable", [fused.PATH])(data)
    assert _hooks() == hooks


def test_a_trace_opened_inside_a_traced_call_renders_from_its_own_top():
    inner = []

    def traced_run(data):
        with trace_calls() as trace:
            out = fused.run(data)
        inner.append(trace)
        return out

    data = _input((2, 32, 64), 5)
    with trace_calls() as outer:
        dispatch.Dispatcher([FunctionPath("traced", fused.requirements, traced_run)])(data)
    assert [e.depth for e in outer.events] == [0, 1]
    assert inner[0].render().startswith("fused_mxfp4_gemm_kernel[grid=(1,1)] BLOCK_M=16")
    assert outer.render().splitlines()[1] == "  " + inner[0].render()


FAKE_AITER = {
    "fake_aiter_for_trace/__init__.py": "from fake_aiter_for_trace.ops import gemm_fake\n",
    "fake_aiter_for_trace/ops.py": "def gemm_fake(x, config=None):\n    return x * 2\n\ndef helper_not_traced(x):\n    return x\n",
    "fake_aiter_for_trace/quant.py": "def fake_mxfp4_quant(x):\n    return x + 1\n",
    "fake_submission_for_trace.py": textwrap.dedent("""
        import torch
        import triton
        import triton.language as tl
        from fake_aiter_for_trace import gemm_fake


        @triton.jit
        def submission_kernel(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


        def custom_kernel(data):
            from fake_aiter_for_trace.quant import fake_mxfp4_quant  # first imported inside the trace
            x = gemm_fake(fake_mxfp4_quant(data[0].float()), config={"BLOCK_SIZE_M": 16})
            submission_kernel[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64, num_warps=2)
            return x
    """),
}


# The trace skips the standard library's modules when it binds its wrappers: a submission loaded under a
# stdlib module's name ("this") is not in the stdlib's directory, so it is still seen.
@pytest.mark.parametrize("module_name", ["fake_submission_for_trace", "this"])
def test_trace_sees_a_submissions_aiter_imports_and_its_own_kernels(tmp_path, monkeypatch, module_name):
    for rel, text in FAKE_AITER.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(trace_mod, "AITER_PREFIXES", ("aiter", "fake_aiter_for_trace"))
    names = ("fake_aiter_for_trace", "fake_aiter_for_trace.ops", "fake_aiter_for_trace.quant", module_name)
    if module_name == "this":  # the stdlib's own module, traced (and skipped) first: the name alone is no key
        with contextlib.redirect_stdout(io.StringIO()), trace_calls():
            importlib.import_module("this")
    if module_name in sys.modules:  # put back afterwards whatever held the name
        monkeypatch.setitem(sys.modules, module_name, sys.modules[module_name])
    try:
        spec = importlib.util.spec_from_file_location(module_name, tmp_path / "fake_submission_for_trace.py")
        sub = importlib.util.module_from_spec(spec)
        sys.modules[names[-1]] = sub
        spec.loader.exec_module(sub)
        original = sub.gemm_fake
        with trace_calls() as trace:
            y = sub.custom_kernel((torch.ones(2, 64, dtype=torch.bfloat16, device=DEVICE),))
        # between traces the wrappers stay bound and pass straight through, recording nothing
        assert sub.gemm_fake is not original and sub.gemm_fake.__wrapped__ is original
        assert torch.equal(sub.custom_kernel((torch.ones(2, 64, dtype=torch.bfloat16, device=DEVICE),)).cpu(),
                           torch.full((2, 64), 5.0))
        assert len(trace.events) == 3
        trace_mod.reset()  # puts every name back
    finally:
        imported = {name: sys.modules.pop(name, None) for name in names}
    assert torch.equal(y.cpu(), torch.full((2, 64), 5.0))
    assert trace.render().splitlines() == [
        "aiter fake_mxfp4_quant(x=f32[2,64]) -> f32[2,64]",
        "aiter gemm_fake(x=f32[2,64], config={BLOCK_SIZE_M: 16}) -> f32[2,64]",
        "submission_kernel[grid=(2,)] BLOCK=64 num_warps=2",
    ]
    assert sub.gemm_fake is original and imported["fake_aiter_for_trace.ops"].gemm_fake is original


def _aiter_path_or_skip(path):
    ok, why = path.requirements()
    if not ok:
        pytest.skip(f"{path.name} path unavailable here: {why}")


def test_trace_shows_aiter_functions_when_the_helper_path_serves():
    _aiter_path_or_skip(aiter_helper.PATH)
    data = _input((4, 64, 256), 3)
    with trace_calls() as trace:
        y, info = aiter_helper.PATH.run(data)
    assert trace.names("aiter") == ["gemm_a16wfp4_preshuffle"], trace.render()
    assert_meets_bound(y, data, info)


def test_trace_shows_aiter_functions_when_the_asm_path_serves(monkeypatch):
    _aiter_path_or_skip(asm.ASM_PATH)
    data = _input((4, 64, 256), 4)
    monkeypatch.setattr(asm, "_a_cache", asm.AQuantCache())  # a cached quantized A would hide the quantizer
    with trace_calls() as trace:
        y, info = asm.ASM_PATH.run(data)
    names = trace.names("aiter")
    assert {"dynamic_mxfp4_quant", "e8m0_shuffle", "gemm_a4w4_asm"} <= set(names), trace.render()
    assert_meets_bound(y, data, info)


def test_the_trace_steps_aside_while_dynamo_traces_a_compiled_call():
    """torch.compile(fullgraph=True) of a function calling a traced aiter function: none of the trace's own
    code (its clock) may enter the graph, or Dynamo rejects a file the runner (with nothing of ours) runs."""
    from kernels.platform import aiter_kind

    if aiter_kind() != "emulated":
        pytest.skip(f"the emulated e8m0_shuffle is plain PyTorch; aiter here is {aiter_kind()}")
    from aiter.utility import fp4_utils

    scales = torch.arange(256 * 8, device=detect().device).reshape(256, 8).to(torch.uint8)
    compiled = torch.compile(lambda s: fp4_utils.e8m0_shuffle(s), fullgraph=True, backend="eager")
    with trace_calls() as trace:
        assert torch.equal(compiled(scales), fp4_utils.e8m0_shuffle(scales))
    assert trace.names("aiter") == ["e8m0_shuffle"], trace.render()  # the call outside the compiled region
