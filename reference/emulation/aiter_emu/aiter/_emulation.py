"""What this package is, and the knobs for what real aiter leaves to the hardware.

Not part of aiter: this module exists only in the emulation (docs/aiter_emulation.md lists every
deliberate difference). ``select.use_aiter`` recognises the emulation by ``IS_EMULATION``.
"""
from __future__ import annotations

import torch

IS_EMULATION = True
MODELLED_COMMIT = "bd02afb526"  # aiter's competition-era snapshot (2026-03-10)
ARCH = "gfx950"
# MI355X. Only the gemm_a4w4_asm kernel heuristic reads it.
CU_NUM = 256

# Memory that aiter allocates with torch.empty and never writes (e8m0_shuffle padding, the padded rows of
# fp4_utils.dynamic_mxfp4_quant's scales) holds garbage on a GPU. Here it holds this byte, so a kernel that
# reads it is visibly wrong and reruns are reproducible. 0xFF is a NaN E8M0 scale.
UNINITIALIZED_BYTE = 0xFF


def uninitialized(shape, dtype: torch.dtype, device) -> torch.Tensor:
    """torch.empty(shape, dtype) whose every byte is UNINITIALIZED_BYTE."""
    probe = torch.empty(0, dtype=dtype)
    n_bytes = probe.element_size() * int(torch.Size(shape).numel())
    raw = torch.full((n_bytes,), UNINITIALIZED_BYTE, dtype=torch.uint8, device=device)
    return raw.view(dtype).reshape(shape)


def read_bytes(t: torch.Tensor, byte_offsets: torch.Tensor) -> torch.Tensor:
    """The bytes at ``t.data_ptr() + byte_offsets``, as a kernel given only the pointer would read them.

    Offsets outside ``t``'s storage read UNINITIALIZED_BYTE (a GPU would read whatever lies there, or fault).
    """
    storage = torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())
    index = byte_offsets + t.storage_offset() * t.element_size()
    inside = (index >= 0) & (index < storage.numel())
    values = torch.full(index.shape, UNINITIALIZED_BYTE, dtype=torch.uint8, device=t.device)
    values[inside] = storage[index[inside]]
    return values
