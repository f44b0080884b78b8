"""One Triton cache and one torch-extension build directory for every process of a run.

The pytest process, its submission workers (a fresh module per example; the command line starts the
first one before pytest), mutant runs and xdist workers inherit them, so a kernel is compiled once and
then loaded. They live under $MXFP4_FUZZ_CACHE (default ~/.cache/mxfp4-fuzz) and persist, keyed by
source and versions; a value already set wins."""
from __future__ import annotations

import os
from pathlib import Path


def share(environ=os.environ) -> dict:
    """Set TRITON_CACHE_DIR and TORCH_EXTENSIONS_DIR where unset; returns both."""
    root = Path(environ.get("MXFP4_FUZZ_CACHE") or Path.home() / ".cache" / "mxfp4-fuzz")
    environ.setdefault("TRITON_CACHE_DIR", str(root / "triton"))
    environ.setdefault("TORCH_EXTENSIONS_DIR", str(root / "torch_extensions"))
    return {name: environ[name] for name in ("TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR")}
