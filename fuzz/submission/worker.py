"""The worker process: loads one submission file the way the official harness does and runs programs
of calls on it. Started by ``runner.Worker``; never imported by the parent.

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
thread budget. CUDA does not survive a fork: on a GPU the file is always executed afresh. Inputs are placed in a LIFO block pool that behaves like PyTorch's caching
allocator (a freed block of the same size comes back at the same address), so "new values at an old
address" is deterministic on the CPU too; a block still referenced by the submission is never reused,
as with the real allocator.
"""
from __future__ import annotations

import argparse
import ast
import faulthandler
import functools
import gc
import importlib.util
import json
import linecache
import math
import os
import re
import signal
import sys
import threading
import time
import traceback

import torch

torch.set_num_threads(1)  # until a program runs (thread_budget): a forked child must not inherit a started OpenMP pool
import kernels  # noqa: F401  (fixes the Triton mode before the submission decorates any kernel)
from fuzz.host import thread_budget
from fuzz.search.strategies import Case
from fuzz.submission import compiled_kernels, poison, progress
from fuzz.judge.trace import trace_calls

INPUT_NAMES = ("A", "B", "B_q", "B_shuffle", "B_scale_sh")
MODULE_NAME = "submission"  # the official harness does `from submission import custom_kernel`
DEVICE_FAULT_WORDS = (
    "illegal memory access", "device-side assert", "misaligned address", "unspecified launch failure",
    "hipErrorIllegalAddress", "HIP error", "CUDA error", "an illegal instruction",
)
MESSAGE_CHARS = 2000
TRACE_LINES = 40  # per call, in failure cards and the report


class LoadError(Exception):
    def __init__(self, stage: str, error: dict):
        super().__init__(stage)
        self.stage, self.error = stage, error


# ---------------------------------------------------------------------------------------------------
# Loading


def describe_exception(error: BaseException, path: str) -> dict:
    """Type, message, the innermost frame inside the submission file and the last three frames: enough
    to act on, without the traceback soup of torch/triton internals. ``chain`` is the provenance
    ``checks.tier_limit`` judges: the exception and those it was raised from or while handling
    (``__cause__`` / ``__context__``, outermost first), each with its type's MRO and its frames from the
    raise site outward (``provenance_frames``)."""
    frames = traceback.extract_tb(error.__traceback__)
    own = [f for f in frames if os.path.abspath(f.filename) == path]
    if isinstance(error, SyntaxError) and error.filename and os.path.abspath(error.filename) == path:
        where = {"file": path, "line": error.lineno, "code": (error.text or "").strip()}
    elif own:
        where = {"file": path, "line": own[-1].lineno, "code": (own[-1].line or "").strip()}
    else:
        where = None
    tail = [f"{f.filename}:{f.lineno} in {f.name}: {(f.line or '').strip()}" for f in frames[-3:]]
    message = str(error)
    return {
        "type": type(error).__name__,
        "message": message[:MESSAGE_CHARS] + (" ..." if len(message) > MESSAGE_CHARS else ""),
        "where": where,
        "frames": tail,
        "device_fault": any(word in message for word in DEVICE_FAULT_WORDS),
        "chain": exception_chain(error, path),
    }


# -- provenance: where an exception was raised, and by whom ------------------------------------------

CHAIN_LIMIT = 8  # exceptions of a chain recorded
FRAME_LIMIT = 24  # frames per exception, from the raise site outward (runs of library frames count once)
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STAND_IN_ROOT = os.path.join(REPO_ROOT, "reference") + os.sep  # the emulations and the oracle they use
FORWARD_MARKER = "# forwards"  # a stand-in line that only hands the call on to the real API
FORWARD_CALL = re.compile(r"(?:^return\s+|=\s*|^)(?:self\.)?_?(?:stock|original)\w*\(")  # ... or calls the original


def exception_chain(error: BaseException, path: str) -> list:
    """[{type, mro, message, frames}] for ``error`` and each exception it was raised from or while
    handling, outermost first (a suppressed context is left out, as Python's traceback does)."""
    chain, seen = [], set()
    while error is not None and id(error) not in seen and len(chain) < CHAIN_LIMIT:
        seen.add(id(error))
        chain.append({"type": type(error).__name__, "mro": [c.__name__ for c in type(error).__mro__[:-1]],
                      "message": str(error)[:300], "frames": provenance_frames(error.__traceback__, path)})
        error = error.__cause__ if error.__cause__ is not None else (
            None if error.__suppress_context__ else error.__context__)
    return chain


