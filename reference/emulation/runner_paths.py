"""The runner's own folders that submissions name, and where this machine holds a copy of them.

The runner's image (gpu-mode/kernelbot ``docker/amd-docker.Dockerfile`` @ 8127da265e88) clones ROCm/aiter
into the runner user's home and checks out f3be04a12a0c: ``/home/runner/aiter`` is that checkout, its
``csrc/include`` (aiter's C++ headers: ``opus/opus.hpp``, ``ck_tile``...) and ``hsa/gfx950`` (the ASM
kernels' code objects) included. HIP files build against it with ``-I/home/runner/aiter/csrc/include``.

This machine rarely has that folder. A local checkout of aiter stands in for it when the user names one:
``--aiter source=PATH`` (the command sets ``MXFP4_FUZZ_RUNNER_AITER`` to PATH for every process of the
check) or ``MXFP4_FUZZ_RUNNER_AITER=PATH`` directly. A build's paths under ``/home/runner/aiter`` are then
read from PATH, so its headers are the runner's (at the runner's commit when PATH is checked out there).
Where this machine has ``/home/runner/aiter`` itself (the runner's image run locally), it is used as is.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

RUNNER_AITER = "/home/runner/aiter"
RUNNER_AITER_COMMIT = "f3be04a12a0c"
DOCKERFILE = "gpu-mode/kernelbot docker/amd-docker.Dockerfile @ 8127da265e88"
ENV = "MXFP4_FUZZ_RUNNER_AITER"


def local_aiter() -> Path | None:
    """The folder standing in for the runner's aiter checkout here, or None."""
    value = os.environ.get(ENV)
    return Path(value) if value and Path(value).is_dir() else None


def _under_runner_aiter(path: str) -> bool:
    return path == RUNNER_AITER or path.startswith(RUNNER_AITER + "/")


def mapped(path: str) -> str:
    """``path`` as this machine reads it: under /home/runner/aiter and absent here, from the stand-in."""
    if not _under_runner_aiter(path) or os.path.exists(RUNNER_AITER):
        return path
    local = local_aiter()
    return str(local) + path[len(RUNNER_AITER):] if local is not None else path


def mapped_flags(flags) -> list:
    """A build's arguments with every path under /home/runner/aiter mapped (``-I/home/runner/aiter/x``,
    ``-I /home/runner/aiter/x``, ``-isystem``, ``-include``... alike); other arguments unchanged."""
    out = []
    for flag in flags:
        if not isinstance(flag, str) or RUNNER_AITER not in flag:
            out.append(flag)
            continue
        at = flag.index(RUNNER_AITER)
        out.append(flag[:at] + mapped(flag[at:]))
    return out


def uses_runner_aiter(flags) -> bool:
    return any(isinstance(f, str) and RUNNER_AITER in f for f in flags)


def stand_in_note(flags) -> str:
    """What a report says of a build that named the runner's aiter: where its files were read from here."""
    if not uses_runner_aiter(flags) or os.path.exists(RUNNER_AITER):
        return ""
    local = local_aiter()
    if local is None:
        return ""
    return f"{RUNNER_AITER} read from {local} ({checkout_commit(local)})"


def checkout_commit(root: Path) -> str:
    """The stand-in's commit as git names it, said against the runner's; "commit unknown" without git."""
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "commit unknown"
    head = done.stdout.strip()
    if done.returncode != 0 or not head:
        return "commit unknown, not a git checkout, the runner's is " + RUNNER_AITER_COMMIT
    if head.startswith(RUNNER_AITER_COMMIT):
        return f"at {RUNNER_AITER_COMMIT}, the runner's commit"
    return f"at {head[:12]}, not the runner's {RUNNER_AITER_COMMIT}: its headers may differ from the runner's"


def absent_reason(folder: str) -> str | None:
    """Why a folder a build names under /home/runner/aiter is absent here and what would supply it, or None
    for any other folder."""
    if not _under_runner_aiter(folder) or os.path.exists(mapped(folder)):
        return None
    local = local_aiter()
    if local is not None:
        return (f"{folder}, in the runner's aiter checkout (aiter {RUNNER_AITER_COMMIT}, {DOCKERFILE}); "
                f"{local}, standing in for {RUNNER_AITER} here, has no {folder[len(RUNNER_AITER) + 1:]}")
    return (f"{folder}, in the runner's aiter checkout (aiter {RUNNER_AITER_COMMIT}, cloned into /home/runner "
            f"by {DOCKERFILE}), which this machine lacks: give a checkout of aiter at {RUNNER_AITER_COMMIT} with "
            f"--aiter source=PATH or {ENV}=PATH to build against it here")
