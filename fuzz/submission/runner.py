"""Run a submission file in a worker subprocess: the parent side of ``worker.py``.

``SubmissionRunner(path).run(steps)`` sends a program (build inputs, call, write new values in place,
free, ...) to a warm worker and returns a ``RunResult``: kind "ok" with one record per step, or
"crash" (the process died: signal or exit code), "timeout" (hung: no progress for ``timeout``
seconds) or "too_slow" (still progressing, but past ``hard_cap`` or estimated beyond it), with the
last lines the submission printed. ``patience.py`` states the rule. After a crash, a timeout, a
too-slow run or a GPU fault the next run gets a new worker. The submission's stdout and stderr are
kept in capped buffers (the last ``output_cap`` bytes of each), so a file that prints megabytes floods
neither the terminal nor memory.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from pathlib import Path

from fuzz.host import profiling
from fuzz.submission import compile_ahead, zygote
from fuzz.submission.answers import SPECULATED_OUTPUT, device_faulted
from fuzz.submission.budget import NEW_SHAPE_SECONDS, PREDICTION_VERDICTS, BudgetExhausted
from fuzz.submission.patience import Patience
from fuzz.submission.steering import ShapeEvidence, layout_key, shape_key

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the directory holding fuzz/ and reference/
TASK_FALLBACK = PACKAGE_ROOT / "fuzz" / "examples" / "task.py"
OUTPUT_CAP = 64 * 1024
TAIL_LINES = 20
START_TIMEOUT = 300.0  # importing torch, triton and aiter; real aiter may JIT-build on import
AFTER_HANG_FLOOR = 10.0  # once something hung, later runs get max(this, 3 x the slowest good run)
KILL_GRACE = 5.0
EXIT_GRACE = 1.0  # a worker whose answers' pipe closed gets this long to exit with its own code or signal
# Launches made synchronous, so that a kernel's fault raises at its own launch (CUDA; HIP; ROCm's runtime)
LOCATE_ENV = {"CUDA_LAUNCH_BLOCKING": "1", "HIP_LAUNCH_BLOCKING": "1", "AMD_SERIALIZE_KERNEL": "3"}
LOCATE_CAP = 2  # faults located per check
SEEN_CAP = 512  # programs whose results are kept while a budget is on (records and capped output: small)
SLOW_FACTOR = 10.0  # where Triton interprets, the default hard cap is this many timeouts
REPORT_EVERY = 1.0  # seconds between the worker's progress reports while it progresses (less for short timeouts)
# Lines of a stack dump that are the worker's own frames (its modules), left out of a card's output tail
OWN_FRAMES = (*(str(Path(__file__).with_name(f"{name}.py"))
                for name in ("worker", "session", "allocator", "tier_hooks", "provenance", "progress")),
              "<frozen runpy>", "Extension modules:", "/threading.py")
THREAD_HEADER = "(most recent call first):"


class WorkerBug(RuntimeError):
    """The worker broke twice on the same program (our code, or a context an earlier call left unusable): the
    verdict is ERROR, a bug of mxfp4-fuzz, never the file's FAIL (report_text.EXIT_OURS)."""


class CappedBuffer:
    """The last ``cap`` bytes written, and how many were written in all."""

    def __init__(self, cap: int):
        self.cap, self.total = cap, 0
        self.chunks: deque = deque()
        self.size = 0

    def write(self, data: bytes) -> None:
        self.total += len(data)
        self.chunks.append(data)
        self.size += len(data)
        while self.size - len(self.chunks[0]) >= self.cap:
            self.size -= len(self.chunks.popleft())

    def since(self, mark: int) -> tuple[str, int]:
        """(text written since total was ``mark``, at most ``cap`` bytes of it; bytes left out)."""
        data = b"".join(self.chunks)[-min(self.total - mark, self.cap):] if self.total > mark else b""
        return data.decode("utf-8", "replace"), self.total - mark - len(data)


