"""A launch asking more shared memory than the NVIDIA GPU has: run again with fewer pipeline stages, noted.

Triton's software pipeliner keeps ``num_stages`` copies of a loop's tiles in shared memory. A config tuned
for gfx950 can ask an NVIDIA GPU for more than it has, and compiled Triton then raises ``OutOfResources``
at the launch: seen on the H200 (stop 43) in our emulated aiter's ``_gemm_afp4wfp4_kernel`` with aiter's
own gfx950 config at a benchmark shape (235,520 bytes of 232,448), which left benchmark and leaderboard
mode NOT RUN for a real file. On the nvidia tier a file's kernel, or ours, would fail for a reason that
says nothing about what it computes on the runner.

The number of stages does not change what a kernel computes: the loop runs the same iterations in the
same order with the same operations; only how far ahead its loads are issued changes. So on the nvidia
tier such a launch runs again with ``num_stages`` lowered one at a time down to 1, and each lowering is
recorded (kernel, the stages asked and used, the first file:line outside Triton) for the report. Still too
large at one stage: the first error stands. Whether the runner's LDS holds the config is builds_gfx950's
question, not this module's.

Hook: ``JITFunction.run``, every launch's path (``kernel[grid](...)``, warm-ups, an autotuner's benchmark
runs). The normal path passes straight through; only an ``OutOfResources`` for shared memory is handled.
``install()`` acts on compiled Triton on a CUDA GPU only (cuda_backend_hook.compiled_on_cuda) and is
idempotent.
"""
from __future__ import annotations

import os
import sys

from reference.emulation import cuda_backend_hook
from reference.emulation.patch_registry import wrap_jit_run

LAUNCH_WRAPPER = True  # a frame of this module is never a launch site (cuda_backend_hook.outside_launch_path)

_state: dict = {"undo": None}
_lowered: dict = {}  # kernel -> {"kernel", "asked", "used", "where", "count"}


def default_stages() -> int:
    """CUDAOptions' num_stages when a launch does not say (3 in triton 3.6 to 3.9)."""
    try:
        from triton.backends.nvidia.compiler import CUDAOptions

        return int(CUDAOptions.__dataclass_fields__["num_stages"].default)
    except Exception:  # no CUDA backend: nothing launches there either
        return 3


def _is_shared_memory(error: BaseException) -> bool:
    return type(error).__name__ == "OutOfResources" and "shared" in str(getattr(error, "name", error))


def _launch_site() -> str:
    import triton

    triton_dir = os.path.dirname(triton.__file__)
    frame = sys._getframe(2)
    while frame is not None:
        if cuda_backend_hook.outside_launch_path(frame, triton_dir):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def wrap_run(stock_run, stages_default=None):
    """``JITFunction.run`` that retries a shared-memory ``OutOfResources`` with fewer stages."""
    def run(self, *args, **kwargs):
        try:
            return stock_run(self, *args, **kwargs)
        except Exception as error:
            if not _is_shared_memory(error):
                raise
            first = error
        asked = kwargs.get("num_stages") or (stages_default if stages_default is not None else default_stages())
        for stages in range(int(asked) - 1, 0, -1):
            try:
                result = stock_run(self, *args, **{**kwargs, "num_stages": stages})
            except Exception as error:
                if not _is_shared_memory(error):
                    raise
                continue
            kernel = getattr(getattr(self, "fn", None), "__qualname__", None) or getattr(self, "__name__", "?")
            entry = _lowered.setdefault(kernel, {"kernel": kernel, "asked": int(asked), "used": stages,
                                                 "where": _launch_site(), "count": 0})
            entry["count"] += 1
            return result
        raise first

    run.__wrapped__ = stock_run
    return run


def note(entry: dict) -> str:
    return (f"kernel {entry['kernel']} asked more shared memory than this NVIDIA GPU has at num_stages="
            f"{entry['asked']}; it ran with num_stages={entry['used']} (the same computation, fewer loads in "
            f"flight) at {entry['where']}")


def lowered() -> list:
    """Every kernel run with fewer stages since the last ``reset()``; ``note(e)`` says it in a sentence."""
    return [dict(e) for e in _lowered.values()]


def reset() -> None:
    _lowered.clear()


def installed() -> bool:
    return _state["undo"] is not None


def _patch() -> bool:
    if not installed():
        _state["undo"] = wrap_jit_run(wrap_run)
    return True


def install() -> bool:
    """On compiled Triton on a CUDA GPU, the retry; elsewhere (interpreter, ROCm, no GPU) a no-op."""
    return _patch() if cuda_backend_hook.compiled_on_cuda() else installed()


def uninstall() -> None:
    if _state["undo"] is not None:
        _state.pop("undo")()
        _state["undo"] = None
