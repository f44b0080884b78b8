"""Memory nobody wrote, made visible: while a pattern is set, every tensor the submission (or anything it
calls) gets from ``torch.empty``, ``empty_like``, ``empty_strided`` or ``Tensor.new_empty`` is filled with
that byte before the file sees it. The same case under two patterns (0xFF: NaN in every float dtype;
0x00) must give bitwise the same output; a difference is an output that read memory nobody wrote (on the
runner: whatever the caching allocator last held there).

Worker side only. Each poisoned allocation's call site in the submission's files is recorded, so a
failure names the allocating line. Our own inputs are built before a pattern is set (their padding is
randomised by the case, as before).
"""
from __future__ import annotations

import contextlib
import sys

import torch

from reference.emulation import submission_frames

PATTERNS = {"ff": 0xFF, "00": 0x00}
_state = {"byte": None, "path": "", "sites": {}}
_originals: dict = {}


def _site() -> str | None:
    """The innermost allocating line in the submission's own files: ``line N`` in the file itself,
    ``helper.py line N`` in a module beside it (None: allocated by something else only)."""
    frame = sys._getframe(2)
    while frame is not None:
        where = submission_frames.site(frame, _state["path"])
        if where is not None:
            return where
        frame = frame.f_back
    return None


def _fill(t):
    if _state["byte"] is not None and isinstance(t, torch.Tensor) and t.numel():
        storage = t.untyped_storage()
        torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage).fill_(_state["byte"])
        site = _site()
        if site is not None:
            _state["sites"][site] = _state["sites"].get(site, 0) + 1
    return t


def _wrap(original):
    def allocate(*args, **kwargs):
        return _fill(original(*args, **kwargs))  # forwards

    allocate.__wrapped__ = original
    return allocate


def install(path: str) -> None:
    """Wrap the allocators (once per process); nothing is filled until ``set_pattern``."""
    _state["path"] = path
    if _originals:
        return
    for owner, name in ((torch, "empty"), (torch, "empty_like"), (torch, "empty_strided"), (torch.Tensor, "new_empty")):
        _originals[(owner, name)] = getattr(owner, name)
        setattr(owner, name, _wrap(_originals[(owner, name)]))


def set_pattern(name: str | None) -> None:
    if name is not None and name not in PATTERNS:
        raise ValueError(f"unknown poison {name!r}; one of {sorted(PATTERNS)}")
    _state["byte"] = None if name is None else PATTERNS[name]


@contextlib.contextmanager
def paused():
    byte, _state["byte"] = _state["byte"], None
    try:
        yield
    finally:
        _state["byte"] = byte


def take_sites() -> dict:
    """The submission's lines that allocated poisoned memory since the last call, with counts."""
    sites, _state["sites"] = _state["sites"], {}
    return sites
