"""Ending every process a command started: its children, and everything they started in turn.

The many-file command's children are check processes; each starts workers in sessions of their own
(fuzz/submission/runner.py), which a signal to a process group does not reach and which outlive a check
killed by SIGKILL. So ``end_descendants`` first asks the children to stop (SIGTERM: a check then kills
its workers and writes what it has), waits a short grace, and then SIGKILLs whatever is left of the
whole tree, found through ``/proc`` parent links before anything died (once a parent is gone, its
children belong to init and no longer look like ours). A process is killed only while it is the same
one (its start time unchanged), so a reused pid is never hit. Without ``/proc`` only the direct
children are ended. ``exit_now`` ends this process itself once its work is done, without the
interpreter's teardown.
"""
from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import time

PROC = "/proc"


def exit_now(code: int) -> None:
    """End this process: its exit handlers run (they remove what it left in the temp dir and its thread
    budget's record), the interpreter's teardown does not (torch's and a CUDA context's take 0.4 to 0.9 s on
    a GPU host, which whoever waits for this process would wait for too)."""
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    sys.stdout.flush()  # what the exit handlers wrote
    sys.stderr.flush()
    os._exit(code)


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of a live process, or None."""
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # the name, in parentheses, may hold spaces
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[19])


def descendants(root: int) -> dict[int, int]:
    """{pid: start time} of every live process below ``root`` (children, theirs, ...); empty without /proc."""
    try:
        pids = [int(name) for name in os.listdir(PROC) if name.isdigit()]
    except OSError:
        return {}
    children: dict[int, list] = {}
    started: dict[int, int] = {}
    for pid in pids:
        stat = _stat(pid)
        if stat is not None:
            children.setdefault(stat[0], []).append(pid)
            started[pid] = stat[1]
    found, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid not in found:
            found[pid] = started[pid]
            todo += children.get(pid, [])
    return found


def _kill_same(processes: dict[int, int]) -> None:
    for pid, start in processes.items():
        stat = _stat(pid)
        if stat is not None and stat[1] == start:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def end_descendants(children: list[subprocess.Popen], grace: float) -> None:
    """Stop ``children`` (SIGTERM, then SIGKILL after ``grace`` seconds) and every process below this one
    that is left when they have ended; each child is reaped."""
    tree = descendants(os.getpid())
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for child in children:
        try:
            child.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            tree.update(descendants(child.pid))  # what it started during the grace
            child.kill()
            child.wait()
    _kill_same(tree)
