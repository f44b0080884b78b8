"""Run a snippet in a fresh interpreter at the repository root: for tests of stand-ins that change
process-wide state (torch.cuda, subprocess, the selected aiter), which must not leak into the suite."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_fresh(prologue: str, body: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``prologue`` (setup lines) then ``body`` (dedented); stdout/stderr captured as text."""
    script = textwrap.dedent(prologue).strip() + "\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
