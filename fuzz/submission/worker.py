"""The worker process: loads one submission file the way the official harness does and runs programs
of calls on it (``session.py``). Started by ``runner.Worker``; never imported by the parent.

Protocol: one JSON object per line on two inherited pipe fds (requests in, responses out). While a
program runs, progress reports (objects with a "progress" key: the step, Triton launches and
interpreted program instances, see ``progress.py``) precede its answer. Tensors go back as
``torch.save`` files in the request's ``out_dir``; nothing else is pickled. fds 1 and 2
(the submission's prints, faulthandler dumps) are pipes the parent reads into capped buffers.

Every program starts from a fresh module, so module-level caches never leak from one fuzz example into
the next: a failure replays, and Hypothesis can shrink it. Two ways, the cheaper one chosen at load
(``choose_fresh_module``): the file is executed afresh at the start of every program ("reload"), or, on
the CPU tier where executing it costs more than a fork, the worker forks a child per program from the
module it loaded once and never called ("fork": copy-on-write; a file that builds HIP or compiles at
import pays it once). The child answers the program and exits; a child that dies takes the worker with
it, the same way (signal or exit code), so the parent sees the death it would have seen. The worker
runs torch's pools with one thread until it forks, so a child never inherits a started OpenMP pool
(GNU OpenMP hangs in a forked child whose parent ran a parallel region); the child takes the host's
thread budget. CUDA does not survive a fork: on a GPU the file is always executed afresh. Inputs are
placed in a model of PyTorch's caching allocator (``allocator.py``).
"""
from __future__ import annotations

import argparse
import contextlib
import faulthandler
import gc
import importlib.util
import json
import os
import signal
import sys
import threading
import time
import traceback

import torch

torch.set_num_threads(1)  # until a program runs (thread_budget): a forked child must not inherit a started OpenMP pool
import kernels  # noqa: F401  (fixes the Triton mode before the submission decorates any kernel)
from fuzz.host import process_tree, profiling, thread_budget
from fuzz.search.strategies import Case
from fuzz.submission import poison, progress
from fuzz.submission.answers import SPECULATED_OUTPUT, device_faulted
from fuzz.submission.session import LoadError, Session, execute_submission, prepare_imports


# ---------------------------------------------------------------------------------------------------
# Main loop


