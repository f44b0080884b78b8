#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: writes its own tuned config JSON where aiter reads them, then calls
aiter's public ``gemm_a16wfp4_preshuffle`` (K % 256 == 0) or a PyTorch path.

``aiter.ops.triton.utils.core.AITER_TRITON_CONFIGS_PATH`` is aiter's config directory; a file
``gemm/gfx950-GEMM-A16WFP4_PRESHUFFLED-N=<N>-K=<K>.json`` there is what aiter's ``get_gemm_config``
picks for that shape. The emulation gives the module and reads the file as aiter does.
"""
import json
import os

import torch
from aiter.ops.triton.gemm.basic.gemm_a16wfp4 import gemm_a16wfp4_preshuffle
from aiter.ops.triton.utils.core import AITER_TRITON_CONFIGS_PATH

from correct_reference_style import dequantize_weights, gemm
from task import input_t, output_t

TUNED = {"M_LEQ_16": dict(BLOCK_SIZE_M=16, BLOCK_SIZE_N=64, BLOCK_SIZE_K=256, GROUP_SIZE_M=1, num_warps=4,
                          num_stages=1, waves_per_eu=1, matrix_instr_nonkdim=16, cache_modifier=".cg", NUM_KSPLIT=1),
         "any": dict(BLOCK_SIZE_M=32, BLOCK_SIZE_N=64, BLOCK_SIZE_K=256, GROUP_SIZE_M=1, num_warps=4,
                     num_stages=1, waves_per_eu=1, matrix_instr_nonkdim=16, cache_modifier=None, NUM_KSPLIT=1)}
_written = set()


def _write_config(n: int, k: int) -> None:
    if (n, k) in _written:
        return
    folder = os.path.join(AITER_TRITON_CONFIGS_PATH, "gemm")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"gfx950-GEMM-A16WFP4_PRESHUFFLED-N={n}-K={k}.json"), "w") as f:
        json.dump(TUNED, f)
    _written.add((n, k))


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, B_shuffle, B_scale_sh = data
    n, k = B_shuffle.shape[0], A.shape[1]
    if k % 256:  # aiter's preshuffle kernel needs K % 256 == 0
        return gemm(A, dequantize_weights(B_q, B_scale_sh))
    _write_config(n, k)
    w = B_shuffle.view(torch.uint8).reshape(n // 16, k * 8)
    w_scales = B_scale_sh.view(torch.uint8).reshape(B_scale_sh.shape[0] // 32, -1)
    return gemm_a16wfp4_preshuffle(A, w, w_scales, prequant=True, dtype=torch.bfloat16)
