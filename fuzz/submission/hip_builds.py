"""The ``builds_gfx950`` verdict: the HIP/CUDA sources a submission builds at runtime, built for gfx950 on
a machine without an AMD GPU.

On the CPU tier the worker's ``reference.emulation.no_rocm`` makes ``load_inline``/``load``/``hipcc`` fail
as they fail on any machine without ROCm, so the file's own fallback serves every call, and it records
each attempt with its sources and options. Here each recorded build is made again, as the runner would
make it, with ``fuzz.codegen.hip_gfx950`` (device code only):

- ``load_inline``: torch's three implicit headers, then ``cuda_sources``, hipified by torch's own hipify
  (as torch does on ROCm), with the flags torch passes hipcc there (``-DWITH_HIP``, its HIP defines,
  ``-std=c++20``, its include directories), then the file's ``extra_cflags`` and ``extra_cuda_cflags``
  (less ``--offload-arch``: the target is gfx950; less link flags) and ``extra_include_paths``;
- ``load``: each ``.cu``/``.cuh``/``.hip`` source the same way, its lines its file's own;
- ``hipcc`` (or a clang given ``--offload-arch``/``-x hip``) through ``subprocess``: each source of the
  command with the command's compile flags (``-I -D -U -O -std -f -m -include``).

Line numbers: an error or a kernel in text that came from a Python string is mapped back through the
hipify rewrite and the implicit headers to the string's lines, and those are found in the submission
file (``hip_gfx950.line_map``), so the verdict names the file's own line.

Judgement: a compile error fails, unless it is our toolchain's (``build_toolchain_limit``: a HIP header
ROCm 7.1 has and the packaged HIP 5.2 lacks, listed in ``hip_compat/rocm71/hip_headers.txt``; a name
ROCm 7.1's headers or clang for gfx950 declare; a device-link failure other than an undefined symbol of
the file's own): then the verdict is NOT RUN naming what is missing; a kernel that spills registers or
uses scratch is a finding, reported (REPORTED, not failed) unless ``--strict-resources``; otherwise the
verdict passes with every kernel's figures. A source that needs a ROCm-PyTorch header this machine lacks is reported as not checkable. The
summary also says which path served the calls here (the fallback: Triton kernels, aiter calls, or plain
PyTorch), read from the call's path trace. What it cannot say: whether the HIP path computes the right
numbers on an MI355X (it never runs here), or how fast it is.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import io
import json
import os
import re
import sysconfig
import tempfile
from pathlib import Path

import torch

from fuzz.codegen import hip_gfx950
from fuzz.search.strategies import Case
from fuzz.submission.program import Program
from reference.emulation import include_folders, runner_paths

VERDICT = "builds_gfx950"
PROBE_CASE = Case(2, 64, 128, seed=21)  # one call: a build made lazily, inside custom_kernel, is recorded too
IMPLICIT_HEADERS = ("#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>")  # load_inline's
GPU_SUFFIXES = (".cu", ".cuh", ".hip")
KEPT_FLAG_PREFIXES = ("-I", "-D", "-U", "-O", "-std=", "-f", "-m", "-include", "-isystem", "-W", "-w", "-g")
DROPPED_FLAG_PREFIXES = ("--offload-arch", "--amdgpu-target", "-arch", "--gpu-architecture", "-l", "-L", "-Wl,",
                         "-shared", "-fPIC", "-o", "-c")
ROCM_TORCH_HEADERS = ("ATen/hip/", "c10/hip/", "ATen/cuda/", "c10/cuda/", "hipblas", "rocblas", "hipblaslt", "miopen",
                      "rccl", "hipcub", "rocprim", "rocwmma", "ck/", "ck_tile/")


@dataclasses.dataclass
class Planned:
    """One build to make: what the runner would compile, and for whom."""

    label: str  # "load_inline('name') at file:line"
    source: hip_gfx950.Source
    flags: list
    include_dirs: list
    key_extra: str = ""


# --------------------------------------------------------------------------------------------------
# From a recorded attempt to the builds the runner would make


def _compile_flags(flags, base: str | None = None) -> list:
    """The compile flags of a command line (``-I dir`` and ``-Idir`` alike), link and arch flags dropped;
    relative include directories made absolute from ``base`` (the directory the command ran in)."""
    def where(path: str) -> str:
        return str(Path(base, path)) if base and not os.path.isabs(path) else path

    kept, args = [], [str(a) for a in flags]
    while args:
        flag = args.pop(0)
        if flag in ("-I", "-D", "-U", "-include", "-isystem", "-x") and args:
            value = args.pop(0)
            if flag != "-x":  # we compile as HIP
                kept += [flag, where(value) if flag in ("-I", "-isystem") else value]
        elif flag.startswith("-I"):
            kept.append("-I" + where(flag[2:]))
        elif flag.startswith(KEPT_FLAG_PREFIXES) and not flag.startswith(DROPPED_FLAG_PREFIXES):
            kept.append(flag)
    return kept


def _hipify(text: str, name: str) -> tuple:
    """(hipified text, {hipified line: original line}) by torch's own hipify, as torch runs it for an
    extension on ROCm; the text unchanged where torch's hipify cannot be imported."""
    try:
        from torch.utils.hipify import hipify_python
    except ImportError:
        return text, None
    with tempfile.TemporaryDirectory(prefix="mxfp4-hipify-") as tmp:
        path = Path(tmp) / name
        path.write_text(text)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):  # a success line
            done = hipify_python.hipify(project_directory=tmp, output_directory=tmp, extra_files=[str(path)],
                                        is_pytorch_extension=True, hipify_extra_files_only=True,
                                        show_detailed=False, show_progress=False)
        out = done.get(str(path))
        hipified = Path(out.hipified_path).read_text() if out is not None and out.hipified_path else text
    return hipified, hip_gfx950.line_map(text.splitlines(), hipified.splitlines())


