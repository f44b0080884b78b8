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


def _folders(args: list):
    """(index, the flag before the folder or "" for its own argument, folder) of each folder in ``args``."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in FOLDER_FLAGS and i + 1 < len(args):  # "-I DIR": the folder is the next argument
            yield i + 1, "", args[i + 1]
            i += 2
            continue
        prefix = next((p for p in FOLDER_FLAGS if isinstance(arg, str) and arg.startswith(p) and len(arg) > len(p)),
                      None)
        if prefix:  # "-IDIR"
            yield i, prefix, arg[len(prefix):]
        i += 1


def mapped(flags, folder_to) -> list:
    """``flags`` with each folder named by ``-I DIR``, ``-IDIR``, ``-isystem DIR``... replaced by
    ``folder_to(DIR)``; every other argument kept as it is."""
    out = list(flags)
    for i, prefix, folder in _folders(out):
        out[i] = prefix + folder_to(folder)
    return out


def named(flags) -> list:
    """The folders named by ``-I DIR``, ``-IDIR``, ``-isystem DIR``... in ``flags``, in order, once each."""
    return list(dict.fromkeys(folder for _, _, folder in _folders([f for f in flags if isinstance(f, str)])))


def is_stable(folder: str, also_stable=()) -> bool:
    """Whether ``folder`` lies under ``STABLE_ROOTS`` or ``also_stable``: it changes only with an install."""
    resolved = str(Path(folder).resolve())
    roots = STABLE_ROOTS + tuple(str(Path(p).resolve()) for p in also_stable)
    return any(resolved == root or resolved.startswith(root + os.sep) for root in roots)


def fingerprint(folders, also_stable=()) -> str:
    """A digest of each folder's files (path, size, modification time), or of its absence; folders under
    ``STABLE_ROOTS`` or ``also_stable`` (the caller's own headers) by their names alone."""
    digest = hashlib.sha256()
    for folder in folders:
        digest.update(f"\0{folder}\0".encode())
        if not os.path.isdir(folder):
            digest.update(b"absent")
            continue
        if is_stable(folder, also_stable):
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
