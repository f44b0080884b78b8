"""The helper path: aiter's Triton ``gemm_a16wfp4_preshuffle`` (bf16 A quantized in-kernel, preshuffled
fp4 B), with split-K and aiter's reduce. Real aiter on MI355X, the emulation elsewhere.

The adapter is where submissions go wrong, so it is spelled out (aiter_semantics.md section 4.1):
weights as the uint8 view (N // 16, K * 8) of the shuffled buffer, scales as the uint8 view
(rows_pad // 32, cols_pad * 32) of the ``e8m0_shuffle`` output. aiter checks neither view.
"""
from __future__ import annotations

import torch

from kernels import configs, platform
from kernels.path import FunctionPath, PathUnavailable, RunInfo


def requirements() -> tuple[bool, str]:
    try:
        from aiter.ops.triton.gemm.basic import gemm_a16wfp4  # noqa: F401
    except ImportError as exc:
        return False, f"aiter's gemm_a16wfp4_preshuffle is not importable: {exc}"
    return True, f"aiter gemm_a16wfp4_preshuffle ({platform.aiter_kind()})"


def helper_config(m: int, n: int, k: int) -> dict:
    """aiter config dict for our shape: the fused path's tile model, in aiter's key names."""
    cfg = configs.choose(m, n, k)
    return {
        "BLOCK_SIZE_M": cfg.block_m, "BLOCK_SIZE_N": cfg.block_n, "BLOCK_SIZE_K": cfg.block_k,
        "GROUP_SIZE_M": 1, "NUM_KSPLIT": cfg.splits, "num_warps": cfg.num_warps, "num_stages": 1,
        "waves_per_eu": 2, "matrix_instr_nonkdim": 16, "cache_modifier": cfg.cache_modifier or None,
    }


def run(data) -> tuple[torch.Tensor, RunInfo]:
    from aiter.ops.triton.gemm.basic.gemm_a16wfp4 import gemm_a16wfp4_preshuffle

    A, _, _, B_shuffle, B_scale_sh = data
    m, k = A.shape
    n = B_shuffle.shape[0]
    if k % 256 or n % 32:
        # aiter's kernel has no masked-K branch (EVEN_K False is a compile error) and reads scales per 32 rows.
        raise PathUnavailable(f"gemm_a16wfp4_preshuffle needs K % 256 == 0 and N % 32 == 0, got N={n}, K={k}")
    config = helper_config(m, n, k)
    if k % config["BLOCK_SIZE_K"]:
        # aiter's kernel needs whole BLOCK_SIZE_K chunks (EVEN_K); 256 always divides K here (checked over
        # every K % 256 == 0 up to 8192 with aiter's split-K search)
        config["BLOCK_SIZE_K"] = 256
    w = B_shuffle.view(torch.uint8).reshape(n // 16, k * 8)
    rows_pad, cols_pad = B_scale_sh.shape
    w_scales = B_scale_sh.view(torch.uint8).reshape(rows_pad // 32, cols_pad * 32)
    y = gemm_a16wfp4_preshuffle(A, w, w_scales, prequant=True, dtype=torch.bfloat16, config=config)
    # aiter converts with .to(bf16): RNE compiled, and in the interpreter as patched (triton_interpreter)
    rounding = "rne"
    desc = f"BM{config['BLOCK_SIZE_M']}xBN{config['BLOCK_SIZE_N']}xBK{config['BLOCK_SIZE_K']} splits={config['NUM_KSPLIT']}"
    return y, RunInfo("helper", desc, config["NUM_KSPLIT"], rounding, {"aiter": platform.aiter_kind()})


PATH = FunctionPath("helper", requirements, run)
