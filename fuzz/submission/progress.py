"""Progress of a program in the worker, so that the parent can tell a slow call from a hung one.

Three counters move forward while a submission works: the step of the program (a call, a build...),
the Triton launches, and, where Triton interprets, the program instances run: the interpreter loops
over the grid and calls ``InterpreterBuilder.set_grid_idx`` before each instance. ``install()`` hooks
those once in the worker (``GridExecutor.__call__`` and ``set_grid_dim`` for interpreted launches,
``JITFunction.run`` for compiled ones).

Reports go out from the thread that moved a counter, at most once per ``interval`` (and at once when a
step begins), never from a timer thread: an interpreted kernel keeps the GIL so busy that a waiting
thread can starve for a second or more (measured: a 50 ms ticker got 3 ticks in 2 s), and a report
that is late would look like a stall. So no report means no progress.

A call that hangs (a spin-wait in Python or inside one program instance, a deadlock, a blocked GPU)
moves no counter. One program instance that runs longer than the timeout is a hang to this rule. A
compiled GPU launch counts once, however long it runs: the parent keeps the fixed timeout there (see
``patience.py``), so progress on a GPU only informs the report.
"""
from __future__ import annotations

import functools
import threading
import time


class Counters:
    """What has been done since ``start_run()``, and the reporting of it."""

    def __init__(self):
        self.lock = threading.Lock()  # the submission may launch from threads of its own
        self.start_run(lambda snapshot: None, interval=float("inf"))

    def start_run(self, report, interval: float) -> None:
        """Count from zero; ``report(snapshot)`` at most every ``interval`` s while counters move."""
        self.started = self.sent_at = time.perf_counter()
        self.report, self.interval = report, interval
        self.step = 0
        self.ours = False  # the step is our own code (inputs built or written), not the submission's
        self.programs = 0  # interpreted Triton program instances begun
        self.launches = 0  # Triton kernel launches (interpreted or compiled)
        self.kernel = ""  # the kernel launched last
        self.grid = None  # its number of program instances (interpreted launches only)
        self.grid_done = 0  # of which begun
        self.launch_started = self.started
        self.interpreted_seconds = 0.0  # inside interpreted launches (the time profile: where a check's seconds go)
        self.compiling_seconds = 0.0  # inside Triton's compiler on a cache miss (a GPU check is compile-bound)
        self.compiles = 0  # kernels compiled (not found in Triton's cache)

    def stop_reports(self) -> None:
        with self.lock:
            self.report = None

    def begin_step(self, index: int, ours: bool = False) -> None:
        self.step, self.ours = index, ours
        self._send()

    def launch(self, kernel: str) -> None:
        self.launches += 1
        self.kernel, self.grid, self.grid_done = kernel, None, 0
        self.launch_started = time.perf_counter()
        self.moved()

    def program(self) -> None:
        self.programs += 1
        self.grid_done += 1
        self.moved()

    def moved(self) -> None:
        if time.perf_counter() - self.sent_at >= self.interval:
            self._send()

    def _send(self) -> None:
        with self.lock:
            if self.report is not None:
                self.sent_at = time.perf_counter()
                self.report(self.snapshot())

    def snapshot(self) -> dict:
        from reference.emulation.triton_batched import programs_begun

        now = time.perf_counter()
        # a batched chunk's programs all begin with its first (triton_batched): counted so, the rate is a chunk's
        grid_done = self.grid_done if self.grid is None else min(self.grid, max(self.grid_done, programs_begun()))
        return {
            "progress": self.step, "ours": self.ours, "programs": self.programs, "launches": self.launches, "kernel": self.kernel,
            "grid": self.grid, "grid_done": grid_done, "seconds": now - self.started,
            "launch_seconds": now - self.launch_started,
        }


COUNTERS = Counters()
_installed: list = []