def _torch_build_flags(name: str, options: dict) -> tuple:
    """(flags, include dirs) torch passes hipcc for an extension on ROCm (torch/utils/cpp_extension.py,
    _write_ninja_file_to_build_library), with the file's own extra flags."""
    from torch.utils import cpp_extension

    toolchain, _ = hip_gfx950.find_toolchain()
    system = [*cpp_extension.include_paths(), sysconfig.get_paths()["include"]]
    flags = ["-DWITH_HIP", f"-DTORCH_EXTENSION_NAME={name}", "-DTORCH_API_INCLUDE_EXTENSION_H"]
    flags += [f for d in system for f in ("-isystem", d)]
    flags += _compile_flags(options.get("extra_cflags") or [])
    flags += [f for f in getattr(cpp_extension, "COMMON_HIP_FLAGS", []) + getattr(cpp_extension, "COMMON_HIPCC_FLAGS", [])
              if f != "-fPIC"]
    flags += ["-std=c++20", *_compile_flags(options.get("extra_cuda_cflags") or [])]
    flags += [*(toolchain.torch_flags if toolchain else ()), "-idirafter", str(hip_gfx950.ROCM_TORCH_STANDINS)]
    return flags, [str(p) for p in options.get("extra_include_paths") or []]


def _compose(first: dict | None, second: dict) -> dict:
    """{line: line} maps chained: compiled -> first's target -> second's target."""
    if first is None:
        return second
    return {a: second[b] for a, b in first.items() if b in second}


def _in_file(text: str, submission: str, shift: int = 0) -> dict:
    """{line of ``text`` + shift: line of the submission file} for the lines of ``text`` found there."""
    try:
        file_lines = Path(submission).read_text(errors="replace").splitlines()
    except OSError:
        return {}
    return {line + shift: at for line, at in hip_gfx950.line_map(file_lines, text.splitlines()).items()}


def _torch_extension(label: str, name: str, text: str, options: dict, origin: str, lines_of_text: dict,
                     implicit: bool) -> Planned:
    prelude = list(IMPLICIT_HEADERS) if implicit else []
    full = "\n".join(prelude + [text])
    hipified, hip_map = _hipify(full, f"{name}.cu")
    lines = _compose(hip_map, lines_of_text) if hip_map is not None else lines_of_text
    flags, includes = _torch_build_flags(name, options)
    if os.path.isabs(origin):  # load(): the file's own directory, for its relative includes (we build a copy)
        includes.append(str(Path(origin).parent))
    note = (f"{len(prelude)} implicit header lines, " if prelude else "") + \
        ("hipified by torch's hipify" if hip_map is not None else "not hipified (torch's hipify is not importable)")
    source = hip_gfx950.Source(f"{name}.hip", hipified, origin, lines, note)
    return Planned(label, source, flags, includes, key_extra=f"torch {torch.__version__}")


