"""A Python file executed as a module of a chosen name: how the emulated aiter and an aiter checkout's
files are loaded without putting them on sys.path."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def exec_as_module(name: str, path: Path, package_dir: Path | None = None):
    """Execute the file at ``path`` as module ``name`` (a package searching ``package_dir`` when given),
    registered in sys.modules while it runs; nothing is left registered when it raises."""
    search = None if package_dir is None else [str(package_dir)]
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=search)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