def handle(session_holder: dict, request: dict, report) -> dict:
    """One request -> its answer; ``report`` writes a progress report without flushing the submission's
    output (it may be called from a thread the submission started)."""
    op = request["op"]
    if op == "load":
        from reference.emulation.select import use_aiter

        path = os.path.abspath(request["path"])
        try:
            aiter = use_aiter(request["aiter"])
        except RuntimeError as error:  # --aiter real where aiter does not import
            return {"ok": False, "error": {"stage": "aiter", "type": type(error).__name__, "message": str(error)}}
        prepare_imports(path, request["task_fallback"])
        if request["device"] == "auto":  # prelaunched: the same choice the runner makes
            from kernels.platform import detect

            request["device"] = detect().device
        if request["device"] == "cpu":  # no GPU: "cuda" is the CPU, torch.cuda answers as on the runner
            from kernels.platform import detect
            from reference.emulation import cuda_on_cpu

            detect()  # the tier is decided (and cached) before torch.cuda starts answering "available"
            cuda_on_cpu.install()
        if aiter.kind == "emulated":  # aiter's public API in PyTorch on every tier: judged on what it returns,
            importlib.import_module("aiter.ops.triton._vectorized").set_mode(  # not interpreted (CPU) or
                os.environ.get("MXFP4_FUZZ_AITER_PUBLIC", "vectorized"))  # compiled for each config (GPU)
        elif aiter.kind == "source":  # the point is to run aiter's own wrappers and kernels
            importlib.import_module("aiter.ops.triton._vectorized").set_mode("kernels")
        if request["device"] != "cpu":  # compiled Triton: a kernel a helper is compiling is waited for, not
            from fuzz.host import compile_caches  # compiled twice (before the file's kernels get binders)

            compile_caches.compile_once()
        if not getattr(torch.version, "hip", None):  # no ROCm: HIP built or loaded at runtime fails as without
            from reference.emulation import no_rocm, runner_torch_version  # ROCm, and is recorded; a CUDA GPU
            # still builds CUDA-clean sources. The file reads torch.version as on the runner (hip set): its HIP
            # path is the one tried, never a fallback chosen by this machine's torch
            runner_torch_version.install(path)
            no_rocm.install(cuda_builds=request["device"] != "cpu")
            no_rocm.on_hip_cpu_block(progress.COUNTERS.program)  # a HIP block on the CPU model is progress
            if request["device"] != "cpu":  # NVIDIA: the config its autotuner times fastest says nothing of
                from reference.emulation import triton_interpreter  # gfx950's pick: every config a variant,

                triton_interpreter.install_autotune_variants()  # as on the CPU tier
        session = Session(path, request["device"])
        start = time.perf_counter()
        try:
            module = execute_submission(path)
        except LoadError as error:
            return {"ok": False, "error": {"stage": error.stage, **error.error}, "aiter": aiter.describe()}
        exec_seconds = time.perf_counter() - start
        session.module = module
        session_holder["session"] = session
        gc.freeze()  # torch, triton and the submission's imports: later collections skip them
        session.fresh_module, fork_seconds = choose_fresh_module(request["device"], exec_seconds)
        if session.fresh_module == "fork":  # what every child does first is done once here, warm for all
            with poison.paused():
                Case(2, 64, 256).build()
        return {
            "ok": True,
            "aiter": aiter.kind,
            "aiter_detail": aiter.describe(),
            "nondeterministic": getattr(module, "NONDETERMINISTIC", False) is True,
            "exec_seconds": exec_seconds,
            "fresh_module": session.fresh_module,
            "fork_seconds": fork_seconds,
            "device": request["device"],
        }
    if op == "run":
        session = session_holder["session"]
        if session.fresh_module == "fork":
            parts = poison_parts(request["steps"])
            if parts is not None and os.environ.get(TEMPLATES_ENV, "1") != "0":
                return run_poisoned_parts(session, request, report, parts)
            segments = fork_segments(request["steps"])
            if len(segments) > 1:
                return run_segments(session, request, report, segments)
            if run_in_child():
                return None  # the child answered
            session.module_is_fresh = True  # in the child: the module was loaded and never called
            thread_budget.apply(thread_budget.budget())  # the child's share of the host (the parent kept one thread)
        else:
            thread_budget.refresh()  # the host's checks may have changed since the last program: take the new share
        return run_program(session, request, report)
    raise ValueError(f"unknown op {op!r}")


def fork_segments(steps: list) -> list:
    """[(index of its first step, steps)]: the program cut before each fresh module it asks for after its
    start (a ``reload`` step), so each part runs in its own child forked from the module loaded once, instead of
    executing the file again mid-program (504_combined_cpp's import-time warm-up, 9.5 s on the CPU model, was
    paid by every stale example that asks for a fresh module's output: 37 s of its 78 s check). Whole
    (one part) where a part names a slot made in an earlier one, or where a poison step is in the program (a
    poisoned reload poisons the file's import-time allocations, which a fork of the unpoisoned module would not
    have)."""
    cuts = [i for i, step in enumerate(steps) if step["do"] == "reload" and i > 0]
    if not cuts or any(step["do"] == "poison" for step in steps):
        return [(0, steps)]
    bounds = [0, *cuts, len(steps)]
    segments = [(start, steps[start:end]) for start, end in zip(bounds, bounds[1:])]
    for _, part in segments[1:]:
        made = {step["slot"] for step in part if step["do"] == "build"}
        if any("slot" in step and step["slot"] not in made for step in part):
            return [(0, steps)]
    return segments


