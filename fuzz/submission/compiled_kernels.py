"""Compiled Triton kernels survive a fresh module, on a GPU.

Each program runs on the submission file executed afresh (session.py), so every ``@triton.jit`` function
is a new ``JITFunction`` with an empty in-memory kernel cache, and its first launch in every program goes
back to Triton's compiler (a disk-cache hit still costs tens of milliseconds per kernel and
specialisation). CUDA does not survive a fork, so the CPU tier's fork-per-program is not open here.

What is carried over is only what Triton itself would produce again: a new function takes the old one's
per-device kernel cache when both have the same ``cache_key``, which Triton computes from the function's
source, its line, the keys of the jit functions it calls and the values of the constexpr globals it uses.
A new function whose source or globals differ gets nothing and compiles as before. The module's state
(globals, caches, buffers, autotuners' choices) is not carried: each program still starts from a fresh
module. Triton's own launch check of the globals a kernel used runs against the new module's globals.
"""
from __future__ import annotations

from collections import defaultdict


def _jit_functions(module) -> dict:
    """name -> JITFunction for the module's jit functions, autotuned and heuristics-wrapped ones included."""
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:  # no Triton: nothing to carry
        return {}
    found = {}
    for name, value in vars(module).items():
        inner, depth = value, 0
        while inner is not None and not isinstance(inner, JITFunction) and depth < 4:
            inner, depth = getattr(inner, "fn", None), depth + 1  # Autotuner, Heuristics -> .fn
        if isinstance(inner, JITFunction):
            found[name] = inner
    return found


def carry_over(old_module, new_module) -> int:
    """Give each jit function of ``new_module`` the compiled kernels of ``old_module``'s function of the same
    name and cache key; returns how many functions took them."""
    if old_module is None:
        return 0
    old = _jit_functions(old_module)
    carried = 0
    for name, fn in _jit_functions(new_module).items():
        before = old.get(name)
        if before is None or before is fn or not hasattr(before, "device_caches"):
            continue
        try:
            same = fn.cache_key == before.cache_key
        except Exception:  # a source Triton cannot hash: it compiles as before
            continue
        if not same or fn.src != before.src or not before.device_caches:
            continue  # another source, or nothing compiled yet
        # The new function gets its own table (its default factory is its own create_binder, which also
        # sets the attributes the launch path reads on the function: CompiledKernel, compile, ...), holding
        # the old one's per-device entries: the compiled kernels and the argument binder of the same source.
        fn.create_binder()
        table = defaultdict(fn.create_binder)
        table.update(before.device_caches)
        fn.device_caches = table
        carried += 1
    return carried