def plan(attempt: dict, submission: str) -> list:
    """The builds the runner would make for one recorded attempt (``no_rocm.Attempt.to_json()``), with the
    runner's folders it names (``-I/home/runner/aiter/csrc/include``) read from their stand-in here, if any."""
    planned = _plan(attempt, submission)
    for build in planned:
        note = runner_paths.stand_in_note([*build.flags, *build.include_dirs])
        build.flags = runner_paths.mapped_flags(build.flags)
        build.include_dirs = runner_paths.mapped_flags(build.include_dirs)
        if note:
            build.source = dataclasses.replace(build.source, note=f"{build.source.note}; {note}".lstrip("; "))
    return planned


def _plan(attempt: dict, submission: str) -> list:
    api, name, options = attempt["api"], attempt.get("name") or "extension", attempt.get("options") or {}
    where = attempt.get("where", "?")
    if api == "ctypes":  # a ROCm library loaded (HIPRTC, hipBLASLt, ...): no sources recorded
        return []
    if api == "hiprtc":  # HIPRTC includes the HIP runtime itself; a clang build needs it named
        text = attempt["sources"].get(name, "")
        program_lines = {line + 1: line for line in range(1, text.count("\n") + 2)}  # lines of the program's text
        source = hip_gfx950.Source(name if name.endswith(GPU_SUFFIXES) else f"{name}.hip",
                                   "#include <hip/hip_runtime.h>\n" + text, f"HIPRTC program {name}", program_lines,
                                   "the source the file passed to hiprtcCreateProgram, with its options' defines")
        flags = [f"-D{d}" for d in options.get("defines", [])] + [f"-I{i}" for i in options.get("includes", [])]
        return [Planned(f"hiprtcCompileProgram({name!r}) at line {where.rsplit(':', 1)[-1]}", source, flags, [])]
    if api == "load_inline":
        text = attempt["sources"].get(f"{name}.cu", "")
        if not text.strip():  # a C++ (host) extension built against ROCm: no device code
            return []
        label = f"load_inline({name!r}) at line {where.rsplit(':', 1)[-1]}"
        implicit = not options.get("no_implicit_headers", False)
        shift = len(IMPLICIT_HEADERS) if implicit else 0
        origin = Path(submission).name  # cards and reports are about this file: its name is enough
        return [_torch_extension(label, name, text, options, origin, _in_file(text, submission, shift), implicit)]
    paths = options.get("paths") or {}
    planned = []
    for file, text in attempt["sources"].items():
        if not file.endswith(GPU_SUFFIXES + ((".cpp",) if api == "subprocess" else ())):
            continue
        origin = paths.get(file, file)
        if api == "load":
            label = f"load({name!r}) of {file} at line {where.rsplit(':', 1)[-1]}"
            stem = Path(file).stem
            identity = {i: i for i in range(1, text.count("\n") + 2)}
            planned.append(_torch_extension(label, stem, text, options, origin, identity, implicit=False))
        else:
            command = attempt.get("command") or []
            label = f"{os.path.basename(command[0]) if command else 'hipcc'} {file} at line {where.rsplit(':', 1)[-1]}"
            includes = [str(Path(origin).resolve().parent)] if os.path.isabs(str(origin)) or os.path.exists(origin) else []
            flags = _compile_flags(command[1:], base=str(Path(submission).parent))
            planned.append(Planned(label, hip_gfx950.Source(Path(file).name, text, origin), flags, includes))
    return planned


def distinct(attempts: list) -> list:
    """Each attempt once (the worker re-executes the file for every program, so the same build recurs)."""
    seen, kept = set(), []
    for a in attempts:
        key = hashlib.sha256(json.dumps([a.get("api"), a.get("name"), a.get("sources"), a.get("options"),
                                         a.get("command")], sort_keys=True).encode()).hexdigest()
        if key not in seen:
            seen.add(key)
            kept.append(a)
    return kept


# --------------------------------------------------------------------------------------------------
# The verdict


ROCM71_HEADERS_FILE = hip_gfx950.COMPAT_DIR / "rocm71" / "hip_headers.txt"
TOOLCHAIN = "our HIP toolchain (HIP 5.2 headers, clang-22)"
# Names ROCm 7.1's HIP headers (amd_hip_bf16.h, amd_hip_fp8.h/fp4/fp6, the OCP types, the MX helpers)
# or clang's gfx950 builtins declare, which the packaged HIP 5.2 headers do not.
# Our stand-ins for the bf16 and OCP headers (hip_compat/rocm71/include) serve most of these, not all: what
# they leave out (the fp6/fp8/stochastic conversions, the bf16 shuffles and atomics) is named here too.
ROCM71_NAMES = re.compile(r"^(__hip_|__amd_|__builtin_amdgcn_|__hipext_|__ocml_|__ockl_|hip_bf16|"
                          r"__float2bfloat16|__bfloat162float|__float22bfloat162|__bfloat1622float2|__bfloat162|"
                          r"__floats2bfloat162|__low2bfloat16|__high2bfloat16|__h[a-z0-9_]+|h2?(ceil|floor|rint|"
                          r"trunc|sqrt|rsqrt|rcp|exp|exp2|exp10|log|log2|log10|sin|cos)$|unsafeAtomicAdd$|"
                          r"__shfl(_up|_down|_xor)?(_sync)?$|HIPRT_|__nv_bfloat16)")