def part_in_child(session, request: dict, steps: list, report, offset: int) -> tuple:
    """(the answer's JSON text, the child's wait status): ``steps`` run by a child forked from this process's
    module (``offset``: the index of the first step in the runner's program). Empty text: it died first."""
    read_end, write_end = os.pipe()
    flush_output()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        session.module_is_fresh = True  # this process's module: executed, never called
        thread_budget.apply(thread_budget.budget())  # the child's share of the host (its parent kept one thread)
        try:
            answer = run_program(session, {**request, "steps": steps}, report, offset=offset)
        except Exception:  # our own bug, not the submission's (as main's loop answers it)
            answer = {"ok": False, "internal": traceback.format_exc()}
        with os.fdopen(write_end, "w", encoding="utf-8") as pipe:
            pipe.write(json.dumps(answer))
        flush_output()
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "r", encoding="utf-8") as pipe:
        text = pipe.read()
    _, status = os.waitpid(pid, 0)
    return text, status


def _part_answer(text: str, status: int) -> dict:
    """A part's answer (``part_in_child``), or this worker ends as the part's child ended: the runner reads the
    same death (one without an answer too)."""
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        _die_like(status)
    if not text:  # it exited without an answer: a death the runner reads as one
        flush_output()
        os._exit(1)
    return json.loads(text)


TEMPLATES_ENV = "MXFP4_FUZZ_POISON_TEMPLATES"  # =0: a poisoned program executes the file afresh, per example
_TEMPLATES: dict = {}  # pattern -> its PoisonTemplate, in this worker (one loaded file per worker)


def poison_parts(steps: list) -> list | None:
    """[(index of its first step, pattern, steps)] for a program made of parts that each set a poison and then
    ask for a fresh module (the uninitialised verdict: ``poison ff, reload, build, call, poison 00, reload,
    build, call`` after the runner's leading reload), each using only the slots it builds; None otherwise."""
    if not steps or steps[0]["do"] != "reload":
        return None
    starts = [i for i, step in enumerate(steps) if step["do"] == "poison"]
    if not starts or starts[0] != 1:
        return None
    parts = []
    for start, end in zip(starts, [*starts[1:], len(steps)]):
        part = steps[start:end]
        if len(part) < 2 or part[1]["do"] != "reload" or any(s["do"] in ("reload", "poison") for s in part[2:]):
            return None
        made = {step["slot"] for step in part if step["do"] == "build"}
        if any("slot" in step and step["slot"] not in made for step in part):
            return None
        parts.append((start, part[0].get("pattern"), part))
    return parts


class PoisonTemplate:
    """A child of the worker holding the file executed afresh under one poison pattern (its import-time
    allocations filled), never called; it forks one child per example part, which runs the part's steps
    after the poison and the reload on that module. The file's import under a pattern is paid once per
    worker instead of once per example (504_combined_cpp: 28 s of its 78 s CPU check were the uninitialised
    verdict's two imports per example). Ends at EOF on its requests (the worker's end)."""

    def __init__(self, session, pattern: str, report, others: list):
        requests_r, self._requests_w = os.pipe()
        self._answers_r, answers_w = os.pipe()
        flush_output()
        pid = os.fork()
        if pid == 0:
            os.close(self._requests_w)
            os.close(self._answers_r)
            for other in others:  # their pipes must close with the worker, not live on in this process
                other.close_ends()
            _serve_template(session, pattern, report, requests_r, answers_w)
        os.close(requests_r)
        os.close(answers_w)
        self.pid = pid
        self.requests = os.fdopen(self._requests_w, "w", encoding="utf-8")
        self.answers = os.fdopen(self._answers_r, "r", encoding="utf-8")

    def close_ends(self) -> None:
        for stream in (self.requests, self.answers):
            try:
                stream.close()
            except OSError:
                pass

    def run(self, request: dict, steps: list, offset: int) -> dict:
        self.requests.write(json.dumps({"request": request, "steps": steps, "offset": offset}) + "\n")
        self.requests.flush()
        line = self.answers.readline()
        if not line:  # the template itself died (its import crashed): this worker dies the same way
            _, status = os.waitpid(self.pid, 0)
            _die_like(status)
        return json.loads(line)


