"""The two preshuffled layouts of the task and their inverses (aiter_semantics.md sections 2.2, 3).

``e8m0_shuffle``: scales [R, C] padded to [ceil256(R), ceil8(C)] and permuted so that every 32 rows
x 8 columns form one contiguous 256-byte tile. The real padding is uninitialised memory, so the
caller chooses the fill.

``shuffle_weight`` (layout (16, 16)): each 16-row block of the packed weight [N, K/2] is stored as
consecutive 16x16-byte tiles, one per 16 K-bytes, each tile row-major.
"""
from __future__ import annotations

import torch


def _ceil_to(x: int, m: int) -> int:
    return (x + m - 1) // m * m


def _byte_view(t: torch.Tensor, name: str) -> torch.Tensor:
    if t.element_size() != 1:
        raise TypeError(f"{name} must be a 1-byte dtype (uint8, float4_e2m1fn_x2, float8_e8m0fnu), got {t.dtype}")
    if t.dim() != 2:
        raise ValueError(f"{name} must be 2-D, got shape {tuple(t.shape)}")
    return t.view(torch.uint8) if t.dtype != torch.uint8 else t


def e8m0_shuffle(scales: torch.Tensor, fill: int = 0) -> torch.Tensor:
    """[R, C] -> [ceil256(R), ceil8(C)] in aiter's shuffled order; padding bytes = ``fill``."""
    s = _byte_view(scales, "scales")
    rows, cols = s.shape
    padded = torch.full((_ceil_to(rows, 256), _ceil_to(cols, 8)), fill, dtype=torch.uint8, device=s.device)
    padded[:rows, :cols] = s
    sm, sn = padded.shape
    out = padded.view(sm // 32, 2, 16, sn // 8, 2, 4).permute(0, 3, 5, 2, 4, 1).contiguous().view(sm, sn)
    return out.view(scales.dtype)


def e8m0_unshuffle(shuffled: torch.Tensor, rows: int | None = None, cols: int | None = None) -> torch.Tensor:
    """Inverse of e8m0_shuffle, optionally trimmed to the unpadded [rows, cols]."""
    s = _byte_view(shuffled, "shuffled scales")
    sm, sn = s.shape
    if sm % 256 or sn % 8:
        raise ValueError(f"shuffled scales must be [multiple of 256, multiple of 8], got {tuple(s.shape)}")
    out = s.reshape(sm // 32, sn // 8, 4, 16, 2, 2).permute(0, 5, 3, 1, 4, 2).contiguous().view(sm, sn)
    return out[: rows if rows is not None else sm, : cols if cols is not None else sn].view(shuffled.dtype)


def shuffle_weight(packed: torch.Tensor) -> torch.Tensor:
    """[N, K/2] packed fp4 bytes -> same shape, bytes permuted in 16x16 tiles (layout (16, 16))."""
    w = _byte_view(packed, "packed weight")
    n, kb = w.shape
    if n % 16 or kb % 32:
        raise ValueError(f"shuffle_weight needs N % 16 == 0 and K % 64 == 0, got N={n}, K={kb * 2}")
    out = w.reshape(n // 16, 16, kb // 32, 2, 16).permute(0, 2, 3, 1, 4).contiguous().view(n, kb)
    return out.view(packed.dtype)


def unshuffle_weight(shuffled: torch.Tensor) -> torch.Tensor:
    """Inverse of shuffle_weight."""
    w = _byte_view(shuffled, "shuffled weight")
    n, kb = w.shape
    if n % 16 or kb % 32:
        raise ValueError(f"unshuffle_weight needs N % 16 == 0 and K % 64 == 0, got N={n}, K={kb * 2}")
    out = w.reshape(n // 16, kb // 32, 2, 16, 16).permute(0, 3, 1, 2, 4).contiguous().view(n, kb)
    return out.view(shuffled.dtype)
