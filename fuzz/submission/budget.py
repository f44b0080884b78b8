"""The check's time budget (``mxfp4-fuzz check FILE --budget SECONDS``): every verdict ends in time,
official first, and a verdict the budget cut short says so.

The budget is wall time from the command's start (``mxfp4-fuzz check``; under plain pytest, from the
worker's start): what a user waits for. ``loads`` and ``official`` (and the runner's modes, in the same
window) come first and may take up to ``OFFICIAL_SHARE[tier]`` of what is left when they begin (a slow
start, e.g. torch's import on a GPU host, never starves the runner's own check). On the CPU tier that is
three quarters (half left kernelsanders #597's benchmark mode NOT RUN behind a cold 13 s HIP build at
import, where the runner fails it: the prediction is the answer a user waits for); on a GPU it is all but
the ``RESERVE``: there the runner's prediction (official, benchmark and leaderboard modes on the full
shapes, about 2 to 4 s each on the H200 with cold kernels) barely fits a 15 s check, and what the runner
will say comes first; the fuzzed verdicts get what it leaves (``--budget`` more for them). Each fuzzed
verdict then gets, when its test
begins, its weight's share of what is left (so time one verdict did not use goes to the next ones), less
``RESERVE`` for the report. Within its share a verdict draws examples as the profile says; when the
share runs out:

- a program that would not end in time is not started, and one running is ended when it overruns the
  share by half the share again (``GRACE``; never past the budget's end): its worker is replaced. On a
  GPU a running program is only ended at the budget's end (``early_kills`` False): its programs take
  seconds, and a replaced worker pays CUDA's start and every kernel's load again, which cost the verdicts
  after it more than the overrun. Neither counts as an example, and neither is ever a FAIL (a program ended by the
  budget proves nothing, not even a hang: ``--budget 0`` waits the full timeout);
- a verdict with conclusive examples keeps its status (PASS, FAIL, REPORTED) and its line says how many
  examples ran before the budget cut it short; one with none is NOT RUN, "the time budget ran out";
- the program a failing example ran is answered from the results already seen, so Hypothesis's final
  replay of the shrunk example agrees with its first run after the budget ran out.

``--budget 0`` switches it off (the profile's example counts alone decide, as before). The default is
``DEFAULT_SECONDS`` per tier: on the CPU tier under the 90 s a check may take on a 2-core laptop, on a
GPU under 15 s (the report and the exit, under a second, and a last program's overrun come on top).

On a GPU the default does not cut the runner's prediction (``uncut_prediction``): loads, official and
the two modes run to their end (their timeouts still apply), and the fuzzed verdicts get what is left of
the default, at least ``FUZZ_FLOOR`` seconds but never past ``UNCUT_CEILING`` seconds of the check. A GPU
check is compile-bound where the file has kernels of its own: each new specialization costs 0.4 to 1 s of
Triton's compiler on the H200 host, a file that picks a config per shape needs ten of them for the runner's
shapes (14 to 38 s of prediction with cold caches, stop 43), and a 12 s cap left "test: NOT RUN, the time budget ran out" as the headline of most
real files. What the runner will say is the answer a user waits for; ``--budget S`` still ends
everything, the prediction included, within S."""
from __future__ import annotations

import time

DEFAULT_SECONDS = {"cpu": 80.0, "gpu": 12.0}
# loads + official + the modes may use this share of what is left when they begin: the runner's check first
OFFICIAL_SHARE = {"cpu": 0.75, "gpu": 1.0}
GRACE = 0.5  # a running program is ended this fraction of its verdict's share past the deadline (a kill costs a worker start)
MIN_GRACE = 1.0
FUZZ_FLOOR = 3.0  # seconds the fuzzed verdicts get after an uncut prediction that used the default up
# ... but never past this many seconds of the check (the report and the exit add 0.3 to 0.7 s): on a slower H100
# host (stop 53) v55's prediction ended at 13.8 s and the floor took its check to 18.5 s; past the ceiling the
# fuzzed verdicts say the time ran out
UNCUT_CEILING = 13.5
RESERVE = 0.6  # seconds kept back at the end for the kernelguard screening and the report (0.2 to 0.5 s, H100)
# On a compiled tier: what a program at a shape nothing ran yet is assumed to cost before it has any duration of
# its own (the first fuzzed programs of compile-bound files compiled 1.5 to 2.7 s on the H100 host, stop 51).
# A verdict with less time left runs its drawn case at a shape already run (steering.nearest_run_shape) or,
# where none fits, does not start it.
NEW_SHAPE_SECONDS = 2.5
# The verdicts of the runner's prediction: their programs are the runner's own, never held back by that guess
PREDICTION_VERDICTS = ("loads", "official", "mode_benchmark", "mode_leaderboard")
# Relative shares of the fuzzed verdicts (a verdict not listed weighs 1). Correctness searches values,
# shapes and layouts and is the verdict most bugs show in; its second search is skipped at once unless
# the first found a failure, and then hands its share on.
WEIGHTS = {"correctness": 3.0, "correctness_past_known_bugs": 1.0, "builds_gfx950": 0.0, "kernelguard": 0.0,
           "loads": 0.0, "official": 0.0}
