"""Where the local tiers compute differently from gfx950 compiled Triton: a catalogue that probes itself.

    python -m fuzz.selfcheck.tier_fidelity                  # run every probe on this machine's tier, print the table
    python -m fuzz.selfcheck.tier_fidelity --json out.json  # the same, written as JSON (the H200 run fills docs/tier_fidelity.md)
    python -m fuzz.selfcheck.tier_fidelity --gfx950         # also AOT-compile each probe for gfx950 here (no GPU) and
                                                  # compare its instructions with the recorded ones

Each entry is one construct a submission may use. Its probe runs a tiny Triton kernel on this machine's
tier (the patched interpreter on a CPU, compiled Triton on a GPU, as the suite runs it) and returns its
values; beside them: what gfx950 compiled Triton does (the instructions an AOT compile for gfx950 gives,
re-derivable with ``--gfx950``, and the values they compute, with the basis of that claim), what the H200
gave (recorded; "not measured yet" where nobody has), what the stock interpreter gives (recorded), and what
the suite does about it on each tier. Where gfx950 and a local tier differ, gfx950 wins.

Statuses (``suite``): ``modelled`` (a named patch makes this tier compute the gfx950 values), ``same`` (this
tier computes them by itself), ``dropped`` (a construct without meaning here is removed, with a note),
``tolerated`` (the tier differs and the oracle accepts the tier's documented rule), ``not modelled`` (the
tier differs or may: a verdict there can be wrong), ``not measured`` (nobody has compared yet). The first
three are claims ``fuzz/unit/test_tier_fidelity.py`` checks: the probe's values must equal the gfx950 values.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable

from kernels import platform  # before the @triton.jit below: interpreted on a CPU, compiled on a GPU

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from reference.emulation import amd_launch_options, gfx950_casts, triton_interpreter  # noqa: E402

CHECKED = ("modelled", "same", "dropped")  # claims that the probe's values equal gfx950's
INSTRUCTIONS_RECORDED_WITH = (3, 9)  # the Triton whose gfx950 compile gave each entry's ``instructions``
NOT_MEASURED = "not measured yet"


# ---------------------------------------------------------------------------------------------------
# probe kernels (tiny; each compiles in about a second for gfx950)


@triton.jit
def _to_int(x_ptr, u8_ptr, i8_ptr, i32_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m, other=0.0)
    tl.store(u8_ptr + o, x.to(tl.uint8), mask=m)
    tl.store(i8_ptr + o, x.to(tl.int8), mask=m)
    tl.store(i32_ptr + o, x.to(tl.int32), mask=m)


@triton.jit
def _ones(x_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x_ptr + o, tl.full((BLOCK,), 1.0, tl.float32), mask=o < n)


@triton.jit
def _scalar_compare_mask(y_ptr, n, LIVE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    mask = (o < n) & (pid < LIVE)  # a scalar comparison broadcast into a block mask
    tl.store(y_ptr + pid * BLOCK + o, (o + 1).to(tl.float32), mask=mask)


@triton.jit
def _rank0_index_mask(y_ptr, n):
    pid_n = tl.program_id(0)  # 0-d, then indexed [None, :] as aiter's fp4_utils does
    tl.store(y_ptr + pid_n[None, :], (pid_n + 1).to(tl.float32)[None, :], mask=(pid_n < n)[None, :])


@triton.jit
def _bf16_atomic_add(acc_ptr, v_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.atomic_add(acc_ptr + o, tl.load(v_ptr + o))


@triton.jit
def _exp2(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    tl.store(y_ptr + o, tl.exp2(tl.load(x_ptr + o, mask=m, other=0.0)), mask=m)


@triton.jit
def _log2(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    tl.store(y_ptr + o, tl.log2(tl.load(x_ptr + o, mask=m, other=1.0)), mask=m)


@triton.jit
def _mul(x_ptr, s_ptr, y_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=m, other=0.0) * tl.load(s_ptr + o, mask=m, other=0.0), mask=m)


@triton.jit
def _bf16_convert(x_ptr, w_ptr, y_ptr, z_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(w_ptr + o, tl.load(x_ptr + o).to(tl.float32))  # bf16 -> fp32
    tl.store(z_ptr + o, tl.load(y_ptr + o).to(tl.bfloat16))  # fp32 -> bf16


@triton.jit
def _bf16_ops(x_ptr, z_ptr, p_ptr, l_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + o)
    z = tl.load(z_ptr + o)
    tl.store(p_ptr + o, x * z)
    tl.store(l_ptr + o, (x < z).to(tl.int8))


@triton.jit
def _min_max(x_ptr, z_ptr, hi_ptr, lo_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + o)
    z = tl.load(z_ptr + o)
    tl.store(hi_ptr + o, tl.maximum(x, z))
    tl.store(lo_ptr + o, tl.minimum(x, z))


# ---------------------------------------------------------------------------------------------------
# helpers


def _device() -> str:
    return platform.detect().device


def _sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _bits32(t: torch.Tensor) -> list:
    return [f"0x{b & 0xFFFFFFFF:08x}" for b in t.detach().cpu().view(torch.int32).tolist()]


def _bits16(t: torch.Tensor) -> list:
    return [f"0x{b & 0xFFFF:04x}" for b in t.detach().cpu().view(torch.int16).tolist()]


def _f32(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32, device=_device())


def _launch_outcome(launch: Callable[[], None]) -> str:
    """'runs' or 'rejected (<ExceptionType>)': what a launch does on this tier."""
    try:
        launch()
        _sync()
    except Exception as error:  # the construct's fate on this tier is the finding
        return f"rejected ({type(error).__name__})"
    return "runs"


def _patched(name: str) -> bool:
    return name in triton_interpreter.installed()


def _triton_version() -> tuple:
    return tuple(int(p) for p in triton.__version__.split("+")[0].split(".")[:2])


# ---------------------------------------------------------------------------------------------------
# probes: device -> {label: value}; each raises with its reason when it cannot run here


def probe_casts() -> dict:
    """The cast model's own probe (reference/emulation/gfx950_casts.py), with what is installed now."""
    return _plain(gfx950_casts.probe_values(_device()))


