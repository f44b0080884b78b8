"""Everything the GPU tier measures, in one process: run it in one call on the GPU machine.

    OUT=/some/dir python -m fuzz.bench.gpu_run            # writes $OUT/gpu_run.json, prints tables
    python -m fuzz.bench.gpu_run --smoke                  # seconds on a CPU: proves the script runs

(a) fuzz: for a fixed time per path, random in-contract shapes (and the official ones) from the official
    generator, each output checked against the oracle's bound (reference: exact_gemm_from_inputs,
    accumulation_bound, acceptable_range); prints examples/minute, failures and errors per path;
(b) the benchmark harness (fuzz.bench.harness) on the six benchmark shapes for each path;
(c) the device's copy bandwidth (the roofline's denominator).
A path that raises is recorded with its error and the script moves on.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import time
import traceback
from pathlib import Path

import torch

from fuzz.bench import harness
from kernels import configs, platform
from kernels.path import PathUnavailable
from reference import generate_input

SCALE_PAD_FILLS = (0, 0x7F, 0xFF)  # the padding of B_scale_sh is uninitialised memory in the real task
KEEP = 20  # failures and errors kept per path (all are counted)


def random_shape(rng: random.Random, smoke: bool) -> tuple:
    """An in-contract shape (K % 64, N % 32, any M >= 1), an official one a fifth of the time."""
    if smoke:
        return rng.randint(1, 16), 32 * rng.randint(1, 2), 64 * rng.randint(1, 4)
    if rng.random() < 0.2:
        return rng.choice(configs.OFFICIAL_SHAPES)
    m = rng.choice((rng.randint(1, 32), rng.randint(1, 512)))
    return m, 32 * rng.randint(1, 128), 64 * rng.randint(1, 64)


def fuzz_path(path, seconds: float, seed: int, smoke: bool) -> dict:
    """Random examples through ``path`` for ``seconds``; each checked against the oracle's bound."""
    rng = random.Random(seed)
    device = platform.detect().device
    stats = {"examples": 0, "failed": 0, "errored": 0, "failures": [], "errors": [], "unsupported": 0, "path_seconds": 0.0}

    def note(kind: str, entry: dict) -> None:
        stats["failed" if kind == "failures" else "errored"] += 1
        if len(stats[kind]) < KEEP:
            stats[kind].append(entry)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        shape = random_shape(rng, smoke)
        case_seed, fill = rng.randrange(2**31), rng.choice(SCALE_PAD_FILLS)
        data = generate_input(*shape, seed=case_seed, device=device, scale_pad_fill=fill)
        where = {"shape": list(shape), "seed": case_seed, "scale_pad_fill": fill}
        try:
            t0 = time.perf_counter()
            y, info = path.run(data)
            if device == "cuda":
                torch.cuda.synchronize()
            stats["path_seconds"] += time.perf_counter() - t0
        except PathUnavailable:
            stats["unsupported"] += 1
            continue
        except Exception as exc:
            note("errors", {**where, "error": f"{type(exc).__name__}: {exc}"[:500]})
            continue
        try:
            bad = harness.count_outside_bound(y, data, info.splits, info.rounding)
        except Exception as exc:
            note("errors", {**where, "error": f"oracle: {type(exc).__name__}: {exc}"[:500]})
            continue
        stats["examples"] += 1
        if bad:
            note("failures", {**where, "outside_bound": bad, "config": info.config})
    elapsed = time.perf_counter() - start
    stats.update(seconds=elapsed, per_minute=stats["examples"] * 60 / elapsed)
    return stats


def _guarded(what: str, fn, *args, **kwargs):
    """fn(...) or {"error": ...}: one broken step must not cost the rest of the run."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        print(f"{what} failed: {type(exc).__name__}: {exc}")
        traceback.print_exc()
        return {"error": f"{type(exc).__name__}: {exc}"}


def _select_aiter(mode: str) -> str:
    from reference.emulation.select import use_aiter

    return use_aiter(mode).describe()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.bench.gpu_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--fuzz-seconds", type=float, default=45.0, help="fuzzing time per path")
    parser.add_argument("--rounds", type=int, default=5, help="benchmark rounds per shape (noise estimate)")
    parser.add_argument("--calls", type=int, default=20, help="timed calls per round")
    parser.add_argument("--paths", help="comma-separated path names (default: every path available here)")
    parser.add_argument("--aiter", default="auto", choices=("auto", "real", "emulated"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="tiny shapes and budgets: a dry run on any machine")
    args = parser.parse_args(argv)
    if args.smoke:
        args.fuzz_seconds, args.rounds, args.calls = min(args.fuzz_seconds, 3.0), 3, 1
    out_dir = Path(os.environ.get("OUT") or ".")
    out_dir.mkdir(parents=True, exist_ok=True)
    plat = platform.detect()
    print(f"mxfp4-fuzz GPU run on {plat.describe()}")
    report = {"aiter": _guarded("selecting aiter", _select_aiter, args.aiter)}
    print(f"aiter: {report['aiter']}")

    flush = 1 << 20 if args.smoke else harness.FLUSH_BYTES
    copy_bytes = 8 << 20 if args.smoke else harness.COPY_BYTES
    bandwidth = _guarded("copy bandwidth", harness.measure_copy_bandwidth, plat.device, copy_bytes)
    bandwidth = bandwidth if isinstance(bandwidth, float) else None
    report["environment"] = _guarded("describing the environment", harness.environment, bandwidth, flush)

    paths, skipped = harness.available_paths(args.paths.split(",") if args.paths else None)
    report["skipped_paths"] = skipped
    for name, why in skipped.items():
        print(f"skip {name}: {why}")

    report["fuzz"] = {}
    for path in paths:
        result = _guarded(f"fuzzing {path.name}", fuzz_path, path, args.fuzz_seconds, args.seed, args.smoke)
        report["fuzz"][path.name] = result
        if "error" not in result:
            print(f"fuzz {path.name:<8} {result['per_minute']:8.1f} examples/min  {result['examples']} examples, "
                  f"{result['failed']} outside the bound, {result['errored']} errors, "
                  f"{result['unsupported']} unsupported shapes")
            for failure in result["failures"][:3] + result["errors"][:3]:
                print(f"    {failure}")

    shapes = [(4, 64, 256)] if args.smoke else harness.BENCH_SHAPES
    report["bench"] = []
    for path in paths:
        for shape in shapes:
            record = _guarded(f"benchmarking {path.name} {shape}", harness.bench_path, path, shape, rounds=args.rounds,
                              calls_per_round=args.calls, flush_bytes=flush, bandwidth=bandwidth)
            report["bench"].append({"path": path.name, "shape": list(shape), **record})
    print(harness.format_table(report["bench"], plat.arch, bandwidth))

    out = out_dir / "gpu_run.json"
    out.write_text(json.dumps(report, indent=1, default=str) + "\n")
    harness.save_results(out_dir / "bench.json", report["bench"], report["environment"])
    print(f"wrote {out} and {out_dir / 'bench.json'} (python -m fuzz.bench.compare OLD.json {out_dir / 'bench.json'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
