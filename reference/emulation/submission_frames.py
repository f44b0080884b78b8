"""Which running code is the submission's own: the file itself, or a module beside it in its folder (real files
split helpers out and import them as the runner's harness would). One rule for every stand-in that answers or
records by caller: the poisoned allocations' sites (fuzz/submission/poison.py) and the reads of torch.version
answered as the runner's (runner_torch_version.py)."""
from __future__ import annotations

import os


def site(frame, path: str) -> str | None:
    """``line N`` where ``frame`` runs the file at ``path``, ``name.py line N`` where it runs a module beside it,
    None for anything else (or no path)."""
    if not path or frame is None:
        return None
    filename = frame.f_code.co_filename
    if filename == path:
        return f"line {frame.f_lineno}"
    folder = os.path.dirname(path) + os.sep
    if filename.startswith(folder) and os.sep not in filename[len(folder):]:
        return f"{os.path.basename(filename)} line {frame.f_lineno}"
    return None