def gfx950_casts_expected():
    return _plain({op: table["values"] for op, table in gfx950_casts.GFX950_EXPECTED.items()})


def probe_amd_only_options() -> dict:
    x = torch.zeros(16, device=_device())
    outcome = _launch_outcome(lambda: _ones[(1,)](x, 16, BLOCK=16, waves_per_eu=2, matrix_instr_nonkdim=16, kpack=1))
    return {"launch with waves_per_eu=2, matrix_instr_nonkdim=16, kpack=1": outcome,
            "stored": x.tolist() == [1.0] * 16}


def probe_unrecognised_keyword() -> dict:
    x = torch.zeros(16, device=_device())
    return {"launch with BLOCKSIZE=16 (no such parameter or option)":
            _launch_outcome(lambda: _ones[(1,)](x, 16, BLOCK=16, BLOCKSIZE=16))}


def probe_scalar_compare_mask() -> dict:
    y = torch.full((8,), -1.0, device=_device())
    outcome = _launch_outcome(lambda: _scalar_compare_mask[(2,)](y, 3, LIVE=1, BLOCK=4))
    return {"launch": outcome, "y": y.tolist()}


def probe_rank0_index_mask() -> dict:
    y = torch.full((3,), -1.0, device=_device())
    outcome = _launch_outcome(lambda: _rank0_index_mask[(3,)](y, 2))
    return {"launch": outcome, "y": y.tolist()}


BF16_ATOMIC_ACC = (1.0, 1.0078125, 1.0, -1.0)
BF16_ATOMIC_ADD = (2.0**-8, 2.0**-8, 3 * 2.0**-9, -(2.0**-8))  # ties (RNE: 1.0, 1.015625) and round-up cases


def probe_bf16_atomic_add() -> dict:
    acc = torch.tensor(BF16_ATOMIC_ACC, dtype=torch.bfloat16, device=_device())
    v = torch.tensor(BF16_ATOMIC_ADD, dtype=torch.bfloat16, device=_device())
    outcome = _launch_outcome(lambda: _bf16_atomic_add[(1,)](acc, v, BLOCK=4))
    return {"launch": outcome, "acc bits": _bits16(acc)}


def gfx950_bf16_atomic_add() -> dict:
    exact = torch.tensor(BF16_ATOMIC_ACC) + torch.tensor(BF16_ATOMIC_ADD)  # fp32, exact here
    return {"launch": "runs", "acc bits": _bits16(exact.to(torch.bfloat16))}  # one RNE rounding per add


EXP2_INTEGERS = tuple(range(-149, 128))


def _exp2_of_integers() -> dict:
    x = _f32([float(i) for i in EXP2_INTEGERS])
    y = torch.empty_like(x)
    _exp2[(1,)](x, y, x.numel(), BLOCK=512)
    _sync()
    return dict(zip(EXP2_INTEGERS, y.cpu().double().tolist()))


def probe_exp2_normal() -> dict:
    y = _exp2_of_integers()
    exact = [i for i in EXP2_INTEGERS if i >= -126 and y[i] == 2.0**i]
    return {"exact powers of two for -126..127": f"{len(exact)}/254", "exp2(127) bits": _bits32(_f32([y[127]]))[0]}


def probe_exp2_subnormal() -> dict:
    y = _exp2_of_integers()
    sub = [i for i in EXP2_INTEGERS if i < -126]
    return {"exp2(-127..-149) flushed to 0": f"{sum(y[i] == 0.0 for i in sub)}/{len(sub)}",
            "exp2(-127)": y[-127]}


LOG2_INPUTS = (2.0**-130, 2.0**-149, 2.0**-126, 1.0)