@dataclass
class RunResult:
    kind: str  # ok | crash | timeout | too_slow | budget (ended by the time budget: never reaches a check)
    records: list = field(default_factory=list)
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""
    output_bytes: int = 0  # all the submission printed during the run
    output_dropped: int = 0  # bytes beyond the cap, not kept
    exit_code: int | None = None
    signal_name: str | None = None
    timeout: float | None = None
    hard_cap: float | None = None
    step: int | None = None  # the step that was running when the worker died (index into the caller's steps)
    progress: dict = field(default_factory=dict)  # Patience.summary, or the worker's last counters for "ok"
    timing: dict = field(default_factory=dict)  # worker seconds by step kind, and inside interpreted launches

    def calls(self) -> list:
        return [r for r in self.records if r["do"] == "call"]

    def tensor(self, record: dict):
        """A returned tensor, as saved by the worker at return time (weights_only: tensors and nothing else)."""
        import torch  # not at import: ``prelaunch`` starts a worker before the caller has imported torch

        return torch.load(record["file"], weights_only=True)

    def tail(self, lines: int = TAIL_LINES) -> str:
        """The last lines of stderr (else stdout) for a card, without the frames of our worker in
        faulthandler's stack dumps."""
        text = self.stderr or self.stdout
        kept = [line for line in text.splitlines() if line.strip() and not any(noise in line for noise in OWN_FRAMES)]
        # a thread header whose frames were all ours (the worker's orphan watch) says nothing
        kept = [line for i, line in enumerate(kept)
                if not (THREAD_HEADER in line and (i + 1 == len(kept) or THREAD_HEADER in kept[i + 1]))]
        return "\n".join(kept[-lines:])

    def describe_death(self) -> str:
        if self.kind == "timeout":
            if not self.hard_cap or self.hard_cap <= self.timeout:  # no slow rule: the fixed timeout
                return f"timeout: no answer within {self.timeout:g} s, worker killed"
            return f"timeout: no progress for {self.timeout:g} s (hung, not slow), worker killed{self._work()}"
        if self.kind == "too_slow":
            estimate = self.progress.get("estimate")
            why = (f"estimated at least {estimate:.0f} s" if estimate is not None and estimate > self.hard_cap
                   else f"still running at the hard cap of {self.hard_cap:g} s")
            p = self.progress
            launch = (f"; {p['grid_done']} of {p['grid']} programs of {p['kernel']} done" if p.get("grid") else "")
            return (f"too slow ({why}, hard cap {self.hard_cap:g} s): {p.get('programs', 0)} interpreted "
                    f"Triton programs in {self.seconds:.0f} s, {p.get('rate', 0.0):.0f} programs/s{launch}; "
                    "worker killed")
        if self.signal_name:
            return f"crash: worker killed by {self.signal_name}"
        return f"crash: worker exited with code {self.exit_code} in the middle of the program"

    def _work(self) -> str:
        p = self.progress
        if not p.get("programs") and not p.get("launches"):
            return ""
        return (f" (before that: {p.get('programs', 0)} interpreted Triton programs in {p.get('launches', 0)} "
                f"launches, the last of {p.get('kernel') or '?'})")

    def slow_note(self) -> str:
        """For a run that answered after its timeout: it was slow, not hung. Empty otherwise."""
        if self.kind != "ok" or self.timeout is None or self.seconds <= self.timeout:
            return ""
        p = self.progress
        return (f"slow: {self.seconds:.0f} s, over the {self.timeout:g} s timeout but never that long without "
                f"progress; {p.get('programs', 0)} interpreted Triton programs in {p.get('launches', 0)} launches, "
                f"{p.get('rate', 0.0):.0f} programs/s")


@dataclass
class LoadReport:
    ok: bool
    aiter: str = ""
    aiter_detail: str = ""
    nondeterministic: bool = False
    exec_seconds: float = 0.0
    worker_start_seconds: float = 0.0
    error: dict | None = None
    death: RunResult | None = None  # the worker died or hung while loading
    fresh_module: str = "reload"  # how each program gets a fresh module: "reload" (executed afresh) or "fork"

    def describe_error(self) -> str:
        if self.death is not None:
            return f"{self.death.describe_death()} while loading the file\n{self.death.tail()}".rstrip()
        e = self.error or {}
        where = e.get("where")
        place = f" at line {where['line']}: {where['code']}" if where else ""
        return f"{STAGE_TEXT.get(e.get('stage'), e.get('stage'))}: {e.get('type')}: {e.get('message')}{place}"


STAGE_TEXT = {
    "aiter": "the requested aiter cannot be used",
    "missing_file": "the submission file does not exist",
    "syntax": "the file does not compile",
    "import": "an import in the file fails",
    "module_code": "the file's module-level code raised",
    "no_custom_kernel": "the file has no custom_kernel",
}


def _kill_if_running(process: subprocess.Popen) -> None:
    """SIGKILL the worker's process group (its own session: the worker and what it started), only
    while the worker is unreaped, so its pid, which names the group, cannot belong to anyone else."""
    if process.poll() is None and process.pid > 0:  # pid 0: a fork the zygote never made (killpg(0) is us)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


_LIVE_WORKERS: weakref.WeakSet = weakref.WeakSet()  # every Worker of this process not yet collected


def kill_all_workers() -> None:
    """SIGKILL every worker this process started that still runs, with what it forked (its process
    group). For the check's SIGINT/SIGTERM handler (fuzz/cli.py): the check stops, nothing more will be
    asked of them, and a finalizer would come too late or, under SIGKILL, never."""
    for worker in list(_LIVE_WORKERS):
        _kill_if_running(worker.process)


