"""Split-K reducer ("HIP fold"): bf16 Y[M, N] = RNE(sum over s of fp32 partials P[s]), adds in order s = 0..S-1.

Semantics, shared bit for bit by every backend:
  * acc = P[0]; acc += P[1]; ...; acc += P[S-1] in IEEE fp32 (no fast-math, denormals kept; S = 1 copies P[0],
    so -0.0 stays -0.0),
  * round to nearest even to bf16; overflow past the bf16 max rounds to +-Inf, Inf stays Inf,
  * every NaN becomes the canonical quiet bf16 NaN 0x7FC0, so results do not depend on how the hardware
    propagates fp32 NaN payloads (torch's own ``.to(torch.bfloat16)`` gives NaN too, but e.g. 0xFFFF).

Backends:
  * "native": ``fold_kernel.cu`` built with g++ for CPU tensors (grid emulated, every access checked),
    nvcc on CUDA, hipcc on ROCm; see ``kernels.fold.native``.
  * "triton": ``kernels.fold.triton_fold`` (interpreter on CPU, compiled on GPU).
  * "auto": native when it builds, else triton.

Alignment: the native vector path needs a 16-byte aligned partials base, a slice stride that is a multiple
of 4 floats (when S > 1) and an 8-byte aligned output. ``fold_partials`` never fails on alignment: buffers
that do not qualify (e.g. a view at an odd storage offset, or M*N % 4 != 0 with S > 1 and no slice
padding) go through the scalar kernel, with identical results. Forcing the vector path on such buffers
is only possible through ``native.NativeFold.launch(path="vector")``, where the CPU model of HIP
reports it as a FoldFault.
"""
from __future__ import annotations

import torch

from kernels import platform
from kernels.fold import native

__all__ = ["fold_partials", "native_available", "resolve_backend", "FoldFault"]

FoldFault = native.FoldFault
BACKENDS = ("auto", "native", "triton")

_native_status: dict[str, tuple[bool, str]] = {}


def native_available(device: torch.device | str | None = None) -> tuple[bool, str]:
    """Whether the native fold builds and loads for ``device`` (default: this machine's device), and why."""
    dev = torch.device(device if device is not None else platform.detect().device)
    try:
        kind = native.kind_for_device(dev)
    except ValueError as exc:
        return False, str(exc)
    if kind not in _native_status:
        try:
            lib = native.load(kind)
            _native_status[kind] = (True, f"{kind} build ({lib.toolchain.compiler}) at {lib.path}")
        except (native.BuildError, OSError) as exc:
            _native_status[kind] = (False, str(exc))
    return _native_status[kind]


def resolve_backend(backend: str, device: torch.device | str) -> str:
    """The backend ("native" or "triton") that ``fold_partials`` uses for tensors on ``device``."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend != "auto":
        return backend
    return "native" if native_available(device)[0] else "triton"


def _validate(partials: torch.Tensor, out: torch.Tensor | None) -> torch.Tensor:
    if not isinstance(partials, torch.Tensor):
        raise TypeError(f"partials must be a torch.Tensor, got {type(partials).__name__}")
    if partials.dtype != torch.float32:
        raise TypeError(f"partials must be float32, got {partials.dtype}")
    if partials.dim() != 3:
        raise ValueError(f"partials must be 3-D [S, M, N], got shape {tuple(partials.shape)}")
    S, M, N = partials.shape
    if S < 1:
        raise ValueError("partials must have at least one split (S >= 1)")
    s0, s1, s2 = partials.stride()
    if not ((N <= 1 or s2 == 1) and (M <= 1 or s1 == N) and (S == 1 or s0 >= M * N)):
        raise ValueError(
            "each partials[s] must be a contiguous [M, N] block with partials.stride(0) >= M*N, "
            f"got strides {partials.stride()} for shape {tuple(partials.shape)}"
        )
    if out is None:
        return torch.empty((M, N), dtype=torch.bfloat16, device=partials.device)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"out must be a torch.Tensor or None, got {type(out).__name__}")
    if out.dtype != torch.bfloat16:
        raise TypeError(f"out must be bfloat16, got {out.dtype}")
    if tuple(out.shape) != (M, N):
        raise ValueError(f"out must have shape {(M, N)}, got {tuple(out.shape)}")
    if not out.is_contiguous():
        raise ValueError("out must be contiguous")
    if out.device != partials.device:
        raise ValueError(f"out is on {out.device} but partials are on {partials.device}")
    p_lo = partials.data_ptr()
    p_hi = p_lo + ((S - 1) * s0 + M * N) * 4
    o_lo = out.data_ptr()
    if M * N and p_lo < o_lo + 2 * M * N and o_lo < p_hi:
        raise ValueError("out overlaps partials")
    return out


def fold_partials(
    partials: torch.Tensor, out: torch.Tensor | None = None, backend: str = "auto"
) -> torch.Tensor:
    """bf16 [M, N] = RNE(sum_s partials[s]) (fp32, in order); writes into ``out`` when given and returns it."""
    out = _validate(partials, out)
    chosen = resolve_backend(backend, partials.device)
    if chosen == "native":
        ok, reason = native_available(partials.device)
        if not ok:
            raise RuntimeError(f"native fold unavailable: {reason}")
        native.load(native.kind_for_device(partials.device)).launch(partials, out)
        return out
    if partials.device.type == "cpu" and not platform.detect().interpreter:
        raise ValueError("the triton fold needs GPU tensors unless TRITON_INTERPRET=1 (set by kernels.platform)")
    from kernels.fold.triton_fold import triton_fold

    triton_fold(partials, out)
    return out