DEVICE_LIBRARY_SYMBOLS = re.compile(r"^(__ocml_|__ockl_|__oclc_|__llvm_|__asan_|__hip_|__amdgcn_|__builtin_)")


@functools.lru_cache(maxsize=1)
def rocm71_headers() -> frozenset:
    """The HIP headers ROCm 7.1 installs (``hip/...``), from hip_compat/rocm71/hip_headers.txt."""
    lines = ROCM71_HEADERS_FILE.read_text().splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def toolchain_limit(error: hip_gfx950.Diagnostic) -> str | None:
    """Why one compiler error is our toolchain's, not the file's (the runner's ROCm 7.1 would not report
    it), or None: a HIP header ROCm 7.1 has and our include paths lack, a name ROCm 7.1's headers or clang
    for gfx950 declare, or a device-link failure that is not an undefined symbol of the file's own."""
    message = error.message
    if error.file and Path(error.file).resolve().is_relative_to(hip_gfx950.COMPAT_DIR):
        return (f"{TOOLCHAIN}: our stand-in {Path(error.file).relative_to(hip_gfx950.COMPAT_DIR)} for a ROCm 7.1 "
                f"header does not compile what the file asks of it ({message})")
    found = re.search(r"'([^']+)' file not found", message)
    if found:
        header = found.group(1)
        if header in rocm71_headers():
            return f"{TOOLCHAIN} lacks {header}; the runner's ROCm 7.1 has it"
        return None
    found = re.search(r"(?:use of undeclared identifier|unknown type name|no member named|no matching function for "
                      r"call to|no matching conversion for functional-style cast from '[^']*' to) '([^']+)'", message)
    if found:
        name = found.group(1)
        if ROCM71_NAMES.match(name):
            return f"{TOOLCHAIN} does not declare {name}; the runner's ROCm 7.1 headers / clang for gfx950 do"
        return None
    if message.startswith("device link (lld): "):
        found = re.search(r"undefined (?:hidden )?symbol: (\S+)", message)
        if found and not DEVICE_LIBRARY_SYMBOLS.match(found.group(1)):
            return None  # a device function of the file's own that no translation unit defines: fails there too
        what = found.group(1) if found else message.removeprefix("device link (lld): ")
        return (f"{TOOLCHAIN} could not link the device code ({what}: ROCm 5.2 device libraries); "
                "the runner's ROCm 7.1 links it")
    if message.startswith("clang (LLVM option parsing)"):  # a -mllvm option our LLVM 22 does not know
        return (f"{TOOLCHAIN}'s LLVM does not know a -mllvm option the file passes ({message}); whether the "
                "runner's ROCm 7.1 LLVM does cannot be told here")
    if "amdgcn-link command failed" in message:
        return f"{TOOLCHAIN}'s device link failed ({message.split(' (use -v')[0]}); the runner's ROCm 7.1 links it"
    return None


def absent_include_dirs(command: list) -> list:
    """The include folders a build names (``-I DIR``, ``-IDIR``, ``-isystem DIR``...) that this machine does
    not have: the runner's filesystem, e.g. aiter's source tree at /home/runner/aiter/csrc/include."""
    return [d for d in include_folders.named(command or []) if os.path.isabs(d) and not os.path.isdir(d)]


def missing_header_elsewhere(error: hip_gfx950.Diagnostic, command: list) -> str | None:
    """Why a header the compiler could not find says nothing about the file: the build names include
    folders this machine lacks (the header may well be there on the runner), or None."""
    found = re.search(r"'([^']+)' file not found", error.message)
    absent = absent_include_dirs(command) if found else []
    if not absent:
        return None
    runner_folders = [reason for folder in absent if (reason := runner_paths.absent_reason(folder))]
    if runner_folders:  # the runner's aiter checkout: we know what is there, and how to have it here
        return f"{found.group(1)} is looked for in {runner_folders[0]}"
    return (f"{found.group(1)} is looked for in {', '.join(absent)}, which this machine does not have "
            "(the runner's filesystem: whether the header is there and builds cannot be told here)")