class Worker:
    """One worker process and its pipes."""

    COMMAND = (sys.executable, "-m", "fuzz.submission.worker")

    def __init__(self, output_cap: int, command=COMMAND, env: dict | None = None):
        self.stdout, self.stderr = CappedBuffer(output_cap), CappedBuffer(output_cap)
        request_r, self.request_w = os.pipe()
        self.response_r, response_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        env = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH")) if p)
        argv = ["--request-fd", str(request_r), "--response-fd", str(response_w)]
        forked = zygote.spawn(str(PACKAGE_ROOT), [request_r, response_w, out_w, err_w], env,
                              argv) if command == self.COMMAND else None
        self.process = forked or subprocess.Popen(
            [*command, *argv],
            pass_fds=(request_r, response_w), stdin=subprocess.DEVNULL, stdout=out_w, stderr=err_w,
            cwd=PACKAGE_ROOT, env=env, start_new_session=True,  # its own group: a timeout kills its children too
        )
        for fd in (request_r, response_w, out_w, err_w):
            os.close(fd)
        weakref.finalize(self, _kill_if_running, self.process)  # also at interpreter exit
        _LIVE_WORKERS.add(self)
        self.streams = {out_r: self.stdout, err_r: self.stderr}
        self.pending = b""
        # the runner's prediction programs this worker runs after its load without being asked, in order,
        # whose answers it still owes (prelaunch's speculation; the runner takes them in SubmissionRunner.run)
        self.queued: list = []
        self.speculation_dirs: dict = {}  # name -> the out_dir of a program it may queue (its outputs and prints)

    def request(self, message: dict, timeout: float, hard_cap: float | None = None,
                deadline: float | None = None) -> RunResult | dict:
        """The worker's answer, or a RunResult saying how it died (its records empty)."""
        self.send(message)
        return self.receive(timeout, hard_cap, deadline)

    def send(self, message: dict) -> None:
        self.expect()
        try:
            os.write(self.request_w, (json.dumps(message) + "\n").encode())
        except BrokenPipeError:
            pass  # it died already: receive() reads the EOF and says how

    def expect(self) -> None:
        """The next answer's program starts now, at the latest: its output and its time are counted from here
        (a queued program's own request was sent with the load)."""
        self.marks = (self.stdout.total, self.stderr.total)
        self.sent = time.perf_counter()

    def receive(self, timeout: float, hard_cap: float | None = None, deadline: float | None = None) -> RunResult | dict:
        """The answer, or the death: killed when ``Patience`` says hung, too slow or past the budget's
        ``deadline`` (no slow rule unless ``hard_cap`` > ``timeout``)."""
        marks, start = self.marks, self.sent
        patience = Patience(timeout, hard_cap or timeout, start, deadline)
        while True:
            while b"\n" in self.pending:
                line, self.pending = self.pending.split(b"\n", 1)
                answer = json.loads(line)
                if "progress" not in answer:
                    self._drain(0.0)  # the worker flushed before answering: its prints are in the pipes now
                    answer["_output"] = self._output(marks)
                    return answer
                patience.observe(answer, time.perf_counter())
            now = time.perf_counter()
            kind = patience.verdict(now)
            if kind is not None:
                return self._death(kind, marks, patience, now)
            ready, _, _ = select.select([self.response_r, *self.streams], [], [], patience.wait(now))
            for fd in ready:
                if fd == self.response_r:
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        return self._death("crash", marks, patience, time.perf_counter())
                    self.pending += chunk
                else:
                    self._pump(fd)

    def _pump(self, fd) -> bool:
        chunk = os.read(fd, 1 << 16)
        if chunk:
            self.streams[fd].write(chunk)
        return bool(chunk)

    def _drain(self, wait: float) -> None:
        """Read what the pipes hold; with ``wait`` > 0, until both close or ``wait`` seconds pass."""
        open_fds = list(self.streams)
        deadline = time.perf_counter() + wait
        while open_fds:
            ready, _, _ = select.select(open_fds, [], [], max(0.0, deadline - time.perf_counter()))
            if not ready:
                return
            for fd in ready:
                if not self._pump(fd):
                    open_fds.remove(fd)

    def _output(self, marks) -> dict:
        stdout, out_dropped = self.stdout.since(marks[0])
        stderr, err_dropped = self.stderr.since(marks[1])
        written = self.stdout.total - marks[0] + self.stderr.total - marks[1]
        return {"stdout": stdout, "stderr": stderr, "output_bytes": written, "output_dropped": out_dropped + err_dropped}

    def _death(self, kind: str, marks, patience: Patience, now: float) -> RunResult:
        progress = patience.summary(now)
        if kind == "crash":  # its answers' pipe closed: it is exiting; killed before it ends, its own code is lost
            try:
                self.process.wait(EXIT_GRACE)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        self._drain(KILL_GRACE)
        code = self.process.returncode
        result = RunResult(kind, seconds=now - patience.start, timeout=patience.timeout, hard_cap=patience.hard_cap,
                           step=patience.step, progress=progress, **self._output(marks))
        if kind == "crash":
            if code is not None and code < 0:
                result.signal_name = signal.Signals(-code).name
            else:
                result.exit_code = code
        return result

    def kill(self, wait: bool = True) -> None:
        _kill_if_running(self.process)
        if not wait:
            return
        try:
            self.process.wait(KILL_GRACE)
        except subprocess.TimeoutExpired:
            pass

    def close(self, wait: bool = True) -> None:
        """End the worker: at the end of its requests, waited for (its exit handlers run: a profile is
        written); ``wait`` False: killed at once, not waited for (a GPU worker's exit tears down its CUDA
        context first, and nobody needs its exit code)."""
        try:
            os.close(self.request_w)  # the worker's request loop ends at EOF
            if wait:
                self.process.wait(KILL_GRACE)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill(wait)
        for fd in (self.response_r, *self.streams):
            try:
                os.close(fd)
            except OSError:
                pass


def _rated(counters: dict) -> dict:
    """The worker's final counters with the run's rate in programs/s."""
    seconds = counters.get("seconds", 0.0)
    return {**counters, "rate": counters.get("programs", 0) / seconds if seconds > 0 else 0.0}


