"""Memory nobody wrote, made visible: while a pattern is set, every tensor the submission (or anything it
calls) gets from ``torch.empty``, ``empty_like``, ``empty_strided`` or ``Tensor.new_empty`` is filled with
that byte before the file sees it. The same case under two patterns (0xFF: NaN in every float dtype;
0x00) must give bitwise the same output; a difference is an output that read memory nobody wrote (on the
runner: whatever the caching allocator last held there).

Below the Python allocators, every CPU allocation of torch's own allocator (c10's DefaultCPUAllocator)
is filled too while a pattern is set: c10's ``caffe2_cpu_allocator_do_junk_fill`` (0x7fedbeef words: a
NaN in fp32, NaN and -0.467 in bf16) under 0xFF and ``..._do_zero_fill`` under 0x00. That covers what the
wrappers cannot see: ``torch::empty`` in a file's C++ (load_inline, the HIP CPU model, whose device
tensors are CPU tensors), legacy constructors (``torch.Tensor(m, n)``, ``x.new(m, n)``), ``resize_``'s
growth, ``torch.ops.aten.empty``. Those have no line of the file to name. On a GPU the CUDA caching
allocator has no such fill: only the wrappers' allocations are poisoned there.

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
# c10's fill flags per pattern: (junk fill, zero fill)
C10_FILLS = {"ff": (True, False), "00": (False, True), None: (False, False)}
_state = {"pattern": None, "path": "", "sites": {}}  # pattern: a key of PATTERNS, or None (nothing filled)
_originals: dict = {}
_c10: dict = {}  # "flags": (junk, zero) ctypes booleans in libc10, or None where torch has none to find


def _c10_flags():
    """The two exported c10 flags (``FLAGS_caffe2_cpu_allocator_do_junk_fill`` / ``_do_zero_fill``) as
    ctypes booleans, or None: a torch built without them, or without libc10 beside it, keeps the wrappers
    alone (and says nothing worse than before)."""
    if "flags" not in _c10:
        try:
            import ctypes
            import os

            library = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libc10.so"))
            _c10["flags"] = tuple(ctypes.c_bool.in_dll(library, f"FLAGS_caffe2_cpu_allocator_do_{what}_fill")
                                  for what in ("junk", "zero"))
        except (OSError, ValueError):
            _c10["flags"] = None
    return _c10["flags"]


def _set_c10_fill(pattern) -> None:
    flags = _c10_flags()
    if flags is not None:
        flags[0].value, flags[1].value = C10_FILLS[pattern]


def c10_fill_available() -> bool:
    return _c10_flags() is not None


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
    if _state["pattern"] is not None and isinstance(t, torch.Tensor) and t.numel():
        storage = t.untyped_storage()
        torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage).fill_(PATTERNS[_state["pattern"]])
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
    if name != _state["pattern"]:  # every program ends with set_pattern(None): c10 is touched only on a change
        _set_c10_fill(name)
    _state["pattern"] = name


@contextlib.contextmanager
def paused():
    pattern = _state["pattern"]
    set_pattern(None)
    try:
        yield
    finally:
        set_pattern(pattern)


def take_sites() -> dict:
    """The submission's lines that allocated poisoned memory since the last call, with counts."""
    sites, _state["sites"] = _state["sites"], {}
    return sites
