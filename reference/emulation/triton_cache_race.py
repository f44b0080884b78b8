"""A Triton launch that lost a race on the shared compile cache: launched again, so the race is never a verdict.

Every process of a run, and every check running at once on a host, compile into one Triton cache
(fuzz/host/compile_caches.py). Triton's FileCacheManager publishes each file with ``os.replace`` and then
prunes its temporary folder with ``os.removedirs``, which walks up and removes any folder that is empty at
that instant; a process compiling beside it can find a file it listed, or the folder it was about to write
into, gone (triton-lang/triton issues 2688 and 11512, pull request 11868). Seen on the H100 host with eight
checks at once (stop 47): ``FileNotFoundError: ... /root/.triton/cache/gfx950-casts/...`` raised while our
emulated aiter's ``_gemm_afp4wfp4_kernel`` compiled, which left thinngo's benchmark mode NOT RUN; a file's own
kernel hit there would have read as the file's error.

Compiling is deterministic (the cache is keyed by source, specialization and options), so such a launch runs
again, up to ``RETRIES`` times: it finds the kernel another process finished, or compiles it afresh. Only a
``FileNotFoundError`` for a path under the Triton cache is retried; every other error, and a race still lost
after the retries, stands. Hook: ``JITFunction.run`` (every launch's path), on compiled Triton only (the
interpreter writes no cache); ``install()`` is idempotent.
"""
from __future__ import annotations

import os

from reference.emulation.patch_registry import wrap_jit_run

LAUNCH_WRAPPER = True  # a frame of this module is never a launch site (cuda_backend_hook.outside_launch_path)
RETRIES = 3

_state: dict = {"undo": None, "retried": 0}


def cache_root() -> str:
    """The Triton cache folder this process compiles into (knobs.cache.dir: $TRITON_CACHE_DIR or ~/.triton/cache)."""
    try:
        import triton

        return str(triton.knobs.cache.dir)
    except Exception:  # a Triton without knobs
        return os.environ.get("TRITON_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".triton", "cache")


def lost_race(error: BaseException) -> bool:
    """A file or folder of the Triton cache vanished under this compile (not the file's missing file)."""
    if not isinstance(error, FileNotFoundError):
        return False
    paths = [p for p in (error.filename, getattr(error, "filename2", None)) if p]
    # the patched-cast cache (gfx950_casts) is a subfolder of the root: the root covers it
    roots = {os.path.realpath(cache_root()), os.path.realpath(os.path.join(os.path.expanduser("~"), ".triton"))}
    return any(os.path.realpath(str(p)).startswith(root + os.sep) for p in paths for root in roots)


def wrap_run(stock_run):
    def run(self, *args, **kwargs):
        for attempt in range(RETRIES + 1):
            try:
                return stock_run(self, *args, **kwargs)
            except FileNotFoundError as error:
                if attempt == RETRIES or not lost_race(error):
                    raise
                _state["retried"] += 1

    run.__wrapped__ = stock_run
    return run


def retried() -> int:
    """Launches run again after a lost race, in this process (tests; a worker's count is not reported)."""
    return _state["retried"]


def installed() -> bool:
    return _state["undo"] is not None


def install() -> bool:
    """On compiled Triton (TRITON_INTERPRET unset), the retry; under the interpreter a no-op."""
    if installed() or os.environ.get("TRITON_INTERPRET", "0") == "1":
        return installed()
    _state["undo"] = wrap_jit_run(wrap_run)
    return True


def uninstall() -> None:
    if _state["undo"] is not None:
        _state["undo"]()
        _state["undo"] = None
