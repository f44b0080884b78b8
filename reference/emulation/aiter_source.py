"""aiter's own Python and Triton code from a checkout, run in place of the emulated modules (``--aiter source=PATH``).

The emulated package stays the package: ``import aiter`` needs no HIP runtime and no C++ JIT. Over it,
``overlay(root)`` loads aiter's own files from the checkout at ``root`` (the runner's commit is
f3be04a12a0c; these files are byte-identical at bd02afb526) under their aiter names, in ``SOURCE_MODULES``
order, so that each file's ``aiter.*`` imports are served by the files loaded before it or by the emulation:

- from the checkout: the Triton kernels submissions launch (``_triton_kernels/quant/quant.py``,
  ``_triton_kernels/gemm/basic/gemm_a16wfp4.py`` and ``gemm_afp4wfp4.py``, with ``pid_preprocessing`` and
  ``kernel_repr``), the public wrappers around them (``ops/triton/quant/quant.py``,
  ``ops/triton/gemm/basic/gemm_a16wfp4.py`` and ``gemm_afp4wfp4.py``), and what those wrappers run in
  Python (``gemm_config_utils`` reading aiter's own JSON configs, ``common_utils``, ``logger``);
- stubbed (aiter's compiled/JIT layer): ``aiter.jit.utils.torch_guard.torch_compile_guard`` calls the
  function directly (aiter registers it as a torch custom op, which only matters to torch.compile), and
  ``aiter.utility.triton.triton_metadata_redirect.AOTMetadataContext`` raises (it loads precompiled
  ``.hsaco`` files; aiter's ``configs/gemm/aot`` folder is not copied, so the wrappers never ask for it);
- still emulated: the package ``__init__``s, ``gemm_a4w4``/``gemm_a4w4_asm`` (the ASM GEMM is closed: no
  Python source computes it), ``utility.fp4_utils`` (its ``torch.empty`` padding is uninitialised memory,
  which the emulation fills with a fixed byte), ``utility.dtypes``, ``ops.shuffle``, ``ops.enum``,
  ``ops.quant``, ``utils._triton.arch_info`` (the device: gfx950) and ``utils.core`` (the configs folder:
  the emulation's per-process folder, into which aiter's ``configs/gemm/*.json`` are copied).

Names the emulated modules re-export from a replaced module (``aiter.ops.triton.quant.dynamic_mxfp4_quant``,
the old flat ``aiter.ops.triton.gemm_a16wfp4``) are rebound to aiter's. Python ``not`` on a tensor, the
one construct the interpreter computes differently from compiled Triton in these files, is made
elementwise by ``triton_interpreter.activate()`` (select.py runs it before any kernel is decorated).
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

from reference.emulation.module_exec import exec_as_module

MODELLED_COMMIT = "f3be04a12a0c"  # the runner's aiter (gpu-mode/kernelbot docker/amd-docker.Dockerfile)

# aiter name -> file in the checkout, in load order; with each file's git blob at f3be04a12a0c (the same
# blobs as at bd02afb526), so that a
# checkout without .git (a tarball, `git archive`) is still recognised
SOURCE_MODULES = {
    "aiter.ops.triton.utils.logger": ("aiter/ops/triton/utils/logger.py", "391ddf9b6543"),
    "aiter.ops.triton.utils.common_utils": ("aiter/ops/triton/utils/common_utils.py", "4729ccfdb374"),
    "aiter.ops.triton.utils.gemm_config_utils": ("aiter/ops/triton/utils/gemm_config_utils.py", "1b38d0961408"),
    "aiter.ops.triton.utils._triton.kernel_repr": ("aiter/ops/triton/utils/_triton/kernel_repr.py", "71f66eec93c7"),
    "aiter.ops.triton.utils._triton.pid_preprocessing": (
        "aiter/ops/triton/utils/_triton/pid_preprocessing.py", "99792bb3ba2f"),
    "aiter.ops.triton._triton_kernels.quant.quant": ("aiter/ops/triton/_triton_kernels/quant/quant.py", "3b88c8b2b211"),
    "aiter.ops.triton._triton_kernels.gemm.basic.gemm_afp4wfp4": (
        "aiter/ops/triton/_triton_kernels/gemm/basic/gemm_afp4wfp4.py", "0cf830d56525"),
    "aiter.ops.triton._triton_kernels.gemm.basic.gemm_a16wfp4": (
        "aiter/ops/triton/_triton_kernels/gemm/basic/gemm_a16wfp4.py", "30f81e5f03cf"),
    "aiter.ops.triton.quant.quant": ("aiter/ops/triton/quant/quant.py", "0883d78df0cb"),
    "aiter.ops.triton.gemm.basic.gemm_afp4wfp4": ("aiter/ops/triton/gemm/basic/gemm_afp4wfp4.py", "a4ea586bfe03"),
    "aiter.ops.triton.gemm.basic.gemm_a16wfp4": ("aiter/ops/triton/gemm/basic/gemm_a16wfp4.py", "df8280043edb"),
}
CONFIGS = "aiter/ops/triton/configs/gemm"


class NotAnAiterCheckout(RuntimeError):
    """``--aiter source=PATH`` where PATH lacks the files this mode runs."""


@dataclass(frozen=True)
class Overlay:
    root: str
    commit: str  # "f3be04a12a0c", git's HEAD, or "unknown commit"
    modules: tuple  # the aiter names now served by the checkout's files
    differing: tuple  # files whose content is not f3be04a12a0c's


def check_checkout(root: Path) -> None:
    """Raise NotAnAiterCheckout naming the first missing file, with a hint when PATH is the package folder."""
    missing = [relative for relative, _ in SOURCE_MODULES.values() if not (root / relative).is_file()]
    if not (root / CONFIGS).is_dir():
        missing.append(CONFIGS + "/")
    if not missing:
        return
    hint = ""
    if (root / "ops" / "triton").is_dir() and (root / "__init__.py").is_file():
        hint = f" ({root} looks like the aiter package itself: give the folder above it)"
    raise NotAnAiterCheckout(
        f"not an aiter checkout: {root / missing[0]} is missing{hint}. "
        f"Expected the root of a ROCm/aiter clone with the competition-era layout, e.g. "
        f"`git -C aiter checkout {MODELLED_COMMIT}` or `git archive {MODELLED_COMMIT} aiter | tar -x -C PATH`.")


def overlay(root: Path) -> Overlay:
    """Load the checkout's files over the imported emulation (``import aiter`` must give the emulation)."""
    root = Path(root).resolve()
    check_checkout(root)
    _install_stubs()
    _copy_configs(root)
    replaced = {}
    for name, (relative, _) in SOURCE_MODULES.items():
        parent, _, leaf = name.rpartition(".")
        package = importlib.import_module(parent)  # the emulation's package (its __init__ stays)
        replaced[name] = sys.modules.get(name)
        setattr(package, leaf, exec_as_module(name, root / relative))
    _rebind_reexports(replaced)
    differing = tuple(relative for relative, blob in SOURCE_MODULES.values()
                      if _git_blob(root / relative)[:len(blob)] != blob)
    return Overlay(str(root), _commit(root, differing), tuple(SOURCE_MODULES), differing)