def install() -> None:
    """Hook Triton's launch paths to count into COUNTERS (once per process; never removed: the worker
    is ours). ``fuzz.judge.trace`` wraps ``JITFunction.run`` above this and restores it after each call."""
    if _installed:
        return
    from triton.runtime import interpreter
    from triton.runtime.jit import JITFunction

    builder, executor = interpreter.InterpreterBuilder, interpreter.GridExecutor
    set_grid_dim, set_grid_idx, execute, run = (
        builder.set_grid_dim, builder.set_grid_idx, executor.__call__, JITFunction.run)

    @functools.wraps(execute)
    def interpreted_launch(self, *args, **kwargs):
        COUNTERS.launch(getattr(self.fn, "__name__", "?"))
        start = time.perf_counter()
        try:
            return execute(self, *args, **kwargs)  # forwards
        finally:
            COUNTERS.interpreted_seconds += time.perf_counter() - start

    @functools.wraps(set_grid_dim)
    def grid_dim(self, nx, ny, nz):
        COUNTERS.grid, COUNTERS.grid_done = nx * ny * nz, 0
        return set_grid_dim(self, nx, ny, nz)  # forwards

    @functools.wraps(set_grid_idx)
    def grid_idx(self, x, y, z):
        COUNTERS.program()
        return set_grid_idx(self, x, y, z)  # forwards

    @functools.wraps(run)
    def compiled_launch(self, *args, grid, warmup, **kwargs):
        if not warmup:
            COUNTERS.launch(getattr(self.fn, "__name__", "?"))
        return run(self, *args, grid=grid, warmup=warmup, **kwargs)  # forwards

    executor.__call__, builder.set_grid_dim, builder.set_grid_idx = interpreted_launch, grid_dim, grid_idx
    JITFunction.run = compiled_launch
    listen_to_compiles()
    _installed.append(True)


COMPILE_LOG_ENV = "MXFP4_FUZZ_COMPILE_LOG"  # a folder: each process appends a line per compile (who, what, when)


def listen_to_compiles() -> None:
    """Count Triton's compiles (``knobs.compilation.listener``, Triton >= 3.4; elsewhere nothing is
    counted) into COUNTERS, and with MXFP4_FUZZ_COMPILE_LOG set write one JSON line per compile or cache hit
    to ``<folder>/<pid>.jsonl``: which process compiled which kernel, when, for how long (the helpers that
    compile ahead, compile_ahead.py, are judged by it). A listener the file sets replaces ours."""
    import json
    import os

    try:
        from triton import knobs
    except ImportError:
        return
    compilation = getattr(knobs, "compilation", None)
    if compilation is None or not hasattr(compilation, "listener"):
        return
    folder = os.environ.get(COMPILE_LOG_ENV, "")
    earlier = compilation.listener

    def listener(src, metadata, metadata_group, times, cache_hit, **kwargs):
        seconds = 0.0 if cache_hit else times.total / 1e6  # CompileTimes are in microseconds
        if not cache_hit:
            COUNTERS.compiles += 1
            COUNTERS.compiling_seconds += seconds
        if folder:
            name = getattr(src, "name", None) or getattr(getattr(src, "fn", None), "__name__", "?")
            line = {"pid": os.getpid(), "role": os.environ.get("MXFP4_FUZZ_ROLE", "worker"), "kernel": str(name),
                    "end": time.time(), "seconds": round(seconds, 3), "hit": bool(cache_hit),
                    "specialization": _specialization(src)}
            with open(os.path.join(folder, f"{os.getpid()}.jsonl"), "a", encoding="utf-8") as log:
                log.write(json.dumps(line) + "\n")
        if earlier is not None:
            earlier(src=src, metadata=metadata, metadata_group=metadata_group, times=times, cache_hit=cache_hit,
                    **kwargs)

    compilation.listener = listener


def _specialization(src) -> str:
    """What tells two compiles of one kernel apart in the log: its constexprs and argument attributes
    (divisibility by 16, ==1), else the source's hash."""
    try:
        constants = {k if isinstance(k, str) else ",".join(map(str, k)): v for k, v in dict(src.constants).items()}
        return f"{constants} attrs={dict(getattr(src, 'attrs', {}) or {})}"[:400]
    except Exception:  # another Triton's source object
        try:
            return str(src.hash())[:16]
        except Exception:
            return ""