def probe_log2_subnormal() -> dict:
    x = _f32(LOG2_INPUTS)
    y = torch.empty_like(x)
    _log2[(1,)](x, y, x.numel(), BLOCK=4)
    _sync()
    return {f"log2(2^{int(math.log2(v))})": r for v, r in zip(LOG2_INPUTS, y.cpu().tolist())}


def probe_subnormal_multiply() -> dict:
    x = _f32([2.0**-120, 2.0**-126, 2.0**-140, 2.0**-149])
    s = _f32([2.0**-20, 0.5, 1.0, 1.0])
    y = torch.empty_like(x)
    _mul[(1,)](x, s, y, 4, BLOCK=4)
    _sync()
    return {"2^-120*2^-20, 2^-126*0.5, 2^-140*1, 2^-149*1": _bits32(y)}


NAN_INPUTS = (0x7FC01234, 0xFFC00001)


def probe_nan_payload() -> dict:
    x = torch.tensor([b - (1 << 32) if b >= 1 << 31 else b for b in NAN_INPUTS], dtype=torch.int32).view(torch.float32)
    x = x.to(_device())
    s = _f32([2.0, 2.0])
    y = torch.empty_like(x)
    _mul[(1,)](x, s, y, 2, BLOCK=2)
    _sync()
    return {"NaN(0x7fc01234)*2, NaN(0xffc00001)*2": _bits32(y)}


BF16_WIDEN = (0x0001, 0x3F81, 0x8001, 0x7F80)  # 2^-133 (subnormal), 1.0078125, -2^-133, +Inf
F32_NARROW = (1.01171875, 1e-39, 1.0 + 2.0**-8, 3.4e38)  # a tie up, a subnormal, a tie to even, overflow to Inf


def probe_bf16_conversions() -> dict:
    x = torch.tensor(BF16_WIDEN, dtype=torch.int32).to(torch.int16).view(torch.bfloat16).to(_device())
    y = _f32(F32_NARROW)
    w = torch.empty(4, device=_device())
    z = torch.empty(4, dtype=torch.bfloat16, device=_device())
    _bf16_convert[(1,)](x, w, y, z, BLOCK=4)
    _sync()
    return {"bf16 -> fp32 bits": _bits32(w), "fp32 -> bf16 bits": _bits16(z)}


def gfx950_bf16_conversions() -> dict:
    """Exact widening, RNE narrowing with subnormals kept (v_cvt_pk_bf16_f32's rounding; torch's CPU agrees)."""
    x = torch.tensor(BF16_WIDEN, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)
    return {"bf16 -> fp32 bits": _bits32(x.float()),
            "fp32 -> bf16 bits": _bits16(torch.tensor(F32_NARROW, dtype=torch.float32).to(torch.bfloat16))}


BF16_X, BF16_Z = (1.5, -1.0, 3.0, 2.0**-100), (1.5, 2.0, 1.0 / 3.0, 2.0**-30)


def probe_bf16_arithmetic() -> dict:
    x = torch.tensor(BF16_X, dtype=torch.bfloat16, device=_device())
    z = torch.tensor(BF16_Z, dtype=torch.bfloat16, device=_device())
    p = torch.empty_like(x)
    lt = torch.empty(4, dtype=torch.int8, device=_device())
    _bf16_ops[(1,)](x, z, p, lt, BLOCK=4)
    _sync()
    return {"x*z bits": _bits16(p), "x<z": lt.tolist()}


def gfx950_bf16_arithmetic() -> dict:
    """Widen exactly, fp32 multiply, one RNE rounding to bf16 (torch's CPU bf16 multiply does the same)."""
    x, z = (torch.tensor(v, dtype=torch.bfloat16) for v in (BF16_X, BF16_Z))
    return {"x*z bits": _bits16((x.float() * z.float()).to(torch.bfloat16)), "x<z": (x < z).to(torch.int8).tolist()}


def probe_signed_zero() -> dict:
    x, z = _f32([-0.0, 0.0]), _f32([0.0, -0.0])
    hi, lo = torch.empty_like(x), torch.empty_like(x)
    _min_max[(1,)](x, z, hi, lo, BLOCK=2)
    _sync()
    return {"max(-0,+0), max(+0,-0)": _bits32(hi), "min(-0,+0), min(+0,-0)": _bits32(lo)}


# ---------------------------------------------------------------------------------------------------
# the catalogue


@dataclass(frozen=True)
class Compile:
    """How ``--gfx950`` re-derives an entry's instructions: the kernel, its signature for an AOT compile,
    and regexes of the amdgcn (or LLVM IR) lines that carry the construct."""
    kernel: str
    signature: dict
    constexprs: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    patterns: tuple = ()
    ir: str = "amdgcn"


