"""aiter.ops.triton.gemm.basic.gemm_afp4wfp4: ``gemm_afp4wfp4`` and the ``get_splitk`` that the a16wfp4
wrappers (and submissions) use (aiter_semantics.md section 4.3)."""
from typing import Optional

from reference.emulation import triton_interpreter

triton_interpreter.activate()  # before Triton is imported: it fixes interpreted vs compiled at decoration

import torch  # noqa: E402
import triton  # noqa: E402

from ..... import _emulation  # noqa: E402
from ... import _vectorized  # noqa: E402
from ..._triton_kernels.gemm.basic.gemm_a16wfp4 import get_splitk as _search_splitk  # noqa: E402
from ..._triton_kernels.gemm.basic.gemm_afp4wfp4 import (  # noqa: E402
    _gemm_afp4wfp4_kernel,
    _gemm_afp4wfp4_reduce_kernel,
    _get_config,
)

_USE_GEMM_SPLITK_BF16 = False


def set_use_gemm_splitk_bf16(value: bool):
    global _USE_GEMM_SPLITK_BF16
    _USE_GEMM_SPLITK_BF16 = value


def get_splitk(K: int, BLOCK_SIZE_K: int, NUM_KSPLIT: int):
    """(SPLITK_BLOCK_SIZE, BLOCK_SIZE_K, NUM_KSPLIT) for K bytes; the final count is the number of splits
    that actually hold K (cdiv(K, SPLITK_BLOCK_SIZE // 2)), so no partial slice is left unwritten."""
    splitk_block, block_k, _ = _search_splitk(K, BLOCK_SIZE_K, NUM_KSPLIT)
    return splitk_block, block_k, triton.cdiv(K, splitk_block // 2)


def _fit_splits(config: dict, K: int, search_splits: bool = True) -> None:
    """The wrappers' common config rewrite (K in bytes): search the splits, then fall back to one split
    when one BLOCK_SIZE_K already covers K."""
    if config["NUM_KSPLIT"] > 1 and search_splits:
        config["SPLITK_BLOCK_SIZE"], config["BLOCK_SIZE_K"], config["NUM_KSPLIT"] = get_splitk(
            K, config["BLOCK_SIZE_K"], config["NUM_KSPLIT"])
    if config["BLOCK_SIZE_K"] >= 2 * K:
        config["BLOCK_SIZE_K"] = triton.next_power_of_2(2 * K)
        config["SPLITK_BLOCK_SIZE"] = 2 * K
        config["NUM_KSPLIT"] = 1


def _k_reads(K: int, config: dict) -> tuple:
    """(scale groups, K bytes) the kernels read per row, tails included: each split reads whole
    BLOCK_SIZE_K chunks from its start, so the last split's last chunk may end past K."""
    splits = triton.cdiv(K, config["SPLITK_BLOCK_SIZE"] // 2)
    num_k_iter = triton.cdiv(config["SPLITK_BLOCK_SIZE"] // 2, config["BLOCK_SIZE_K"] // 2)
    elements = (splits - 1) * config["SPLITK_BLOCK_SIZE"] + num_k_iter * config["BLOCK_SIZE_K"]
    return elements // 32, elements // 2


def _scales_past_k(scales: torch.Tensor, rows: int, K: int, config: dict) -> torch.Tensor:
    """``scales`` [rows, K/32] as the kernel reads it through its strides (``_emulation.padded_for_reads``).

    aiter's kernels load scale groups unmasked. With K (bytes) not a multiple of BLOCK_SIZE_K // 2 the
    last iteration of the last split reads groups past K/16: past the tensor's end for the column-major
    x_scales, into the next row (past the end for the last row) for w_scales. The data there is masked
    to 0, so on a GPU the product is right unless the bytes read are 0xFF (E8M0 NaN: 0 x NaN = NaN).
    Inside the tensor's memory the kernel reads it as aiter's does (the next row's bytes); past its end
    it reads zeros, the benign outcome, where the interpreter would read host memory at random."""
    groups, _ = _k_reads(K, config)
    return _emulation.padded_for_reads(scales, (rows - 1) * scales.stride(0) + (groups - 1) * scales.stride(1))


def _gemm_grid(M: int, N: int, config: dict):
    return (config["NUM_KSPLIT"] * triton.cdiv(M, config["BLOCK_SIZE_M"]) * triton.cdiv(N, config["BLOCK_SIZE_N"]),)


def _reduce(y_pp: torch.Tensor, y: torch.Tensor, M: int, N: int, K: int, config: dict, block_n: int = 64) -> None:
    """Sum the split-K partials into y with aiter's reduce launch (16 x block_n tiles)."""
    actual_ksplit = triton.cdiv(K, config["SPLITK_BLOCK_SIZE"] // 2)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, block_n))
    _gemm_afp4wfp4_reduce_kernel[grid](
        y_pp, y, M, N, *y_pp.stride(), *y.stride(), 16, block_n, actual_ksplit,
        triton.next_power_of_2(config["NUM_KSPLIT"]))


def _outputs(config: dict, M: int, N: int, K: int, y, dtype, device, skip_reduce: bool, bf16_partials: bool = False):
    """(y, y_pp, out, return_y_pp), allocated as aiter's wrappers do: fp32 split-K partials when the
    config splits K (y's dtype with bf16 partials: aiter reads y.dtype there, so a missing y raises
    AttributeError too), y itself unless only the partials are returned; ``out`` is what the kernel writes."""
    return_y_pp = config["NUM_KSPLIT"] > 1 and skip_reduce
    if config["NUM_KSPLIT"] > 1:
        partial_dtype = y.dtype if bf16_partials else torch.float32
        y_pp = torch.empty((config["NUM_KSPLIT"], M, N), dtype=partial_dtype, device=device)
    else:
        config["SPLITK_BLOCK_SIZE"] = 2 * K
        y_pp = None
    if y is None and not return_y_pp:
        y = torch.empty((M, N), dtype=dtype, device=device)
    return y, y_pp, (y if y_pp is None else y_pp), return_y_pp


def gemm_afp4wfp4(
    x: torch.Tensor,
    w: torch.Tensor,
    x_scales: torch.Tensor,
    w_scales: torch.Tensor,
    dtype: Optional[torch.dtype] = torch.bfloat16,
    y: Optional[torch.Tensor] = None,
    config: Optional[dict] = None,
    skip_reduce: Optional[bool] = False,
) -> torch.Tensor:
    """Y = X @ W^T for MXFP4 x [M, K/2] with scales [M, K/32] and w [N, K/2] with scales [N, K/32] (all
    unshuffled uint8). Returns y [M, N], or the fp32 partials [NUM_KSPLIT, M, N] when skip_reduce splits."""
    if _vectorized.serves(x, w, x_scales, w_scales, y) and not skip_reduce and _vectorized.covers(x, w.shape[1]):
        return _vectorized.gemm_afp4wfp4(x, w, x_scales, w_scales, dtype, y)
    M, K = x.shape
    N, K = w.shape
    w = w.T
    config = dict(config) if config is not None else _get_config(M, N, K)[0]
    _fit_splits(config, K)
    config["BLOCK_SIZE_K"] = max(config["BLOCK_SIZE_K"], 128)
    y, y_pp, out, return_y_pp = _outputs(config, M, N, K, y, dtype, x.device, skip_reduce, _USE_GEMM_SPLITK_BF16)
    x_scales, w_scales = _scales_past_k(x_scales, M, K, config), _scales_past_k(w_scales, N, K, config)
    _gemm_afp4wfp4_kernel[_gemm_grid(M, N, config)](
        x, w, out, x_scales, w_scales, M, N, K, *x.stride(), *w.stride(),
        0 if y_pp is None else y_pp.stride(0), out.stride(-2), out.stride(-1),
        *x_scales.stride(), *w_scales.stride(), **config)
    if return_y_pp:
        return y_pp
    if y_pp is not None:
        _reduce(y_pp, y, M, N, K, config, 128 if _USE_GEMM_SPLITK_BF16 else 64)
    return y
