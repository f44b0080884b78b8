"""Which ``aiter`` does ``import aiter`` give: the real package, or the emulation in ``aiter_emu/``.

``use_aiter(mode)`` decides once per process (again only when asked for something else) and reports it:

- ``"real"``: the installed aiter; a clear error when it cannot be imported.
- ``"emulated"``: ``aiter_emu`` goes first on sys.path; with the Triton interpreter on, the gfx950 inline-asm
  model is installed too, so submissions' ``v_cvt_scalef32_pk_fp4_*`` asm runs.
- ``"auto"``: real when it imports, else emulated.
- ``"source=PATH"``: the emulation with aiter's own Python wrappers and Triton kernels loaded over it from
  the aiter checkout at PATH, its compiled/JIT layer stubbed (``aiter_source.py`` lists which modules
  come from PATH); a clear error when PATH is not an aiter checkout.

Switching purges every imported ``aiter`` module, so later imports see the chosen package; objects taken
from the previous one stay what they were. ``load_emulation(name)`` imports the emulation under another
top-level name, beside whichever ``aiter`` is selected (the conformance tests compare the two).
"""
from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from reference.emulation import triton_interpreter
from reference.emulation.aiter_modes import MODES, SOURCE_PREFIX, AiterModeError, parse_mode  # noqa: F401 (re-exported)
from reference.emulation.module_exec import exec_as_module

# the Triton mode (interpreter where no GPU is visible, patched) before any aiter kernel is decorated
triton_interpreter.activate()

EMULATION_ROOT = Path(__file__).resolve().parent / "aiter_emu"


@dataclass(frozen=True)
class AiterInfo:
    kind: str  # "real" | "emulated" | "source"
    version: str
    path: str  # the imported aiter package's directory; for "source" the checkout
    modules: tuple = ()  # "source": the aiter modules served by the checkout's files
    differing: tuple = ()  # "source": files that are not the emulated commit's (f3be04a12a0c)

    def describe(self) -> str:
        if self.kind == "source":
            short = ", ".join(m.removeprefix("aiter.ops.triton.") for m in self.modules)
            differs = f"; files differing from the emulated commit: {', '.join(self.differing)}" if self.differing \
                else ""
            return f"aiter source {self.version} from {self.path}, modules: {short}{differs}; the rest emulated"
        return f"aiter {self.kind} ({self.version}) from {self.path}"


_current: AiterInfo | None = None
_chosen_for: dict[str, AiterInfo] = {}  # mode -> what it resolved to, so repeated calls change nothing


def current() -> AiterInfo | None:
    """What the last use_aiter chose (None before the first call)."""
    return _current


def use_aiter(mode: str = "auto") -> AiterInfo:
    """Make ``import aiter`` resolve as ``mode`` says; returns what was chosen."""
    global _current
    mode = parse_mode(mode)
    known = _chosen_for.get(mode)
    if known is not None and known == _current and _imported_kind() == known.kind:
        return known
    if mode.startswith(SOURCE_PREFIX):
        info = _import_source(Path(mode[len(SOURCE_PREFIX):]))
        _current = _chosen_for[mode] = info
        return info
    info = None
    if mode in ("auto", "real"):
        try:
            info = _import_real()
        except Exception as error:  # aiter's import probes the GPU and JIT: any failure means "not usable"
            if mode == "real":
                raise RuntimeError(
                    f"--aiter real: the aiter package cannot be imported here ({type(error).__name__}: {error}). "
                    "Install ROCm aiter on a gfx950 machine, or use --aiter emulated / auto.") from error
    if info is None:
        info = _import_emulation()
    _current = _chosen_for[mode] = info
    return info


def load_emulation(name: str = "aiter_emulated"):
    """Import the emulated package as top-level ``name`` (its imports are relative), leaving ``aiter`` alone."""
    if name in sys.modules:
        return sys.modules[name]
    module = exec_as_module(name, EMULATION_ROOT / "aiter" / "__init__.py", package_dir=EMULATION_ROOT / "aiter")
    _install_asm_model()
    return module


def _imported_kind() -> str | None:
    module = sys.modules.get("aiter")
    if module is None:
        return None
    if _is_emulation(module):
        return "source" if _is_source_overlay(module) else "emulated"
    return "real"


def _is_emulation(module) -> bool:
    return getattr(getattr(module, "_emulation", None), "IS_EMULATION", False)


def _is_source_overlay(module) -> bool:
    return getattr(getattr(module, "_emulation", None), "SOURCE_OVERLAY", None) is not None


def _purge_aiter() -> None:
    for name in [n for n in sys.modules if n == "aiter" or n.startswith("aiter.")]:
        del sys.modules[name]
    importlib.invalidate_caches()


def _without_emulation_path() -> None:
    root = str(EMULATION_ROOT)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != root]


def _import_real() -> AiterInfo:
    _without_emulation_path()
    if importlib.machinery.PathFinder.find_spec("aiter", sys.path) is None:
        raise ModuleNotFoundError("no aiter package on sys.path")  # checked first: keeps an imported emulation
    if _imported_kind() != "real":
        _purge_aiter()
    module = importlib.import_module("aiter")
    if _is_emulation(module):  # e.g. aiter_emu put on PYTHONPATH by hand
        _purge_aiter()
        raise ImportError("only the emulation is importable as aiter")
    return AiterInfo("real", _real_version(), str(Path(module.__file__).parent))


def _real_version() -> str:
    from importlib import metadata

    for distribution in ("amd-aiter", "aiter"):
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
    return "unknown version"


def _import_emulation() -> AiterInfo:
    if _imported_kind() != "emulated":
        _purge_aiter()
    _without_emulation_path()
    sys.path.insert(0, str(EMULATION_ROOT))
    module = importlib.import_module("aiter")
    _install_asm_model()
    return AiterInfo("emulated", f"emulation of aiter {module._emulation.MODELLED_COMMIT}",
                     str(Path(module.__file__).parent))


def _import_source(root: Path) -> AiterInfo:
    """A fresh emulation with the checkout's files loaded over it (a previous overlay is purged too)."""
    from reference.emulation import aiter_source

    aiter_source.check_checkout(root)  # before anything is purged: a wrong PATH leaves the current aiter
    _purge_aiter()
    _import_emulation()
    try:
        overlay = aiter_source.overlay(root)
    except BaseException:
        _purge_aiter()
        raise
    importlib.import_module("aiter")._emulation.SOURCE_OVERLAY = overlay
    return AiterInfo("source", overlay.commit, overlay.root, overlay.modules, overlay.differing)


def _install_asm_model() -> None:
    """Let interpreted kernels run the gfx950 conversion asm (no-op when Triton compiles)."""
    try:
        from reference.emulation import gfx950_asm
    except ImportError:
        return
    gfx950_asm.install()