def _install_stubs() -> None:
    """aiter's compiled/JIT layer, as far as the loaded files import it."""
    def torch_compile_guard(mutates_args="unknown", device="cpu", calling_func_=None, gen_fake=None):
        return lambda func: func  # aiter's wrapper also just calls func; the custom-op registration is not modelled

    class AOTMetadataContext:
        def __init__(self, *args, **kwargs):
            raise NotImplementedError("aiter's AOT kernels (precompiled .hsaco) are not run by --aiter source=PATH")

    for name, attributes in {
        "aiter.jit": {}, "aiter.jit.utils": {},
        "aiter.jit.utils.torch_guard": {"torch_compile_guard": torch_compile_guard},
        "aiter.utility.triton": {},
        "aiter.utility.triton.triton_metadata_redirect": {"AOTMetadataContext": AOTMetadataContext},
    }.items():
        module = types.ModuleType(name, "stub of aiter's compiled layer (reference/emulation/aiter_source.py)")
        module.__dict__.update(attributes)
        if not attributes:
            module.__path__ = []  # a package: its stubbed children resolve through sys.modules
        sys.modules[name] = module
        parent, _, leaf = name.rpartition(".")
        setattr(sys.modules[parent], leaf, module)


def _copy_configs(root: Path) -> None:
    """aiter's JSON configs into the emulation's per-process folder, replacing the emulation's tables."""
    from aiter.ops.triton.utils.core import AITER_TRITON_CONFIGS_PATH

    target = Path(AITER_TRITON_CONFIGS_PATH) / "gemm"
    target.mkdir(parents=True, exist_ok=True)
    for path in (root / CONFIGS).glob("*.json"):
        shutil.copyfile(path, target / path.name)


def _rebind_reexports(replaced: dict) -> None:
    """Where another module holds a function, class or kernel of a replaced emulated module under the same
    name (``from .quant import dynamic_mxfp4_quant``), or the module itself, give it aiter's."""
    swaps = {}  # id(old object) -> (its name, aiter's object of that name)
    for name, old in replaced.items():
        if old is None:
            continue
        new = sys.modules[name]
        swaps[id(old)] = (None, new)
        for attr, value in vars(old).items():
            if _defined_in(value) == name and hasattr(new, attr):
                swaps[id(value)] = (attr, getattr(new, attr))
    for module_name, module in list(sys.modules.items()):
        if module_name in replaced or not (module_name == "aiter" or module_name.startswith("aiter.")):
            continue
        for attr, value in list(vars(module).items()):
            name, new_value = swaps.get(id(value), ("", None))
            if name is None or name == attr:
                setattr(module, attr, new_value)


def _defined_in(value) -> str | None:
    """The module a function, class or (heuristics-wrapped) Triton kernel was written in."""
    for _ in range(4):  # Heuristics -> JITFunction/InterpretedFunction -> the Python function
        if not hasattr(value, "fn"):
            break
        value = value.fn
    return getattr(value, "__module__", None)


def _git_blob(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _commit(root: Path, differing: tuple) -> str:
    """git's HEAD where ``root`` is a clone, else f3be04a12a0c when every loaded file is f3be04a12a0c's."""
    if (root / ".git").exists():
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=10", "HEAD"], capture_output=True,
                                  text=True, timeout=10)
            if head.returncode == 0 and head.stdout.strip():
                return head.stdout.strip()
    return MODELLED_COMMIT if not differing else "unknown commit"
