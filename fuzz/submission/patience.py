"""How long the parent waits for a program of calls: a hung call is killed, a slow one is not.

The worker reports progress (``progress.py``: a step begun, a Triton launch, an interpreted program
instance). The rule, applied by ``Patience.verdict`` each time a message arrives or a deadline passes:

- **hung**: no progress for ``timeout`` seconds -> "timeout", the worker is killed (a failing verdict).
- **slow**: still making progress when ``timeout`` seconds have passed -> waited for, up to
  ``hard_cap`` seconds in all; if it answers, the run is ok and reported slow (time and rate).
- **too slow**: past ``timeout``, an estimated time beyond ``hard_cap``, or ``hard_cap`` reached while
  progressing -> "too_slow", the worker is killed and the verdict is not run (inconclusive: a shape
  too big for Triton's interpreter says nothing about the kernel).

The estimate is a lower bound: the time of the last report plus the program instances left in the
launch in progress, at that launch's own rate (launches still to come are unknown). It is made only
once the launch has run for ``RATE_SECONDS``, so a rate is an average, not the first instance.

- **budget**: past ``deadline`` (the check's time budget: ``budget.py``), or estimated past it -> "budget",
  the worker is killed and the program does not count (never a failure: it proves nothing).

With ``hard_cap <= timeout`` there is no slow rule: the program is killed at ``timeout`` however it
progresses ("timeout", today's behaviour). That is the default where Triton is compiled: a GPU
launch is one step of progress however long it runs, and a GPU that needs minutes is not "slow".
"""
from __future__ import annotations

RATE_SECONDS = 1.0
# While the worker runs a step of ours (building or writing the inputs: session.py's OWN_STEPS), the hang
# rule waits at least this long: our code does not hang, but a loaded machine can make it take longer
# than a short timeout (measured: the M=8 N=2112 K=7168 inputs took over 5 s on the 2-core box under load,
# and a 5 s timeout called that "hung"). The hard cap still applies.
OWN_STEP_SECONDS = 300.0


class Patience:
    """The rule for one program; times are the parent's ``time.perf_counter()``."""

    def __init__(self, timeout: float, hard_cap: float, start: float, deadline: float | None = None):
        self.timeout, self.start, self.deadline = timeout, start, deadline
        self.slow_rule = hard_cap > timeout
        self.hard_cap = hard_cap if self.slow_rule else timeout
        self.last_progress = start
        self.latest: dict = {}  # the last progress report
        self.latest_at = start

    @property
    def step(self) -> int | None:
        return self.latest.get("progress")

    def observe(self, report: dict, now: float) -> None:
        """A progress report from the worker; it counts as progress when a counter moved."""
        moved = any(report.get(key) != self.latest.get(key) for key in ("progress", "launches", "programs"))
        if moved:
            self.last_progress = now
        self.latest, self.latest_at = report, now

    def estimate(self, now: float) -> float | None:
        """Seconds the program will take at least, from its start; None while there is no rate."""
        r = self.latest
        if not r.get("grid") or not r.get("grid_done") or r.get("launch_seconds", 0.0) < RATE_SECONDS:
            return None
        left = (r["grid"] - r["grid_done"]) * r["launch_seconds"] / r["grid_done"]
        return max(now, self.latest_at + left) - self.start

    @property
    def stall_limit(self) -> float:
        """Seconds without progress that make a hang: the timeout, or more during a step of ours."""
        return max(self.timeout, OWN_STEP_SECONDS) if self.latest.get("ours") else self.timeout

    def verdict(self, now: float) -> str | None:
        """"timeout" (hung, or over the timeout without the slow rule), "too_slow", "budget" (past the
        deadline, or estimated past it), or None: wait on."""
        if now - self.last_progress >= self.stall_limit:
            return "timeout"
        if self.deadline is not None:
            estimate = self.estimate(now)
            if now >= self.deadline or (estimate is not None and self.start + estimate > self.deadline):
                return "budget"
        elapsed = now - self.start
        if elapsed >= self.hard_cap:
            return "too_slow" if self.slow_rule else "timeout"
        if self.slow_rule and elapsed >= self.timeout:
            estimate = self.estimate(now)
            if estimate is not None and estimate > self.hard_cap:
                return "too_slow"
        return None

    def wait(self, now: float) -> float:
        """Seconds until ``verdict`` can change without a new report."""
        deadlines = [self.last_progress + self.stall_limit, self.start + self.hard_cap]
        if self.deadline is not None:
            deadlines.append(self.deadline)
        if self.slow_rule and now < self.start + self.timeout:
            deadlines.append(self.start + self.timeout)
        return max(0.0, min(deadlines) - now)

    def summary(self, now: float) -> dict:
        """What a RunResult keeps of the progress: counters, rate, estimate, time since progress."""
        r = self.latest
        seconds = r.get("seconds", 0.0)
        return {
            "programs": r.get("programs", 0), "launches": r.get("launches", 0), "kernel": r.get("kernel", ""),
            "grid": r.get("grid"), "grid_done": r.get("grid_done", 0),
            "rate": r.get("programs", 0) / seconds if seconds > 0 else 0.0,
            "estimate": self.estimate(now), "since_progress": now - self.last_progress,
        }
