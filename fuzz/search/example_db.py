"""Where Hypothesis keeps the examples it found, shared across CI runs without mixing incompatible ones.

A failing example found for one kernel source, Triton/aiter version or GPU arch says little about
another, and replaying it there wastes the budget. So the database directory is keyed:

    key = sha256(kernels/ sources)[:12] + triton version + aiter kind/version + tier/arch

``--example-db DIR`` stores under DIR/<key>; ``--example-db github:OWNER/REPO`` additionally reads
(read-only) the artifact ``hypothesis-db-<key>`` that a CI job uploaded (Hypothesis's
``GitHubArtifactDatabase``; the workflow in docs/ci_workflow.md uploads it).
"""
from __future__ import annotations

import hashlib
import pathlib
import re

from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    GitHubArtifactDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)

REPO = pathlib.Path(__file__).resolve().parents[2]
LOCAL_DEFAULT = REPO / ".hypothesis" / "examples"


def kernel_source_digest() -> str:
    h = hashlib.sha256()
    for path in sorted((REPO / "kernels").rglob("*")):
        if path.suffix in (".py", ".cu", ".h", ".json") and "__pycache__" not in path.parts:
            h.update(str(path.relative_to(REPO)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:12]


def database_key() -> str:
    import triton

    from kernels.platform import aiter_kind, detect

    try:
        from reference.emulation.select import current

        info = current()
        aiter = f"{info.kind}-{info.version}" if info else aiter_kind()
    except ImportError:
        aiter = aiter_kind()
    plat = detect()
    raw = f"k{kernel_source_digest()}-triton{triton.__version__}-aiter-{aiter}-{plat.tier}-{plat.arch}"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", raw)


def database_for(spec: str | None):
    """The Hypothesis database for ``--example-db`` (None: Hypothesis's default, under .hypothesis/)."""
    if not spec:
        return None
    key = database_key()
    if spec.startswith("github:"):
        owner, _, repo = spec[len("github:"):].partition("/")
        if not owner or not repo:
            raise ValueError(f"--example-db github:OWNER/REPO expected, got {spec!r}")
        local = DirectoryBasedExampleDatabase(LOCAL_DEFAULT / key)
        shared = ReadOnlyDatabase(GitHubArtifactDatabase(owner, repo, artifact_name=f"hypothesis-db-{key}"))
        return MultiplexedDatabase(local, shared)
    return DirectoryBasedExampleDatabase(pathlib.Path(spec) / key)
