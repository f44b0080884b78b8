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


LOCKS = "locks"  # beside the Triton cache's entries: one lock file per kernel source and specialization


def compile_once(environ=os.environ) -> bool:
    """Compiled Triton (a GPU): a process that starts compiling a kernel another process of the run is
    compiling waits for it and then loads its cache entry, instead of compiling it a second time beside it.

    Why: a check's worker and its compile-ahead helpers ask for the same kernels at about the same time
    (helpers run the runner's shapes while the worker runs them in order); on the H100 host v55's worker
    compiled its second official kernel (2.5 s) while two helpers compiled the same one (compile log, stop
    50). The lock is an flock on ``<cache>/locks/<source hash>`` around ``triton.compiler.compile``, whose
    cache lookup then finds what the other process wrote (an flock ends with its process: a crash leaves no
    lock behind). Keyed by the kernel source's hash (source, signature, constexprs, attributes): two
    option sets of one source wait for each other, which costs a wait, never a wrong kernel. Idempotent;
    True once installed. Binders made before this keep the stock compile."""
    import fcntl

    import triton.compiler as compiler

    if getattr(compiler.compile, "_mxfp4_fuzz_compile_once", False):
        return True
    share(environ)
    stock = compiler.compile

    def compile(src, *args, **kwargs):
        held = _lock_file(src)
        if held is None:  # no key, or no lock to be had: compiled as before (a lock never fails a compile)
            return stock(src, *args, **kwargs)  # forwards
        with held:
            fcntl.flock(held, fcntl.LOCK_EX)
            return stock(src, *args, **kwargs)  # forwards; closing the file releases the lock

    compile._mxfp4_fuzz_compile_once = True
    compile.__wrapped__ = stock
    compiler.compile = compile
    return True


def _lock_file(src):
    """The open lock file of ``src`` in the cache Triton compiles into now (a patch may point it elsewhere
    mid-run, and Triton prunes folders it finds empty: the folder is made at each compile), or None."""
    try:
        key = src.hash() if hasattr(src, "hash") else None
    except Exception:  # an IR path or a source Triton cannot hash here
        return None
    if not key:
        return None
    try:
        import triton

        root = Path(str(triton.knobs.cache.dir))
    except Exception:  # a Triton without knobs
        root = Path(os.environ.get("TRITON_CACHE_DIR") or Path.home() / ".triton" / "cache")
    try:
        folder = root / LOCKS
        folder.mkdir(parents=True, exist_ok=True)
        return open(folder / f"{key}.lock", "a")
    except OSError:
        return None