def build_toolchain_limit(result: hip_gfx950.BuildResult) -> str | None:
    """The reason a failed build says nothing about the runner: its first error is our toolchain's or a
    header looked for in folders this machine lacks (an error after it may be its consequence; one before
    it is the file's), or None."""
    reasons = []
    for error in result.errors:
        reason = toolchain_limit(error) or missing_header_elsewhere(error, result.command)
        if reason is None:
            if error.message.startswith("device link (lld): ") or not reasons:
                return None  # the file's own error (a link error of its own fails there too)
            break  # after our toolchain's error: maybe its consequence
        reasons.append(reason)
    return "; ".join(dict.fromkeys(reasons)) if reasons else None


# A name our declaration-only stand-ins of ROCm PyTorch's headers (hip_compat/rocm_torch) do not declare, in
# the namespaces they stand in for: ROCm PyTorch may well have it, so the build says nothing about the file.
ROCM_TORCH_MEMBER = re.compile(r"no member named '([^']+)' in namespace '((?:at|c10)::(?:cuda|hip))'")


def missing_rocm_torch_header(result: hip_gfx950.BuildResult) -> str | None:
    """The ROCm-only header a failed build could not find, or the name our stand-ins of ROCm PyTorch's headers
    do not declare, if that is why it failed (the first error's reason)."""
    for error in result.errors:
        if "file not found" in error.message and any(h in error.message for h in ROCM_TORCH_HEADERS):
            return error.message.split("'")[1] if "'" in error.message else error.message
    member = ROCM_TORCH_MEMBER.search(result.errors[0].message) if result.errors else None  # an error before it
    if member:  # is the file's own
        return f"{member.group(2)}::{member.group(1)} (our stand-ins of its headers declare only the common names)"
    return None


def served_by(record: dict) -> str:
    """Which path served the call here, from its path trace (and the CPU model's launch count)."""
    if "exception" in record:
        e = record["exception"]
        return f"nothing: the call raised {e['type']}: {e['message'].splitlines()[0][:120]}"
    if record.get("hip_cpu_launches"):
        return (f"the file's own HIP, run on the CPU model of gfx950 ({record['hip_cpu_launches']} kernel "
                "launches; docs/hip_cpu.md)")
    trace = [line.strip() for line in record.get("trace", [])]
    used = [line.split("(")[0] for line in trace if line.startswith("aiter ")]
    used += [f"Triton {line.split('[')[0]}" for line in trace if "[grid=" in line]
    return ", ".join(dict.fromkeys(used)) if used else "PyTorch operations (no Triton launch, no aiter call)"


def not_checked(result: hip_gfx950.BuildResult) -> str:
    """Why a build that failed here says nothing about the runner ("" when it built, or failed for the file)."""
    if result.ok:
        return ""
    missing = missing_rocm_torch_header(result)
    if missing:
        return f"it needs {missing} from ROCm PyTorch"
    return build_toolchain_limit(result) or ""


