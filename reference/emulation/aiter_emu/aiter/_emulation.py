"""What this package is, and the knobs for what real aiter leaves to the hardware.

Not part of aiter: this module exists only in the emulation (docs/aiter_emulation.md lists every
deliberate difference). ``select.use_aiter`` recognises the emulation by ``IS_EMULATION``.
"""
from __future__ import annotations

import torch

IS_EMULATION = True
# The runner's aiter: gpu-mode/kernelbot docker/amd-docker.Dockerfile (since 2026-03-03) checks out
# f3be04a12a0c (2026-03-04). Every file the emulation models is byte-identical at bd02afb526 (2026-03-10),
# the snapshot it was first written from (docs/aiter_emulation.md, "The runner's aiter").
MODELLED_COMMIT = "f3be04a12a0c"
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


def read_bytes(t: torch.Tensor, byte_offsets: torch.Tensor, what: str = "") -> torch.Tensor:
    """The bytes at ``t.data_ptr() + byte_offsets``, as a kernel given only the pointer would read them.

    Offsets outside ``t``'s storage read UNINITIALIZED_BYTE (a GPU would read whatever lies there, or fault),
    and are recorded (``take_reads_past``) under ``what`` ("gemm_a4w4_asm A_scale"): the card of a wrong
    output then says that aiter's own kernel reads past the operand the file passed.
    """
    storage = torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())
    index = byte_offsets + t.storage_offset() * t.element_size()
    if t.device.type == "cuda" and torch.cuda.is_current_stream_capturing():
        # inside a CUDA graph's capture a host read of the count breaks the capture (a real file captures
        # aiter's calls): the read itself is the same, only its record is skipped
        outside = 0
    else:
        outside = int(((index < 0) | (index >= storage.numel())).sum())
    if outside and what:
        _READS_PAST.append({"what": what, "outside": outside, "read": int(index.numel()),
                            "shape": list(t.shape), "stride": list(t.stride()), "storage_bytes": int(storage.numel())})
    return _read(storage, index, UNINITIALIZED_BYTE)


_READS_PAST: list = []  # reads past an operand's storage since the last take_reads_past()


def take_reads_past() -> list:
    """The reads past an operand's storage recorded since the last call (the worker takes them per call)."""
    taken = list(_READS_PAST)
    _READS_PAST.clear()
    return taken


def describe_read_past(entry: dict) -> str:
    return (f"aiter's {entry['what']} read {entry['outside']} of its {entry['read']} bytes past the storage of the "
            f"tensor the file passed (shape {tuple(entry['shape'])}, stride {tuple(entry['stride'])}, "
            f"{entry['storage_bytes']} bytes): aiter's own kernel reads the same offsets, which on the runner hold "
            f"whatever memory lies there (here 0x{UNINITIALIZED_BYTE:02X}, a NaN E8M0 scale); pass the layout "
            f"it expects (e8m0_shuffle'd scales, rows padded)")


def _read(memory: torch.Tensor, index: torch.Tensor, fill: int) -> torch.Tensor:
    """``memory[index]`` (1-D uint8), ``fill`` where an index falls outside it."""
    inside = (index >= 0) & (index < memory.numel())
    if memory.numel() == 0:
        return torch.full(index.shape, fill, dtype=torch.uint8, device=memory.device)
    # a gather at clamped indices, then a select: the same bytes as indexing by the mask, without its host
    # read of the mask's count (which a CUDA graph's capture refuses)
    gathered = memory[index.clamp(0, memory.numel() - 1)]
    return torch.where(inside, gathered, torch.full_like(gathered, fill))


def extent(t: torch.Tensor) -> int:
    """Elements from ``t``'s first element to one past its last, through its strides: the memory ``t``
    spans (gaps between rows included), as a kernel given ``t.data_ptr()`` and ``t.stride()`` sees it."""
    if t.numel() == 0:
        return 0
    return sum((size - 1) * stride for size, stride in zip(t.shape, t.stride())) + 1


def as_bytes(t: torch.Tensor) -> torch.Tensor:
    """A 1-byte tensor as uint8 (fp4x2 and e8m0 have few torch ops), anything else as it is."""
    return t.view(torch.uint8) if t.element_size() == 1 and t.dtype != torch.uint8 else t


def _flat(t: torch.Tensor) -> torch.Tensor:
    """The ``extent(t)`` elements of memory from ``t``'s first element, as a 1-D tensor (no copy)."""
    return as_bytes(t).as_strided((extent(t),), (1,))


def gather_bytes(t: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """The bytes at ``t.data_ptr() + offsets`` of a 1-byte tensor, as aiter's Triton kernels read them
    through ``t``'s strides: inside ``t``'s extent the memory there (padding bytes included), outside it 0.

    The Triton GEMMs' convention (``padded_for_reads``): a GPU reads whatever lies past the tensor there.
    """
    return _read(_flat(t), offsets, 0)


def padded_for_reads(t: torch.Tensor, last_offset: int) -> torch.Tensor:
    """``t`` itself when a kernel's reads end inside its extent (``last_offset``, in elements from its first
    element, is the furthest one), else a copy with the same strides whose memory is ``t``'s extent
    followed by zeros up to ``last_offset``.

    aiter's Triton kernels read some operands unmasked past what the tensor holds (scale groups past K,
    the preshuffled weight's and scales' rows past N). On a GPU that is whatever lies there: harmless
    (multiplied by masked zeros, or landing in masked output columns) unless it is an E8M0 NaN byte. The
    interpreter would read host memory there, at random; the emulation reads zeros, the benign outcome,
    deterministically. Inside the extent the kernel reads ``t``'s own memory, as aiter's does."""
    size = extent(t)
    if last_offset < size:
        return t
    flat = _flat(t)
    memory = torch.zeros((last_offset + 1,), dtype=flat.dtype, device=t.device)
    memory[:size] = flat
    return memory.as_strided(t.shape, t.stride()).view(t.dtype)