# torch's error in a forked child of a process that started CUDA's driver (torch.cuda.is_available() does)
FORK_POISONED = "Cannot re-initialize CUDA in forked subprocess"
DEFAULT_TIMEOUT = {"cpu": 60.0, "gpu": 300.0}  # seconds without progress; a GPU's first call compiles
SPECULATE_ENV = "MXFP4_FUZZ_SPECULATE"  # =0: the prelaunched worker waits to be asked (A/B timings)
_PRELAUNCHED: dict = {}  # (path, aiter) -> (a Worker already loading that file, the folder of its outputs)
_PRELAUNCHED_AHEAD: dict = {}  # (path, aiter) -> the compile-ahead helpers started with it (a GPU host)


def prelaunch(path, aiter: str = "auto", speculate: bool = False, timeout: float | None = None) -> None:
    """Start the worker for ``path`` now: it imports torch and loads the file while this process imports
    pytest, Hypothesis and the plugin (about half of a short check's wall time on a GPU host). The
    SubmissionRunner for the same file and aiter adopts it as its first worker; the worker finds its
    device itself, as the runner does (``kernels.platform.detect``). Returns at once: a worker forked
    from the zygote is asked for, not waited for (zygote.py).

    ``speculate``: where the worker finds a GPU, it then runs the runner's prediction (official, benchmark
    and leaderboard mode: runner_programs.PREDICTION) at once, in the order the check asks for them, instead
    of idling until pytest's session asks (on the H100 host the session started 3.6 to 5.9 s after the
    command, the worker loaded well before; the prediction then took 5 to 7 s of a 15 s check). The runner
    takes each answer when its verdict asks for those very steps (``SubmissionRunner._speculated``); the
    programs are the ones it would have sent, in the same order, each on a fresh module, so the verdicts do
    not change. Only the command's default run speculates (no pytest arguments that select or reorder
    tests, a budget that never cuts the prediction); ``timeout``: the check's, for the programs' hang dumps."""
    from fuzz.host import compile_caches

    compile_caches.share()  # as pytest's configure will: the first worker compiles into the run's caches
    resolved = str(Path(path).resolve())
    folder = tempfile.TemporaryDirectory(prefix="mxfp4-fuzz-submission-")  # the runner adopts it
    message = {"op": "load", "path": resolved, "aiter": aiter, "device": "auto", "task_fallback": str(TASK_FALLBACK)}
    worker = Worker(OUTPUT_CAP)
    if speculate and os.environ.get(SPECULATE_ENV, "1") != "0":
        from fuzz.submission.runner_programs import PREDICTION

        timeout = timeout or DEFAULT_TIMEOUT["gpu"]
        worker.speculation_dirs = {name: os.path.join(folder.name, f"speculated-{name}") for name in PREDICTION}
        message.update(then=[{"name": name, "out_dir": out_dir} for name, out_dir in worker.speculation_dirs.items()],
                       then_options=program_options(timeout))
    worker.send(message)
    _PRELAUNCHED[(resolved, aiter)] = (worker, folder)
    # Helpers too, right behind it (the zygote forks in order: the worker first). Their start no longer
    # slows anything that waits: the worker is loaded before pytest's session starts on a GPU host (stop 51,
    # H100: the session at 3.6 to 5.9 s, the worker waited for 0.0 s), and the first official case, compiled
    # in the worker after the session started (2 to 3 s of v55's and v211's), is theirs now.
    ahead = compile_ahead.start(resolved, aiter, str(TASK_FALLBACK), Worker, first=True)
    if ahead is not None:
        _PRELAUNCHED_AHEAD[(resolved, aiter)] = ahead


def program_options(timeout: float) -> dict:
    """A run request's options that follow from the program's timeout: the worker's hang dump and reports."""
    return {"hang_dump_after": max(1.0, timeout - 2.0), "report_every": min(REPORT_EVERY, timeout / 4)}


def speculated_output(answer, folder: str):
    """A speculated program's answer (or death) with what it printed: the files the worker sent fds 1 and 2
    to while it ran (worker.own_output), the last OUTPUT_CAP bytes of each, as a CappedBuffer keeps them."""
    texts, written, dropped = [], 0, 0
    for name in SPECULATED_OUTPUT:
        try:
            with open(os.path.join(folder, name), "rb") as file:
                size = file.seek(0, os.SEEK_END)
                file.seek(max(0, size - OUTPUT_CAP))
                data = file.read()
        except OSError:  # it died before the file was made
            size, data = 0, b""
        texts.append(data.decode("utf-8", "replace"))
        written += size
        dropped += size - len(data)
    output = {"stdout": texts[0], "stderr": texts[1], "output_bytes": written, "output_dropped": dropped}
    if isinstance(answer, RunResult):
        for field_name, value in output.items():
            setattr(answer, field_name, value)
    else:
        answer["_output"] = output
    return answer