@dataclass(frozen=True)
class Entry:
    name: str
    construct: str
    probe: Callable[[], dict]
    gfx950: str  # instructions and their semantics (recorded)
    gfx950_values: Callable[[], dict] | None  # the probe's values as gfx950 computes them (None: unknown)
    basis: str  # why we believe gfx950_values: source / ISA / measured / assumed
    h200: str  # recorded value on the H200 (compiled triton 3.6)
    interpreter: str  # recorded value of the stock interpreter (triton 3.9)
    suite: Callable[[str], tuple]  # tier -> (status, what the suite does)
    compile: Compile | None = None
    instructions: tuple = ()  # recorded from an AOT compile for gfx950 (triton 3.9): what --gfx950 must find


def _by_patch(patch: str, what: str, nvidia=("same", "compiled Triton, measured bit-exact on the H200")):
    def suite(tier: str) -> tuple:
        if tier == "cpu":
            if _patched(patch):
                return "modelled", f"interpreter patch {patch}; {what}"
            return "not modelled", f"interpreter patch {patch} is off (stock Triton, {triton_interpreter.STOCK_ENV}=1?)"
        if tier == "nvidia":
            return nvidia
        return "same", "the runner's own Triton"

    return suite


def _fixed(cpu: tuple, nvidia: tuple):
    return lambda tier: {"cpu": cpu, "nvidia": nvidia}.get(tier, ("same", "the runner's own Triton"))


def _casts_suite(tier: str) -> tuple:
    if tier == "amd":
        return "same", "the runner's own Triton"
    wanted = {"cpu": ("float_to_int_frontend", "float_to_int_interpreter"), "nvidia": ("float_to_int_frontend",)}
    on = [p for p in wanted.get(tier, ()) if p in gfx950_casts.installed()]
    if on:
        return "modelled", f"gfx950_casts patches {', '.join(on)}"
    return "not modelled", "gfx950_casts is present but none of its patches is installed on this tier"


def _launch_options_suite(tier: str) -> tuple:
    if tier == "cpu":
        return "same", "the interpreter keeps only keywords that name a kernel parameter (GridExecutor.__call__)"
    if tier == "nvidia":
        if amd_launch_options.installed():
            return "dropped", "amd_launch_options drops them with a note (no meaning on NVIDIA)"
        return "not modelled", "compiled Triton's KeyError: install reference/emulation/amd_launch_options"
    return "same", "the runner's own Triton"


def _rank0_suite(tier: str) -> tuple:
    if tier == "cpu":
        if _patched("index_rank0_tensor"):
            return "modelled", "compat shim index_rank0_tensor, recorded in the report (shims_used)"
        return "not modelled", "triton 3.9 rejects it; shim index_rank0_tensor is off"
    if tier == "nvidia":
        if _triton_version() < (3, 9):
            return "same", f"triton {triton.__version__}'s frontend accepts it, as the runner's did"
        return "not modelled", f"triton {triton.__version__} compiled rejects it (no shim for compiled Triton)"
    return "same", "the runner's own Triton"