def frame_kind(filename: str, path: str) -> str:
    """own (the submission or a module beside it), stand_in (reference/: our emulations and the oracle
    code they call), interpreter (Triton's interpreter), frontend (triton.language: the semantics the
    compiler applies too) or library (everything else: torch, numpy, the standard library, aiter)."""
    full = os.path.abspath(filename)
    if full == path or os.path.dirname(full) == os.path.dirname(path):
        return "own"
    if full.startswith(STAND_IN_ROOT):
        return "stand_in"
    normal = full.replace(os.sep, "/")
    if normal.endswith("/triton/runtime/interpreter.py"):
        return "interpreter"
    if "/triton/language/" in normal:
        return "frontend"
    return "library"


@functools.lru_cache(maxsize=256)
def _statements(filename: str) -> tuple:
    """((first line, last line, kind), ...) of the file's raise and assert statements."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return ()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise):
            found.append((node.lineno, node.end_lineno, "raise_from" if node.cause is not None else "raise"))
        elif isinstance(node, ast.Assert):
            found.append((node.lineno, node.end_lineno, "assert"))
    return tuple(found)


def statement_kind(filename: str, line: int, code: str) -> str:
    """What the statement at ``line`` is: raise, raise_from (wraps another exception), assert, forward (a
    stand-in handing the call to the real API) or other."""
    if FORWARD_MARKER in code or FORWARD_CALL.search(code.strip()):
        return "forward"
    for first, last, kind in _statements(filename):
        if first <= line <= (last or first):
            return kind
    return "other"


def provenance_frames(tb, path: str) -> list:
    """The frames of a traceback from the raise site outward, up to the submission's innermost frame:
    {kind, file, line, function, code, statement}; a run of library frames is one entry (its innermost)."""
    frames = list(reversed(traceback.extract_tb(tb)))
    kept = []
    for f in frames:
        kind = frame_kind(f.filename, path)
        if kind == "library" and kept and kept[-1]["kind"] == "library":
            kept[-1]["count"] += 1
            kept[-1]["entry"] = f"{f.name} ({f.filename})"  # the run's outermost: the API called
            continue
        code = (f.line or "").strip()
        kept.append({"kind": kind, "file": f.filename, "line": f.lineno, "function": f.name, "code": code[:200],
                     "statement": statement_kind(f.filename, f.lineno, code) if kind != "library" else "other",
                     "count": 1, **({"entry": f"{f.name} ({f.filename})"} if kind == "library" else {})})
        if kind == "own" or len(kept) >= FRAME_LIMIT:
            break
    return kept


def prepare_imports(path: str, task_fallback: str) -> None:
    """The submission's directory first on sys.path (its own helper modules and task.py resolve as in
    the harness's working directory); our task.py stands in when that directory has none."""
    directory = os.path.dirname(path)
    os.chdir(directory)
    sys.path.insert(0, directory)
    if not os.path.exists(os.path.join(directory, "task.py")):
        spec = importlib.util.spec_from_file_location("task", task_fallback)
        task = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(task)
        sys.modules["task"] = task


def execute_submission(path: str):
    """A new module object from the file. Raises LoadError with the stage that failed."""
    if not os.path.isfile(path):
        raise LoadError("missing_file", {"type": "FileNotFoundError", "message": f"no such file: {path}"})
    with open(path, "rb") as f:
        source = f.read()
    try:
        code = compile(source, path, "exec")
    except SyntaxError as error:  # also IndentationError / TabError
        raise LoadError("syntax", describe_exception(error, path)) from None
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    try:
        exec(code, module.__dict__)
    except ImportError as error:
        raise LoadError("import", describe_exception(error, path)) from None
    except BaseException as error:  # SystemExit too: the file ran, and stopped
        raise LoadError("module_code", describe_exception(error, path)) from None
    if not callable(getattr(module, "custom_kernel", None)):
        raise LoadError("no_custom_kernel", {
            "type": "AttributeError", "message": "the file defines no callable custom_kernel(data)"})
    return module