class SubmissionRunner:
    """Runs programs on one submission file; restarts its worker after a crash, a timeout, a too-slow
    run or a GPU fault. ``timeout``: seconds a program may go without progress; ``hard_cap``: seconds a
    program that keeps progressing may run in all (default ``SLOW_FACTOR`` x timeout where Triton
    interprets, else the timeout itself: no slow rule)."""

    def __init__(self, path, aiter: str = "auto", device: str | None = None, timeout: float = 60.0,
                 output_cap: int = OUTPUT_CAP, hard_cap: float | None = None, env: dict | None = None,
                 compiles_ahead: bool = False):
        from kernels.platform import detect

        self.path = str(Path(path).resolve())
        self.aiter_mode = aiter
        self.device = device or detect().device
        self.timeout = timeout
        self.hard_cap = hard_cap if hard_cap is not None else (
            SLOW_FACTOR * timeout if detect().interpreter else timeout)
        self.output_cap = output_cap
        self.env = env  # variables the worker gets on top of this process's (e.g. MXFP4_FUZZ_BATCHED=0)
        self.worker: Worker | None = None
        # started after a death (so the next run need not wait for imports), or by prelaunch before this runner
        self.standby, prelaunched_folder = _PRELAUNCHED.pop((self.path, aiter), (None, None))
        self.speculated: dict = {}  # program key -> (name, a queued program's answer, taken before its verdict asked)
        self.speculation = {"queued": [], "taken": [], "dropped": []}  # names of the worker's unasked programs
        # started by prelaunch with the standby, else once the file loaded (load)
        self.compile_ahead: compile_ahead.CompileAhead | None = _PRELAUNCHED_AHEAD.pop((self.path, aiter), None)
        self.load_report: LoadReport | None = None
        self.slowest_good_run = 0.0
        self.hangs = 0
        self.too_slow = 0  # programs killed as too slow (their verdicts not run)
        self.slow_runs = 0  # programs that answered after the timeout, progressing all along
        # what the CPU tier did for the file, merged over every call: autotuned kernels (configs, the ones
        # checked), compatibility shims it needed, the CUDA device stood in by the CPU
        self.tier_notes = {"autotune": {}, "shims": {}, "device_emulated": False}
        self.call_stats = {"returned": 0, "raised": 0, "last_error": ""}  # over every call of every program
        self.shape_evidence = ShapeEvidence()  # shapes the file answered and refused (steering.py)
        # worker seconds per input build and per call at the runner's official shapes, once the official check ran
        # them (prediction.py projects a keyed file's modes at the runner's N from them)
        self.runner_shape_seconds: dict | None = None
        self.runner_shapes_unaffordable = ""  # why the official check did not run the runner's shapes (the CPU tier)
        self.restarts = 0
        self.temp = prelaunched_folder or tempfile.TemporaryDirectory(prefix="mxfp4-fuzz-submission-")
        self.run_count = 0
        self.deaths: dict = {}  # program -> the RunResult of its crash or timeout
        # The time budget (budget.py): the current verdict's deadline; after it, a program is answered from
        # the results seen (Hypothesis replays a shrunk failing example once more) or not started at all.
        self.deadline: float | None = None  # no program starts that would end past it
        self.kill_at: float | None = None  # a program still running then is ended
        self.verdict = ""
        self.seen: OrderedDict = OrderedDict()  # program -> its ok RunResult, while a budget is on (LRU)
        self.durations: dict = {}  # verdict -> seconds of its last good programs (the next one's estimate)
        # verdict -> seconds its last examples spent here outside their programs (judging, Hypothesis): the plugin
        # adds them, and the gate counts them too, since a program's verdict is not in before they are spent
        self.judging: dict = {}
        self.hip_builds_seen: list = []  # every HIP/CUDA build a program recorded, once each (_note_hip_builds)
        # (M, N, K) of every case a good program built: on a compiled tier their kernels are compiled
        self.shapes_run: set = set()
        self.layouts_run: set = set()  # (M, N, K, layout) of every good program (steering.layout_key)
        self.triton_launches = 0  # Triton kernels the file's calls launched (good programs)
        # verdict -> programs run, their wall time here, and the worker's seconds by step kind (reload: the
        # module executed afresh; build: inputs; call: the file's code; interpreted: inside Triton's interpreter)
        self.profile: dict = {}
        self.start_seconds = 0.0  # waiting for workers to import and load the file (first and restarts)
        # a device fault's program runs again with synchronous launches to find the kernel (_locate_fault):
        # on a GPU, where faults are asynchronous (the CPU tier stands in for CUDA synchronously)
        self.locate_faults = self.device != "cpu"
        self.located = 0
        # helpers run the runner's shapes where programs compile (a GPU), for a check (the plugin asks)
        self.compiles_ahead = compiles_ahead and self.device != "cpu"

    # -- lifecycle --------------------------------------------------------------------------------

    def load(self) -> LoadReport:
        """Start a worker and load the file (once; later calls return the first report)."""
        if self.load_report is None:
            self.load_report = self._start()
            if self.load_report.ok and self.compiles_ahead and self.compile_ahead is None:
                # after this worker's load, not beside it: seven CUDA contexts and imports at once slowed its
                # start by 1 to 2 s on the H200 host
                self.compile_ahead = compile_ahead.start(self.path, self.aiter_mode, str(TASK_FALLBACK), Worker)
        return self.load_report

    def _launch(self) -> Worker:
        """A new worker, already importing and loading the file; its answer is read by _start."""
        worker = Worker(self.output_cap, env=self.env)
        worker.send({"op": "load", "path": self.path, "aiter": self.aiter_mode, "device": self.device,
                     "task_fallback": str(TASK_FALLBACK)})
        return worker

    def _start(self) -> LoadReport:
        """Make the standby (or a new worker) current and wait for its load answer."""
        self.worker, self.standby = self.standby or self._launch(), None
        waited = time.perf_counter()
        if isinstance(self.worker.process, zygote.ZygoteProcess) and not self.worker.process.forked():
            zygote.disable()  # the zygote ended without forking it: not the file's doing, start it plainly
            self._discard_worker()
            self.worker = self._launch()
        answer = self.worker.receive(START_TIMEOUT)
        self.start_seconds += time.perf_counter() - waited
        elapsed = time.perf_counter() - self.worker.sent
        # the programs the worker runs next without being asked, as its load answer names them (worker.py)
        self.worker.queued = list(answer.get("speculating", [])) if isinstance(answer, dict) else []
        self.speculation["queued"] += self.worker.queued
        if isinstance(answer, RunResult):
            self._discard_worker()
            return LoadReport(False, worker_start_seconds=elapsed, death=answer)
        if "internal" in answer:
            forked = isinstance(self.worker.process, zygote.ZygoteProcess)
            self._discard_worker()
            if forked and FORK_POISONED in answer["internal"]:
                # something in the zygote started CUDA's driver without initialising torch.cuda (the zygote's
                # own check cannot see that): every fork is poisoned; plain starts from now on, this one again
                zygote.disable()
                return self._start()
            # our worker broke before or around the file's own code (a load error of the file's is answered
            # as "error", not "internal"): ERROR, a bug of ours, never the file's loads FAIL
            raise WorkerBug(f"mxfp4-fuzz worker failed to load the submission (a bug of ours):\n{answer['internal']}")
        return LoadReport(answer["ok"], answer.get("aiter", ""), answer.get("aiter_detail", ""),
                          answer.get("nondeterministic", False), answer.get("exec_seconds", 0.0),
                          elapsed - answer.get("exec_seconds", 0.0), answer.get("error"),
                          fresh_module=answer.get("fresh_module", "reload"))

    def _discard_worker(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def _replace_dead_worker(self) -> None:
        """Drop the dead worker and start its successor now: a file that crashed once usually crashes
        again while Hypothesis shrinks, and the successor imports torch while we judge this run."""
        self._discard_worker()
        if self.standby is None:
            self.standby = self._launch()

    def close(self, wait: bool = True) -> None:
        """End the workers and helpers and remove the run's files. ``wait`` False (the check's end, its report
        written): every process is killed and not waited for, unless profiles are being written (their exit
        handlers write them): on the H100 host 0.3 to 0.6 s passed between the report and the command's end."""
        wait = wait or bool(os.environ.get(profiling.PROFILE_DIR_ENV))
        if self.compile_ahead is not None:
            self.compile_ahead.stop(wait)
        if self.worker is not None:
            self.worker.close(wait)
            self.worker = None
        if self.standby is not None:
            self.standby.close(wait)
            self.standby = None
        self.temp.cleanup()

    # -- programs ---------------------------------------------------------------------------------

    def current_timeout(self) -> float:
        """The base timeout; once something hung, a shorter one derived from the good runs, so that a
        file that hangs on many examples does not cost the full timeout on each."""
        if self.hangs:
            return min(self.timeout, max(AFTER_HANG_FLOOR, 3 * self.slowest_good_run))
        return self.timeout

    def _profile(self, wall: float, timing: dict | None = None, died: bool = False) -> None:
        """Add a program's seconds to the current verdict's time profile (``profile``)."""
        entry = self.profile.setdefault(self.verdict or "-", {"programs": 0, "program_wall": 0.0, "worker": {}})
        if timing is None:  # the death's own RunResult comes later: count its wall time once
            if died:
                entry["programs"] += 1
                entry["program_wall"] += wall
                entry["died"] = entry.get("died", 0) + 1
            return
        entry["programs"] += 1
        entry["program_wall"] += wall
        for kind, seconds in timing.items():
            entry["worker"][kind] = entry["worker"].get(kind, 0.0) + seconds

    def cap_now(self) -> float:
        """The hard cap for a program starting now: the budget's deadline may come first."""
        if self.deadline is None:
            return self.hard_cap
        return max(0.0, min(self.hard_cap, self.deadline - time.perf_counter()))

    def _locate_fault(self, steps: list, result: RunResult, timeout: float) -> None:
        """Where a device fault happened. A kernel's fault surfaces at the next call that waits for the GPU,
        often in our code or in another kernel's launch, so its raise site names nobody. The program runs
        once more on a fresh worker whose launches are synchronous (``LOCATE_ENV``): the fault then raises
        at the launch that faulted, and that exception replaces the first one on the faulting call's record
        (the first kept as ``surfaced``), so provenance names the kernel's owner: the file's launch is its
        FAIL, a launch inside a stand-in of ours (an emulated aiter kernel reading out of bounds) is NOT RUN,
        ours to fix. At most ``LOCATE_CAP`` faults per check are located (each costs a worker start and the
        program again, outside the time budget); a fault that does not recur stays where it surfaced, and
        the record says so."""
        if not self.locate_faults or self.located >= LOCATE_CAP:
            return
        self.located += 1
        fault = next(r for r in result.records if r.get("exception", {}).get("device_fault"))
        locator = SubmissionRunner(self.path, aiter=self.aiter_mode, device=self.device, timeout=self.timeout,
                                   output_cap=self.output_cap, hard_cap=self.hard_cap,
                                   env={**(self.env or {}), **LOCATE_ENV})
        locator.locate_faults = False  # it locates nothing itself
        try:
            again = locator.run(steps, timeout) if locator.load().ok else None
        except (RuntimeError, BudgetExhausted):  # it did not load, or broke: where it faulted stays unknown
            again = None
        finally:
            locator.close()
        recurred = [r for r in (again.records if again is not None and again.kind == "ok" else [])
                    if r.get("exception", {}).get("device_fault")]
        first = fault["exception"]
        if recurred and recurred[0].get("out") == fault.get("out"):
            surfaced = {key: first.get(key) for key in ("type", "message", "where", "frames")}
            fault["exception"] = {**recurred[0]["exception"], "surfaced": surfaced,
                                  "located": "raised again where it faulted, with launches made synchronous "
                                             "(CUDA_LAUNCH_BLOCKING=1)"}
        else:
            first["located"] = ("not located: with launches made synchronous the program "
                                + ("did not fault at the same call" if again is not None else "could not run"))

    def _speculated(self, key: str, timeout: float, hard_cap: float) -> RunResult | dict | None:
        """The answer of a program the worker ran before it was asked (``prelaunch``), for the program ``key``,
        or None when it ran no such program. Answers come in the order the worker ran them: those of queued
        programs before this one are kept for when their verdicts ask. A queued program is the first in line
        for the worker, so asking for anything else first waits for the queue (in a check the verdicts ask in
        the queue's order; a failing official verdict's further programs wait for the modes, which run next
        anyway). A death or a fault ends the queue with the worker; a program it ran for nobody is dropped,
        and run afresh if a verdict asks for it."""
        if key in self.speculated:
            name, answer = self.speculated.pop(key)
            self.speculation["taken"].append(name)
            return answer
        if self.load_report is None:
            self.load()  # its answer comes first, and names the programs queued behind it
        from kernels.platform import detect
        from fuzz.submission.runner_programs import prediction_steps

        while self.worker is not None and self.worker.queued:
            name = self.worker.queued.pop(0)
            theirs = json.dumps(prediction_steps(name, detect().tier), sort_keys=True)
            self.worker.expect()
            answer = self.worker.receive(timeout, hard_cap, self.kill_at if self.deadline is not None else None)
            answer = speculated_output(answer, self.worker.speculation_dirs[name])
            if theirs == key:
                self.speculation["taken"].append(name)
                return answer
            if isinstance(answer, RunResult) or "internal" in answer or device_faulted(answer):
                why = answer.kind if isinstance(answer, RunResult) else "internal" if "internal" in answer else "fault"
                self.speculation["dropped"] += [f"{name} ({why})", *self.worker.queued]
                self._replace_dead_worker()
                return None
            self.speculated[theirs] = (name, answer)
        return None

    def describe_speculation(self) -> str:
        """What the worker ran before it was asked, and what the verdicts took of it; empty when nothing."""
        queued = self.speculation["queued"]
        if not queued:
            return ""
        text = (f"the worker queued {', '.join(queued)} right after its load, before the verdicts asked; "
                f"{len(self.speculation['taken'])} of {len(queued)} taken by their verdicts")
        if self.speculation["dropped"]:
            text += f"; dropped with the worker: {', '.join(self.speculation['dropped'])}"
        return text

    @property
    def compiles(self) -> bool:
        """Whether a program at a new shape may compile kernels first: a compiled tier (the CPU interprets) and a
        file whose calls launch Triton kernels (aiter's API runs as PyTorch ops here; HIP and CUDA sources build
        once, not per shape)."""
        return self.device != "cpu" and self.triton_launches > 0

    def new_shapes(self, steps: list) -> list:
        """The shapes ``steps`` build that no good program built yet (steering.shape_key)."""
        return [shape_key(s["case"]) for s in steps if s.get("do") in ("build", "write")
                and shape_key(s["case"]) not in self.shapes_run]

    def _note_hip_builds(self, records: list) -> None:
        """Keep each HIP/CUDA build any program of this check recorded (its reload included), once: a file that
        builds only where its library is missing (``if not os.path.exists(so): hipcc ...``) builds in the first
        program of one worker, and ``builds_gfx950``'s own probe may run elsewhere."""
        builds = [build for record in records for build in record.get("hip_builds", [])]
        if builds:  # only a file that builds HIP pays hip_builds' import (torch)
            from fuzz.submission.hip_builds import distinct

            self.hip_builds_seen = distinct(self.hip_builds_seen + builds)

    def estimate(self) -> float:
        """Seconds the current verdict's next program and the judging of its answer are expected to take: the
        medians of the verdict's last ones. A verdict's first program has none of its own: it takes the other
        fuzzed verdicts' (on the H100 host a first correctness program estimated at 0 s started 0.5 s before its
        deadline and its example ended 3.1 s past it, stop 54); the runner's prediction programs, which run the
        full shapes, are no measure of a fuzzed one."""
        def median(own: dict) -> float:
            values = own.get(self.verdict) or [s for v, seen in own.items() if v not in PREDICTION_VERDICTS
                                                for s in seen]
            values = sorted(values)
            return values[len(values) // 2] if values else 0.0

        return median(self.durations) + median(self.judging)

    def note_judging(self, verdict: str, seconds: float) -> None:
        """One example of ``verdict`` spent ``seconds`` here outside its programs (the plugin's measure)."""
        kept = self.judging.setdefault(verdict, [])
        kept.append(max(0.0, seconds))
        del kept[:-5]

    def _budget_gate(self, key: str, steps: list) -> RunResult | None:
        """A result already seen for this program once the deadline is near, else None to run it; raises
        BudgetExhausted when it would not end in time. On a compiled tier a program at a shape nothing ran
        yet is estimated at no less than NEW_SHAPE_SECONDS (its kernels compile first)."""
        if self.deadline is None:
            return None
        now = time.perf_counter()
        estimate = self.estimate()
        if self.compiles and self.verdict not in PREDICTION_VERDICTS and self.new_shapes(steps):
            estimate = max(estimate, NEW_SHAPE_SECONDS)  # the runner's own programs are never held back by a guess
        if now + estimate <= self.deadline:
            return None
        if key in self.seen:
            self.seen.move_to_end(key)
            return self.seen[key]
        raise BudgetExhausted(self.verdict, "the time budget ran out" if now >= self.deadline else
                              f"the next program (about {estimate:.1f} s) would end past the time budget")

    def run(self, steps: list, timeout: float | None = None, _retried: bool = False) -> RunResult:
        """Run ``steps`` on a freshly executed submission module (a leading reload is added). A program
        that crashed or hung before is not run again: each run starts from a fresh module, so it would
        die the same way, and Hypothesis replays its failing example once more at the end. Raises
        BudgetExhausted when the time budget has no room for it (``budget.py``)."""
        key = json.dumps(steps, sort_keys=True)
        if key in self.deaths:
            return self.deaths[key]
        timeout = timeout if timeout is not None else self.current_timeout()
        hard_cap = max(self.hard_cap, timeout) if self.hard_cap > self.timeout else timeout
        waited = time.perf_counter()  # a speculated answer: the program's wall time here is the wait for it
        answer = self._speculated(key, timeout, hard_cap)
        if answer is None:
            seen = self._budget_gate(key, steps)
            if seen is not None:
                return seen
            report = self.load()
            if not report.ok:
                raise RuntimeError(f"the submission did not load: {report.describe_error()}")
            if self.worker is None:
                self.restarts += 1
                restarted = self._start()
                if not restarted.ok:
                    raise RuntimeError(f"the submission no longer loads: {restarted.describe_error()}")
            self.run_count += 1
            out_dir = os.path.join(self.temp.name, f"run{self.run_count}")
            os.makedirs(out_dir)
            answer = self.worker.request({"op": "run", "steps": [{"do": "reload"}, *steps], "out_dir": out_dir,
                                          **program_options(timeout)},
                                         timeout, hard_cap, self.kill_at if self.deadline is not None else None)
            waited = self.worker.sent
        self._profile(wall=time.perf_counter() - waited, died=isinstance(answer, RunResult))
        if isinstance(answer, RunResult) and answer.kind == "budget":
            self._replace_dead_worker()
            raise BudgetExhausted(self.verdict, f"a program was ended at the time budget's deadline after "
                                  f"{answer.seconds:.1f} s")
        if isinstance(answer, RunResult):
            self._replace_dead_worker()
            self.hangs += answer.kind == "timeout"
            self.too_slow += answer.kind == "too_slow"
            if answer.step is not None:
                answer.step -= 1  # our leading reload is step 0 of the worker's program
            self.deaths[key] = answer
            return answer
        if "internal" in answer:
            # Whatever broke (our code, or a context an earlier call left unusable), the next program gets a
            # fresh worker; this one is run once more on it before the error is called ours.
            self._replace_dead_worker()
            if not _retried:
                return self.run(steps, timeout, _retried=True)
            raise WorkerBug(f"mxfp4-fuzz worker error (a bug of ours):\n{answer['internal']}")
        self._note_hip_builds(answer["records"])
        result = RunResult("ok", answer["records"][1:], answer["seconds"], timeout=timeout, hard_cap=hard_cap,
                           progress=_rated(answer.get("counters", {})), timing=answer.get("timing", {}),
                           **answer["_output"])
        self._profile(wall=time.perf_counter() - waited, timing=result.timing)
        self.slow_runs += bool(result.slow_note())
        reload_error = answer["records"][0].get("error")
        if reload_error:
            raise RuntimeError(f"the submission no longer loads: {reload_error['type']}: {reload_error['message']}")
        if device_faulted(answer):
            self._replace_dead_worker()  # the GPU context is unusable after a fault
            self._locate_fault(steps, result, timeout)
        else:
            self.slowest_good_run = max(self.slowest_good_run, result.seconds)
            self.shapes_run.update(self.new_shapes(steps))
            self.layouts_run.update(layout_key(s["case"]) for s in steps if s.get("do") in ("build", "write"))
            self.triton_launches += result.progress.get("launches", 0)
        if self.deadline is not None:
            self.seen[key] = result
            while len(self.seen) > SEEN_CAP:
                self.seen.popitem(last=False)
            self.durations.setdefault(self.verdict, []).append(result.seconds)
            del self.durations[self.verdict][:-5]
        return result
