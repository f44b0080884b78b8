"""The include folders a build names, and a fingerprint of what is in them: part of a cached build's key.

A build's result depends on the headers its ``-I`` folders hold, not only on its source and flags: a cache
keyed without them answers "'opus/opus.hpp' file not found" after the folder appeared, or an old build after
the user edited a header of their own.
"""
from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
from pathlib import Path

FOLDER_FLAGS = ("-I", "-isystem", "-idirafter", "-iquote")
MAX_FILES = 20000  # beyond this a folder is fingerprinted by its own stat alone (a whole system tree)
# Folders that change only with an install (Python's, the packages', the system's, ours): named, not walked;
# the caller's key names the versions that matter (torch's, the toolchain's)
STABLE_ROOTS = tuple(dict.fromkeys(str(Path(p).resolve()) for p in (
    sys.prefix, sys.base_prefix, sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], "/usr", "/opt/rocm",
    Path(__file__).resolve().parent / "hip_cpu" / "include")))


def named(flags) -> list:
    """The folders named by ``-I DIR``, ``-IDIR``, ``-isystem DIR``... in ``flags``, in order, once each."""
    folders, args = [], [f for f in flags if isinstance(f, str)]
    for i, arg in enumerate(args):
        if arg in FOLDER_FLAGS and i + 1 < len(args):
            folders.append(args[i + 1])
            continue
        for flag in FOLDER_FLAGS:
            if arg.startswith(flag) and len(arg) > len(flag) and not (flag == "-I" and arg.startswith("-isystem")):
                folders.append(arg[len(flag):])
                break
    return list(dict.fromkeys(folders))


def fingerprint(folders, also_stable=()) -> str:
    """A digest of each folder's files (path, size, modification time), or of its absence; folders under
    ``STABLE_ROOTS`` or ``also_stable`` (the caller's own headers) by their names alone."""
    stable = STABLE_ROOTS + tuple(str(Path(p).resolve()) for p in also_stable)
    digest = hashlib.sha256()
    for folder in folders:
        digest.update(f"\0{folder}\0".encode())
        if not os.path.isdir(folder):
            digest.update(b"absent")
            continue
        resolved = str(Path(folder).resolve())
        if any(resolved == root or resolved.startswith(root + os.sep) for root in stable):
            continue
        entries = []
        for root, dirs, files in os.walk(folder, followlinks=False):
            dirs.sort()
            for name in sorted(files):
                try:
                    stat = os.stat(os.path.join(root, name))
                except OSError:
                    continue
                entries.append(f"{os.path.relpath(os.path.join(root, name), folder)}:{stat.st_size}:{stat.st_mtime_ns}")
            if len(entries) > MAX_FILES:
                stat = os.stat(folder)
                entries = [f"many files, folder {stat.st_mtime_ns}"]
                break
        digest.update("\n".join(entries).encode())
    return digest.hexdigest()[:16]
