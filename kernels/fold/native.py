"""Build, cache and call the native fold (``fold_kernel.cu``) through ctypes.

One source, three toolchains, picked by the tensors' device and ``kernels.platform``:
  * ``cpu``:  ``g++ -x c++`` on the CPU model of HIP (``reference/emulation/hip_cpu/include``, the one
    submissions' HIP runs on: blocks in turn, threads as fibers, checked accesses with fault codes),
  * ``cuda``: ``nvcc -arch=sm_XX``,
  * ``hip``:  ``hipcc --offload-arch=gfx950`` (or whatever arch the device reports).
No torch headers are involved, so a cold CPU build takes about a second (``load_inline`` takes a minute).

Shared objects are cached under ``$MXFP4_FUZZ_CACHE/fold`` (default ``~/.cache/mxfp4-fuzz/fold``) by a
hash of the sources, the command line and the compiler's version text; a build writes to a temporary
file and ``os.replace``-s it into place, so concurrent builders never see a half-written library.
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import torch

# The CPU model of the HIP runtime's headers (include/): a platform layer, like the Triton interpreter, not an
# oracle; found through the package, so a bundled copy of kernels/ finds it as kernels.platform finds the rest.
from reference.emulation.hip_cpu.build import INCLUDE as HIP_CPU_INCLUDE

_HERE = Path(__file__).resolve().parent
SOURCE = _HERE / "fold_kernel.cu"

PATH_AUTO, PATH_VECTOR, PATH_SCALAR = 0, 1, 2
PATHS = {"auto": PATH_AUTO, "vector": PATH_VECTOR, "scalar": PATH_SCALAR}
PATH_NAMES = {PATH_VECTOR: "vector", PATH_SCALAR: "scalar"}
# The fold's access counters, and where each sits in the model's hip_cpu_access_counts (loads of 1, 2, 4,
# 8, 16, other bytes, then stores of the same widths; hip_cpu_memcheck.h). "other" is every other slot.
COUNTER_NAMES = ("load16", "load4", "store8", "store2", "other")
_COUNTER_SLOTS = {"load16": 4, "load4": 2, "store8": 6 + 3, "store2": 6 + 1}
_MODEL_COUNTS = 12

# Number of compiler runs in this process; tests read it to prove a cached build is reused.
build_count = 0

_lock = threading.Lock()
_loaded: dict[tuple[str, str], "NativeFold"] = {}


class BuildError(RuntimeError):
    """The compiler is missing or rejected the source."""


class FoldFault(RuntimeError):
    """The fold kernel failed at run time (on CPU: a misaligned or out-of-bounds access the model checked)."""

    def __init__(self, code: int, message: str):
        super().__init__(f"fold kernel fault (code {code}): {message}")
        self.code = code


def cache_dir() -> Path:
    root = os.environ.get("MXFP4_FUZZ_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mxfp4-fuzz")
    return Path(root) / "fold"


@dataclass(frozen=True)
class Toolchain:
    kind: str  # "cpu" | "cuda" | "hip"
    arch: str  # "cpu", "sm_90", "gfx950", ...
    compiler: str | None  # absolute path, None when not found

    def flags(self) -> list[str]:
        # No fast-math anywhere: the fold must add in IEEE fp32, in order, keeping denormals.
        if self.kind == "cpu":
            return ["-O2", "-std=c++17", "-shared", "-fPIC", "-ffp-contract=off", "-I", str(HIP_CPU_INCLUDE), "-x", "c++"]
        if self.kind == "cuda":
            return ["-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", f"-arch={self.arch}"]
        return ["-O3", "-std=c++17", "-shared", "-fPIC", f"--offload-arch={self.arch}", "-x", "hip"]

    def command(self, output: str | os.PathLike) -> list[str]:
        if self.compiler is None:
            raise BuildError(self.missing_reason())
        return [self.compiler, *self.flags(), str(SOURCE), "-o", str(output)]

    def missing_reason(self) -> str:
        name = {"cpu": "g++ (or $CXX)", "cuda": "nvcc", "hip": "hipcc"}[self.kind]
        return f"{name} not found on PATH; the native {self.kind} fold cannot be built"


def _find(names: list[str], extra_dirs: list[str]) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    for d in extra_dirs:
        for name in names:
            candidate = Path(d) / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def toolchain_for(kind: str, arch: str | None = None) -> Toolchain:
    """The compiler for ``kind``; ``arch`` defaults to the current GPU's (kernels.platform)."""
    if kind == "cpu":
        cxx = os.environ.get("CXX")
        return Toolchain("cpu", "cpu", _find([cxx] if cxx else ["g++"], []))
    if arch is None:
        from kernels import platform

        arch = platform.detect().arch
    if kind == "cuda":
        cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
        return Toolchain("cuda", arch, _find(["nvcc"], [os.path.join(cuda_home, "bin")]))
    if kind == "hip":
        rocm = os.environ.get("ROCM_PATH") or os.environ.get("ROCM_HOME") or "/opt/rocm"
        return Toolchain("hip", arch, _find(["hipcc"], [os.path.join(rocm, "bin")]))
    raise ValueError(f"unknown native kind {kind!r}; expected 'cpu', 'cuda' or 'hip'")


def kind_for_device(device: torch.device) -> str:
    if device.type == "cpu":
        return "cpu"
    if device.type == "cuda":
        return "hip" if getattr(torch.version, "hip", None) else "cuda"
    raise ValueError(f"no native fold for device type {device.type!r}")


