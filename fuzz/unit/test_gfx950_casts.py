"""gfx950's float -> integer conversions on the CPU and NVIDIA tiers (reference/emulation/gfx950_casts.py):
the table derived from the ISA, the interpreter with and without the patches, the instructions gfx950
really compiles to (AOT, no GPU), the NVIDIA lowering (AOT) and, on a CUDA GPU, compiled values."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from reference.emulation import gfx950_casts as g

# around every boundary the lowerings treat differently: 8/16/32/64-bit ranges, fp16's max, +-0.5
EDGES = g.PROBE_INPUTS + (-0.0, 0.5, 0.99, -0.99, 127.5, 128.0, -128.0, -129.0, 32767.0, 32768.0, -32768.0,
                          -32769.0, 40000.0, -40000.0, 65504.0, -65504.0, 65535.0, 65536.0, 70000.0,
                          2.0**31 - 128, 2.0**31, -2.0**31, -2.0**31 - 256, 3e9, -3e9, 2.0**32 - 256, 2.0**32,
                          2.0**53, 2.0**56, 2.0**63, -2.0**63, 2.0**64, -2.0**64, 1e20, -1e20, 3.4e38, -3.4e38,
                          1e-40, -1e-40)


def _representable(values, src: str) -> np.ndarray:
    x = torch.tensor(np.asarray(values, dtype=np.float64))
    return x.to({"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[src]).double().numpy()


def _all_patterns(src: str) -> np.ndarray:
    bits = torch.arange(65536, dtype=torch.int32).to(torch.int16)
    return bits.view(torch.bfloat16 if src == "bf16" else torch.float16).double().numpy()


def _fp32_patterns(count: int = 4096) -> np.ndarray:
    rng = np.random.default_rng(950)
    with np.errstate(over="ignore", invalid="ignore"):  # fp32 rounds 3.4e38+ to Inf; NaN patterns quieten
        edges = np.asarray(EDGES, dtype=np.float32)
        return np.concatenate([rng.integers(0, 2**32, count, dtype=np.uint64).astype(np.uint32).view(np.float32),
                               edges]).astype(np.float64)


@pytest.fixture
def cpu_tier(monkeypatch):
    """This process as the CPU tier installs it, whatever was installed before (put back after)."""
    from kernels.platform import detect

    if not detect().interpreter:  # kernels here were decorated compiled: the interpreter's ops never run
        pytest.skip(f"about the Triton interpreter (CPU tier); this is the {detect().describe()}")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    before = g.installed()
    g.uninstall()
    yield g.install
    g.uninstall()
    g.install(before)


def _mismatches(got, want, inputs):
    return [(x, a, b) for x, a, b in zip(np.asarray(inputs).tolist(), got.tolist(), want.tolist()) if a != b]


# ---------------------------------------------------------------------------------------------------
# The table is the ISA's


def test_expected_table_is_the_instruction_model():
    x = np.asarray(g.PROBE_INPUTS)
    for op, dst in (("to_uint8", "uint8"), ("to_int8", "int8"), ("to_int32", "int32"), ("to_uint32", "uint32")):
        want = [g.GFX950_EXPECTED[op]["values"][k] for k in g.PROBE_LABELS]
        assert g.gfx950_convert(x, "fp32", dst).tolist() == want, op
    plus = (g.gfx950_convert(x, "fp32", "uint8").astype(np.int64) + 127) & 0xFF
    assert plus.tolist() == [g.GFX950_EXPECTED["to_uint8_plus_127"]["values"][k] for k in g.PROBE_LABELS]
    # aiter's idiom: a negative unbiased scale becomes its e8m0 byte
    assert g.GFX950_EXPECTED["to_uint8_plus_127"]["values"]["-5"] == 122


def test_instruction_models_follow_the_isa_text():
    assert g.v_cvt_i32_f32([np.nan, np.inf, -np.inf, 1e10, -2.9]).tolist() == [0, 2**31 - 1, -2**31, 2**31 - 1, -2]
    assert g.v_cvt_u32_f32([np.nan, -0.5, -7.0, 5e9, 2.9]).tolist() == [0, 0, 0, 2**32 - 1, 2]
    assert g.v_cvt_i16_f16([40000.0, -40000.0, np.nan]).tolist() == [32767, -32768, 0]
    # 64 bits from fp32 saturate per 32-bit half: +Inf is 0xFFFFFFFF00000000
    assert g.gfx950_convert([np.inf, -np.inf, 1e20, -2.0**63], "fp32", "int64").tolist() == \
        [-2**32, 2**32, -2**32, -2**63]
    assert g.gfx950_convert([-5.0, -1e10, np.inf], "fp32", "uint64").tolist() == [2**32 - 1, 2884901888, 2**64 - 2**32]
    assert g.gfx950_convert([np.inf, -np.inf], "fp16", "int64").tolist() == [2**31 - 1, -2**31]


# ---------------------------------------------------------------------------------------------------
# CPU tier: the interpreter, patched and stock


def test_cpu_patched_probe_equals_expected(cpu_tier):
    assert set(cpu_tier()) == {"float_to_int_frontend", "float_to_int_interpreter"}
    got = g.probe_values("cpu")
    assert got == {op: g.GFX950_EXPECTED[op]["values"] for op in g.PROBE_OPS}


@pytest.mark.parametrize("src", g.FLOAT_SOURCES)
def test_cpu_patched_every_target_every_input(cpu_tier, src):
    cpu_tier()
    inputs = _all_patterns(src) if src != "fp32" else _fp32_patterns()
    for dst in g.INT_TARGETS:
        got = g.run_cast(inputs, src, dst)
        assert not _mismatches(got, g.gfx950_convert(inputs, src, dst), inputs)[:5], (src, dst)


def test_cpu_stock_differs_where_the_isa_says(cpu_tier):
    if not g._interpreter_diverges():
        pytest.skip("this platform's numpy astype saturates like gfx950 (not x86)")
    stock = g.probe_values("cpu")  # nothing installed
    expected = {op: g.GFX950_EXPECTED[op]["values"] for op in g.PROBE_OPS}
    differ = {(op, k) for op in g.PROBE_OPS for k in g.PROBE_LABELS if stock[op][k] != expected[op][k]}
    # x86 numpy: NaN and out of range are 0x80000000, negatives wrap for uint32
    assert {("to_int32", "nan"), ("to_int32", "1e+10"), ("to_uint32", "-5"), ("to_uint8", "1e+10")} <= differ


def test_interpreter_patch_alone_models_bare_fp32_converts(cpu_tier):
    # the builder sees fp32 (the stock frontend widens fp16/bf16 first): fp16's own lowering needs the frontend
    assert cpu_tier(["float_to_int_interpreter"]) == ["float_to_int_interpreter"]
    for src in ("fp32", "bf16"):
        inputs = _representable(EDGES, src)
        for dst in g.INT_TARGETS:
            got = g.run_cast(inputs, src, dst)
            assert not _mismatches(got, g.gfx950_convert(inputs, src, dst), inputs), (src, dst)


def test_frontend_patch_gate_and_uninstall(cpu_tier):
    from triton.language.semantic import TritonSemantic

    stock, cache = TritonSemantic.cast, os.environ.get("TRITON_CACHE_DIR")
    assert g._frontend_diverges()
    assert cpu_tier(["float_to_int_frontend"]) == ["float_to_int_frontend"]
    assert TritonSemantic.cast is not stock and os.environ["TRITON_CACHE_DIR"].endswith("gfx950-casts")
    assert g._frontend_diverges()  # the probe still sees stock's lowering while the patch is in
    g.uninstall()
    assert TritonSemantic.cast is stock and os.environ.get("TRITON_CACHE_DIR") == cache


# ---------------------------------------------------------------------------------------------------
# What gfx950 compiles to (AOT for hip, no GPU) and what NVIDIA gets with the patch (AOT for cuda)


def _isa_or_skip(*args, **kwargs):
    try:
        return g.isa_probe(*args, **kwargs)
    except Exception as error:  # a Triton without its AMD backend or its bundled LLVM
        pytest.skip(f"Triton cannot compile for gfx950 here: {type(error).__name__}: {error}"[:300])


@pytest.mark.parametrize("src,dst", [("fp32", "uint8"), ("fp32", "uint16"), ("fp32", "int64"), ("fp32", "uint64"),
                                     ("bf16", "int8"), ("fp16", "uint8"), ("fp16", "uint16"), ("fp16", "int32")])
def test_isa_still_compiles_to_the_recorded_instructions(src, dst):
    missing = g.instructions_missing(g.INSTRUCTIONS[(src, dst)], _isa_or_skip(src, dst)["instructions"])
    assert not missing, f"{src} -> {dst}: gfx950 no longer runs {missing}; recheck INSTRUCTIONS and the model"


def test_isa_of_the_probe_kernel_has_the_expected_instructions():
    found = _isa_or_skip()["instructions"]
    for op in g.PROBE_OPS:
        assert not g.instructions_missing(g.GFX950_EXPECTED[op]["instructions"], found), op


def test_nvidia_lowering_with_the_frontend_patch(cpu_tier):
    """AOT for sm_90 on this CPU: stock lowers fp32 -> uint8 to cvt.rzi.u16.f32 (saturates: -5 -> 0);
    patched it is gfx950's 32-bit convert with the out-of-range lanes selected."""
    import tempfile

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    def ptx():
        source = ASTSource(fn=JITFunction(g._cast_kernel), constexprs={"BLOCK": 64},
                           signature={"x_ptr": "*fp32", "y_ptr": "*u8", "n": "i32", "BLOCK": "constexpr"})
        try:
            return triton.compile(source, target=GPUTarget("cuda", 90, 32),
                                  options={"enable_fp_fusion": True}).asm["ptx"]
        except Exception as error:
            pytest.skip(f"Triton cannot compile for sm_90 here: {type(error).__name__}: {error}"[:300])

    with tempfile.TemporaryDirectory() as cache:
        os.environ["TRITON_CACHE_DIR"] = cache  # the cpu_tier fixture's monkeypatch does not cover this one
        try:
            stock = ptx()
            cpu_tier(["float_to_int_frontend"])
            os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "patched")
            patched = ptx()
        finally:
            g.uninstall()
            os.environ.pop("TRITON_CACHE_DIR", None)
    assert "cvt.rzi.u16.f32" in stock and "cvt.rzi.s32.f32" not in stock
    assert "cvt.rzi.s32.f32" in patched and "selp" in patched


