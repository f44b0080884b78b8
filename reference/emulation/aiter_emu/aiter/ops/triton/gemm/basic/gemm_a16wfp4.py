"""aiter.ops.triton.gemm.basic.gemm_a16wfp4: bf16 activations x MXFP4 weights (aiter_semantics.md 4.1).

aiter passes configs through a string (for its torch.compile guard) so a caller's dict is never changed;
here the dict is copied instead. Nothing else checks shapes, as in aiter: a wrong view gives wrong numbers.
"""
from typing import Optional

import torch

from ..._triton_kernels.gemm.basic.gemm_a16wfp4 import _gemm_a16wfp4_kernel, _gemm_a16wfp4_preshuffle_kernel, _get_config
from ... import _vectorized
from ..... import _emulation
from .gemm_afp4wfp4 import _fit_splits, _gemm_grid, _k_reads, _outputs, _reduce, _scales_past_k


def gemm_a16wfp4(
    x: torch.Tensor,
    w: torch.Tensor,
    w_scales: torch.Tensor,
    atomic_add: Optional[bool] = False,
    dtype: Optional[torch.dtype] = torch.bfloat16,
    y: Optional[torch.Tensor] = None,
    config: Optional[dict] = None,
) -> torch.Tensor:
    """Y = quant(X) @ W^T: x bf16/fp16 [M, K], w packed e2m1 [N, K/2], w_scales [N, K/32] (unshuffled).

    atomic_add: programs add into y (zeroed when allocated here) instead of split-K partials + reduce.
    """
    if _vectorized.serves(x, w, w_scales, y) and not atomic_add and _vectorized.quantizes(x, 2 * w.shape[1]):
        return _vectorized.gemm_a16wfp4(x, w, w_scales, dtype, y)
    M, K = x.shape
    N, K = w.shape
    w = w.T
    config = dict(config) if config else _get_config(M, N, K)[0]
    if y is None:
        y = (torch.zeros if atomic_add else torch.empty)((M, N), dtype=dtype, device=x.device)
    # With atomic_add a configured NUM_KSPLIT > 1 only launches idle programs (their split starts past K).
    _fit_splits(config, K, search_splits=not atomic_add)
    config["BLOCK_SIZE_K"] = max(config["BLOCK_SIZE_K"], 64)
    if config["NUM_KSPLIT"] > 1 and not atomic_add:
        y_pp = torch.empty((config["NUM_KSPLIT"], M, N), dtype=torch.float32, device=y.device)
    else:
        config["SPLITK_BLOCK_SIZE"] = 2 * K
        y_pp = None
    out = y if y_pp is None else y_pp
    w_scales = _scales_past_k(w_scales, N, K, config)
    _gemm_a16wfp4_kernel[_gemm_grid(M, N, config)](
        x, w, out, w_scales, M, N, K, *x.stride(), *w.stride(),
        0 if y_pp is None else y_pp.stride(0), out.stride(-2), out.stride(-1), *w_scales.stride(),
        ATOMIC_ADD=atomic_add, **config)
    if y_pp is not None:
        _reduce(y_pp, y, M, N, K, config)
    return y


def _compiles(K: int, config: dict) -> bool:
    """Whether aiter's preshuffle kernel compiles for this config (K in bytes): it has code only for EVEN_K,
    and its scale reshape needs whole 8-group tiles per BLOCK_SIZE_K (>= 256). Elsewhere the emulated kernel
    fails to compile too, so those calls go to it."""
    split = config["SPLITK_BLOCK_SIZE"] if config["NUM_KSPLIT"] > 1 else 2 * K
    return (config["BLOCK_SIZE_K"] >= 256 and K % (config["BLOCK_SIZE_K"] // 2) == 0
            and split % config["BLOCK_SIZE_K"] == 0 and K % (split // 2) == 0)


def _preshuffled_past_n(w: torch.Tensor, w_scales: torch.Tensor, N: int, K: int, config: dict):
    """w and w_scales as the preshuffle kernel reads them (``_emulation.padded_for_reads``): its weight and
    scale rows count 16- and 32-row blocks but wrap at N, so the last N tile reads past both when
    N % BLOCK_SIZE_N != 0 (into masked output columns only); its scale row stride is whatever the caller's
    view has, so an unpadded (N//32, ...) view is read past its end there too."""
    tiles_n = -(-N // config["BLOCK_SIZE_N"]) * config["BLOCK_SIZE_N"]
    w_rows, s_rows = min(tiles_n // 16, N), min(tiles_n // 32, N)
    _, k_bytes = _k_reads(K, config)
    w_last = (w_rows - 1) * w.stride(0) + (k_bytes * 16 - 1) * w.stride(1)
    s_last = (s_rows - 1) * w_scales.stride(0) + (2 * k_bytes - 1) * w_scales.stride(1)
    return _emulation.padded_for_reads(w, w_last), _emulation.padded_for_reads(w_scales, s_last)


def gemm_a16wfp4_preshuffle(
    x: torch.Tensor,
    w: torch.Tensor,
    w_scales: torch.Tensor,
    prequant: Optional[bool] = True,
    dtype: Optional[torch.dtype] = torch.bfloat16,
    y: Optional[torch.Tensor] = None,
    config: Optional[dict] = None,
    skip_reduce: Optional[bool] = False,
) -> torch.Tensor:
    """Y = quant(X) @ W^T with w = shuffle_weight(B_q) viewed (N//16, K*8) uint8 and w_scales =
    e8m0_shuffle(scales) viewed (N_pad//32, 32*cols_pad) uint8. Returns y [M, N], or the fp32 partials
    [NUM_KSPLIT, M, N] when skip_reduce and the config splits K. y, when given, sets the output dtype."""
    assert prequant, "prequant == False is not supported yet"
    M, _ = x.shape
    N, K = w.shape
    N, K = N * 16, K // 16  # K in bytes
    config = dict(config) if config is not None else _get_config(M, N, K, True)[0]
    _fit_splits(config, K)
    config["BLOCK_SIZE_N"] = max(config["BLOCK_SIZE_N"], 32)
    if (_vectorized.serves(x, w, w_scales, y) and not skip_reduce and _compiles(K, config)
            and _vectorized.quantizes(x, 2 * K)):
        return _vectorized.gemm_a16wfp4_preshuffle(x, w, w_scales, dtype, y)
    y, y_pp, out, return_y_pp = _outputs(config, M, N, K, y, dtype, x.device, skip_reduce)
    w, w_scales = _preshuffled_past_n(w, w_scales, N, K, config)
    _gemm_a16wfp4_preshuffle_kernel[_gemm_grid(M, N, config)](
        x, w, out, w_scales, M, N, K, *x.stride(), *w.stride(),
        0 if y_pp is None else y_pp.stride(0), out.stride(-2), out.stride(-1), *w_scales.stride(),
        PREQUANT=prequant, **config)
    if return_y_pp:
        return y_pp
    if y_pp is not None:
        _reduce(y_pp, y, M, N, K, config)
    return y
