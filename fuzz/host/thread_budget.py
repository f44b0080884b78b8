"""One host, many checks: every mxfp4-fuzz process sizes its thread pools from the cores and the checks
already running, so independent ``mxfp4-fuzz check`` and ``pytest fuzz`` processes never oversubscribe
the machine (measured on a 16-core H200 host: three unthrottled checks each took all 16 threads and ran
about 10x slower than one alone).

The mechanism is a registry under the temp dir: a check (the pytest process of ``mxfp4-fuzz check`` or
of ``pytest fuzz``, each xdist worker) writes ``<pid>.json`` there while it lives. Its budget is
``cores // live checks`` (at least 1), where a check whose pid is gone no longer counts (its file is
removed by whoever sees it first). The processes a check starts (the submission's worker, mutant runs)
do not register; they take the same share. Budgets are re-read at each verdict (the parent) and each
program (the worker), so the checks running together converge on equal shares within one verdict of a
new check starting or an old one ending.

What a budget sets: torch's intra-op pool (``torch.set_num_threads``), the OpenMP/BLAS variables that
children inherit, and, where ``threadpoolctl`` is installed, the BLAS pools numpy has already started
(the interpreter's ``tl.dot`` runs numpy matmuls). Overrides: ``OMP_NUM_THREADS`` set by the user (not
by us) fixes the budget and the registry only counts the process; ``MXFP4_FUZZ_CORES`` says how many
cores the host gives these checks; ``MXFP4_FUZZ_THREAD_REGISTRY`` moves the registry.
"""
from __future__ import annotations

import atexit
import json
import os
import sys
import tempfile
import time
from pathlib import Path

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
MARK_VAR = "MXFP4_FUZZ_THREADS_SET"  # the value we last wrote into THREAD_VARS: equal means ours
CORES_VAR = "MXFP4_FUZZ_CORES"
REGISTRY_VAR = "MXFP4_FUZZ_THREAD_REGISTRY"


def registry_dir(environ=os.environ) -> Path:
    return Path(environ.get(REGISTRY_VAR) or Path(tempfile.gettempdir()) / "mxfp4-fuzz-checks")


def host_cores(environ=os.environ) -> int:
    """The cores these checks may use: $MXFP4_FUZZ_CORES, else this process's CPU affinity."""
    if environ.get(CORES_VAR, "").strip():
        value = int(environ[CORES_VAR])
        if value < 1:
            raise ValueError(f"{CORES_VAR} must be >= 1, got {value}")
        return value
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def user_threads(environ=os.environ) -> int | None:
    """OMP_NUM_THREADS as the user set it (None when unset, or when it is the value we wrote)."""
    value = environ.get("OMP_NUM_THREADS", "").strip()
    if not value or value == environ.get(MARK_VAR):
        return None
    try:
        return max(1, int(value))
    except ValueError:
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def live_checks(directory: Path | None = None) -> list[dict]:
    """The registered checks whose processes still run; the files of dead ones are removed."""
    directory = directory or registry_dir()
    live = []
    try:
        entries = list(directory.glob("*.json"))
    except OSError:
        return live
    for entry in entries:
        try:
            record = json.loads(entry.read_text())
            pid = int(record["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            # unreadable: a file being written right now (kept), or garbage left by a crash (old: removed)
            try:
                if time.time() - entry.stat().st_mtime > 60:
                    entry.unlink()
            except OSError:
                pass
            continue
        if _alive(pid):
            live.append(record)
        else:
            try:
                entry.unlink()
            except OSError:
                pass
    return live


def share(cores: int, checks: int) -> int:
    return max(1, cores // max(1, checks))


def budget(environ=os.environ, directory: Path | None = None) -> int:
    """This process's thread budget now: the user's OMP_NUM_THREADS, else an equal share of the cores
    among the live checks (this one included when it registered)."""
    fixed = user_threads(environ)
    if fixed is not None:
        return fixed
    return share(host_cores(environ), len(live_checks(directory)))


_registered: Path | None = None
_applied: int | None = None


def register(what: str, environ=os.environ) -> Path:
    """Count this process as one check until it exits; returns its registry file."""
    global _registered
    directory = registry_dir(environ)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{os.getpid()}.json"
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({"pid": os.getpid(), "what": what, "started": time.time()}))
    os.replace(temporary, path)  # atomic: a reader sees the whole record or none
    _registered = path
    atexit.register(unregister)
    return path


def unregister() -> None:
    global _registered
    if _registered is not None:
        try:
            _registered.unlink()
        except OSError:
            pass
        _registered = None


def apply(threads: int, environ=os.environ) -> None:
    """Size this process's pools (and its future children's) to ``threads``."""
    global _applied
    if user_threads(environ) is None:
        for name in THREAD_VARS:
            environ[name] = str(threads)
        environ[MARK_VAR] = str(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # BLAS pools already started keep their size; children get the variables
        pass
    else:
        threadpool_limits(threads)
    _applied = threads


def refresh(environ=os.environ) -> int:
    """Re-read the registry and resize the pools when the share changed; returns the budget."""
    threads = budget(environ)
    if threads != _applied:
        apply(threads, environ)
    return threads


def applied() -> int | None:
    return _applied
