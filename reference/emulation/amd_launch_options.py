"""AMD-only Triton launch and compile options on a CUDA GPU: dropped, with a note, instead of a KeyError.

A submission written for the runner (gfx950, Triton's HIP backend) may pass options only the HIP backend
knows, as a launch keyword (``kernel[grid](..., waves_per_eu=2)``) or in an autotune config
(``triton.Config({"BLOCK_M": 64, "matrix_instr_nonkdim": 16}, num_warps=4)``: aiter's configs do this;
``Config.all_kwargs()`` hands them to ``JITFunction.run`` as launch keywords). On the runner they are
``HIPOptions`` fields and tune the code (occupancy, MFMA shape, scheduling). On a CUDA GPU compiled Triton
rejects them (triton 3.6 to 3.9, ``JITFunction._pack_args``):

    options = backend.parse_options(kwargs)
    ...
    for k in kwargs:
        if k not in options.__dict__ and k not in sigkeys:
            raise KeyError("Keyword argument %s was specified but unrecognised" % k)

so a file the runner accepts FAILs on the H200 for a reason that says nothing about its kernel. None of
these options changes what a kernel computes (they choose instructions, register budgets and schedules),
so on the nvidia tier they are dropped and each drop is recorded (option, value, kernel, first
``file:line``) for the report: "dropped AMD-only launch option waves_per_eu=2 (no meaning on NVIDIA)".

Hook: ``CUDABackend.parse_options``, the narrowest place: it receives the very dict ``_pack_args`` then
checks, so removing the AMD-only keys from it there (in place) is all that is needed; kernel parameters of
the same name (a kernel may well have a ``kpack`` argument) are kept.

Which options: ``HIPOptions`` fields that ``CUDAOptions`` lacks, computed from the installed Triton's two
dataclasses (triton 3.6: waves_per_eu, matrix_instr_nonkdim, kpack, allow_flush_denorm, schedule_hint;
3.9 adds llvm_fn_attrs and wgp_cu_mode), plus ``KNOWN_AMD_ONLY``, the names other Triton releases' HIPOptions
had (``instruction_sched_variant`` until 3.3; the runner's Triton is not public), less any field of the
installed CUDAOptions. Where a backend cannot be imported, ``KNOWN_AMD_ONLY`` alone.

Where it does nothing: in the interpreter (the cpu tier), whose ``GridExecutor.__call__`` keeps only the
keywords that name a kernel parameter (triton 3.9), so these options are ignored there already (so is any
other unknown keyword: see docs/tier_fidelity.md, ``unrecognised_launch_keyword``); and on ROCm, where
they mean what the file meant. ``install()`` is idempotent and returns whether the hook is in place.
"""
from __future__ import annotations

import os
import sys

from reference.emulation import cuda_backend_hook

LAUNCH_WRAPPER = True  # a frame of this module is never a launch site (cuda_backend_hook.outside_launch_path)

# HIPOptions fields of Triton releases other than the installed one (union; never a CUDAOptions field there)
KNOWN_AMD_ONLY = ("waves_per_eu", "matrix_instr_nonkdim", "kpack", "allow_flush_denorm", "schedule_hint",
                  "instruction_sched_variant", "llvm_fn_attrs", "wgp_cu_mode")

_state: dict = {"undo": None, "options": None}
_dropped: dict = {}  # (option, kernel) -> {"option", "value", "kernel", "where", "count"}


def backend_fields() -> tuple:
    """(HIPOptions fields, CUDAOptions fields) of the installed Triton; None for a backend that does not import."""
    def fields(module: str, cls: str):
        try:
            import importlib

            return tuple(getattr(importlib.import_module(module), cls).__dataclass_fields__)
        except Exception:  # a Triton without that backend (or a build that cannot load it)
            return None

    return (fields("triton.backends.amd.compiler", "HIPOptions"),
            fields("triton.backends.nvidia.compiler", "CUDAOptions"))


