"""The subjects the fuzz suite tests from kernels/: each path alone, the fused path with the gfx950
quantizer and with forced split-K, and the whole dispatcher. A subject says whether it can run on
this tier, runs, and reports what ran (``RunInfo``: path, config, splits, rounding)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from kernels import aiter_helper, asm, configs, faults, fused, platform
from kernels.path import RunInfo


@dataclass
class Subject:
    name: str
    expected_path: str  # the path that must serve every call (asserted by the tests)
    available: Callable[[], tuple]
    run_fn: Callable[[tuple], tuple]
    quantize_a: Callable | None = None  # the A quantizer it uses, for the bit-exact stage check
    places_nan: bool = True  # False where NaN handling is an undocumented hardware assumption
    k_multiple: int = 64  # shapes the path serves (aiter's preshuffle kernel has no masked-K branch)
    last_dispatch: dict | None = None

    def run(self, data) -> tuple[torch.Tensor, RunInfo]:
        y, info = self.run_fn(data)
        self.last_dispatch = {"path": info.path, "config": info.config, "splits": info.splits, "rounding": info.rounding,
                              **{k: str(v) for k, v in info.details.items()}}
        return y, info


def _split_config(m, n, k):
    """A config that splits K into 2-3 stripes even for tiny shapes (the model only splits big K)."""
    split_k, splits = configs.align_splits(k, configs.MIN_BLOCK_K, 3)
    return configs.FusedConfig(16, 32 if n % 64 else 64, configs.MIN_BLOCK_K, splits=splits,
                               split_k=split_k if splits > 1 else 0)


def _fused_with(quantizer: str, split: bool, fold_backend: str = "auto"):
    def run(data):
        A, _, _, B_shuffle, B_scale_sh = data
        m, k = A.shape
        n = B_shuffle.shape[0]
        cfg = _split_config(m, n, k) if split else configs.choose(m, n, k)
        y = fused.fused_gemm(A, B_shuffle, B_scale_sh, n, cfg, quantizer, fold_backend)
        return y, RunInfo("fused", cfg.describe(), cfg.splits, "rne", {"quantizer": quantizer, "fold": fold_backend})
    return run


def _gfx950_quantizer_available():
    if platform.detect().tier == "nvidia":
        return False, "the gfx950 quantizer's inline asm cannot compile for NVIDIA"
    return fused.requirements()


def _aiter_quantize_a(A):
    from aiter.ops.triton.quant import dynamic_mxfp4_quant

    packed, scales = dynamic_mxfp4_quant(A)
    return packed.view(torch.uint8), scales.view(torch.uint8).contiguous()


def _dispatcher_subject():
    d = faults.faulty_dispatcher()  # the plain dispatcher unless --faults / MXFP4_FUZZ_FAULTS injects some

    def run(data):
        y = d(data)
        rec = d.last
        info = rec.info
        info.details["fallbacks"] = "; ".join(f"{p}: {r}" for p, r in rec.fallbacks)
        return y, info
    return run


def all_subjects() -> list[Subject]:
    return [
        Subject("fused", "fused", fused.requirements, fused.run,
                quantize_a=lambda A: fused.quantize_a(A, fused.default_quantizer()),
                places_nan=fused.default_quantizer() == "portable"),
        Subject("fused_gfx950_quantizer", "fused", _gfx950_quantizer_available, _fused_with("gfx950", False),
                quantize_a=lambda A: fused.quantize_a(A, "gfx950"), places_nan=False),
        Subject("fused_splitk_native_fold", "fused", fused.requirements, _fused_with("portable", True, "native")),
        Subject("fused_splitk_triton_fold", "fused", fused.requirements, _fused_with("portable", True, "triton")),
        Subject("helper", "helper", aiter_helper.requirements, aiter_helper.run, k_multiple=256),
        Subject("asm", "asm", asm.requirements, asm.run_asm, quantize_a=_aiter_quantize_a),
        Subject("a4w4", "a4w4", asm.requirements, asm.run_a4w4, quantize_a=_aiter_quantize_a),
        Subject("dispatch", "fused", fused.requirements, _dispatcher_subject()),
    ]
