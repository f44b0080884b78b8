"""Where and how the nvidia tier's compile-time hooks go in: compiled Triton on a CUDA (not ROCm) GPU,
and one attribute of Triton's ``CUDABackend`` replaced, with the function that puts it back. Used by
amd_launch_options.py (AMD-only launch options dropped) and amd_inline_asm.py (gfx950 asm refused)."""
from __future__ import annotations

import os


def compiled_on_cuda() -> bool:
    """Compiled Triton on a CUDA (not ROCm) GPU: not the interpreter, not ROCm, a GPU visible."""
    if os.environ.get("TRITON_INTERPRET", "0") == "1":
        return False
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a hard dependency
        return False
    return bool(torch.cuda.is_available()) and not getattr(torch.version, "hip", None)


def replace(attribute: str, wrap):
    """``CUDABackend.<attribute> = wrap(stock)``; returns the undo, or None where this Triton has no CUDA
    backend. A staticmethod stays one (``wrap`` gets and returns the plain function)."""
    try:
        from triton.backends.nvidia.compiler import CUDABackend
    except Exception:  # no CUDA backend in this Triton
        return None
    stock = CUDABackend.__dict__[attribute]
    if isinstance(stock, staticmethod):
        setattr(CUDABackend, attribute, staticmethod(wrap(stock.__func__)))
    else:
        setattr(CUDABackend, attribute, wrap(stock))

    def undo():
        setattr(CUDABackend, attribute, stock)

    return undo


def outside_launch_path(frame, triton_dir: str) -> bool:
    """Whether ``frame`` is the caller's, not Triton's (under ``triton_dir``) nor one of our wrappers of
    Triton's launch path: a module that wraps it sets ``LAUNCH_WRAPPER = True``, so the launch site a report
    names is the file's line, never ours (amd_launch_options.py, nvidia_shared_memory.py)."""
    return not frame.f_code.co_filename.startswith(triton_dir) and not frame.f_globals.get("LAUNCH_WRAPPER")