# ---------------------------------------------------------------------------------------------------
# Inputs in a block pool


def raw_bytes(storage) -> torch.Tensor:
    return torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage)


class BlockPool:
    """Storage blocks by size, handed out last-freed first, like the caching allocator."""

    def __init__(self, device: str):
        self.device = device
        self.free: dict[int, list] = {}
        self.released: list = []  # freed but maybe still referenced by the submission

    def place(self, t: torch.Tensor) -> torch.Tensor:
        """A tensor with t's dtype, shape, strides and offset in a pool block holding a copy of t's whole
        storage (so a layout's poisoned padding comes along)."""
        nbytes = t.untyped_storage().nbytes()
        blocks = self.free.get(nbytes)
        storage = blocks.pop() if blocks else torch.empty(nbytes, dtype=torch.uint8, device=self.device).untyped_storage()
        raw_bytes(storage).copy_(raw_bytes(t.untyped_storage()))
        return torch.empty(0, dtype=t.dtype, device=self.device).set_(storage, t.storage_offset(), t.shape, t.stride())

    def release(self, t: torch.Tensor) -> None:
        self.released.append(t.untyped_storage())

    def collect(self) -> None:
        """Blocks that nothing but the pool references any more become free (in release order)."""
        if any(self._referenced(s) for s in self.released):
            gc.collect()  # only then: a full collection costs ~0.2 s with torch loaded
        for storage in self.released:
            if not self._referenced(storage):
                self.free.setdefault(storage.nbytes(), []).append(storage)
        self.released = [s for s in self.released if self._referenced(s)]

    @staticmethod
    def _referenced(storage) -> bool:
        return torch._C._storage_Use_Count(storage._cdata) > 1


def pointers(data) -> list:
    return [None if t is None else t.data_ptr() for t in data]


def bits(t: torch.Tensor) -> torch.Tensor:
    """Same-size integer view: bitwise comparisons that see NaN payloads and -0."""
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def storage_snapshot(data) -> list:
    return [None if t is None else raw_bytes(t.untyped_storage()).clone() for t in data]


def mutations(data, before) -> list:
    """Which inputs changed: {"input": name, "inside_elements": bool} for each."""
    changed = []
    for name, t, snap in zip(INPUT_NAMES, data, before):
        if t is None or torch.equal(raw_bytes(t.untyped_storage()), snap):
            continue
        view = torch.empty(0, dtype=t.dtype, device=t.device).set_(snap.untyped_storage(), t.storage_offset(),
                                                                   t.shape, t.stride())
        changed.append({"input": name, "inside_elements": not torch.equal(bits(view), bits(t))})
    return changed


# ---------------------------------------------------------------------------------------------------
# Programs


def synchronize(device: str) -> None:
    if device != "cpu":
        torch.cuda.synchronize()


# Steps that run our code only (inputs built, written, freed; a poison set): a loaded machine can make them
# slow, and that is not the submission hanging (see patience.py, OWN_STEP_SECONDS).
OWN_STEPS = frozenset({"build", "write", "free", "poison"})


