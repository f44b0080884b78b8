"""What aiter had at the competition commit and this emulation lacks: a clear error naming it.

A submission that imports ``aiter.ops.triton.utils.foo`` or uses ``aiter.some_op`` which real aiter
(f3be04a12a0c, the runner's) has and the emulation does not would otherwise stop on a bare ModuleNotFoundError or
AttributeError, reported as if the file were broken. Instead it gets ``AiterNotEmulated`` (an
ImportError) or ``AiterAttributeNotEmulated`` (an AttributeError) naming the module or attribute; the
suite reports that as NOT RUN ("uses an aiter API the emulation does not have"), never FAIL. Names real
aiter never had keep Python's own errors: those would fail on the runner too.

The list of real names (``surface_f3be04a12a0c.txt``) holds module paths, the names aiter's
``__init__`` exports and the top-level names of each module the emulation has, extracted from aiter's
source tree (``reference/emulation/aiter_surface.py``); no aiter code.
"""
from __future__ import annotations

import importlib.abc
import os
import sys

_SURFACE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "surface_f3be04a12a0c.txt")
COMMIT = "f3be04a12a0c"  # = _emulation.MODELLED_COMMIT


def _load_surface() -> tuple:
    """(modules, names of ``aiter``, {module: its top-level names} for the modules the emulation has)."""
    modules, names, module_names, section = set(), set(), {}, None
    with open(_SURFACE, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line in ("[modules]", "[names]", "[module_names]"):
                section = line
            elif section == "[modules]":
                modules.add(line)
            elif section == "[names]":
                names.add(line)
            elif section == "[module_names]":
                module, _, name = line.partition(":")
                module_names.setdefault(module, set()).add(name)
    return frozenset(modules), frozenset(names), {m: frozenset(n) for m, n in module_names.items()}


REAL_MODULES, REAL_NAMES, REAL_MODULE_NAMES = _load_surface()
# What a file asked for that real aiter has and the emulation lacks, in this process (a forked program inherits
# its parent's): a file that catches the error and goes on runs a fallback where the runner runs aiter's code,
# which the report must say (the worker adds these to every call's record)
RAISED: dict = {}  # name -> None, in the order first asked for


def real_name(module: str, name: str) -> bool:
    """Whether real aiter's ``module`` (one the emulation has) binds ``name``: ``from module import name``
    failing against the emulation is then the emulation's gap (Python reports it as a plain ImportError,
    "cannot import name", whatever a module ``__getattr__`` raised)."""
    return name in REAL_MODULE_NAMES.get(module, ()) or (module == "aiter" and name in REAL_NAMES)


class AiterNotEmulated(ImportError):
    """A module real aiter (f3be04a12a0c) has that the emulation does not."""


class AiterAttributeNotEmulated(AttributeError):
    """An attribute of ``aiter`` real aiter (f3be04a12a0c) exports that the emulation does not."""


class _Finder(importlib.abc.MetaPathFinder):
    """Last on sys.meta_path: asked only when no other finder found an ``aiter.*`` module."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("aiter.") and fullname in REAL_MODULES and _is_emulation(fullname):
            RAISED.setdefault(fullname)
            raise AiterNotEmulated(f"uses aiter module {fullname} (in aiter {COMMIT}), which the emulation "
                                   "does not have (docs/aiter_emulation.md lists what it has)", name=fullname)
        return None


def _is_emulation(fullname: str) -> bool:
    package = sys.modules.get("aiter")
    return package is not None and getattr(package, "__file__", "") == os.path.join(
        os.path.dirname(_SURFACE), "__init__.py")


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())


def _missing(module: str, name: str, real: bool):
    """The error for ``module.name`` the emulation lacks: one real aiter has (``real``) is recorded in RAISED (a
    file that catches it and falls back is then marked, as for a module the emulation lacks) and named."""
    if real:
        RAISED.setdefault(f"{module}.{name}")
        return AiterAttributeNotEmulated(f"uses {module}.{name} (in aiter {COMMIT}), which the emulation does not "
                                         "have (docs/aiter_emulation.md lists what it has)")
    return AttributeError(f"module {module!r} has no attribute {name!r}")


def missing_attribute(name: str):
    """For ``aiter.__getattr__``: the error for a name the emulation lacks."""
    return _missing("aiter", name, name in REAL_NAMES)


def missing_module_name(module: str, name: str):
    """For a partly emulated module's ``__getattr__``: the error for ``name``; ``from module import name`` turns
    either kind into Python's ImportError, which provenance reads by the surface list."""
    return _missing(module, name, real_name(module, name))