def judge(ctx, built: list, served: str, program, strict: bool = False, notes=()):
    """The Outcome for these builds: a compile error fails; a spill or scratch is reported (fails with
    ``strict``); a build needing a ROCm-PyTorch header absent here is reported as not checkable."""
    lines, failed, findings, unchecked, limited = [], [], [], [], []
    toolchain = hip_gfx950.find_toolchain()[0]  # the one the builds were made with (cached)
    for p, result in built:
        missing = None if result.ok else missing_rocm_torch_header(result)
        ours = None if result.ok or missing else build_toolchain_limit(result)
        if missing:
            unchecked.append(f"{p.label}: not checkable here, it needs {missing} from ROCm PyTorch")
            lines.append(unchecked[-1])
        elif ours:
            limited.append(f"{p.label}: {ours}")
            lines.append(f"{p.label} not built here: {ours}")
            lines += [f"  compiler {e.describe()}" for e in result.errors[:5]]
        elif not result.ok:
            failed.append(f"{p.label} does not build for gfx950: {result.errors[0].describe()}")
            lines += [f"{p.label} does not build for gfx950 ({p.source.note})"]
            lines += [f"  error {e.describe()}" for e in result.errors[:10]]
        else:
            standins = toolchain.standins_included(p.source.text) if toolchain else []
            lines.append(f"{p.label} builds for gfx950 ({p.source.note}), {result.seconds:.1f} s"
                         + (" cached" if result.cached else "")
                         + (f"; {', '.join(standins)} from our stand-ins for ROCm 7.1's headers (fuzz/codegen/"
                            "hip_compat/rocm71: its public API, not its code)" if standins else ""))
            lines += [f"  kernel {k.describe()}" + (f" (line {k.origin_line})" if k.origin_line else "")
                      for k in result.kernels]
            findings += result.findings()
    lines.append(f"on this machine the calls were served by {served}" if served.startswith("the file's own HIP")
                 else f"on this machine the build raised (no ROCm) and the calls were served by {served}")
    lines += list(notes)
    if failed:
        return ctx.outcome(VERDICT, "fail", "; ".join(failed), program, PROBE_CASE, lines)
    if limited:  # what our toolchain cannot build says nothing about the runner
        return ctx.outcome(VERDICT, "not_run", "\n".join(["; ".join(limited)] + lines), program)
    if findings:
        summary = f"builds for gfx950, with findings: {'; '.join(findings)}"
        if strict:
            return ctx.outcome(VERDICT, "fail", summary + " (--strict-resources)", program, PROBE_CASE, lines)
        return ctx.outcome(VERDICT, "reported", "\n".join([summary] + lines), program)
    if unchecked:
        return ctx.outcome(VERDICT, "reported", "\n".join(["; ".join(unchecked)] + lines), program)
    kernels = sum(len(r.kernels) for _, r in built)
    summary = f"{len(built)} HIP build(s) compile for gfx950: {kernels} kernel(s), no spills, no scratch"
    return ctx.outcome(VERDICT, "pass", "\n".join([summary] + lines), program)


def check_builds_gfx950(ctx, strict: bool = False) -> tuple:
    """(Outcome or None, why there is nothing to judge, the JSON report's entries). One call on a fresh
    module records the builds made at import and inside custom_kernel alike."""
    program = Program()
    program.build("d", PROBE_CASE)
    program.call("d", "y")
    result, outputs = ctx.execute(program)
    if result.kind != "ok":
        return None, f"the probe call did not return ({result.describe_death()}): see the contract verdict", []
    record = outputs["y"]
    if "hip_builds" not in record:
        return None, "HIP builds are only recorded where there is no ROCm (the CPU and NVIDIA tiers)", []
    attempts = distinct(record["hip_builds"] + list(getattr(ctx.runner, "hip_builds_seen", [])))
    if not attempts:
        return None, "the file builds no HIP/CUDA sources at runtime (load_inline, load, hipcc)", []
    toolchain, reason = hip_gfx950.find_toolchain()
    if toolchain is None:
        return None, f"the file builds HIP at runtime, but no compiler here builds it for gfx950: {reason}", []
    planned = [p for a in attempts for p in plan(a, ctx.runner.path)]
    if not planned:
        loaded = sorted({a.get("name", "") for a in attempts if a.get("api") == "ctypes"})
        host = sorted({a.get("name", "") for a in attempts if a.get("api") != "ctypes"})
        if loaded or host:
            what = ([f"loads ROCm libraries through ctypes ({', '.join(loaded)}): what it compiles (HIPRTC) or "
                     "calls there is not recorded"] if loaded else [])
            what += [f"builds C++ (host) extensions against ROCm ({', '.join(host)}): no device code"] if host else []
            return None, f"the file {'; and '.join(what)}; nothing to build for gfx950", []
        return None, "the recorded builds have no GPU sources", []
    built = [(p, hip_gfx950.build(p.source, flags=p.flags, include_dirs=p.include_dirs, key_extra=p.key_extra))
             for p in planned]
    served = served_by(record)
    # why the CPU model of gfx950 did not run a build (docs/hip_cpu.md): what it lacks, or what its host
    # compiler refused; the file's fallback (or nothing) served instead
    notes = [f"the CPU model of gfx950 did not run {a.get('api')}({a.get('name') or ' '.join(a.get('command', [])[:2])}): "
             f"{a['cpu_model'][:400]}" for a in attempts if a.get("not_run") or (
                 a.get("cpu_model") and not a["cpu_model"].startswith(("built", "modelled")))]
    # not_checked: why a failed build says nothing about the runner (a ROCm-PyTorch header, our toolchain)
    report = [{"build": p.label, "served_here": served, **r.to_json(), "not_checked": not_checked(r)} for p, r in built]
    return judge(ctx, built, served, program, strict, notes), "", report