CATALOGUE = (
    Entry("float_to_int_conversion",
          "fp32 -> uint8 / int8 / int32 (x.to(tl.uint8)) of a negative, out-of-range, Inf or NaN value "
          "(aiter's scale idiom: scale.to(uint8) + 127)",
          probe_casts,
          "v_cvt_i32_f32 for every target width (fptoui to i8 is promoted to a signed i32 conversion), then the "
          "low byte for 8-bit stores: truncates toward zero, saturates to int32, NaN -> 0; so -5.0 -> u8 251, "
          "300.0 -> u8 44, 3e9 -> u8 255, NaN -> 0",
          gfx950_casts_expected, "AOT compile for gfx950 here + AMD ISA for v_cvt_i32_f32 (not measured on an MI355X)",
          "cvt.rzi.u8.f32 saturates at the target width: every negative -> 0 (measured; gfx950_casts)",
          "numpy astype (C cast: undefined out of range; x86: -5.0 -> u8 251, NaN -> i32 -2^31)",
          _casts_suite,
          Compile("_to_int", {"x_ptr": "*fp32", "u8_ptr": "*u8", "i8_ptr": "*i8", "i32_ptr": "*i32", "n": "i32",
                              "BLOCK": "constexpr"}, {"BLOCK": 16}, patterns=(r"v_cvt_\w*i32_f32", r"v_cvt_\w*u32_f32")),
          ("v_cvt_i32_f32",)),
    Entry("amd_only_launch_options",
          "kernel[grid](..., waves_per_eu=2, matrix_instr_nonkdim=16, kpack=1), or the same in an autotune "
          "triton.Config's kwargs (aiter's configs)",
          probe_amd_only_options,
          "HIPOptions fields: waves_per_eu -> LLVM attribute \"amdgpu-waves-per-eu\"=\"2,2\" (register budget, "
          "occupancy); matrix_instr_nonkdim picks the MFMA shape; kpack is forced to 1 on gfx950; none changes a "
          "value",
          lambda: {"launch with waves_per_eu=2, matrix_instr_nonkdim=16, kpack=1": "runs", "stored": True},
          "triton 3.6/3.9 source (HIPBackend.parse_options, make_llir)",
          "rejected (KeyError: 'Keyword argument waves_per_eu was specified but unrecognised') without "
          "amd_launch_options", "runs (keywords not naming a parameter are ignored)",
          _launch_options_suite,
          Compile("_ones", {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 16},
                  {"waves_per_eu": 2}, (r"amdgpu-waves-per-eu\"=\"2,2\"",), ir="llir"),
          ("amdgpu-waves-per-eu=2,2",)),
    Entry("unrecognised_launch_keyword",
          "a launch keyword that is neither a kernel parameter nor a backend option (a typo: BLOCKSIZE=16)",
          probe_unrecognised_keyword,
          "JITFunction._pack_args raises KeyError 'Keyword argument BLOCKSIZE was specified but unrecognised' "
          "(the same check as on NVIDIA; HIPOptions does not know it either): the file FAILs on the runner",
          lambda: {"launch with BLOCKSIZE=16 (no such parameter or option)": "rejected (KeyError)"},
          "triton 3.6/3.9 source (runtime/jit.py)",
          "rejected (KeyError)", "runs: GridExecutor.__call__ drops every keyword that names no parameter",
          _fixed(("not modelled", "the interpreter runs a launch the runner rejects; no patch yet"),
                 ("same", "compiled Triton raises the runner's KeyError"))),
    Entry("scalar_compare_mask",
          "a scalar comparison broadcast into a block mask: (offs < n) & (pid < LIVE)",
          probe_scalar_compare_mask,
          "i1 compares: s_cmp_lt_i32 for the scalar pid < LIVE, v_cmp_gt_i32 for the block, combined into "
          "the store's exec mask",
          lambda: {"launch": "runs", "y": [1.0, 2.0, 3.0, -1.0, -1.0, -1.0, -1.0, -1.0]},
          "semantics of Triton's i1 (any compiled backend)",
          "runs, y = [1, 2, 3, -1, -1, -1, -1, -1] (compiled Triton; not measured on the H200 yet)",
          "rejected: 'mask has unsupported dtype' (the comparison kept int32)",
          _by_patch("scalar_compare_is_int1", "every comparison is i1",
                    nvidia=("not measured", "compiled Triton (i1 by construction); " + NOT_MEASURED)),
          Compile("_scalar_compare_mask", {"y_ptr": "*fp32", "n": "i32", "LIVE": "constexpr", "BLOCK": "constexpr"},
                  {"LIVE": 1, "BLOCK": 4}, patterns=(r"v_cmp_\w+", r"s_cmp_\w+")),
          ("s_cmp_lt_i32", "v_cmp_gt_i32")),
    Entry("rank0_index_mask",
          "a 0-d tensor indexed [None, :] (aiter's fp4_utils: bs_offs_n = pid_n; (bs_offs_n < n)[None, :])",
          probe_rank0_index_mask,
          "accepted by the runner's frontend (triton 3.3.1-3.8 ignore ':' beyond the rank: shape [1]); "
          "triton 3.9 rejects it for every target, so it cannot be re-derived here",
          lambda: {"launch": "runs", "y": [1.0, 2.0, -1.0]},
          "aiter's own code at the competition commit + the 3.3.1-3.8 wheels' tensor.__getitem__",
          "runs (triton 3.6 compiles it; docs/interpreter_divergences.md section 8)",
          "rejected: ValueError 'too many indices for tensor of rank 0' (triton 3.9, interpreted and compiled)",
          _rank0_suite,
          Compile("_rank0_index_mask", {"y_ptr": "*fp32", "n": "i32"}, patterns=(r"global_store\w*",))),
    Entry("bf16_atomic_add",
          "tl.atomic_add on a bf16 pointer (split-K partial sums into a bf16 output)",
          probe_bf16_atomic_add,
          "global_atomic_pk_add_bf16 (packed bf16 add in memory, lane pairs merged by DPP; a cmpswap loop for "
          "the rest); rounding assumed RNE, one rounding per add; the order of lanes is not modelled",
          gfx950_bf16_atomic_add, "AOT compile for gfx950 here; RNE assumed (not measured)",
          NOT_MEASURED, "rejected: ValueError 'Unsupported data type'",
          _by_patch("bf16_atomics", "fp32 add, RNE store, lanes in order",
                    nvidia=("not measured", "compiled Triton; " + NOT_MEASURED)),
          Compile("_bf16_atomic_add", {"acc_ptr": "*bf16", "v_ptr": "*bf16", "BLOCK": "constexpr"}, {"BLOCK": 4},
                  patterns=(r"global_atomic_\w+", r"flat_atomic_\w+", r"buffer_atomic_\w+")),
          ("global_atomic_pk_add_bf16", "global_atomic_cmpswap")),
    Entry("exp2_of_integers",
          "tl.exp2 of an integer-valued fp32 whose result is normal (-126..127; aiter scales by tl.exp2(-s))",
          probe_exp2_normal,
          "v_exp_f32 (no range reduction: Triton's AMD backend lowers exp2 with __HIP_FTZ=True); exact on "
          "integers assumed, as measured on the H200",
          lambda: {"exact powers of two for -126..127": "254/254", "exp2(127) bits": "0x7f000000"},
          "AOT compile for gfx950 here; exactness assumed from the H200 (not measured on an MI355X)",
          "254/254 exact (2026-11-30)", "exp2(127) = 0x7f000001 (numpy's float32 exp2), the rest exact",
          _by_patch("exp2_of_integers", "the exact power of two for integer inputs"),
          Compile("_exp2", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 512},
                  patterns=(r"v_exp_f32\w*", r"v_ldexp_f32\w*")),
          ("v_exp_f32",)),
    Entry("exp2_subnormal_result",
          "tl.exp2 whose result is subnormal (integers -149..-127; aiter's tl.exp2(-127) for scale byte 254)",
          probe_exp2_subnormal,
          "v_exp_f32 with denormal flushing: Triton's AMD backend passes __HIP_FTZ=True ('exp2 flushes denorms in "
          "input and output'), so every result below 2^-126 is 0",
          lambda: {"exp2(-127..-149) flushed to 0": "23/23", "exp2(-127)": 0.0},
          "triton 3.6/3.9 source (backends/amd/compiler.py, make_llir); not measured on an MI355X",
          "flushed: results below 2^-126 are 0 (2026-11-30)", "kept: 2^-127..2^-149 exactly (numpy)",
          _fixed(("not modelled", "the oracle keeps fp32 denormals on every tier; the interpreter keeps them"),
                 ("same", "the H200 flushes them too (measured)"))),
    Entry("log2_of_subnormal",
          "tl.log2 of a subnormal input (2^-130, 2^-149)",
          probe_log2_subnormal,
          "v_cmp_gt_f32 (x < 2^-126?), v_ldexp_f32 (scale by 2^32), v_log_f32, subtract 32: LLVM's lowering "
          "under IEEE denormals, so a subnormal input gives its exact log2",
          lambda: {"log2(2^-130)": -130.0, "log2(2^-149)": -149.0, "log2(2^-126)": -126.0, "log2(2^0)": 0.0},
          "AOT compile for gfx950 here (the scaling sequence); values not measured on an MI355X",
          NOT_MEASURED, "exact: -130, -149 (numpy)",
          _fixed(("same", "numpy keeps denormals, as gfx950's scaled v_log_f32 does"), ("not measured", NOT_MEASURED)),
          Compile("_log2", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 4},
                  patterns=(r"v_log_f32\w*", r"v_ldexp_f32\w*", r"v_cmp_\w+_f32")),
          ("v_cmp_gt_f32", "v_ldexp_f32", "v_log_f32")),
    Entry("fp32_subnormal_arithmetic",
          "fp32 multiply with a subnormal input or result (2^-120 * 2^-20, 2^-149 * 1)",
          probe_subnormal_multiply,
          "v_mul_f32 with \"denormal-fp-math-f32\"=\"ieee\" (Triton's AMD default, allow_flush_denorm=False): "
          "denormals kept",
          lambda: {"2^-120*2^-20, 2^-126*0.5, 2^-140*1, 2^-149*1": ["0x00000200", "0x00400000", "0x00000200",
                                                                   "0x00000001"]},
          "triton 3.6/3.9 source (make_llir sets denormal-fp-math-f32)",
          NOT_MEASURED, "kept (numpy, IEEE)",
          _fixed(("same", "numpy keeps denormals, as gfx950's IEEE mode does"), ("not measured", NOT_MEASURED)),
          Compile("_mul", {"x_ptr": "*fp32", "s_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                  {"BLOCK": 4}, patterns=(r"v_mul_f32\w*", r"v_pk_mul_f32\w*")),
          ("v_mul_f32",)),
    Entry("nan_payload",
          "arithmetic on a NaN with a payload (x * 2 for 0x7fc01234, 0xffc00001)",
          probe_nan_payload,
          "v_mul_f32 in IEEE mode: NaN inputs quieted, payload and sign propagated (AMD ISA; documented, not "
          "measured)",
          lambda: {"NaN(0x7fc01234)*2, NaN(0xffc00001)*2": ["0x7fc01234", "0xffc00001"]},
          "AMD ISA (IEEE mode); not measured on an MI355X (python -m fuzz.selfcheck.nan_check there)",
          "canonical NaN 0x7fffffff for both (2026-11-30, docs/gpu_tier.md)", "payload kept (numpy)",
          _fixed(("same", "numpy keeps the payload; no verdict compares NaN payloads of outputs"),
                 ("tolerated", "oracle NaN rules per tier (TIER_NAN_RESULTS: canonical, canonical_max)"))),
    Entry("bf16_conversions",
          "bf16 <-> fp32 conversions: a tie, subnormals, overflow",
          probe_bf16_conversions,
          "widening: a 16-bit shift (v_lshlrev_b32); narrowing: v_cvt_pk_bf16_f32 (gfx950's native RNE "
          "conversion, subnormals kept)",
          gfx950_bf16_conversions, "AOT compile for gfx950 here; RNE as IEEE/torch (not measured on an MI355X)",
          "bit-exact with the patched interpreter (2026-11-30, 65536 + 393216 patterns)",
          "truncates (1.01171875 -> 1.0078125), garbles subnormals",
          _by_patch("bf16_conversions", "RNE, subnormals kept"),
          Compile("_bf16_convert", {"x_ptr": "*bf16", "w_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*bf16",
                                    "BLOCK": "constexpr"}, {"BLOCK": 4}, patterns=(r"v_cvt_\w*bf16\w*",)),
          ("v_cvt_pk_bf16_f32",)),
    Entry("bf16_arithmetic",
          "bf16 multiply and compare (x * z, x < z)",
          probe_bf16_arithmetic,
          "widen (v_lshlrev_b32 16), v_mul_f32 / v_cmp_lt_f32, then RNE to bf16 in integer ops (v_bfe_u32 of "
          "bit 16, v_add3_u32 with 0x7fff, shift); a NaN result becomes the canonical 0x7fff (v_cmp_o_f32, "
          "v_cndmask), where the patched interpreter keeps its payload (not compared by any verdict)",
          gfx950_bf16_arithmetic, "AOT compile for gfx950 here; IEEE fp32 + RNE",
          "bit-exact with the patched interpreter (2026-11-30, 4321 pairs)",
          "numpy on the uint16 bit patterns: garbage products, wrong compares",
          _by_patch("bf16_arithmetic", "widened, fp32, RNE"),
          Compile("_bf16_ops", {"x_ptr": "*bf16", "z_ptr": "*bf16", "p_ptr": "*bf16", "l_ptr": "*i8",
                                "BLOCK": "constexpr"}, {"BLOCK": 4},
                  patterns=(r"v_(pk_)?mul_f32\w*", r"v_cvt_\w*bf16\w*", r"v_cmp_\w+_f32", r"v_add3_u32")),
          ("v_mul_f32", "v_cmp_lt_f32", "v_add3_u32", "v_cmp_o_f32")),
    Entry("signed_zero_minmax",
          "tl.maximum / tl.minimum of -0.0 and +0.0",
          probe_signed_zero,
          "v_max_f32 / v_min_f32 (LLVM maxnum/minnum: either zero is allowed; +0 / -0 assumed, as measured on "
          "the H200)",
          lambda: {"max(-0,+0), max(+0,-0)": ["0x00000000", "0x00000000"],
                   "min(-0,+0), min(+0,-0)": ["0x80000000", "0x80000000"]},
          "assumed from the H200 (LLVM permits either zero; not measured on an MI355X)",
          "max +0, min -0 (2026-11-30)", "the first argument's zero (numpy fmax/fmin)",
          _by_patch("signed_zero_minmax", "max +0, min -0"),
          Compile("_min_max", {"x_ptr": "*fp32", "z_ptr": "*fp32", "hi_ptr": "*fp32", "lo_ptr": "*fp32",
                               "BLOCK": "constexpr"}, {"BLOCK": 2}, patterns=(r"v_(pk_)?max\w*_f32\w*", r"v_(pk_)?min\w*_f32\w*")),
          ("v_max_f32", "v_min_f32")),
)


# ---------------------------------------------------------------------------------------------------
# running it


def _plain(value):
    """JSON-able, comparable: tensors/arrays -> lists, dict keys -> str, NaN -> 'nan'."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().tolist()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, (np.integer, np.floating)):
        return _plain(value.item())
    return value


def _reason(error: Exception) -> str:
    """The exception's type, first line and (for a compiler's message) last line."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    text = " ... ".join(dict.fromkeys(lines[:1] + lines[-1:]))
    return f"{type(error).__name__}: {text[:400]}"