def _serve_template(session, pattern: str, report, requests_fd: int, answers_fd: int) -> None:
    """The template's life (in the forked child; never returns). It keeps the worker's one thread, as the worker
    does before it forks: a child forked from a process that ran a thread pool hangs (504_combined_cpp's import
    runs its HIP on the CPU model; with the template at the check's thread budget every child hung)."""
    session.progress = lambda index, ours: None  # no program of the runner's is running here
    session.module_is_fresh = False  # the reload below executes the file afresh, under the pattern
    prefix = session.run([{"do": "poison", "pattern": pattern}, {"do": "reload"}], "")
    failed = "error" in prefix[1]
    poison.set_pattern(pattern)  # session.run ends every poison with its program; this one lasts
    session.module_is_fresh = True
    with os.fdopen(requests_fd, "r", encoding="utf-8") as requests, \
            os.fdopen(answers_fd, "w", encoding="utf-8") as answers:
        for line in requests:
            job = json.loads(line)
            reply = {"prefix": prefix}
            if not failed:
                # one example's part: the template's module, never called
                reply["answer"], reply["status"] = part_in_child(session, job["request"], job["steps"], report,
                                                                 job["offset"])
                prefix = [prefix[0], {"do": "reload", "seconds": 0.0}]  # the import is paid: later parts fork it
            # (a failed import keeps its record: each program that asks again ends at the same reload)
            answers.write(json.dumps(reply) + "\n")
            answers.flush()
    flush_output()
    os._exit(0)


def run_poisoned_parts(session, request: dict, report, parts: list) -> dict:
    """A poisoned program (``poison_parts``) run part by part in children of each pattern's template; the
    answers merged as one program's, the records in the program's order (the runner's leading reload first:
    the loaded module, never called). A part that dies kills this worker the same way; a part whose poisoned
    import failed ends the program, as a failed reload does."""
    templates = _TEMPLATES
    base = {"programs": progress.COUNTERS.programs, "launches": progress.COUNTERS.launches}
    answers = []
    head = [{"do": "reload", "seconds": 0.0}]
    for offset, pattern, part in parts:
        if pattern not in templates:
            templates[pattern] = PoisonTemplate(session, pattern, report, list(templates.values()))
        reply = templates[pattern].run(request, part[2:], offset + 2)
        records = head + reply["prefix"]
        head = []
        if "answer" not in reply:  # the file's import under this pattern failed: the program ends there
            answers.append({"ok": True, "records": records, "seconds": 0.0, "timing": {},
                            "counters": dict(progress.COUNTERS.snapshot())})
            break
        answer = _part_answer(reply["answer"], reply["status"])
        if not answer.get("ok", True):
            return answer
        imported = reply["prefix"][1].get("seconds", 0.0)  # the template's import, on its first part only
        timing = {**answer["timing"], "reload": answer["timing"].get("reload", 0.0) + imported}
        answers.append({**answer, "records": records + answer["records"], "timing": timing,
                        "seconds": answer["seconds"] + imported})
    return merged_answers(answers, base)


def run_segments(session, request: dict, report, segments: list) -> dict:
    """The program's parts (``fork_segments``) each in a child forked from the loaded module, one after another;
    their answers merged as one program's: records in order, seconds and timing summed, counters advanced by
    every part. A part that dies kills this worker the same way (``_die_like``); a part whose fresh module failed
    to load ends the program, as a failed reload does."""
    answers = []
    base = {"programs": progress.COUNTERS.programs, "launches": progress.COUNTERS.launches}  # what each child inherits
    for offset, steps in segments:
        answer = _part_answer(*part_in_child(session, request, steps, report, offset))
        if not answer.get("ok", True):
            return answer
        answers.append(answer)
        if any(record.get("error") for record in answer["records"]):  # a fresh module that failed to load
            break
    return merged_answers(answers, base)


