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


def _language_objects():
    import triton.language as tl

    return (tl, tl.core, tl.math, tl.core.tensor, tl.core.tensor_descriptor_base)


# The interpreter patches triton.language's builtins for each launch and, for calls of jit functions
# from inside a kernel, does not always put them back (triton 3.9): a later compile then sees the
# interpreter's builtins. ``kernels`` imports this module before any kernel runs, so this snapshot
# holds the real ones.
_LANGUAGE_SNAPSHOT = [(obj, dict(vars(obj))) for obj in _language_objects()]


def _restore_language() -> None:
    for obj, original in _LANGUAGE_SNAPSHOT:
        for name in [n for n in vars(obj) if n not in original and not n.startswith("__")]:
            delattr(obj, name)
        for name, value in original.items():
            if not name.startswith("__") and vars(obj).get(name) is not value:
                setattr(obj, name, value)


@contextlib.contextmanager
def compiled_functions(prefixes=("kernels", "triton.language")):
    _restore_language()
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