class Session:
    def __init__(self, path: str, device: str):
        self.path, self.device = path, device
        self.progress = lambda index, ours: None  # told each step's index as it begins, and whether it is ours
        self.module = None
        self.pool = BlockPool(device)
        self.fresh_module = "reload"  # or "fork" (choose_fresh_module)
        self.module_is_fresh = False

    def run(self, steps: list, out_dir: str) -> list:
        records: list = []
        slots: dict = {}
        outputs: dict = {}  # out name -> (returned tensor, its bits at return)
        self.timing = {}  # step kind -> seconds in this program (the check's time profile)
        try:
            for index, step in enumerate(steps):
                self.progress(index, step["do"] in OWN_STEPS)
                record = {key: step[key] for key in ("do", "slot", "out", "autotune_choice", "hip_lanes") if key in step}
                records.append(record)
                start = time.perf_counter()
                going_on = self.step(step, record, slots, outputs, out_dir)
                self.timing[step["do"]] = self.timing.get(step["do"], 0.0) + time.perf_counter() - start
                if record.get("exception", {}).get("device_fault"):
                    # The GPU context is lost: every later step (ours too) would raise. The program ends here
                    # and the runner replaces this worker, as after a crash.
                    record["program_ended"] = "device fault"
                    break
                if not going_on:
                    break
        finally:
            poison.set_pattern(None)  # a poison lasts one program
        return records

    def step(self, step, record, slots, outputs, out_dir) -> bool:
        """Runs one step and fills its record; False (only a failed reload) stops the program. A call that
        raises does not: the official harness too goes on to its next test in the same process."""
        kind = step["do"]
        if kind == "reload" and self.module_is_fresh:  # a forked child: the loaded module was never called
            self.module_is_fresh = False
            record["seconds"] = 0.0
        elif kind == "reload":
            start = time.perf_counter()
            previous = self.module
            try:
                self.module = execute_submission(self.path)
            except LoadError as error:
                record["error"] = {"stage": error.stage, **error.error}
                return False
            if self.device != "cpu":  # a GPU: the kernels Triton compiled for the same source (compiled_kernels.py)
                record["kernels_carried"] = compiled_kernels.carry_over(previous, self.module)
            record["seconds"] = time.perf_counter() - start
        elif kind == "build":
            with poison.paused():  # our inputs are the case's bytes, padding included, not the poison
                data, _ = Case.from_json(step["case"]).build()
            self.pool.collect()
            slots[step["slot"]] = tuple(None if t is None else self.pool.place(t) for t in data)
            record["pointers"] = pointers(slots[step["slot"]])
        elif kind == "write":
            data, _ = Case.from_json(step["case"]).build()
            for target, values in zip(slots[step["slot"]], data):
                if target is not None:
                    raw_bytes(target.untyped_storage()).copy_(raw_bytes(values.untyped_storage()))
            record["pointers"] = pointers(slots[step["slot"]])
        elif kind == "free":
            for t in reversed(slots.pop(step["slot"])):  # LIFO: the next build gets each block back in its role
                if t is not None:
                    self.pool.release(t)
        elif kind == "call":
            self.call(step, record, slots[step["slot"]], outputs, out_dir)
        elif kind == "poison":  # the allocators fill what they hand out with this byte from now on
            poison.install(self.path)
            poison.set_pattern(step.get("pattern"))
            poison.take_sites()
        else:
            raise ValueError(f"unknown step {kind!r}")
        return True

    def call(self, step, record, data, outputs, out_dir) -> None:
        before = storage_snapshot(data)
        synchronize(self.device)
        counters = progress.COUNTERS
        programs, launches = counters.programs, counters.launches
        interpreter_state_before_call(step)
        start = time.perf_counter()
        try:
            with trace_calls() as trace:  # which aiter functions and Triton kernels this call ran
                y = self.module.custom_kernel(data)
                synchronize(self.device)
            unmodelled = _hip_cpu_unmodelled()
            if unmodelled:  # whatever the file made of the failed launch, the model could not run it
                raise HipNotModelledAtRunTime(unmodelled)
        except HipNotModelledAtRunTime as error:
            record["exception"] = describe_exception(error, self.path)
            return
        except BaseException as error:  # SystemExit and KeyboardInterrupt from the submission too
            unmodelled = _hip_cpu_unmodelled()
            record["exception"] = describe_exception(HipNotModelledAtRunTime(unmodelled) if unmodelled else error,
                                                     self.path)
            return
        finally:
            record["trace"] = trace.render().splitlines()[:TRACE_LINES] if "trace" in locals() else []
            record["launches_config"] = launch_configs(trace) if "trace" in locals() else []
            record.update(recorded_hip_builds())
            sites = poison.take_sites()
            if sites:
                record["poisoned_allocations"] = sites
            atomics = atomic_add_launches(trace) if "trace" in locals() else []
            if atomics:
                record["atomic_add_launches"] = atomics
        record["seconds"] = time.perf_counter() - start
        record.update(interpreter_state_after_call())
        record["programs"] = counters.programs - programs  # interpreted Triton program instances
        record["launches"] = counters.launches - launches
        record["input_device"] = str(data[0].device)
        record["mutated"] = mutations(data, before)
        record["type"] = f"{type(y).__module__}.{type(y).__qualname__}"
        if isinstance(y, torch.Tensor):
            try:
                self.keep_output(y, step["out"], record, outputs, out_dir)
            except Exception as error:  # e.g. a tensor subclass that cannot be copied or saved
                record["inspect_error"] = describe_exception(error, self.path)

    @staticmethod
    def keep_output(y, name, record, outputs, out_dir) -> None:
        record.update(shape=list(y.shape), dtype=str(y.dtype), device=str(y.device))
        snapshot = y.detach().clone()
        record["file"] = os.path.join(out_dir, f"{name}.pt")
        torch.save(snapshot.cpu(), record["file"])
        record["overwritten"] = [
            earlier for earlier, (held, snap) in outputs.items() if not torch.equal(bits(held.detach()), bits(snap))]
        record["overwritten_files"] = {}  # what the caller now holds in each overwritten output (its error map)
        for earlier in record["overwritten"]:
            record["overwritten_files"][earlier] = os.path.join(out_dir, f"{earlier}_after_{name}.pt")
            torch.save(outputs[earlier][0].detach().cpu().clone(), record["overwritten_files"][earlier])
        record["shares_memory_with"] = [
            earlier for earlier, (held, _) in outputs.items()
            if held.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()]
        outputs[name] = (y, snapshot)


