"""Where kernels/ allocates outputs and split-K workspaces.

``torch.empty`` hands back whatever the allocator had: often zeros on a CPU, often the previous
call's data on a GPU. Either can hide a path that forgets to write part of its output. With
poisoning on (``MXFP4_FUZZ_POISON=1`` or the ``poisoned()`` context) every buffer starts as NaN, so an
element a kernel never wrote cannot pass a check by luck.
"""
from __future__ import annotations

import contextlib
import os

import torch

_poison_depth = 0


def poisoning() -> bool:
    return _poison_depth > 0 or os.environ.get("MXFP4_FUZZ_POISON", "0") == "1"


@contextlib.contextmanager
def poisoned():
    """Within this block, every buffer from ``empty`` starts filled with NaN."""
    global _poison_depth
    _poison_depth += 1
    try:
        yield
    finally:
        _poison_depth -= 1


def empty(shape, dtype, device) -> torch.Tensor:
    out = torch.empty(shape, dtype=dtype, device=device)
    if poisoning():
        out.fill_(float("nan"))
    return out
