"""Compiling ahead on a GPU host: the runner's shapes run in helper processes beside the check, so the
kernels they need are compiled in parallel before the check's own worker asks for them.

Why: on the NVIDIA tier a check of a file with its own Triton kernels is compile-bound. Each new
specialization costs 0.4 to 1 s (Triton's frontend, LLVM, ptxas, a launcher built with the host's C
compiler), and a file that picks a config per shape compiles one per official and benchmark shape: on
the H200 host, 9 to 11 s of official's and benchmark mode's programs, one core busy, fifteen idle
(cProfile of real files, stop 43). Compiling is the same work whoever does it: Triton keys its cache
directory (shared by every process of a run, compile_caches.py) by source, specialization and options,
and writes entries atomically, so a kernel a helper compiled is loaded, in milliseconds, by the worker.

What a helper is: a worker like any other (forked from the zygote, the file loaded as the runner loads
it), started by ``mxfp4-fuzz check`` right behind the check's own worker, before the command imports
pytest and torch (``runner.prelaunch``; the worker is loaded before the session starts, so their start
slows nothing that waits: H100, stop 51), or else once the runner's worker has loaded the file, that
runs one program, ``inputs(case); custom_kernel(inputs)`` for its share of the official and
benchmark cases, and is then closed. Nothing it returns, prints or raises is read: the verdicts run
only in the check's own worker, on a fresh module as always, so a helper changes how long a verdict
takes and nothing else. Helpers run only where programs compile (a GPU: the CPU tier interprets, there
is nothing to compile ahead), and only with spare cores: the host's thread budget for this check
(thread_budget.py: cores over the checks running) less the check's own two processes, at most
``MAX_HELPERS``; eight checks at once on a 16-core host start none. ``MXFP4_FUZZ_COMPILE_AHEAD=N`` fixes
the number (0: never); it is the only way to start them where no GPU is seen (the tests).
"""
from __future__ import annotations

import os
import tempfile
import threading

from fuzz.host import thread_budget

ENV = "MXFP4_FUZZ_COMPILE_AHEAD"
MAX_HELPERS = 6
OWN_PROCESSES = 2  # the check's pytest process and its worker
HELPER_OUTPUT_CAP = 4096  # what a helper prints is never read; its pipes are only kept flowing
LOAD_TIMEOUT = 300.0  # as runner.START_TIMEOUT: imports, and real aiter may JIT-build on import
RUN_TIMEOUT = 600.0  # a helper that hangs is killed when the check ends, whatever this says
GPU_DEVICE_FILES = ("/dev/nvidiactl", "/dev/kfd")  # NVIDIA's and ROCm's: a GPU may be there (torch decides)


CPU_TIER = "not needed: the CPU tier interprets, it compiles nothing"
ENDED = "still compiling when the check ended"
CROWDED = "not run: other checks started since and the host's cores are theirs too"


def helper_count(cases: int, environ=os.environ) -> int:
    """How many helpers for ``cases`` runner cases: the override, else none without a GPU device file,
    else the cores this check may use beyond its own processes, at most MAX_HELPERS and one per case."""
    fixed = environ.get(ENV, "").strip()
    if fixed:
        wanted = int(fixed)
        if wanted < 0:
            raise ValueError(f"{ENV} must be >= 0, got {wanted}")
        return min(wanted, cases)
    if not any(os.path.exists(path) for path in GPU_DEVICE_FILES) or hidden_gpus(environ):
        return 0
    return max(0, min(MAX_HELPERS, cases, thread_budget.budget(environ) - OWN_PROCESSES))


