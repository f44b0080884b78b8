"""Where are we running? One place answers: interpreter / CUDA / HIP arch / aiter real or emulated.

Importing this module before any ``@triton.jit`` decoration matters: Triton decides at decoration
time whether a kernel is interpreted, so on a machine without a GPU we switch the interpreter on here.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass


from reference.emulation import (amd_inline_asm, amd_launch_options, nvidia_shared_memory, triton_cache_race,
                                 triton_interpreter)

# the interpreter where no GPU is visible, patched to compute what compiled Triton computes
triton_interpreter.activate()
# on NVIDIA, AMD-only launch options (waves_per_eu, ...) are dropped with a note instead of a KeyError
amd_launch_options.install()
# on NVIDIA, a launch asking more shared memory than the GPU has runs with fewer pipeline stages, noted
nvidia_shared_memory.install()
# on NVIDIA, gfx950 inline asm is refused with a clear error before LLVM's NVPTX backend exits the process
amd_inline_asm.install()
# compiled Triton: a launch that lost a race on the compile cache shared by concurrent checks runs again
triton_cache_race.install()


@dataclass(frozen=True)
class Platform:
    tier: str  # "cpu" | "nvidia" | "amd"
    interpreter: bool
    device: str  # torch device string for tensors
    arch: str  # "cpu", "sm_90", "gfx950", ...

    @property
    def is_gfx950(self) -> bool:
        return self.arch.startswith("gfx950")

    def describe(self) -> str:
        mode = "Triton interpreter" if self.interpreter else "compiled Triton"
        return f"{self.tier} tier ({self.arch}, {mode})"


@functools.lru_cache(maxsize=None)
def detect() -> Platform:
    import torch

    interpreter = os.environ.get("TRITON_INTERPRET", "0") == "1"
    if not torch.cuda.is_available():
        return Platform("cpu", True, "cpu", "cpu")
    props = torch.cuda.get_device_properties(0)
    if getattr(torch.version, "hip", None):
        arch = getattr(props, "gcnArchName", "gfx").split(":")[0]
        return Platform("amd", interpreter, "cuda", arch)
    return Platform("nvidia", interpreter, "cuda", f"sm_{props.major}{props.minor}")


def aiter_kind() -> str:
    """"real", "emulated" (our reference model under reference/emulation) or "missing"."""
    try:
        import aiter
    except ImportError:
        return "missing"
    return "emulated" if "reference/emulation" in (getattr(aiter, "__file__", "") or "").replace("\\", "/") else "real"