_version_cache: dict[str, str] = {}


def _compiler_version(compiler: str) -> str:
    if compiler not in _version_cache:
        try:
            res = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60)
            _version_cache[compiler] = res.stdout + res.stderr
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BuildError(f"cannot run {compiler} --version: {exc}") from exc
    return _version_cache[compiler]


def library_path(tc: Toolchain) -> Path:
    """Where the build for ``tc`` is cached: keyed by sources, command line and compiler version."""
    h = hashlib.sha256()
    for part in (SOURCE.read_bytes(), *(p.read_bytes() for p in sorted(HIP_CPU_INCLUDE.glob("*.h")))):
        h.update(part)
        h.update(b"\0")
    h.update("\0".join([tc.kind, tc.arch, *tc.flags()]).encode())
    h.update(_compiler_version(tc.compiler or "").encode())
    return cache_dir() / f"{tc.kind}-{tc.arch}-{h.hexdigest()[:20]}.so"


def build(tc: Toolchain) -> Path:
    """Compile ``fold_kernel.cu`` for ``tc`` unless the cached library already exists."""
    global build_count
    if tc.compiler is None:
        raise BuildError(tc.missing_reason())
    target = library_path(tc)
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.stem + ".", suffix=".tmp.so", dir=target.parent)
    os.close(fd)
    try:
        cmd = tc.command(tmp)
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        build_count += 1
        if res.returncode != 0:
            raise BuildError(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stderr[-4000:]}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


class NativeFold:
    """A loaded fold library. ``launch`` takes raw tensors; validation lives in ``kernels.fold``."""

    def __init__(self, tc: Toolchain, path: Path):
        self.toolchain = tc
        self.path = path
        lib = ctypes.CDLL(str(path))
        vp, ll, i = ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int
        lib.fold_launch.argtypes = [vp, vp, ll, ll, i, i, i, vp]
        lib.fold_launch.restype = i
        lib.fold_pick_path.argtypes = [vp, vp, ll, i]
        lib.fold_pick_path.restype = i
        lib.fold_last_error.argtypes = []
        lib.fold_last_error.restype = ctypes.c_char_p
        if tc.kind == "cpu":
            lib.hip_cpu_clear_regions.argtypes = []
            lib.hip_cpu_add_region.argtypes = [vp, ll, i]
            lib.hip_cpu_access_counts.argtypes = [ctypes.POINTER(ll)]
        self.lib = lib

    def pick_path(self, partials: torch.Tensor, out: torch.Tensor) -> str:
        """The path ``path="auto"`` takes for these tensors: "vector" or "scalar"."""
        code = self.lib.fold_pick_path(partials.data_ptr(), out.data_ptr(), partials.stride(0), partials.shape[0])
        return PATH_NAMES[code]

    def launch(self, partials: torch.Tensor, out: torch.Tensor, path: str = "auto", max_blocks: int = 0) -> None:
        """Fold ``partials`` [S, M, N] (each slice contiguous) into ``out`` [M, N] bf16 (contiguous).

        ``path="vector"`` skips the alignment check; on the CPU build a misaligned buffer then raises
        FoldFault from the CPU model's access check. On a GPU it is refused instead, since it would fault for real.
        """
        if path not in PATHS:
            raise ValueError(f"path must be one of {tuple(PATHS)}, got {path!r}")
        S, M, N = partials.shape
        n, slice_stride = M * N, partials.stride(0)
        if path == "vector" and self.toolchain.kind != "cpu" and self.pick_path(partials, out) != "vector":
            raise ValueError("path='vector' on misaligned buffers would fault on the GPU; use path='auto'")
        if self.toolchain.kind == "cpu":
            # Exactly the bytes the fold may touch: any other access is a fault of the model.
            self.lib.hip_cpu_clear_regions()
            self.lib.hip_cpu_add_region(partials.data_ptr(), ((S - 1) * slice_stride + n) * 4, 0)
            self.lib.hip_cpu_add_region(out.data_ptr(), n * 2, 1)
            stream = None
        else:
            stream = torch.cuda.current_stream(out.device).cuda_stream
        with torch.cuda.device(out.device) if out.device.type == "cuda" else contextlib.nullcontext():
            code = self.lib.fold_launch(
                partials.data_ptr(), out.data_ptr(), n, slice_stride, S, PATHS[path], max_blocks, stream
            )
        if code != 0:
            raise FoldFault(code, self.lib.fold_last_error().decode(errors="replace"))

    def counters(self) -> dict[str, int]:
        """CPU build only: the last launch's checked accesses by width (hip_cpu_memcheck.h)."""
        buf = (ctypes.c_longlong * _MODEL_COUNTS)()
        self.lib.hip_cpu_access_counts(buf)
        counts = {name: buf[slot] for name, slot in _COUNTER_SLOTS.items()}
        counts["other"] = sum(buf) - sum(counts.values())
        return counts


def load(kind: str, arch: str | None = None) -> NativeFold:
    """Build (if needed) and load the native fold for ``kind``; one handle per (kind, arch) per process."""
    tc = toolchain_for(kind, arch)
    with _lock:
        key = (tc.kind, tc.arch)
        if key not in _loaded:
            _loaded[key] = NativeFold(tc, build(tc))
        return _loaded[key]


def forget_loaded() -> None:
    """Drop this process's handles so the next ``load`` goes through the on-disk cache again."""
    with _lock:
        _loaded.clear()