def hidden_gpus(environ=os.environ) -> bool:
    """The user hid every GPU of a GPU host (``CUDA_VISIBLE_DEVICES=""`` or ``-1``, ROCm's likewise): the
    check runs on the CPU tier there, and helpers would only load the file to end at once."""
    return any(environ.get(name, "unset").strip() in ("", "-1")
               for name in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"))


def program_steps(cases: list) -> list:
    """The helper's one program: each case built, called and freed in turn (program.Program's steps)."""
    from fuzz.submission.program import Program

    program = Program()
    for i, case in enumerate(cases):
        program.build(f"d{i}", case)
        program.call(f"d{i}", f"y{i}")
        program.free(f"d{i}")
    return program.steps


class CompileAhead:
    """Helpers started now, each loading the file and then running its share of ``cases`` on a thread
    of this process that keeps its pipes flowing; ``stop`` ends whatever still runs."""

    def __init__(self, path: str, aiter: str, helpers: int, task_fallback: str, worker_class, cases=None,
                 require_gpu: bool = True, first: bool = False):
        """``worker_class``: runner.Worker (passed in: the runner imports this module, not the reverse)."""
        self.folder = tempfile.TemporaryDirectory(prefix="mxfp4-fuzz-compile-ahead-")
        self.require_gpu = require_gpu
        self.workers, self.threads = [], []
        self.outcomes: list = []  # per helper: "N of M calls returned", CPU_TIER, CROWDED, ENDED, or why it stopped
        self.lock = threading.Lock()
        self.stopping = False  # set by stop(): a helper's death is then the check's doing
        self.cases = cases  # None: the runner's cases, made on the helpers' threads (they import torch)
        self.first = first  # the runner's cases include the first official one (runner_cases)
        for index in range(helpers):
            worker = worker_class(HELPER_OUTPUT_CAP, env={"MXFP4_FUZZ_ROLE": f"helper{index}"})
            worker.send({"op": "load", "path": path, "aiter": aiter, "device": "auto", "task_fallback": task_fallback})
            thread = threading.Thread(target=self._drive, args=(index, helpers, worker), daemon=True,
                                      name=f"mxfp4-fuzz-compile-ahead-{index}")
            self.workers.append(worker)
            self.threads.append(thread)
            thread.start()

    def _drive(self, index: int, helpers: int, worker) -> None:
        try:
            answer = worker.receive(LOAD_TIMEOUT)  # first: torch is imported on this thread once the file loaded
            cases = self.cases if self.cases is not None else runner_cases(self.first)
            share = cases[index::helpers]
            if not isinstance(answer, dict) or not answer.get("ok"):  # else a RunResult: it died loading
                return self._done(ENDED if self.stopping else "did not load")
            if self.require_gpu and answer.get("device") == "cpu":
                return self._done(CPU_TIER)
            if self.require_gpu and index >= helper_count(len(cases)):
                # checks started beside this one since (they registered while this helper loaded): their share
                return self._done(CROWDED)
            out_dir = os.path.join(self.folder.name, f"helper{index}")
            os.makedirs(out_dir, exist_ok=True)
            answer = worker.request({"op": "run", "steps": program_steps(share), "out_dir": out_dir,
                                     "report_every": 5.0}, RUN_TIMEOUT)
            if not isinstance(answer, dict):  # a RunResult: it died, or the check ended it (stop)
                return self._done(ENDED if self.stopping else f"died: {answer.describe_death()}")
            ran = sum(1 for r in answer.get("records", []) if r.get("do") == "call" and "exception" not in r)
            self._done(f"{ran} of {len(share)} calls returned")
        except (OSError, ValueError) as error:  # the check closed it under us (stop), or a broken pipe
            self._done(ENDED if self.stopping else f"stopped: {type(error).__name__}: {error}")
        finally:
            worker.close()

    def _done(self, outcome: str) -> None:
        with self.lock:
            self.outcomes.append(outcome)

    def finished(self) -> bool:
        return not any(thread.is_alive() for thread in self.threads)

    def stop(self, wait: bool = True) -> None:
        """End every helper still running (their threads then end on the closed pipes) and remove their
        outputs. ``wait`` False: killed, not waited for (the check's end: see SubmissionRunner.close)."""
        self.stopping = True
        for worker in self.workers:
            worker.kill(wait)
        if wait:
            for thread in self.threads:
                thread.join(timeout=5.0)
        self.folder.cleanup()

    def describe(self) -> str:
        with self.lock:
            outcomes = list(self.outcomes)
        if outcomes and all(outcome == CPU_TIER for outcome in outcomes):
            return f"{len(self.threads)} helper process(es) ended at load: {CPU_TIER}"
        running = len(self.threads) - len(outcomes)  # only before stop()
        text = (f"{len(self.threads)} helper process(es) ran the runner's shapes beside the check, to compile "
                "their kernels ahead")
        counts: dict = {}
        for outcome in outcomes:
            counts[outcome] = counts.get(outcome, 0) + 1
        if counts:
            text += ": " + "; ".join(f"{o} (x{n})" if n > 1 else o for o, n in counts.items())
        if running:
            text += f"; {running} still running at the end"
        return text


def runner_cases(first: bool = False) -> list:
    """The official test cases, then the benchmark mode's, as the runner's verdicts build them. The first
    official case only with ``first``: helpers started once the check's own worker has loaded the file
    leave it out (that worker runs it at once, while they are still starting: a helper would only compile
    it twice); helpers started with the prelaunched worker, before the command imports pytest and torch,
    take it (the worker asks for it only when the session starts, seconds later, and then waits for their
    compile through the compile lock instead of compiling it from the start)."""
    from fuzz.search.strategies import BENCHMARK_TESTS, OFFICIAL_TEST_SHAPES, Case
    from fuzz.search.value_streams import runner_case_stream

    stream = runner_case_stream("gpu")  # helpers run on a GPU only: the stream the verdicts draw from there
    return ([Case(m, n, k, stream=stream) for m, n, k in OFFICIAL_TEST_SHAPES[0 if first else 1:]]
            + [Case(m, n, k, seed=seed, stream=stream) for m, n, k, seed in BENCHMARK_TESTS])


RUNNER_CASES = 9  # len(runner_cases()), without importing torch at the command's first moment


def start(path: str, aiter: str, task_fallback: str, worker_class, first: bool = False) -> CompileAhead | None:
    """The helpers for ``path``, started now (by the runner once its own worker has loaded the file, or by
    the command with the prelaunched worker: ``first``, runner_cases); None when there are none to start."""
    helpers = helper_count(RUNNER_CASES + first)
    return CompileAhead(path, aiter, helpers, task_fallback, worker_class, first=first) if helpers else None