def amd_only_options(hip_fields=None, cuda_fields=None) -> tuple:
    """Options the HIP backend accepts and the CUDA backend does not: (HIPOptions - CUDAOptions) plus
    ``KNOWN_AMD_ONLY``, less every CUDAOptions field. Default: the installed Triton's dataclasses."""
    if hip_fields is None and cuda_fields is None:
        hip_fields, cuda_fields = backend_fields()
    cuda = set(cuda_fields or ())
    names = [f for f in (hip_fields or ()) if f not in cuda]
    names += [f for f in KNOWN_AMD_ONLY if f not in cuda and f not in names]
    return tuple(names)


def split_options(opts: dict, amd_only, params=()) -> tuple:
    """(kept, dropped): ``opts`` without / with only its AMD-only keys; a key that names a kernel parameter
    (``params``) is an argument, never dropped. Pure: ``opts`` is not changed."""
    amd_only, params = set(amd_only), set(params)
    dropped = {k: v for k, v in opts.items() if k in amd_only and k not in params}
    return {k: v for k, v in opts.items() if k not in dropped}, dropped


def note(drop: dict) -> str:
    return (f"dropped AMD-only launch option {drop['option']}={drop['value']!r} (no meaning on NVIDIA) "
            f"in kernel {drop['kernel']} at {drop['where']}")


def dropped() -> list:
    """Every (option, kernel) dropped since the last ``reset()``, with its first value and file:line and how
    many compiles dropped it; ``note(d)`` says it in a sentence."""
    return [dict(d) for d in _dropped.values()]


def reset() -> None:
    _dropped.clear()


def installed() -> bool:
    return _state["undo"] is not None


def _launch_site(frame) -> tuple:
    """(kernel name, its parameter names, the first file:line outside Triton and our launch wrappers)."""
    import triton

    triton_dir = os.path.dirname(triton.__file__)
    kernel, params = "?", ()
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_pack_args" and kernel == "?":  # JITFunction._pack_args(self, backend, kwargs, ...)
            jit = frame.f_locals.get("self")
            fn = getattr(jit, "fn", None)
            kernel = getattr(fn, "__qualname__", None) or getattr(jit, "__name__", "?")
            params = tuple(p.name for p in getattr(jit, "params", ()))
        if cuda_backend_hook.outside_launch_path(frame, triton_dir):
            return kernel, params, f"{code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return kernel, params, "?"


def _wrap(stock_parse_options, amd_only):
    def parse_options(self, opts):
        if isinstance(opts, dict) and any(k in opts for k in amd_only):
            kernel, params, where = _launch_site(sys._getframe(1))
            _, drop = split_options(opts, amd_only, params)
            for option, value in drop.items():
                del opts[option]  # in place: _pack_args checks this same dict after parsing
                entry = _dropped.setdefault((option, kernel), {"option": option, "value": value, "kernel": kernel,
                                                               "where": where, "count": 0})
                entry["count"] += 1
        return stock_parse_options(self, opts)

    parse_options.__wrapped__ = stock_parse_options
    return parse_options


def _patch() -> bool:
    """Install the hook whatever the tier (``install()`` decides where; tests call this on the CPU)."""
    if installed():
        return True
    options = amd_only_options()
    undo = cuda_backend_hook.replace("parse_options", lambda stock: _wrap(stock, frozenset(options)))
    if undo is None:  # no CUDA backend in this Triton: nothing raises the KeyError either
        return False
    _state["options"], _state["undo"] = options, undo
    return True


def install() -> bool:
    """On compiled Triton on a CUDA GPU, drop AMD-only options before the CUDA backend parses them;
    elsewhere (interpreter, ROCm, no GPU) a no-op. Idempotent; returns whether the hook is in place."""
    return _patch() if cuda_backend_hook.compiled_on_cuda() else installed()


def uninstall() -> None:
    if _state["undo"] is not None:
        _state.pop("undo")()
        _state["undo"] = None


def options() -> tuple:
    """The options the installed hook drops (computed at install time); before install, what it would drop."""
    return _state["options"] or amd_only_options()