# ---------------------------------------------------------------------------------------------------
# NVIDIA tier: compiled values on a CUDA GPU


def _cuda_only():
    if not torch.cuda.is_available() or getattr(torch.version, "hip", None):
        pytest.skip("needs a CUDA GPU (the nvidia tier); on an AMD GPU gfx950 itself computes these")


def test_cuda_compiled_probe_equals_expected():
    _cuda_only()
    before = g.installed()
    g.uninstall()
    try:
        assert "float_to_int_frontend" in g.install(["float_to_int_frontend"])
        assert g.probe_values("cuda") == {op: g.GFX950_EXPECTED[op]["values"] for op in g.PROBE_OPS}
        for src in g.FLOAT_SOURCES:
            inputs = _representable(EDGES, src)
            for dst in g.INT_TARGETS:
                got = g.run_cast(inputs, src, dst, device="cuda")
                assert not _mismatches(got, g.gfx950_convert(inputs, src, dst), inputs), (src, dst)
    finally:
        g.uninstall()
        g.install(before)


def test_the_patched_cache_is_one_folder_for_every_process_generation(tmp_path, monkeypatch):
    """A worker inherits the folder its parent's patch set and must compile into that same folder: one
    more level per process generation gave a check's worker and its compile-ahead helpers caches of their
    own (kernels compiled twice, locks that never met), and the CLI's own ~/.triton instead of the run's."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    first = g._cache_dir_for_patch()
    assert first == str(tmp_path / g.PATCHED_CACHE)
    monkeypatch.setenv("TRITON_CACHE_DIR", first)  # what a child process inherits
    assert g._cache_dir_for_patch() == first
