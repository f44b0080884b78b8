"""What aiter's public Triton GEMM/quant API returns, computed with PyTorch on every tier.

A submission that calls ``gemm_a16wfp4``, ``gemm_a16wfp4_preshuffle``, ``gemm_afp4wfp4`` or
``dynamic_mxfp4_quant`` is judged on what aiter returns, not on how aiter's kernel computes it; the
Triton interpreter runs those kernels at a few programs per second (a real file falling back to the
public GEMM spent over 10 minutes on three verdicts); on a GPU they compile, each config and
specialization once (a real file's official check spent 14 s of its 27 compiling our kernels for the
runner's four shapes on a fresh H200 host). So, in the mode ``set_mode("vectorized")`` (the submission
worker's default on every tier), these calls run here instead, on the operands' device:

- quantization: the oracle's ``quantize_mxfp4``, the same bits as aiter's ``_mxfp4_quant_op``;
- the product: exact MXFP4 values multiplied and summed in float64, then rounded to fp32 and to the
  output dtype, which is inside the oracle's bound for any fp32 accumulation order (aiter's split-K
  partials and reduce included);
- outputs: allocated, shaped and strided as aiter's wrappers allocate them; a caller's ``y`` is
  written in place.

Operands are read as aiter's kernels read them: through their strides, whatever their shapes (only
the shapes aiter itself reads, x's and w's, matter); memory past a tensor's own reads as zeros (the
Triton GEMMs' convention, ``_emulation.padded_for_reads``). Nothing is checked that aiter does not check.

What is not served here goes to the emulated kernels (interpreted): split-K partials returned to the
caller (``skip_reduce``), ``atomic_add``, operands on different devices, tensors of a dtype Triton refuses (the
kernels raise Triton's error), K tails (quantization of rows whose length is not a multiple of 32, a
packed K not whole groups), and preshuffle calls the kernel cannot compile (EVEN_K false or
BLOCK_SIZE_K < 256: the kernels raise there). Kernels a submission launches itself, or device functions
it calls from its own ``@triton.jit``, are always interpreted: there the user's code is inside.
"""
from __future__ import annotations

import torch

from reference import dequantize_mxfp4, quantize_mxfp4

from ... import _emulation

_mode = {"value": "kernels"}
# torch dtypes Triton has no pointer type for: aiter hands such tensors to its kernels unchanged and Triton
# raises KeyError, so these calls go to the kernels, which raise it too.
_TRITON_REFUSES = tuple(d for d in (getattr(torch, "float4_e2m1fn_x2", None), getattr(torch, "float8_e8m0fnu", None))
                        if d is not None)
_QUANTIZABLE = (torch.bfloat16, torch.float16, torch.float32)


def set_mode(mode: str) -> None:
    """"vectorized" (PyTorch, fast) or "kernels" (the emulated Triton kernels, interpreted on a CPU)."""
    if mode not in ("vectorized", "kernels"):
        raise ValueError(f"aiter public API mode must be 'vectorized' or 'kernels', got {mode!r}")
    _mode["value"] = mode


def mode() -> str:
    return _mode["value"]


def serves(*tensors) -> bool:
    """True when this call may be computed here: vectorized mode, every tensor on one device and of a
    dtype Triton takes (else the kernels raise Triton's own error, as aiter's do). Inside a CUDA graph's
    capture too: every op here is a device op (no host read, no host-to-device copy), so the graph
    holds them and its replays compute what an eager call computes (fuzz/unit/test_aiter_vectorized.py)."""
    present = [t for t in tensors if t is not None]
    if _mode["value"] != "vectorized" or any(_triton_refuses(t.dtype) for t in present):
        return False
    return len({t.device for t in present}) <= 1


def _triton_refuses(dtype) -> bool:
    """Triton has no pointer type for ``dtype``: the name its own map (``triton._utils.
    type_canonicalisation_dict``) lacks, read at each call, since real files add fp4x2 and e8m0 to it
    (as u8) before calling aiter; without that map, the dtypes it lacked at Triton 3.6 and 3.9."""
    try:
        from triton._utils import type_canonicalisation_dict
    except ImportError:  # pragma: no cover - a Triton without the map
        return dtype in _TRITON_REFUSES
    return str(dtype).split(".")[-1] not in type_canonicalisation_dict


def quantizes(x: torch.Tensor, k: int) -> bool:
    """True when the first ``k`` columns of ``x`` are whole 32-element groups the oracle's quantizer takes
    (the kernels quantize K tails with masks; those calls stay with them)."""
    return x.dim() == 2 and x.dtype in _QUANTIZABLE and k % 32 == 0 and 0 < k <= x.shape[1]


def covers(x_codes: torch.Tensor, k_bytes: int) -> bool:
    """True when packed ``x_codes`` holds ``k_bytes`` per row in whole 32-element groups."""
    return x_codes.dim() == 2 and k_bytes % 16 == 0 and 0 < k_bytes <= x_codes.shape[1]


def _grid(rows: int, cols: int, device):
    return torch.arange(rows, device=device)[:, None], torch.arange(cols, device=device)[None, :]