def _plain(v):
    return v if isinstance(v, (int, float, bool, str)) or v is None else str(v)


def launch_configs(trace, limit: int = 64) -> list:
    """The call's Triton launches, distinct, as JSON: kernel, grid, constexprs and capitalised int
    arguments (checks.launch_config turns each into a configuration's key)."""
    seen = {}
    for e in trace.of("triton"):
        launch = {"kernel": e.name, "grid": None if e.grid is None else [_plain(g) for g in e.grid],
                  "constexprs": {k: _plain(v) for k, v in e.constexprs.items()},
                  "scalars": {k: _plain(v) for k, v in e.scalars.items()}}
        seen.setdefault(repr(launch), launch)
        if len(seen) >= limit:
            break
    return list(seen.values())


def atomic_add_launches(trace) -> list:
    """The call's compiled Triton launches whose kernel has float atomic adds: kernel, element types and
    the grid's program count (an upper bound of the adds one element receives when each program adds
    once; a GPU gives no per-address count)."""
    launches = []
    for e in trace.of("triton"):
        if e.atomic_adds:
            programs = math.prod(int(g) for g in e.grid) if e.grid and all(_is_count(g) for g in e.grid) else None
            launches.append({"kernel": e.name, "dtypes": list(e.atomic_adds), "programs": programs})
    return launches


def _is_count(g) -> bool:
    return isinstance(g, int) and not isinstance(g, bool) and g >= 0


def recorded_hip_builds() -> dict:
    """{"hip_builds": [attempt, ...]}: the HIP/CUDA builds no_rocm stopped since the last call (this
    program's reload of the file included), where it is installed (no GPU); {} elsewhere."""
    from reference.emulation import no_rocm

    if not no_rocm.installed():
        return {}
    builds = [a.to_json() for a in no_rocm.attempts()]
    no_rocm.reset_attempts()
    return {"hip_builds": builds}


_HIP_CPU_SEEN = [0]


def _hip_cpu_launches_since_last_call() -> int:
    """Kernel launches of the file's HIP on the CPU model of gfx950 since the last call (0 elsewhere)."""
    from reference.emulation import no_rocm

    if not no_rocm.installed():
        return 0
    total = no_rocm.hip_cpu_launches()
    launches, _HIP_CPU_SEEN[0] = total - _HIP_CPU_SEEN[0], total
    return max(launches, 0)


class HipNotModelledAtRunTime(RuntimeError):
    """The file's HIP, running on the CPU model, needed what the model does not run (the call is NOT RUN)."""


def _hip_cpu_unmodelled() -> str:
    from reference.emulation import no_rocm

    return no_rocm.hip_cpu_take_unmodelled() if no_rocm.installed() else ""


def interpreter_state_before_call(step: dict) -> None:
    """Which config each autotuned kernel runs (the CPU cannot time them: every config is a candidate);
    the shim and autotune records start afresh for this call."""
    from reference.emulation import triton_interpreter

    triton_interpreter.set_autotune_choice(step.get("autotune_choice", 0))
    # The order the CPU model of HIP runs a wave's lanes in (hip_cpu_runtime.h reads it at every launch).
    if step.get("hip_lanes") in ("reversed", "rotated"):
        os.environ["MXFP4_FUZZ_HIP_LANES"] = step["hip_lanes"]
    else:
        os.environ.pop("MXFP4_FUZZ_HIP_LANES", None)
    triton_interpreter.reset_autotune_report()
    triton_interpreter.reset_shims()
    triton_interpreter.reset_bf16_atomic_adds()


