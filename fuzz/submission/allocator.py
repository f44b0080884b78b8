"""The worker's model of PyTorch's caching allocator for a program's inputs: each input is placed in a
storage block from a pool that hands out a freed block of the same size last-freed first, at the same
address, as the caching allocator does. So "new values at an old address" (a freed input's block coming
back for the next build) is deterministic on the CPU too, and a block still referenced by the submission
is never reused, as with the real allocator.
"""
from __future__ import annotations

import gc

import torch


def raw_bytes(storage) -> torch.Tensor:
    return torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage)


GUARD_BYTES = 1 << 16  # past each guarded input: more than a kernel's tile reaches past a row or a tensor's end


class BlockPool:
    """Storage blocks by size, handed out last-freed first, like the caching allocator."""

    def __init__(self, device: str):
        self.device = device
        self.free: dict[int, list] = {}
        self.released: list = []  # freed but maybe still referenced by the submission

    def place(self, t: torch.Tensor, guard: int | None = None) -> torch.Tensor:
        """A tensor with t's dtype, shape, strides and offset in a pool block holding a copy of t's whole
        storage (so a layout's poisoned padding comes along). ``guard`` (a byte, host memory only): the block
        is followed by GUARD_BYTES of that byte, outside the tensor's storage, so a kernel that reads past the
        input reads them (a fresh block, never reused)."""
        nbytes = t.untyped_storage().nbytes()
        if guard is not None and self.device == "cpu":
            memory = bytearray(bytes([guard]) * (nbytes + GUARD_BYTES))
            storage = torch.frombuffer(memory, dtype=torch.uint8, count=nbytes).untyped_storage() if nbytes \
                else torch.empty(0, dtype=torch.uint8).untyped_storage()  # frombuffer refuses count 0
            raw_bytes(storage).copy_(raw_bytes(t.untyped_storage()))
            return torch.empty(0, dtype=t.dtype, device=self.device).set_(storage, t.storage_offset(), t.shape,
                                                                          t.stride())
        blocks = self.free.get(nbytes)
        storage = blocks.pop() if blocks else torch.empty(nbytes, dtype=torch.uint8, device=self.device).untyped_storage()
        raw_bytes(storage).copy_(raw_bytes(t.untyped_storage()))
        return torch.empty(0, dtype=t.dtype, device=self.device).set_(storage, t.storage_offset(), t.shape, t.stride())

    def release(self, t: torch.Tensor) -> None:
        self.released.append(t.untyped_storage())

    def collect(self) -> None:
        """Blocks that nothing but the pool references any more become free (in release order)."""
        if any(self._referenced(s) for s in self.released):
            gc.collect()  # only then: a full collection costs ~0.2 s with torch loaded
        for storage in self.released:
            if not self._referenced(storage):
                self.free.setdefault(storage.nbytes(), []).append(storage)
        self.released = [s for s in self.released if self._referenced(s)]

    @staticmethod
    def _referenced(storage) -> bool:
        return torch._C._storage_Use_Count(storage._cdata) > 1


def pointers(data) -> list:
    return [None if t is None else t.data_ptr() for t in data]