def merged_answers(answers: list, base: dict) -> dict:
    """The parts' answers as one program's. Each child's counters start from ``base``, the loaded module's counts
    it inherited, so the program's count is the base plus every part's own advance."""
    counters = dict(answers[-1]["counters"])
    for key in ("programs", "launches"):
        counters[key] = base[key] + sum(a["counters"].get(key, 0) - base[key] for a in answers)
    counters["seconds"] = sum(a["counters"].get("seconds", 0.0) for a in answers)
    timing: dict = {}
    for answer in answers:
        for key, value in answer["timing"].items():
            timing[key] = timing.get(key, 0) + value
    return {"ok": True, "records": [r for a in answers for r in a["records"]],
            "seconds": sum(a["seconds"] for a in answers), "counters": counters, "timing": timing}


def run_program(session, request: dict, report, offset: int = 0) -> dict:
    """One program's answer (its records, seconds, counters and timing); ``offset``: the index of its first step
    in the program the runner sent (a part of it: ``run_segments``)."""
    dump_after = request.get("hang_dump_after")

    def rearm_hang_dump() -> None:  # the stacks are dumped only after dump_after s without progress
        if dump_after:
            faulthandler.dump_traceback_later(dump_after, exit=False)

    def report_progress(snapshot: dict) -> None:
        report(snapshot)
        rearm_hang_dump()

    def step_begins(index: int, ours: bool) -> None:
        flush_output()  # what the submission printed so far reaches the parent before the report
        progress.COUNTERS.begin_step(offset + index, ours)

    progress.COUNTERS.start_run(report_progress, request.get("report_every", 1.0))
    session.progress = step_begins
    rearm_hang_dump()
    start = time.perf_counter()
    try:
        records = session.run(request["steps"], request["out_dir"])
    finally:
        progress.COUNTERS.stop_reports()
        faulthandler.cancel_dump_traceback_later()
    timing = {**session.timing, "interpreted": progress.COUNTERS.interpreted_seconds,
              "compiling": progress.COUNTERS.compiling_seconds, "compiles": progress.COUNTERS.compiles}
    return {"ok": True, "records": records, "seconds": time.perf_counter() - start,
            "counters": progress.COUNTERS.snapshot(), "timing": timing}


FORK_ENV = "MXFP4_FUZZ_FORK"  # =0: always execute the file afresh; =1: fork wherever the tier allows


def choose_fresh_module(device: str, exec_seconds: float) -> tuple[str, float]:
    """("fork" or "reload", seconds one fork and exit took): fork where the tier allows it (the CPU, CUDA
    never initialised) and a fork costs less than executing the file again; a child also starts without
    the warm caches the parent has not filled, hence the factor of two."""
    choice = os.environ.get(FORK_ENV, "")
    if choice == "0" or device != "cpu" or not hasattr(os, "fork"):  # "cpu": no GPU here, so no CUDA context
        return "reload", 0.0
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    fork_seconds = time.perf_counter() - start
    if choice == "1" or exec_seconds > max(FORK_MIN_EXEC_SECONDS, 2 * fork_seconds):
        return "fork", fork_seconds
    return "reload", fork_seconds


FORK_MIN_EXEC_SECONDS = 0.05


def run_in_child() -> bool:
    """Fork. In the parent: wait for the child and return True when it exited cleanly (it sent the
    answer), or die the way it died. In the child: return False (the caller runs the program, main's loop
    sends the answer and exits)."""
    flush_output()
    pid = os.fork()
    if pid == 0:
        return False
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return True
    _die_like(status)


