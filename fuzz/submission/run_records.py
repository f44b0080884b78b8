"""What a program's run leaves behind besides its verdict: the launch configurations of its Triton calls,
the bf16 atomic adds that built an output, the calls each path served, the shapes the file answered or
refused (steering's evidence) and the runner's tier notes (autotune configs checked, compat shims, the
file's HIP on the CPU model or not run here). The verdicts in checks.py read these; the report prints them.
"""
from __future__ import annotations

import torch

from fuzz.submission.program import Program
from fuzz.submission.provenance import tier_limit
from fuzz.submission.steering import TIER_LIMIT

# Names that size a launch by its problem, not by its configuration: left out of a configuration's key.
SHAPE_ARGUMENTS = frozenset({"M", "N", "K", "GRID_MN", "SCALE_COLS", "SPLIT_K", "SPLITK_BLOCK_SIZE"})
STRIPE_COUNTS = ("NUM_KSPLIT", "KSPLIT", "SPLITS", "NUM_SPLITS", "SPLIT_K_COUNT")
STRIPE_LENGTHS = ("SPLIT_K", "SPLITK_BLOCK_SIZE")
MI355X_CUS = 256


def last_trace(result) -> list:
    """The path trace (aiter calls, Triton launches) of the last call the worker recorded."""
    if result is None:
        return []
    traced = [r.get("trace") for r in result.records if r.get("trace")] if hasattr(result, "records") else []
    return list(traced[-1]) if traced else []


