"""The B side of a large case, built once and shared: every check builds each case twice (the worker for
the call, the parent for the exact product), and every file checked on a machine builds the same official
cases. For N x K = 2112 x 7168, quantizing and shuffling B takes about 2 s on the 2-core CPU, against 0.05 s
to load it back.

What is cached: ``(B, B_q, B_shuffle, B_scale_sh)`` of a case with N * K >= ``MIN_ELEMENTS`` built on the CPU
(a GPU builds them in milliseconds; copying them back and writing them would cost more),
keyed by the case's content id and a fingerprint of the code that computes those bytes (the value
streams, the strategies and the reference's quantizer and shuffles): an edit to any of them starts a new
cache. Two levels: this process's memory (up to ``MEMORY_BYTES``) and a folder shared by the processes of
a machine (``$TMPDIR/mxfp4-fuzz-inputs``, kept under ``DISK_BYTES`` by dropping the oldest files; written
to a temporary name and renamed, so a reader never sees half a file). Callers get copies: nothing they
do reaches the cache.

``MXFP4_FUZZ_INPUT_CACHE=0`` turns it off; any other value names the folder.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from collections import OrderedDict
from pathlib import Path

import torch

MIN_ELEMENTS = 1 << 20
MEMORY_BYTES = 320 << 20
DISK_BYTES = 1 << 30
ENV = "MXFP4_FUZZ_INPUT_CACHE"
_ROOT = Path(__file__).resolve().parents[2]
# the code that decides the bytes of B, B_q, B_shuffle and B_scale_sh
_SOURCES = ("fuzz/search/strategies.py", "fuzz/search/value_streams.py", "reference/oracle/inputs.py", "reference/oracle/quant.py",
            "reference/oracle/e2m1.py", "reference/oracle/e8m0.py", "reference/oracle/layouts.py", "reference/__init__.py")

_memory: OrderedDict = OrderedDict()
_state: dict = {"fingerprint": None}


def fingerprint() -> str:
    if _state["fingerprint"] is None:
        digest = hashlib.sha256(torch.__version__.encode())
        for name in _SOURCES:
            path = _ROOT / name
            digest.update(name.encode() + (path.read_bytes() if path.exists() else b"<absent>"))
        _state["fingerprint"] = digest.hexdigest()[:16]
    return _state["fingerprint"]


def folder() -> Path | None:
    setting = os.environ.get(ENV)
    if setting == "0":
        return None
    base = Path(setting) if setting else Path(tempfile.gettempdir()) / "mxfp4-fuzz-inputs"
    return base / fingerprint()


def wanted(n: int, k: int) -> bool:
    return n * k >= MIN_ELEMENTS and os.environ.get(ENV) != "0"


def _pack(tensors: tuple) -> dict:
    """Tensors as uint8/bf16 storage plus dtype names: torch.save need not know the fp4/e8m0 dtypes."""
    packed = {}
    for i, t in enumerate(tensors):
        if t is None:
            continue
        t = t.detach().to("cpu").contiguous()
        packed[f"t{i}"] = t if t.dtype == torch.bfloat16 else t.view(torch.uint8)
        packed[f"dtype{i}"] = str(t.dtype).removeprefix("torch.")
    packed["count"] = len(tensors)
    return packed


def _unpack(packed: dict) -> tuple:
    out = []
    for i in range(packed["count"]):
        t = packed.get(f"t{i}")
        out.append(None if t is None else t.view(getattr(torch, packed[f"dtype{i}"])))
    return tuple(out)


def _nbytes(tensors: tuple) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


def _remember(key: str, tensors: tuple) -> None:
    _memory[key] = tensors
    _memory.move_to_end(key)
    while len(_memory) > 1 and sum(_nbytes(v) for v in _memory.values()) > MEMORY_BYTES:
        _memory.popitem(last=False)


def _copies(tensors: tuple, device) -> tuple:
    return tuple(None if t is None else t.to(device, copy=True) for t in tensors)


def load(case_id: str, device) -> tuple | None:
    """Copies of the cached B side on ``device``, or None."""
    if case_id in _memory:
        _memory.move_to_end(case_id)
        return _copies(_memory[case_id], device)
    where = folder()
    if where is None:
        return None
    path = where / f"{case_id}.pt"
    try:
        tensors = _unpack(torch.load(path, weights_only=True))
    except Exception:  # not cached yet, or unreadable (another torch, a crashed writer): rebuild; the store replaces it
        return None
    _remember(case_id, tensors)
    return _copies(tensors, device)


def store(case_id: str, tensors: tuple) -> None:
    """Keep the B side (CPU copies) in memory and on disk; a full or read-only disk only loses the sharing."""
    cpu = _copies(tensors, "cpu")
    _remember(case_id, cpu)
    where = folder()
    if where is None:
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=where, suffix=".part")
        with os.fdopen(handle, "wb") as out:
            torch.save(_pack(cpu), out)
        os.replace(temporary, where / f"{case_id}.pt")
        _trim(where.parent)
    except OSError:
        return


def _trim(base: Path) -> None:
    """Drop the oldest cached files (every code version) until the folder is under DISK_BYTES."""
    files = []
    for path in base.glob("*/*.pt"):
        try:
            stat = path.stat()
        except OSError:
            continue
        files.append((stat.st_mtime, stat.st_size, path))
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files):
        if total <= DISK_BYTES:
            break
        try:
            path.unlink()
            total -= size
        except OSError:
            pass


def clear_memory() -> None:
    _memory.clear()