def _die_like(status: int) -> None:
    """End this worker as its child ended (the runner reads the same death)."""
    flush_output()
    if os.WIFSIGNALED(status):  # the parent dies of the child's signal: the runner reads the same death
        signal_number = os.WTERMSIG(status)
        faulthandler.disable()
        signal.signal(signal_number, signal.SIG_DFL)
        os.kill(os.getpid(), signal_number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def flush_output() -> None:
    sys.stdout.flush()
    sys.stderr.flush()


def exit_when_orphaned(parent: int) -> None:
    """A worker whose parent died (killed pytest, closed terminal) must not hang on forever."""
    def watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(3)

    threading.Thread(target=watch, daemon=True, name="mxfp4-fuzz-orphan-watch").start()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--request-fd", type=int, required=True)
    parser.add_argument("--response-fd", type=int, required=True)
    args = parser.parse_args(argv)
    profiling.profile_if_asked("worker")
    faulthandler.enable(all_threads=True)  # a segfault leaves a Python stack in the captured stderr
    exit_when_orphaned(os.getppid())
    progress.install()
    requests = os.fdopen(args.request_fd, "r", encoding="utf-8")
    responses = os.fdopen(args.response_fd, "w", encoding="utf-8")

    def report(message: dict) -> None:
        responses.write(json.dumps(message) + "\n")
        responses.flush()

    def send(message: dict) -> None:
        flush_output()  # what the submission printed so far reaches the parent before this message
        report(message)

    session_holder: dict = {}
    parent = os.getpid()
    queued: list = []  # requests this worker makes itself after its load (speculated), before reading more
    while True:
        if queued:
            request = queued.pop(0)
        else:
            line = requests.readline()
            if not line:
                break
            request = json.loads(line)
        try:
            if request.get("speculated"):
                with own_output(request["out_dir"]):
                    response = handle(session_holder, request, report)
            else:
                response = handle(session_holder, request, report)
        except Exception:  # our own bug, not the submission's: say so plainly
            response = {"ok": False, "internal": traceback.format_exc()}
        if request["op"] == "load":
            try:
                queued = speculated_requests(request, response)
            except Exception:  # ours: nothing is speculated, and the answer says so
                queued = []
            response["speculating"] = [r["speculated"] for r in queued]  # the answers the runner is to expect
        elif request.get("speculated") and response is not None and ("internal" in response
                                                                      or device_faulted(response)):
            queued = []  # the runner drops the worker after either (runner.SubmissionRunner._speculated)
        if response is not None:
            send(response)
        if os.getpid() != parent:  # a forked child has answered its one program
            responses.flush()
            os._exit(0)
    process_tree.exit_now(0)  # the runner closed the requests: it waits for this exit, not for a teardown


def speculated_requests(load: dict, answer: dict) -> list:
    """The runner's prediction programs this worker runs right after its load, before anyone asks
    (``runner.prelaunch``): the ones the load named (``then``), built for this host's tier by the builder
    the verdicts use, answered in order like any request. Only after a load that succeeded on a GPU: the
    CPU tier narrows the official shapes first and shares its time by the budget (the load's answer names the
    programs queued, so the runner knows which answers are coming)."""
    queued = load.get("then") or []
    if not queued or not answer.get("ok") or answer.get("device", "cpu") == "cpu":
        return []
    from kernels.platform import detect
    from fuzz.submission.runner_programs import prediction_steps

    tier = detect().tier
    requests = []
    for entry in queued:
        os.makedirs(entry["out_dir"], exist_ok=True)
        requests.append({"op": "run", "steps": [{"do": "reload"}, *prediction_steps(entry["name"], tier)],
                         "out_dir": entry["out_dir"], "speculated": entry["name"], **load.get("then_options", {})})
    return requests


@contextlib.contextmanager
def own_output(folder: str):
    """fds 1 and 2 into files of ``folder`` while a speculated program runs: the runner reads its answer
    whenever its verdict asks, seconds later maybe, when the pipes hold what the next programs printed too;
    the files are this program's alone (a faulthandler dump of a crash or a hang included), read back by
    runner.speculated_output."""
    flush_output()
    saved = [os.dup(1), os.dup(2)]
    files = [os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
             for name in SPECULATED_OUTPUT]
    try:
        for fd, target in zip(files, (1, 2)):
            os.dup2(fd, target)
        yield
    finally:
        flush_output()
        for fd, target in zip(saved, (1, 2)):
            os.dup2(fd, target)
        for fd in (*saved, *files):
            os.close(fd)


if __name__ == "__main__":
    main()
