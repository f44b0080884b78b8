"""What a worker's answer says, read the same way on both sides of its pipes (runner.py in the check's
process, worker.py in the worker): whether a program left the device faulted, and the files a speculated
program's prints went to. Imports nothing of ours: the runner and the worker both import it."""
from __future__ import annotations

SPECULATED_OUTPUT = ("stdout", "stderr")  # files in a speculated program's out_dir: what its fds 1 and 2 got


def device_faulted(answer: dict) -> bool:
    """Whether a call of the answer's program left the device faulted (its context is unusable after it)."""
    return any(r.get("exception", {}).get("device_fault") for r in answer.get("records", []))