def row_scales(scales: torch.Tensor, rows: int, groups: int) -> torch.Tensor:
    """Scale bytes [rows, groups] read as aiter's kernels read unshuffled scales: (r, g) at
    ``r * stride(0) + g * stride(1)``, whatever the tensor's shape; past its memory 0 (``_emulation.gather_bytes``)."""
    r, g = _grid(rows, groups, scales.device)
    return _emulation.gather_bytes(scales, r * scales.stride(0) + g * scales.stride(1))


def preshuffled_scales(scales: torch.Tensor, n: int, groups: int) -> torch.Tensor:
    """Scale bytes [n, groups] read as the preshuffle kernel reads e8m0_shuffle'd scales: weight row r's
    32-row block at ``(r // 32) * stride(0)``, then, per 8 groups, one 256-byte tile in the order
    [g % 4][r % 16][(g % 8) // 4][(r % 32) // 16] along ``stride(1)``. Only the strides matter, as in aiter:
    any view whose rows are 32-row blocks works (padded or not), whatever its shape."""
    r, g = _grid(n, groups, scales.device)
    column = (g // 8) * 256 + (g % 4) * 64 + (r % 16) * 4 + ((g % 8) // 4) * 2 + (r % 32) // 16
    return _emulation.gather_bytes(scales, (r // 32) * scales.stride(0) + column * scales.stride(1))


def preshuffled_weight(w: torch.Tensor, n: int, k_bytes: int) -> torch.Tensor:
    """Packed codes [n, k_bytes] read from shuffle_weight's (16, 16) layout viewed (N//16, K*8): weight row
    r in view row r // 16, byte kb at column (kb // 16) * 256 + (r % 16) * 16 + kb % 16."""
    r, kb = _grid(n, k_bytes, w.device)
    column = (kb // 16) * 256 + (r % 16) * 16 + kb % 16
    return _emulation.gather_bytes(w, (r // 16) * w.stride(0) + column * w.stride(1))


def product(a_codes, a_scales, b_codes, b_scales) -> torch.Tensor:
    """float64 [M, N] = dequant(a) @ dequant(b)^T from packed codes and unshuffled scale bytes."""
    a = dequantize_mxfp4(_emulation.as_bytes(a_codes), _emulation.as_bytes(a_scales))
    b = dequantize_mxfp4(_emulation.as_bytes(b_codes), _emulation.as_bytes(b_scales))
    return a @ b.T


def finish(acc: torch.Tensor, y, dtype) -> torch.Tensor:
    """Round to fp32 (the accumulator) and to the output dtype; into ``y`` when the caller gave one."""
    with torch.no_grad():
        result = acc.to(torch.float32).to(y.dtype if y is not None else dtype)
    if y is None:
        return result
    y.copy_(result)
    return y


def gemm_a16wfp4(x, w, w_scales, dtype, y) -> torch.Tensor:
    """x bf16/fp16 [M, >= K], w [N, K/2] packed (K from w, as aiter takes it), w_scales read through its
    strides as [N, K/32]. Only when ``quantizes(x, K)``."""
    n, k_bytes = w.shape
    codes, scales = quantize_mxfp4(x[:, : 2 * k_bytes])
    return finish(product(codes, scales, w, row_scales(w_scales, n, k_bytes // 16)), y, dtype)


def gemm_a16wfp4_preshuffle(x, w, w_scales, dtype, y) -> torch.Tensor:
    """w = shuffle_weight(B_q) viewed (N//16, K*8); w_scales = e8m0_shuffle(scales) viewed with one 32-row
    block per row ((N_pad//32, ...) or fewer rows), both read through their strides as the kernel reads them."""
    n, k_bytes = w.shape[0] * 16, w.shape[1] // 16
    codes, a_scales = quantize_mxfp4(x[:, : 2 * k_bytes])
    packed = preshuffled_weight(w, n, k_bytes)
    return finish(product(codes, a_scales, packed, preshuffled_scales(w_scales, n, k_bytes // 16)), y, dtype)


def gemm_afp4wfp4(x, w, x_scales, w_scales, dtype, y) -> torch.Tensor:
    """x [M, >= K/2], w [N, K/2] packed (K from w); x_scales and w_scales read through their strides as
    [M, K/32] and [N, K/32]. Only when ``covers(x, K/2)``."""
    m, (n, k_bytes) = x.shape[0], w.shape
    groups = k_bytes // 16
    return finish(product(x[:, :k_bytes], row_scales(x_scales, m, groups), w, row_scales(w_scales, n, groups)),
                  y, dtype)


def dynamic_mxfp4_quant(x: torch.Tensor):
    """aiter's outputs: codes [M, N//2] contiguous; scales [M, N//32] with strides (1, M)."""
    m, n = x.shape
    codes, scales = quantize_mxfp4(x)
    x_fp4 = torch.empty((m, n // 2), dtype=torch.uint8, device=x.device)
    x_fp4.copy_(codes)
    blockscale = torch.empty((n // 32, m), dtype=torch.uint8, device=x.device).T
    blockscale.copy_(scales)
    return x_fp4, blockscale