NOT_RUN_REASON = "the time budget ran out before an example could run (--budget {budget:g} s; --budget 0 lifts it)"


class BudgetExhausted(Exception):
    """Raised by the runner instead of starting (or while ending) a program the budget has no time for."""

    def __init__(self, verdict: str, why: str):
        super().__init__(f"{verdict}: {why}")
        self.verdict, self.why = verdict, why


class Budget:
    """Deadlines per verdict. ``order``: the verdicts in the order their tests run (their shares are
    computed from the verdicts still to come). ``seconds`` <= 0: no budget (every deadline is None)."""

    def __init__(self, seconds: float, order: list, start: float | None = None, tier: str = "cpu",
                 uncut_prediction: bool = False):
        self.seconds = float(seconds)
        self.uncut_prediction = uncut_prediction and self.seconds > 0
        self.extended = 0.0  # seconds added to the end after an uncut prediction (FUZZ_FLOOR)
        self.official_share = OFFICIAL_SHARE["cpu" if tier == "cpu" else "gpu"]
        self.early_kills = tier == "cpu"  # False: a running program is ended only at the budget's end (a GPU)
        self.start = time.perf_counter() if start is None else start
        self.order = list(order)
        self.begun: list = []
        self.deadlines: dict = {}  # verdict -> absolute deadline (perf_counter): no program starts past it
        self.kill_at: dict = {}  # verdict -> when a program still running is ended
        self.cut: dict = {}  # verdict -> why the budget cut it short

    @property
    def on(self) -> bool:
        return self.seconds > 0

    @property
    def end(self) -> float:
        return self.start + self.seconds + self.extended

    def left(self, now: float | None = None) -> float:
        return self.end - (time.perf_counter() if now is None else now)

    def begin(self, verdict: str, now: float | None = None) -> float | None:
        """The deadline of ``verdict``, whose test begins now (fixed at its first call: a verdict's second
        test, e.g. correctness' second search, gets a share of its own under its own name)."""
        if not self.on:
            return None
        if verdict in self.deadlines:
            return self.deadlines[verdict]
        now = time.perf_counter() if now is None else now
        self.begun.append(verdict)
        if verdict in ("loads", "official") and self.uncut_prediction:
            deadline = None  # the runner's prediction runs to its end (its own timeouts apply)
            self.deadlines[verdict] = deadline
            self.kill_at[verdict] = None
            return deadline
        if self.uncut_prediction and not self.extended:  # the first fuzzed verdict: at least the floor, to the ceiling
            end = min(now + FUZZ_FLOOR + RESERVE, self.start + max(self.seconds, UNCUT_CEILING))
            self.extended = max(1e-9, end - (self.start + self.seconds))
        if verdict in ("loads", "official"):
            shared = self.deadlines.get("loads", self.deadlines.get("official"))  # one window for the two
            deadline = shared if shared is not None else min(self.end - RESERVE,
                                                             now + self.official_share * max(0.0, self.left(now)))
        else:
            to_come = [v for v in self.order if v not in self.begun] + [verdict]
            weights = sum(WEIGHTS.get(v, 1.0) for v in to_come)
            share = WEIGHTS.get(verdict, 1.0) / weights if weights else 1.0
            deadline = now + max(0.0, self.left(now) - RESERVE) * share
            if WEIGHTS.get(verdict, 1.0) == 0.0:  # no share of its own: it may use what is left
                deadline = self.end
        self.deadlines[verdict] = deadline
        self.kill_at[verdict] = min(self.end, deadline + max(MIN_GRACE, GRACE * (deadline - now))) \
            if self.early_kills else self.end
        return deadline

    def note_cut(self, verdict: str, why: str) -> None:
        self.cut.setdefault(verdict, why)

    def to_json(self) -> dict:
        return {"seconds": self.seconds if self.on else None,
                "uncut_prediction": self.uncut_prediction,
                "extended": round(self.extended, 3),  # seconds past ``seconds`` the fuzzed verdicts got (floor)
                "deadlines": {v: None if d is None else round(d - self.start, 3) for v, d in self.deadlines.items()},
                "cut_short": dict(self.cut)}
