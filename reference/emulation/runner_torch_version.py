"""``torch.version`` as the file's own code reads it: the runner's torch (2.10.0+rocm7.1), not this machine's.

Real files choose their path by it: ``if torch.version.hip is None: return False`` before building their
HIP with ``load_inline``, else a fallback (aiter, Triton). On the runner ``torch.version.hip`` is ROCm
7.1's HIP version and ``torch.version.cuda`` is None; on a CPU-only or CUDA torch it is the reverse, and
such a file ran its fallback here, code the runner never runs, with nothing in the report to say so.

``install(path)`` makes those two names answer as the runner's torch to the file's code (the file, or a
module beside it: submission_frames.py) and as before to everything else: torch itself, Triton,
``torch.utils.cpp_extension`` and our stand-ins decide how to build by them. The file then takes the
runner's path: its HIP builds on the CPU model or is NOT RUN by no_rocm, as a HIP build here always is.
Each read is recorded (``take_reads``) for the report.

Not modelled: ``torch.__version__`` (a ``+rocm7.1`` suffix) and the build-time constants of
``torch.utils.cpp_extension`` (``IS_HIP_EXTENSION``): no real file seen reads them to pick a path.
"""
from __future__ import annotations

import os
import sys
import types

from reference.emulation import submission_frames

# ROCm 7.1's HIP (hipcc --version: "HIP version: 7.1.25421-..."), without the build hash: the form torch's
# ROCm wheels report since the hash was dropped (pytorch#168097). Files test it for None or compare the
# major and minor; the build number past them is not pinned by the runner's public image.
RUNNER_VALUES = {"hip": "7.1.25421", "cuda": None}

_state = {"path": None, "reads": {}}


def _answered(name: str):
    def read(module):
        real = module.__dict__.get(name)
        site = submission_frames.site(sys._getframe(1), _state["path"])
        if site is None or real == RUNNER_VALUES[name]:
            return real
        _state["reads"].setdefault(f"torch.version.{name} at {site}", (real, RUNNER_VALUES[name]))
        return RUNNER_VALUES[name]

    def write(module, value):
        module.__dict__[name] = value

    return property(read, write)


class RunnerTorchVersion(types.ModuleType):
    """torch.version's class while installed: ``hip`` and ``cuda`` answer per reader."""

    hip = _answered("hip")
    cuda = _answered("cuda")


def install(path: str) -> bool:
    """Answer the file at ``path`` as the runner's torch does; nothing where torch is a ROCm build (the
    values are the machine's own). Idempotent; returns whether the view is on."""
    import torch

    version = sys.modules.get("torch.version") or torch.version
    if version.__dict__.get("hip"):
        return False
    _state["path"] = os.path.abspath(path)
    version.__class__ = RunnerTorchVersion
    return True


def uninstall() -> None:
    version = sys.modules.get("torch.version")
    if version is not None and isinstance(version, RunnerTorchVersion):
        version.__class__ = types.ModuleType
    _state["path"] = None
    _state["reads"].clear()


def installed() -> bool:
    version = sys.modules.get("torch.version")
    return isinstance(version, RunnerTorchVersion)


def take_reads() -> dict:
    """{"torch.version.hip at line N": (this machine's value, the runner's)} since the last take."""
    reads = dict(_state["reads"])
    _state["reads"].clear()
    return reads