def run_entry(entry: Entry) -> dict:
    tier = platform.detect().tier
    row = {"name": entry.name, "construct": entry.construct, "tier": platform.detect().describe(),
           "gfx950": entry.gfx950, "gfx950_basis": entry.basis, "h200": entry.h200, "interpreter": entry.interpreter}
    row["status"], row["suite"] = entry.suite(tier)
    try:
        row["values"] = _plain(entry.probe())
    except Exception as error:  # the reason is the result: this tier cannot run the probe
        row["values"], row["reason"] = None, _reason(error)
    try:
        row["gfx950_values"] = _plain(entry.gfx950_values()) if entry.gfx950_values else None
    except Exception as error:
        row["gfx950_values"], row["gfx950_reason"] = None, f"{type(error).__name__}: {error}"
    if row["values"] is None or row["gfx950_values"] is None:
        row["agrees"] = None
    else:
        row["agrees"] = row["values"] == row["gfx950_values"]
    return row


def run_catalogue(names=None) -> list:
    return [run_entry(e) for e in CATALOGUE if names is None or e.name in names]


# ---------------------------------------------------------------------------------------------------
# gfx950 instructions, re-derived by an AOT compile (a worker process with TRITON_INTERPRET=0)


def _derive_in_this_process(names=None) -> dict:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    target = GPUTarget("hip", "gfx950", 64)
    out = {}
    for entry in CATALOGUE:
        spec = entry.compile
        if spec is None or (names is not None and entry.name not in names):
            continue
        try:
            kernel = globals()[spec.kernel]
            options = {"enable_fp_fusion": True, **spec.options}
            compiled = triton.compile(ASTSource(kernel, spec.signature, spec.constexprs), target=target,
                                      options=options)
            text = compiled.asm[spec.ir]
            found = []
            for line in text.splitlines():
                for pattern in spec.patterns:
                    match = re.search(pattern, line)
                    if match:
                        token = match.group(0).replace('"', "").replace("\\", "")
                        token = re.sub(r"_e(32|64)$", "", token)
                        if token not in found:
                            found.append(token)
            out[entry.name] = {"instructions": found}
        except Exception as error:  # e.g. triton 3.9 rejecting the rank-0 index: the finding is the message
            out[entry.name] = {"error": f"{type(error).__name__}: {str(error).strip().splitlines()[-1][:200]}"}
    return out


