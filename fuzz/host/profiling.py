"""A developer's view of where a check's seconds go: with ``MXFP4_FUZZ_PROFILE_DIR`` set, the command and
each worker run under cProfile and write ``<role>-<pid>.prof`` there when they end (``python -m pstats``
reads them). Only the main thread is profiled; a process killed (a budget kill, SIGKILL) writes nothing.
Our processes end through ``os._exit`` after their exit handlers (process_tree.exit_now), so the profile
is written from an exit handler, not by ``python -m cProfile``, which would never get to write it."""
from __future__ import annotations

import atexit
import os

PROFILE_DIR_ENV = "MXFP4_FUZZ_PROFILE_DIR"


def profile_if_asked(role: str) -> None:
    folder = os.environ.get(PROFILE_DIR_ENV)
    if not folder:
        return
    import cProfile

    os.makedirs(folder, exist_ok=True)
    profiler = cProfile.Profile()
    pid = os.getpid()

    def dump() -> None:
        if os.getpid() == pid:  # a forked child inherits the handler, not the profile's meaning
            profiler.disable()
            profiler.dump_stats(os.path.join(folder, f"{role}-{pid}.prof"))

    atexit.register(dump)
    profiler.enable()
