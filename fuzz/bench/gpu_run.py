"""The whole GPU tier in one command, one results file:

    OUT=/some/dir python -m fuzz.bench.gpu_run              # every part; writes $OUT/gpu_run.json
    OUT=/some/dir python -m fuzz.bench.gpu_run --parts fuzz,compile --fuzz-seconds 30
    python -m fuzz.bench.gpu_run --smoke                    # tiny budgets: proves the script runs, on any machine

Parts (each guarded: one that raises is recorded with its error and the rest still run):
  profile     ``pytest fuzz --profile gpu`` in a subprocess (``--pytest-args`` adds e.g. ``-n 4`` or
              ``--mutants``): passed / failed / skipped with every skip's reason, failures' first lines.
  fuzz        each subject of the suite (fuzz.subjects.kernel_subjects) for ``--fuzz-seconds``: Hypothesis draws cases
              from the suite's own strategy (fuzz.subjects.fuzzing.subject_cases, gpu profile caps) and
              fuzzing.run_and_judge checks each (the oracle included), exactly what a test example
              does. Examples/min with and without the calls that compiled a kernel, compile seconds.
  compile     100 random in-contract shapes through the fused path: distinct configs, compile keys,
              compiled kernels (Triton's own cache entries), compile seconds; the bound is 1 kernel per
              compile key for the task's contiguous A (kernels/fused.py states at most 6 per key).
  nan         python -m fuzz.selfcheck.nan_check --gemm: what this tier's arithmetic does to NaN/Inf, per quantizer.
  submission  ``mxfp4-fuzz check fuzz/examples/correct_reference_style.py`` (gpu profile): verdicts and
              examples/min through the worker subprocess.
  bench       the benchmark harness on the six benchmark shapes for each path, and the copy bandwidth.
  verdicts    ``python -m fuzz.bench.time_to_verdict`` on the real files present in .real_files/ (issue 37's
              targets): each alone, then 8 at once (``--verdicts-cycle`` checks); slowest, median, files a
              minute, and both JSON files beside gpu_run.json.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
import traceback
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import torch

from fuzz.bench import harness
from kernels import configs, platform

PARTS = ("profile", "fuzz", "compile", "nan", "submission", "bench", "verdicts")
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
KEEP = 5  # failure cards and errors kept per subject (all are counted)
EXAMPLE_SUBMISSION = "fuzz/examples/correct_reference_style.py"


# --- compiled kernels ------------------------------------------------------------------------------

def jit_functions() -> list:
    """Every ``@triton.jit`` function held by a loaded module of ours or of aiter (autotune and
    heuristics wrappers unwrapped)."""
    from triton.runtime.jit import JITFunction

    found = {}
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(("kernels", "aiter", "reference", "fuzz")):
            continue
        for obj in list(vars(module).values()):
            for _ in range(4):
                if isinstance(obj, JITFunction) or not hasattr(obj, "fn"):
                    break
                obj = obj.fn
            if isinstance(obj, JITFunction):
                found[id(obj)] = obj
    return list(found.values())


def compiled_kernels(jits) -> int:
    """Compiled (or loaded from the Triton cache) specializations held by ``jits`` in this process."""
    total = 0
    for jit in jits:
        for entry in getattr(jit, "device_caches", {}).values():
            total += len(entry[0]) if isinstance(entry, tuple) else 0
    return total


class CompileWatch:
    """Attributes a call's time to compilation when it grew Triton's kernel caches."""

    def __init__(self):
        self._modules = -1
        self._jits = []

    def count(self) -> int:
        if len(sys.modules) != self._modules:  # new modules (aiter imported lazily): rescan
            self._modules, self._jits = len(sys.modules), jit_functions()
        return compiled_kernels(self._jits)


# --- part: profile ----------------------------------------------------------------------------------

def parse_junit(path: Path) -> dict:
    """Totals, failures (first lines) and skips (with reasons) of a pytest junit XML file."""
    root = ElementTree.parse(path).getroot()
    result = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "failures": [], "skips": {}, "slowest": []}
    durations = []
    for case in root.iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        durations.append((float(case.get("time") or 0), name))
        failure = case.find("failure") if case.find("failure") is not None else case.find("error")
        skipped = case.find("skipped")
        if failure is not None:
            result["failed" if case.find("failure") is not None else "errors"] += 1
            text = (failure.get("message") or "") + "\n" + (failure.text or "")
            result["failures"].append({"test": name, "text": text.strip()[:1500]})
        elif skipped is not None:
            result["skipped"] += 1
            reason = (skipped.get("message") or "").strip()
            result["skips"].setdefault(reason, []).append(name)
        else:
            result["passed"] += 1
    result["slowest"] = [{"test": n, "seconds": round(t, 1)} for t, n in sorted(durations, reverse=True)[:15]]
    return result


def run_profile(out_dir: Path, pytest_args: list, timeout: float) -> dict:
    """``pytest fuzz --profile gpu``; outcomes from its junit XML, or, when the run was stopped before
    writing it, from the per-test results log (fuzz.bench.results_log)."""
    from fuzz.bench import results_log

    junit, log_path = out_dir / "pytest_gpu.xml", out_dir / "pytest_gpu.jsonl"
    log_path.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest", "fuzz", "--profile", "gpu", "-q", "-rs", "-p", "no:randomly",
               "-p", "fuzz.bench.results_log", f"--junitxml={junit}", *pytest_args]
    env = dict(os.environ, MXFP4_FUZZ_RESULTS_LOG=str(log_path))
    start = time.perf_counter()
    with open(out_dir / "pytest_gpu.log", "w") as log:
        try:
            rc = subprocess.run(command, cwd=PACKAGE_ROOT, stdout=log, stderr=subprocess.STDOUT, timeout=timeout,
                                env=env).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    result = {"command": " ".join(command[1:]), "returncode": rc, "seconds": round(time.perf_counter() - start, 1)}
    if junit.exists():
        result.update(parse_junit(junit))
    elif log_path.exists():
        result.update(results_log.summarize(log_path), incomplete=True)
    return result


# --- part: fuzz -------------------------------------------------------------------------------------

class _TimeUp(Exception):
    pass


def fuzz_subject(subject, seconds: float, seed: int, max_examples: int = 100_000) -> dict:
    """Hypothesis-drawn cases (the suite's strategy for ``subject``) through ``run_and_judge`` for
    ``seconds``; failures are recorded (not shrunk)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    from fuzz.subjects import fuzzing

    watch = CompileWatch()
    streams = set()
    stats = {"examples": 0, "failed": 0, "errored": 0, "compile_examples": 0, "compile_seconds": 0.0,
             "kernels_compiled": 0, "failures": [], "errors": [], "configs": set(), "steady_phase_seconds": {}}
    start = time.perf_counter()
    stop = start + seconds

    @hypothesis_seed(seed)
    @settings(max_examples=max_examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @given(data=st.data())
    def body(data):
        case = data.draw(fuzzing.subject_cases(subject), label="case")
        streams.add(case.stream)
        if time.perf_counter() > stop:  # after the draw: Hypothesis's replay of this "failure" draws the same
            raise _TimeUp
        before, t0, phases = watch.count(), time.perf_counter(), {}
        try:
            card = fuzzing.run_and_judge(subject, case, phases)
        except Exception as exc:  # the path raised: an error, recorded with its case
            stats["errored"] += 1
            if len(stats["errors"]) < KEEP:
                stats["errors"].append({"case": case.describe(), "error": f"{type(exc).__name__}: {exc}"[:800]})
            return
        elapsed = time.perf_counter() - t0
        grown = watch.count() - before
        if grown:
            stats["compile_examples"] += 1
            stats["compile_seconds"] += elapsed
            stats["kernels_compiled"] += grown
        else:  # where a steady example's time goes: build inputs / the subject / the oracle
            for phase, spent in phases.items():
                stats["steady_phase_seconds"][phase] = stats["steady_phase_seconds"].get(phase, 0.0) + spent
        stats["examples"] += 1
        if subject.last_dispatch:
            stats["configs"].add(subject.last_dispatch["config"])
        if card is not None:
            stats["failed"] += 1
            if len(stats["failures"]) < KEEP:
                stats["failures"].append(card.render())

    # Part of "build": drawing the values (from the case's stream: on the host for mt19937, on the device
    # for the counter stream, launches only unless the device is synchronized); the rest of build is
    # quantizing B and laying A out on the device.
    from fuzz.search import strategies

    draw_values, draw_seconds = strategies.regime_values, [0.0]

    def timed_draw(*args, **kwargs):
        t = time.perf_counter()
        try:
            return draw_values(*args, **kwargs)
        finally:
            draw_seconds[0] += time.perf_counter() - t

    strategies.regime_values = timed_draw
    try:
        body()
    except _TimeUp:
        pass
    finally:
        strategies.regime_values = draw_values
    stats["value_draw_seconds"] = round(draw_seconds[0], 2)  # all examples, compiling ones included
    stats["value_stream"] = ",".join(sorted(streams))  # the streams the drawn cases named
    elapsed = time.perf_counter() - start
    steady = max(elapsed - stats["compile_seconds"], 1e-9)
    stats.update(seconds=round(elapsed, 1), per_minute=round(stats["examples"] * 60 / elapsed, 1),
                 per_minute_without_compiles=round((stats["examples"] - stats["compile_examples"]) * 60 / steady, 1),
                 compile_seconds=round(stats["compile_seconds"], 1), configs=len(stats["configs"]),
                 steady_phase_seconds={k: round(v, 2) for k, v in stats["steady_phase_seconds"].items()})
    return stats


def run_fuzz(seconds: float, seed: int, names=None, caps: str = "gpu") -> dict:
    from fuzz.subjects import fuzzing
    from fuzz.search import profiles

    with profiles.shape_caps_of(caps):  # the shapes `pytest fuzz --profile gpu` draws
        return _fuzz_subjects(fuzzing, seconds, seed, names)


def _fuzz_subjects(fuzzing, seconds: float, seed: int, names) -> dict:

    results = {}
    for name, subject in fuzzing.SUBJECTS.items():
        if names and name not in names:
            continue
        ok, why = subject.available()
        if not ok:
            results[name] = {"skipped": why}
            continue
        results[name] = _guarded(f"fuzzing {name}", fuzz_subject, subject, seconds, seed)
        r = results[name]
        if "error" not in r:
            print(f"fuzz {name:26s} {r['per_minute']:8.1f} examples/min ({r['per_minute_without_compiles']:.1f} without "
                  f"the {r['compile_examples']} compiling calls, {r['compile_seconds']} s), {r['examples']} examples, "
                  f"{r['configs']} configs, {r['kernels_compiled']} kernels compiled, {r['failed']} failed, "
                  f"{r['errored']} errors; steady examples' seconds by phase {r['steady_phase_seconds']}, of all "
                  f"examples' build {r['value_draw_seconds']} s drawing values ({r['value_stream']} stream)", flush=True)
            for text in r["failures"][:2] + [e["error"] for e in r["errors"][:2]]:
                print("    " + text.replace("\n", "\n    ")[:2000])
    return results


# --- part: compile ----------------------------------------------------------------------------------

def random_shape(rng: random.Random, smoke: bool) -> tuple:
    """An in-contract shape (K % 64, N % 32, any M >= 1), an official one a fifth of the time."""
    if smoke:
        return rng.randint(1, 16), 32 * rng.randint(1, 2), 64 * rng.randint(1, 4)
    if rng.random() < 0.2:
        return rng.choice(configs.OFFICIAL_SHAPES)
    m = rng.choice((rng.randint(1, 32), rng.randint(1, 512)))
    return m, 32 * rng.randint(1, 128), 64 * rng.randint(1, 64)


def run_compile_count(shapes: int, seed: int, smoke: bool) -> dict:
    """``shapes`` random shapes through the fused path (the task's contiguous inputs)."""
    from kernels import fused
    from reference import generate_input

    rng = random.Random(seed)
    device = platform.detect().device
    kernel = fused.fused_mxfp4_gemm_kernel
    described, keys, compile_seconds, run_seconds = set(), set(), 0.0, 0.0
    before_all = compiled_kernels([kernel])
    for _ in range(shapes):
        m, n, k = random_shape(rng, smoke)
        cfg = configs.choose(m, n, k)
        described.add(cfg.describe())
        keys.add(cfg.compile_key())
        data = generate_input(m, n, k, seed=rng.randrange(2**31), device=device)
        before, t0 = compiled_kernels([kernel]), time.perf_counter()
        fused.run(data)
        if device == "cuda":
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
        if compiled_kernels([kernel]) > before:
            compile_seconds += elapsed
        else:
            run_seconds += elapsed
    compiled = compiled_kernels([kernel]) - before_all
    result = {"shapes": shapes, "configs": len(described), "compile_keys": len(keys), "kernels_compiled": compiled,
              "bound": len(keys), "within_bound": compiled <= len(keys), "compile_seconds": round(compile_seconds, 2),
              "warm_call_seconds": round(run_seconds, 3)}
    print(f"compile: {shapes} random shapes -> {len(described)} configs, {len(keys)} compile keys, "
          f"{compiled} fused kernels compiled (bound {len(keys)}), {compile_seconds:.1f} s compiling, "
          f"{run_seconds:.2f} s in warm calls", flush=True)
    return result


# --- part: submission -------------------------------------------------------------------------------

def run_submission(out_dir: Path, timeout: float, profile: str) -> dict:
    report = out_dir / "submission_report.json"
    command = [sys.executable, "-m", "fuzz.cli", "check", EXAMPLE_SUBMISSION, "--profile", profile,
               "--report", str(report)]
    start = time.perf_counter()
    with open(out_dir / "submission.log", "w") as log:
        try:
            rc = subprocess.run(command, cwd=PACKAGE_ROOT, stdout=log, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    wall = time.perf_counter() - start
    result = {"command": " ".join(command[1:]), "returncode": rc, "seconds": round(wall, 1)}
    if report.exists():
        data = json.loads(report.read_text())
        examples = sum(v.get("examples", 0) for v in data.get("verdicts", []))
        result.update(examples=examples, per_minute=round(examples * 60 / wall, 1),
                      verdicts={v["verdict"]: v["status"] for v in data.get("verdicts", [])},
                      timings=data.get("timings"))
        print(f"submission {EXAMPLE_SUBMISSION}: rc={rc}, {examples} examples in {wall:.0f} s "
              f"({result['per_minute']} examples/min); verdicts {result['verdicts']}", flush=True)
    return result


# --- part: bench ------------------------------------------------------------------------------------

def run_bench(args, out_dir: Path) -> dict:
    plat = platform.detect()
    flush = 1 << 20 if args.smoke else harness.FLUSH_BYTES
    copy_bytes = 8 << 20 if args.smoke else harness.COPY_BYTES
    bandwidth = _guarded("copy bandwidth", harness.measure_copy_bandwidth, plat.device, copy_bytes)
    bandwidth = bandwidth if isinstance(bandwidth, float) else None
    environment = _guarded("describing the environment", harness.environment, bandwidth, flush)
    paths, skipped = harness.available_paths(args.paths.split(",") if args.paths else None)
    shapes = [(4, 64, 256)] if args.smoke else harness.BENCH_SHAPES
    records = []
    for path in paths:
        for shape in shapes:
            record = _guarded(f"benchmarking {path.name} {shape}", harness.bench_path, path, shape, rounds=args.rounds,
                              calls_per_round=args.calls, flush_bytes=flush, bandwidth=bandwidth)
            records.append({"path": path.name, "shape": list(shape), **record})
    print(harness.format_table(records, plat.arch, bandwidth))
    harness.save_results(out_dir / "bench.json", records, environment)
    return {"environment": environment, "skipped_paths": skipped, "records": records}


# --- part: verdicts ---------------------------------------------------------------------------------

def run_verdicts(out_dir: Path, cycle: int, timeout: float) -> dict:
    """Time to a full verdict table per real file, alone and 8 at once (time_to_verdict's own JSON files)."""
    result = {}
    for name, extra in (("alone", []), ("eight_at_once", ["--jobs", "8", "--cycle", str(cycle)])):
        target = out_dir / f"time_to_verdict_{name}.json"
        command = [sys.executable, "-m", "fuzz.bench.time_to_verdict", "--json", str(target), *extra]
        with open(out_dir / f"time_to_verdict_{name}.log", "w") as log:
            try:
                subprocess.run(command, cwd=PACKAGE_ROOT, stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
            except subprocess.TimeoutExpired:
                result[name] = {"error": f"stopped after {timeout:g} s"}
                continue
        if not target.exists():
            result[name] = {"error": f"no results (see time_to_verdict_{name}.log)"}
            continue
        data = json.loads(target.read_text())
        seconds = sorted(row["seconds"] for row in data["rows"])
        result[name] = {"files": len(seconds), "slowest": seconds[-1] if seconds else None,
                        "median": seconds[len(seconds) // 2] if seconds else None,
                        "files_per_minute": data["files_per_minute"]}
        print(f"verdicts {name}: {result[name]}", flush=True)
    return result


# --- driver -----------------------------------------------------------------------------------------

def _guarded(what: str, fn, *args, **kwargs):
    """fn(...) or {"error": ...}: one broken step must not cost the rest of the run."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        print(f"{what} failed: {type(exc).__name__}: {exc}")
        traceback.print_exc()
        return {"error": f"{type(exc).__name__}: {exc}"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.bench.gpu_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {','.join(PARTS)}")
    parser.add_argument("--fuzz-seconds", type=float, default=60.0, help="fuzzing time per subject")
    parser.add_argument("--subjects", help="comma-separated subjects to fuzz (default: every one available)")
    parser.add_argument("--compile-shapes", type=int, default=100, help="random shapes for the compile count")
    parser.add_argument("--pytest-args", default="", help="extra arguments for the profile run, e.g. '-n 4'")
    parser.add_argument("--submission-profile", default="gpu", help="Hypothesis profile of the submission check")
    parser.add_argument("--profile-timeout", type=float, default=3600)
    parser.add_argument("--rounds", type=int, default=5, help="benchmark rounds per shape (noise estimate)")
    parser.add_argument("--calls", type=int, default=20, help="timed calls per round")
    parser.add_argument("--paths", help="benchmark: comma-separated path names (default: every path available)")
    parser.add_argument("--aiter", default="auto", choices=("auto", "real", "emulated"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verdicts-cycle", type=int, default=40, help="checks of the 8-at-once timing")
    parser.add_argument("--smoke", action="store_true", help="tiny budgets: a dry run on any machine")
    args = parser.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}; choose from {PARTS}")
    if args.smoke:
        args.fuzz_seconds, args.rounds, args.calls, args.compile_shapes = min(args.fuzz_seconds, 3.0), 3, 1, 5
    out_dir = Path(os.environ.get("OUT") or ".")
    out_dir.mkdir(parents=True, exist_ok=True)

    sys.path.insert(0, str(PACKAGE_ROOT))
    from fuzz.host.compile_caches import share as share_compile_caches  # the caches pytest and its workers use
    from reference.emulation.select import use_aiter

    caches = share_compile_caches()
    plat = platform.detect()
    report = {"date": time.strftime("%Y-%m-%d"), "platform": plat.describe(), "torch": torch.__version__,
              "caches": caches, "parts": parts}
    import triton

    report["triton"] = triton.__version__
    if plat.device == "cuda":
        report["gpu"] = torch.cuda.get_device_name(0)
    report["aiter"] = _guarded("selecting aiter", lambda: use_aiter(args.aiter).describe())
    print(f"mxfp4-fuzz GPU run on {plat.describe()}; aiter: {report['aiter']}; parts: {', '.join(parts)}", flush=True)
    out = out_dir / "gpu_run.json"

    def save():
        out.write_text(json.dumps(report, indent=1, default=str) + "\n")

    steps = {
        "profile": lambda: run_profile(out_dir, args.pytest_args.split(), args.profile_timeout),
        "fuzz": lambda: run_fuzz(args.fuzz_seconds, args.seed, args.subjects.split(",") if args.subjects else None,
                                 "smoke" if args.smoke else "gpu"),
        "compile": lambda: run_compile_count(args.compile_shapes, args.seed, args.smoke),
        "nan": lambda: _nan_table(),
        "submission": lambda: run_submission(out_dir, args.profile_timeout, "smoke" if args.smoke else args.submission_profile),
        "bench": lambda: run_bench(args, out_dir),
        "verdicts": lambda: run_verdicts(out_dir, 8 if args.smoke else args.verdicts_cycle,
                                         args.profile_timeout),
    }
    for part in parts:
        start = time.perf_counter()
        report[part] = _guarded(part, steps[part])
        if isinstance(report[part], dict):
            report[part]["part_seconds"] = round(time.perf_counter() - start, 1)
        save()  # after every part: a run stopped midway keeps what it measured
        if part == "profile" and isinstance(report[part], dict):
            r = report[part]
            print(f"profile: rc={r.get('returncode')} {r.get('passed')} passed, {r.get('failed')} failed, "
                  f"{r.get('errors')} errors, {r.get('skipped')} skipped in {r.get('seconds')} s", flush=True)
            for reason, tests in (r.get("skips") or {}).items():
                print(f"    skip x{len(tests)}: {reason}")
            for f in (r.get("failures") or [])[:10]:
                print(f"    FAILED {f['test']}: {f['text'][:300]}")
    print(f"wrote {out}")
    return 0


def _nan_table() -> dict:
    from fuzz.selfcheck import nan_check

    table = nan_check.run(gemm=True)
    table["problems"] = nan_check.verdict(table)
    print(nan_check.render(table))
    for p in table["problems"]:
        print(f"PROBLEM {p}")
    return table


if __name__ == "__main__":
    raise SystemExit(main())
