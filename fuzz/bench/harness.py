"""Benchmark harness for the kernel paths, timed the way the official amd-mxfp4-mm harness times them.

Per call: the inputs are cloned, the cache is flushed by writing a buffer larger than the last-level
cache (untimed), then the call is timed with device events (``torch.cuda.Event``; ``perf_counter`` on
CPU, where only the harness itself is being exercised: interpreter timings say nothing about a GPU).
Calls are grouped in rounds; the spread of the per-round means is the run-to-run noise that
``fuzz.bench.compare`` uses to tell a regression from noise.

Every result carries a roofline: the bytes a GEMM must move at least (A bf16 M*K*2, B fp4 N*K/2, B
scales N*K/32, Y bf16 M*N*2) over the copy bandwidth measured on the same device, and, on MI355X
(gfx950), aiter's time from the task's benchmark table.

    python -m fuzz.bench.harness --json results.json   # every available path on the six benchmark shapes
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from fuzz.bench.compare import MIN_ROUNDS_FOR_NOISE, NOISE_FLOOR, NOISE_SIGMAS
from kernels import configs, platform
from reference import accumulation_bound, acceptable_range, exact_gemm_from_inputs, generate_input

BENCH_SHAPES = configs.OFFICIAL_SHAPES[4:]
# aiter's times in microseconds on MI355X for the benchmark shapes (the task's table, CONTRACT.md).
AITER_US_MI355X = {
    (4, 2880, 512): 8.198, (16, 2112, 7168): 20.873, (32, 4096, 512): 9.462,
    (32, 2880, 512): 9.173, (64, 7168, 2048): 12.738, (256, 3072, 1536): 12.219,
}
# Larger than H200's 60 MB L2 and than MI355X's 256 MB Infinity Cache, so no input survives in cache.
FLUSH_BYTES = 512 << 20
FLUSH_FILL = 0x5A5A5A5A  # not zero: a zero fill could be served by memory compression instead of real writes
COPY_BYTES = 1 << 30  # per copy-bandwidth sample: big enough that launch cost is negligible


def moved_bytes(m: int, n: int, k: int) -> int:
    """Bytes any implementation must move: A bf16, B fp4 codes, B E8M0 scales, Y bf16."""
    return m * k * 2 + n * k // 2 + n * k // 32 + m * n * 2


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class DeviceTimer:
    """start()/stop() -> microseconds: CUDA/HIP events on a GPU, perf_counter on CPU."""

    def __init__(self, device: torch.device):
        self.device = device
        self._start = None

    def start(self) -> None:
        if self.device.type == "cuda":
            self._start = torch.cuda.Event(enable_timing=True)
            self._end = torch.cuda.Event(enable_timing=True)
            self._start.record()
        else:
            self._start = time.perf_counter()

    def stop(self) -> float:
        if self.device.type == "cuda":
            self._end.record()
            self._end.synchronize()
            return self._start.elapsed_time(self._end) * 1e3
        return (time.perf_counter() - self._start) * 1e6


def measure_copy_bandwidth(device, nbytes: int = COPY_BYTES, samples: int = 10) -> float:
    """Bytes per second of a device-to-device copy (read + write counted), best of ``samples``."""
    device = torch.device(device)
    src = torch.empty(nbytes, dtype=torch.uint8, device=device)
    src.fill_(1)
    dst = torch.empty_like(src)
    dst.copy_(src)  # first touch
    timer, best = DeviceTimer(device), math.inf
    for _ in range(samples):
        _synchronize(device)
        timer.start()
        dst.copy_(src)
        best = min(best, timer.stop())
    return 2 * nbytes / (best * 1e-6)


def count_outside_bound(y: torch.Tensor, data, splits: int, rounding: str) -> int:
    """Elements of ``y`` outside what a correct fp32-accumulating kernel may return (reference.oracle.gemm);
    elements where an fp32 intermediate may overflow are not counted."""
    from fuzz.judge.verdicts import accumulation_model

    exact = exact_gemm_from_inputs(data)
    lo, hi = acceptable_range(exact, accumulation_bound(exact, splits, **accumulation_model()), rounding)
    if tuple(y.shape) != tuple(exact.value.shape):
        return exact.value.numel()
    got = y.detach().to(device=lo.device, dtype=torch.float64)
    return int((~((lo <= got) & (got <= hi)) & ~exact.overflow_risk).sum())


@dataclass
class CallBench:
    """One path on one input: ``setup`` (untimed: clone inputs, flush the cache) and ``call`` (timed).
    pytest-benchmark's ``pedantic(call, setup=setup)`` and ``run`` drive the same two steps."""

    path: object
    data: tuple
    flush_bytes: int = FLUSH_BYTES
    times_us: list = field(default_factory=list)
    last_info: object = None

    def __post_init__(self):
        self.device = self.data[0].device
        self._flush = torch.empty(max(self.flush_bytes // 4, 1), dtype=torch.int32, device=self.device)
        self._timer = DeviceTimer(self.device)

    def setup(self):
        data = tuple(t.clone() for t in self.data)
        self._flush.fill_(FLUSH_FILL)
        _synchronize(self.device)
        return (data,), {}

    def call(self, data):
        self._timer.start()
        y, self.last_info = self.path.run(data)
        self.times_us.append(self._timer.stop())
        return y

    def run(self, calls: int, warmup: int = 2) -> None:
        for _ in range(warmup):
            self.call(*self.setup()[0])
        self.times_us.clear()
        for _ in range(calls):
            self.call(*self.setup()[0])


def timing_stats(times_us: list, rounds: int) -> dict:
    """Mean/std/median/min of the calls, and the noise: the relative std of the means of ``rounds``
    consecutive groups of calls, and the threshold NOISE_SIGMAS * that, at least NOISE_FLOOR."""
    n = len(times_us)
    rounds = max(1, min(rounds, n))
    size = n // rounds
    round_means = [statistics.fmean(times_us[i * size:(i + 1) * size]) for i in range(rounds)]
    mean = statistics.fmean(times_us)
    stats = {"n": n, "mean_us": mean, "std_us": statistics.stdev(times_us) if n > 1 else 0.0,
             "median_us": statistics.median(times_us), "min_us": min(times_us), "rounds": rounds,
             "round_means_us": round_means, "noise_rel_std": None, "threshold": None}
    if rounds >= MIN_ROUNDS_FOR_NOISE:
        rel = statistics.stdev(round_means) / statistics.fmean(round_means)
        stats.update(noise_rel_std=rel, threshold=max(NOISE_SIGMAS * rel, NOISE_FLOOR))
    return stats


def result_record(bench: CallBench, shape: tuple, rounds: int, bandwidth: float | None, check: bool = True) -> dict:
    """The saved result of a finished CallBench: timings, noise, roofline, aiter's time, correctness."""
    m, n, k = shape
    info = bench.last_info
    record = {"path": bench.path.name, "shape": list(shape), "config": getattr(info, "config", ""),
              "details": getattr(info, "details", {}), **timing_stats(bench.times_us, rounds),
              "moved_bytes": moved_bytes(m, n, k),
              "roofline_us": moved_bytes(m, n, k) / bandwidth * 1e6 if bandwidth else None,
              "aiter_us_mi355x": AITER_US_MI355X.get(tuple(shape))}
    if check:
        (data,), _ = bench.setup()
        y, info = bench.path.run(data)
        record["outside_bound"] = count_outside_bound(y, data, info.splits, info.rounding)
    return record


def bench_path(path, shape, *, rounds: int = 5, calls_per_round: int = 20, seed: int = 0, flush_bytes: int = FLUSH_BYTES,
               bandwidth: float | None = None, check: bool = True) -> dict:
    """Benchmark one path on one shape (inputs from the official generator) -> result record."""
    data = generate_input(*shape, seed=seed, device=platform.detect().device)
    bench = CallBench(path, data, flush_bytes)
    bench.run(rounds * calls_per_round)
    return result_record(bench, shape, rounds, bandwidth, check)


# ---- the results of this process, saved as one JSON file ----

RESULTS: list = []


def environment(bandwidth: float | None = None, flush_bytes: int = FLUSH_BYTES) -> dict:
    import triton

    plat = platform.detect()
    name = torch.cuda.get_device_name(0) if plat.device == "cuda" else "cpu"
    return {"device": name, "arch": plat.arch, "tier": plat.tier, "interpreter": plat.interpreter,
            "torch": torch.__version__, "triton": triton.__version__, "aiter": platform.aiter_kind(),
            "copy_bandwidth_Bps": bandwidth, "flush_bytes": flush_bytes,
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def save_results(path, results: list | None = None, meta: dict | None = None) -> dict:
    """Write ``results`` (default: every record this process collected in RESULTS) as JSON."""
    doc = {"format": "mxfp4-fuzz-bench/1", "meta": meta or environment(),
           "results": RESULTS if results is None else results}
    Path(path).write_text(json.dumps(doc, indent=1, default=str) + "\n")
    return doc


def geomean(values) -> float | None:
    values = [v for v in values if v]
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


def format_table(results: list, arch: str = "", bandwidth: float | None = None) -> str:
    """Compact table; aiter's MI355X column only where the numbers are comparable (gfx950)."""
    with_aiter = arch.startswith("gfx950")
    head = f"{'path':<8} {'M':>4} {'N':>5} {'K':>5} {'mean us':>9} {'std':>7} {'min':>8} {'roofline':>8} {'%roof':>6} {'noise':>6} {'bad':>4}"
    lines = [f"copy bandwidth {bandwidth / 1e9:.0f} GB/s (read + write)" if bandwidth else "copy bandwidth not measured",
             head + (f" {'aiter us':>8}" if with_aiter else "")]
    for r in results:
        m, n, k = r["shape"]
        if "error" in r:
            lines.append(f"{r['path']:<8} {m:>4} {n:>5} {k:>5} ERROR {r['error'][:90]}")
            continue
        roof = r.get("roofline_us")
        noise = f"{r['threshold']:.1%}" if r.get("threshold") else "-"
        line = (f"{r['path']:<8} {m:>4} {n:>5} {k:>5} {r['mean_us']:>9.2f} {r['std_us']:>7.2f} {r['min_us']:>8.2f} "
                f"{roof or 0:>8.2f} {(roof or 0) / r['mean_us']:>6.1%} {noise:>6} {r.get('outside_bound', '-'):>4}")
        lines.append(line + (f" {r['aiter_us_mi355x'] or 0:>8.3f}" if with_aiter else ""))
    for name in dict.fromkeys(r["path"] for r in results):
        mine = [r for r in results if r["path"] == name and "error" not in r]
        g = geomean(r["mean_us"] for r in mine)
        if g:
            line = f"{name}: geometric mean {g:.2f} us over {len(mine)} shapes"
            if with_aiter and len(mine) == len(AITER_US_MI355X):
                line += f" (aiter {geomean(AITER_US_MI355X.values()):.2f} us)"
            lines.append(line)
    return "\n".join(lines)


def available_paths(names=None) -> tuple:
    """The dispatcher's paths that can run here (optionally only ``names``), with why others cannot."""
    from kernels.dispatch import DEFAULT_PATHS

    ready, skipped = [], {}
    for path in DEFAULT_PATHS:
        if names and path.name not in names:
            continue
        ok, why = path.requirements()
        if ok:
            ready.append(path)
        else:
            skipped[path.name] = why
    return ready, skipped


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.bench.harness", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="write the results here")
    parser.add_argument("--paths", help="comma-separated path names (default: every available path)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20, help="timed calls per round")
    args = parser.parse_args(argv)
    if platform.detect().interpreter:
        print("not benchmarking: the Triton interpreter's timings say nothing about GPU performance")
        return 2
    device = platform.detect().device
    bandwidth = measure_copy_bandwidth(device)
    paths, skipped = available_paths(args.paths.split(",") if args.paths else None)
    for name, why in skipped.items():
        print(f"skip {name}: {why}")
    results = []
    for path in paths:
        for shape in BENCH_SHAPES:
            try:
                results.append(bench_path(path, shape, rounds=args.rounds, calls_per_round=args.calls, bandwidth=bandwidth))
            except Exception as exc:  # one failing path or shape must not lose the others' numbers
                results.append({"path": path.name, "shape": list(shape), "error": f"{type(exc).__name__}: {exc}"})
    print(format_table(results, platform.detect().arch, bandwidth))
    if args.json:
        save_results(args.json, results, environment(bandwidth))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
