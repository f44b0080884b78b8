"""The worker's session: the submission file loaded the way the official harness loads it, and programs
of steps (``program.py``) run on it: inputs built into the allocator model's blocks, rewritten in place or
freed, the file called, executed afresh, its allocations poisoned. Each step fills a record for the
parent: a call's output (saved as a file), the inputs it wrote into, the earlier outputs it overwrote, its
exception (``provenance.py``) and what the tier did for it (``tier_hooks.py``).
"""
from __future__ import annotations

import importlib.util
import os
import sys
import time

import torch

from fuzz.judge.trace import trace_calls
from fuzz.search.strategies import Case
from fuzz.submission import compiled_kernels, poison, progress
from fuzz.submission.allocator import BlockPool, pointers, raw_bytes
from fuzz.submission.provenance import describe_exception, raised_in_machinery
from fuzz.submission.tier_hooks import (HipNotModelledAtRunTime, aiter_not_emulated, aiter_reads_past,
                                        atomic_add_launches, hip_cpu_unmodelled,
                                        interpreter_state_after_call, interpreter_state_before_call,
                                        launch_configs, recorded_hip_builds, torch_version_reads)

INPUT_NAMES = ("A", "B", "B_q", "B_shuffle", "B_scale_sh")
MODULE_NAME = "submission"  # the official harness does `from submission import custom_kernel`
TRACE_LINES = 40  # per call, in failure cards and the report

# a step's own words, kept on its record
RECORDED_STEP_KEYS = ("do", "slot", "out", "autotune_choice", "hip_lanes", "hip_lds_fill")


# ---------------------------------------------------------------------------------------------------
# Loading


class LoadError(Exception):
    def __init__(self, stage: str, error: dict):
        super().__init__(stage)
        self.stage, self.error = stage, error


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
    # ``import reference`` gives this project's package (the worker imported it first): the names the task's
    # own reference.py has that ours lacks stand in for it (a file's ``from reference import ref_kernel``)
    import reference
    from kernels.platform import detect
    from reference.emulation import task_reference

    task_reference.provide(reference, detect().device)


# (path, source bytes) -> its code object: every program executes the file afresh, and compiling a real
# file's source each time cost 2 ms a program (v55's 90 KB, cProfile on the H100 host, stop 50); the same
# bytes give the same code, and executing a code object again makes a new module as before
_compiled: dict = {}


def execute_submission(path: str):
    """A new module object from the file. Raises LoadError with the stage that failed."""
    if not os.path.isfile(path):
        raise LoadError("missing_file", {"type": "FileNotFoundError", "message": f"no such file: {path}"})
    with open(path, "rb") as f:
        source = f.read()
    code = _compiled.get((path, source))
    if code is None:
        try:
            code = compile(source, path, "exec")
        except SyntaxError as error:  # also IndentationError / TabError
            raise LoadError("syntax", describe_exception(error, path)) from None
        _compiled.clear()
        _compiled[(path, source)] = code
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    try:
        exec(code, module.__dict__)
    except ImportError as error:
        raise LoadError("import", _the_files(describe_exception(error, path), error)) from None
    except BaseException as error:  # SystemExit too: the file ran, and stopped
        raise LoadError("module_code", _the_files(describe_exception(error, path), error)) from None
    if not callable(getattr(module, "custom_kernel", None)):
        raise LoadError("no_custom_kernel", {
            "type": "AttributeError", "message": "the file defines no callable custom_kernel(data)"})
    return module


class MachineryFailed(RuntimeError):
    """The check's own code raised inside the file's call or import: the worker answers it as an internal error
    (a bug of ours: ERROR, never the file's FAIL)."""


def _the_files(described: dict, error: BaseException) -> dict:
    """``described`` (``describe_exception`` of ``error``), when the file's code or what it called raised it;
    MachineryFailed when a hook of ours did (``raised_in_machinery``)."""
    ours = raised_in_machinery(described)
    if ours is not None:
        raise MachineryFailed(f"mxfp4-fuzz's own code raised {type(error).__name__} inside the file's call, at "
                              f"{ours.file}:{ours.line} in {ours.function} ({ours.code}): {error}") from error
    return described


# ---------------------------------------------------------------------------------------------------
# Inputs and outputs of a call


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
                record = {key: step[key] for key in RECORDED_STEP_KEYS if key in step}
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
                # drawn where the case's stream draws (the counter stream on a GPU draws there), B quantized on
                # the device (fast on a GPU), then copied into the pool's blocks
                data, _ = Case.from_json(step["case"]).build(device=self.device, quantize_on=self.device)
            self.pool.collect()
            guard = step.get("guard")  # the bytes past each input (Program.with_input_guard)
            slots[step["slot"]] = tuple(None if t is None else self.pool.place(t, guard) for t in data)
            record["pointers"] = pointers(slots[step["slot"]])
        elif kind == "write":
            data, _ = Case.from_json(step["case"]).build(device=self.device, quantize_on=self.device)
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
        aiter_reads_past()  # what an earlier call read is not this call's
        start = time.perf_counter()
        try:
            with trace_calls() as trace:  # which aiter functions and Triton kernels this call ran
                y = self.module.custom_kernel(data)
                synchronize(self.device)
            unmodelled = hip_cpu_unmodelled()
            if unmodelled:  # whatever the file made of the failed launch, the model could not run it
                raise HipNotModelledAtRunTime(unmodelled)
        except HipNotModelledAtRunTime as error:
            record["exception"] = describe_exception(error, self.path)
            return
        except BaseException as error:  # SystemExit and KeyboardInterrupt from the submission too
            unmodelled = hip_cpu_unmodelled()
            if unmodelled:
                record["exception"] = describe_exception(HipNotModelledAtRunTime(unmodelled), self.path)
            else:
                record["exception"] = _the_files(describe_exception(error, self.path), error)
            return
        finally:
            record["trace"] = trace.render().splitlines()[:TRACE_LINES] if "trace" in locals() else []
            record["launches_config"] = launch_configs(trace) if "trace" in locals() else []
            record.update(recorded_hip_builds())
            record.update(aiter_not_emulated())
            record.update(torch_version_reads())
            sites = poison.take_sites()
            if sites:
                record["poisoned_allocations"] = sites
            reads_past = aiter_reads_past()
            if reads_past:
                record["aiter_reads_past"] = reads_past
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
