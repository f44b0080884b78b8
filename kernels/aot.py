"""Ahead-of-time compilation of our Triton kernels for a GPU target, from any machine.

On a CPU-only machine ``kernels.platform`` switches the interpreter on, so every ``@triton.jit``
object is an ``InterpretedFunction``, which the compiler cannot take (neither as the kernel nor as a
function the kernel calls). ``compiled_functions()`` swaps every such object in the loaded
``kernels`` modules for a ``JITFunction`` of the same Python function, for the duration of a
compile, and puts the originals back afterwards.
"""
from __future__ import annotations

import contextlib
import sys

import triton
from triton.compiler import ASTSource
from triton.runtime.jit import JITFunction


def _interpreted_type():
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover - very old Triton
        return ()
    return InterpretedFunction


@contextlib.contextmanager
def compiled_functions(prefixes=("kernels", "triton.language")):
    interpreted = _interpreted_type()
    swapped = []
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(prefixes):
            continue
        for attr, value in list(vars(module).items()):
            if interpreted and isinstance(value, interpreted):
                swapped.append((module, attr, value))
                setattr(module, attr, JITFunction(value.fn))
    try:
        yield
    finally:
        for module, attr, value in swapped:
            setattr(module, attr, value)


def compile_kernel(kernel, signature: dict, constexprs: dict, target, attrs=None, options=None):
    """triton.compile of ``kernel`` (interpreted or not) for ``target`` (a triton GPUTarget)."""
    with compiled_functions():
        module = sys.modules[kernel.fn.__module__] if hasattr(kernel, "fn") else None
        fn = getattr(module, kernel.fn.__name__) if module is not None else kernel
        src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs or {})
        return triton.compile(src, target=target, options=options or {})