def derive_gfx950(names=None, timeout: float = 300) -> dict:
    """entry name -> {"instructions": [...]} or {"error": why}, from compiling each probe for gfx950 here."""
    try:
        from triton.backends.amd.compiler import HIPBackend  # noqa: F401
    except Exception as error:
        return {"*": {"error": f"no AMD backend in this Triton: {error}"}}
    env = dict(os.environ, TRITON_INTERPRET="0")
    env.pop("TRITON_CACHE_DIR", None)
    argv = [sys.executable, "-m", "fuzz.selfcheck.tier_fidelity", "--derive-worker"] + (list(names) if names else [])
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run(argv, env=env, cwd=repo, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        return {"*": {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check_instructions(derived: dict) -> dict:
    """entry name -> the recorded instructions the fresh compile did not find (empty: as recorded)."""
    return {e.name: [i for i in e.instructions if i not in derived.get(e.name, {}).get("instructions", [])]
            for e in CATALOGUE if e.instructions}


# ---------------------------------------------------------------------------------------------------
# the table


def _short(value, width=60) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= width else text[: width - 3] + "..."


def format_table(rows: list, derived: dict | None = None) -> str:
    lines = ["| entry | construct | this tier's value | = gfx950? | gfx950 | interpreter (stock) | suite |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        value = r.get("reason") and f"cannot run here: {r['reason']}" or _short(r["values"])
        agrees = {True: "yes", False: "NO", None: "?"}[r["agrees"]]
        gfx = r["gfx950"]
        if derived and r["name"] in derived:
            d = derived[r["name"]]
            gfx += f" [compiled here: {', '.join(d['instructions']) if 'instructions' in d else d['error']}]"
        lines.append(f"| {r['name']} | {_short(r['construct'], 50)} | {value} | {agrees} | {_short(gfx, 90)} | "
                     f"{_short(r['interpreter'], 50)} | {r['status']}: {_short(r['suite'], 60)} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.selfcheck.tier_fidelity", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="write the rows (values, gfx950 values, statuses) as JSON")
    parser.add_argument("--gfx950", action="store_true", help="AOT-compile each probe for gfx950 here and compare "
                        "its instructions with the recorded ones (no GPU; a few seconds)")
    parser.add_argument("--only", nargs="*", metavar="ENTRY", help="run these entries only")
    parser.add_argument("--derive-worker", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.derive_worker is not None:
        print(json.dumps(_derive_in_this_process(args.derive_worker or None)))
        return 0
    rows = run_catalogue(args.only)
    derived = derive_gfx950(args.only) if args.gfx950 else None
    print(f"tier: {platform.detect().describe()}, triton {triton.__version__}, torch {torch.__version__}")
    print(format_table(rows, derived))
    broken = [r["name"] for r in rows if r["status"] in CHECKED and r["agrees"] is False]
    missing = {k: v for k, v in (check_instructions(derived) if derived else {}).items() if v}
    if missing and _triton_version() != INSTRUCTIONS_RECORDED_WITH:
        print(f"(instructions were recorded with triton {'.'.join(map(str, INSTRUCTIONS_RECORDED_WITH))}; this is "
              f"{triton.__version__}: differences are reported, not failed) {missing}")
        missing = {}
    for name in broken:
        print(f"CLAIM BROKEN: {name} is '{dict((r['name'], r['status']) for r in rows)[name]}' on this tier but its "
              f"values differ from gfx950's")
    for name, lost in missing.items():
        print(f"INSTRUCTIONS CHANGED: {name}: the gfx950 compile no longer has {lost}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tier": platform.detect().describe(), "triton": triton.__version__, "rows": rows,
                       "gfx950_compiled_here": derived}, f, indent=1)
    return 1 if broken or missing else 0


if __name__ == "__main__":
    sys.exit(main())
