"""The tier's hooks around each call of the submission, in the worker: what the Triton interpreter and the
CPU model of HIP are told before a call (the autotune config to run, the order of a wave's lanes) and what
they, no_rocm and cuda_on_cpu report after it (autotune, shims, bf16 atomic adds, HIP launches and builds,
what the model could not run), with the call's Triton launches read from its trace: all for the call's
record.
"""
from __future__ import annotations

import math
import os
import sys


def _plain(v):
    return v if isinstance(v, (int, float, bool, str)) or v is None else str(v)


def launch_configs(trace, limit: int = 64) -> list:
    """The call's Triton launches, distinct, as JSON: kernel, grid, constexprs and capitalised int
    arguments (run_records.launch_config turns each into a configuration's key)."""
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


def aiter_reads_past() -> list:
    """Sentences for the reads past an operand's storage that the emulated aiter's kernels made since the
    last call (their bytes stand in for whatever memory the runner's kernel would read there); [] where
    aiter is real or not loaded."""
    import sys

    emulation = sys.modules.get("aiter._emulation")
    take = getattr(emulation, "take_reads_past", None)
    if take is None:
        return []
    return list(dict.fromkeys(emulation.describe_read_past(entry) for entry in take()))


def recorded_hip_builds() -> dict:
    """{"hip_builds": [attempt, ...]}: the HIP/CUDA builds no_rocm stopped since the last call (this
    program's reload of the file included), where it is installed (no GPU); {} elsewhere."""
    from reference.emulation import no_rocm

    if not no_rocm.installed():
        return {}
    builds = [a.to_json() for a in no_rocm.attempts()]
    no_rocm.reset_attempts()
    return {"hip_builds": builds}


def torch_version_reads() -> dict:
    """{"torch_version_reads": {where: [this machine's value, the runner's]}}: the file's reads of torch.version
    answered as the runner's torch since the last call (runner_torch_version), {} where there were none."""
    module = sys.modules.get("reference.emulation.runner_torch_version")
    reads = module.take_reads() if module is not None else {}
    return {"torch_version_reads": {where: list(values) for where, values in reads.items()}} if reads else {}


def aiter_not_emulated() -> dict:
    """{"aiter_not_emulated": [names]}: the real aiter modules and names the file asked for in this process that
    the emulation lacks (its _not_emulated module records them), {} where none was asked for."""
    module = sys.modules.get("aiter._not_emulated")
    raised = list(getattr(module, "RAISED", None) or ())
    return {"aiter_not_emulated": raised} if raised else {}


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


def hip_cpu_unmodelled() -> str:
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
    if step.get("hip_lds_fill") is not None:  # the byte each block's LDS starts with (0xFF unless set)
        os.environ["MXFP4_FUZZ_HIP_LDS_FILL"] = str(int(step["hip_lds_fill"]))
    else:
        os.environ.pop("MXFP4_FUZZ_HIP_LDS_FILL", None)
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
    from reference.emulation import nvidia_shared_memory

    lowered = nvidia_shared_memory.lowered()  # the nvidia tier: launches that ran with fewer stages to fit
    if lowered:
        state["shims"] = {**state.get("shims", {}),
                          **{f"fewer_stages_{e['kernel']}": nvidia_shared_memory.note(e) for e in lowered}}
    return state