def launch_config(launch: dict) -> str:
    """One Triton launch as a configuration: kernel, constexprs (shape-sized ones left out), the number
    of split-K stripes (a stripe count argument, or K over a stripe length) and the grid's class
    (one program, under one wave of the MI355X's 256 CUs, or more)."""
    values = {**launch.get("constexprs", {}), **launch.get("scalars", {})}
    conf = " ".join(f"{k}={v}" for k, v in launch.get("constexprs", {}).items() if k not in SHAPE_ARGUMENTS)
    stripes = next((values[k] for k in STRIPE_COUNTS if isinstance(values.get(k), int)), None)
    if stripes is None and isinstance(values.get("K"), int):
        length = next((values[k] for k in STRIPE_LENGTHS if isinstance(values.get(k), int) and values[k] > 0), None)
        stripes = None if length is None else -(-values["K"] // length)
    grid = launch.get("grid")
    programs = None if not grid else int(torch.tensor(grid).prod())
    grid_class = ("grid ?" if programs is None else "1 program" if programs == 1
                  else f"< {MI355X_CUS} programs" if programs < MI355X_CUS else f">= {MI355X_CUS} programs")
    return f"{launch['kernel']}[{conf}] stripes={stripes if stripes is not None else 1} {grid_class}"


def launch_configs(result) -> list:
    """The distinct launch configurations of every call of a worker result, in order."""
    seen = {}
    for record in getattr(result, "records", None) or []:
        for launch in record.get("launches_config", []):
            seen.setdefault(launch_config(launch), None)
    return list(seen)


def bf16_atomic_adds(record: dict) -> tuple[int, str, str]:
    """(how many bf16 atomic adds may have built one output element, what they are, why a failure cannot
    be judged on this tier or ""). The interpreter counts the adds per address; a GPU does not, so there
    the bound takes every program of the launches with bf16 atomic adds as one add each (a weak bound that
    also assumes a program adds once per element; the text says so)."""
    counted = record.get("bf16_atomic_adds")
    if counted:
        return int(counted), f"{counted} bf16 atomic adds per element (counted by the interpreter)", ""
    launches = [launch for launch in record.get("atomic_add_launches", []) if "bf16" in launch["dtypes"]]
    if not launches:
        return 0, "", ""
    names = ", ".join(sorted({launch["kernel"] for launch in launches}))
    if any(launch["programs"] is None for launch in launches):
        return 0, "", (f"this tier cannot bound the roundings of the bf16 atomic adds in {names} (the trace "
                       "could not resolve the grid); the CPU tier's interpreter counts them")
    programs = sum(launch["programs"] for launch in launches)
    return programs, (f"up to {programs} bf16 atomic adds per element in {names} (one per program: this tier "
                      "does not count them, the CPU tier's interpreter does)"), ""


def atomic_add_kernels(*records: dict) -> list:
    """The compiled kernels with float atomic adds that ran in these calls (their sums may vary run to run)."""
    return sorted({launch["kernel"] for record in records for launch in record.get("atomic_add_launches", [])})


def error_line(error: dict) -> str:
    """``Type: message`` of a recorded exception, and where it was raised from another (``chain``), the
    innermost one too: Triton's CompilationError for a helper its kernel calls is a source excerpt whose
    cause (e.g. AmdInlineAsmOnNvidia, the tier's limit) says what went wrong."""
    line = f"{error['type']}: {error['message']}"
    chain = error.get("chain") or []
    if len(chain) > 1:
        inner = chain[-1]
        first = (inner.get("message") or "").strip().splitlines()
        line = f"{inner['type']}: {first[0][:200] if first else ''} (raised inside {line.splitlines()[0][:80]})"
    return line


def count_calls(stats: dict, records) -> None:
    for record in records:
        if "exception" in record:
            stats["raised"] += 1
            stats["last_error"] = error_line(record["exception"])[:300]
        elif "file" in record:
            stats["returned"] += 1


def record_shape_evidence(evidence, program: Program, outputs: dict) -> None:
    """Each call's shape, answered or not (a raise that is not a device fault: the file's refusal, or a
    tier limit, said so), for steering.py: either way the example says nothing of the result."""
    for out, record in outputs.items():
        case = program.case_of.get(out)
        error = record.get("exception")
        if case is None or (error is None and "file" not in record) or (error or {}).get("device_fault"):
            continue
        refusal = None
        if error is not None:
            limit = tier_limit(error)
            refusal = f"{TIER_LIMIT}{limit}" if limit else f"{error['type']}: {error['message']}"
        evidence.add((case.m, case.n, case.k), refusal)


def merge_tier_notes(notes: dict, records) -> None:
    for record in records:
        for kernel, report in record.get("autotune", {}).items():
            known = notes["autotune"].setdefault(kernel, {"configs": report["configs"], "checked": set()})
            known["checked"].update(report["ran"])
        for shim, where in record.get("shims", {}).items():
            notes["shims"].setdefault(shim, where)
        for attempt in record.get("hip_builds", []):  # what the runner builds or runs that did not run here
            if attempt.get("not_run"):
                what = attempt.get("name") or " ".join(attempt.get("command", [])[:2])
                notes.setdefault("hip_not_run", {}).setdefault(f"{attempt['api']}({what}) at {attempt['where']}",
                                                              attempt["not_run"])
            elif attempt.get("api") == "hipModuleLoad":  # a prebuilt code object the model runs as a stand-in
                notes.setdefault("hip_code_objects", {}).setdefault(
                    f"hipModuleLoad({attempt.get('name')}) at {attempt['where']}", attempt.get("cpu_model", ""))
        for name in record.get("aiter_not_emulated", []):  # real aiter has it, the emulation does not
            notes.setdefault("aiter_not_run", {}).setdefault(
                name, "the emulation does not have it; the runner's aiter (f3be04a12a0c) does")
        for where, (here, runner) in record.get("torch_version_reads", {}).items():  # the file chose its path by it
            notes.setdefault("torch_version", {}).setdefault(
                where, f"answered {runner!r} as the runner's torch 2.10.0+rocm7.1 does (this machine's: {here!r})")
        if (notes.get("hip_not_run") or notes.get("aiter_not_run")) and "exception" not in record:
            # the file went on without it: a fallback served
            notes["hip_fallback_calls"] = notes.get("hip_fallback_calls", 0) + 1
        if record.get("hip_cpu_launches"):  # the file's hipcc-built HIP ran on the CPU model for this call
            hip = notes.setdefault("hip_cpu", {"launches": 0, "calls": 0})
            hip["launches"] += record["hip_cpu_launches"]
            hip["calls"] += 1
        notes["device_emulated"] |= bool(record.get("device_emulated"))