def interpreter_state_after_call() -> dict:
    """What the CPU tier did for this call that a report should say: autotuned kernels and their configs,
    compatibility shims the file needed, the CUDA device stood in by the CPU."""
    from reference.emulation import cuda_on_cpu, triton_interpreter

    state = {}
    if triton_interpreter.autotune_report():
        state["autotune"] = triton_interpreter.autotune_report()
    if triton_interpreter.shims_used():
        state["shims"] = triton_interpreter.shims_used()
    if cuda_on_cpu.installed():
        state["device_emulated"] = True
    adds = triton_interpreter.bf16_atomic_adds_per_element()  # the interpreter counts them per address
    if adds:
        state["bf16_atomic_adds"] = adds
    from reference.emulation import amd_launch_options

    launches = _hip_cpu_launches_since_last_call()
    if launches:
        state["hip_cpu_launches"] = launches
    dropped = amd_launch_options.dropped()  # the nvidia tier: AMD-only launch options the file passed
    if dropped:
        state["shims"] = {**state.get("shims", {}),
                          **{f"dropped_{d['option']}": amd_launch_options.note(d) for d in dropped}}
    return state


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
            if aiter.kind == "emulated":  # aiter's public API in PyTorch: judged on what it returns, not interpreted
                importlib.import_module("aiter.ops.triton._vectorized").set_mode(
                    os.environ.get("MXFP4_FUZZ_AITER_PUBLIC", "vectorized"))
            elif aiter.kind == "source":  # the point is to run aiter's own wrappers and kernels: interpreted
                importlib.import_module("aiter.ops.triton._vectorized").set_mode("kernels")
        if not getattr(torch.version, "hip", None):  # no ROCm: HIP built or loaded at runtime fails as without
            from reference.emulation import no_rocm  # ROCm, and is recorded; a CUDA GPU still builds CUDA-clean sources

            no_rocm.install(cuda_builds=request["device"] != "cpu")
            no_rocm.on_hip_cpu_block(progress.COUNTERS.program)  # a HIP block on the CPU model is progress
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
        }
    if op == "run":
        session = session_holder["session"]
        if session.fresh_module == "fork":
            if run_in_child():
                return None  # the child answered
            session.module_is_fresh = True  # in the child: the module was loaded and never called
            thread_budget.apply(thread_budget.budget())  # the child's share of the host (the parent kept one thread)
        else:
            thread_budget.refresh()  # the host's checks may have changed since the last program: take the new share
        return run_program(session, request, report)
    raise ValueError(f"unknown op {op!r}")


def run_program(session, request: dict, report) -> dict:
    """One program's answer (its records, seconds, counters and timing)."""
    dump_after = request.get("hang_dump_after")

    def rearm_hang_dump() -> None:  # the stacks are dumped only after dump_after s without progress
        if dump_after:
            faulthandler.dump_traceback_later(dump_after, exit=False)

    def report_progress(snapshot: dict) -> None:
        report(snapshot)
        rearm_hang_dump()

    def step_begins(index: int, ours: bool) -> None:
        flush_output()  # what the submission printed so far reaches the parent before the report
        progress.COUNTERS.begin_step(index, ours)

    progress.COUNTERS.start_run(report_progress, request.get("report_every", 1.0))
    session.progress = step_begins
    rearm_hang_dump()
    start = time.perf_counter()
    try:
        records = session.run(request["steps"], request["out_dir"])
    finally:
        progress.COUNTERS.stop_reports()
        faulthandler.cancel_dump_traceback_later()
    timing = {**session.timing, "interpreted": progress.COUNTERS.interpreted_seconds}
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
    for line in requests:
        request = json.loads(line)
        try:
            response = handle(session_holder, request, report)
        except Exception:  # our own bug, not the submission's: say so plainly
            response = {"ok": False, "internal": traceback.format_exc()}
        if response is not None:
            send(response)
        if os.getpid() != parent:  # a forked child has answered its one program
            responses.flush()
            os._exit(0)


if __name__ == "__main__":
    main()
