"""Speed of the CPU model of HIP (reference/emulation/hip_cpu): the HIP example submissions built and run
at the official shapes, each example in fresh processes.

    python -m fuzz.bench.hip_cpu_speed                       # every example, every official shape
    python -m fuzz.bench.hip_cpu_speed hip_mfma_gemm --shapes 8x2112x7168 --json out.json

Per example: the build cold (an empty build cache: a fresh TMPDIR, which holds the model's cache, and a
fresh TORCH_EXTENSIONS_DIR) and warm (the same caches again), each the time the import of the file takes;
then per shape the time of one ``custom_kernel`` call (after one untimed call at a small shape, so lazy
setup is not counted); wall and CPU seconds (the process's and its finished children's, the compilers': on a shared host the
wall time counts the neighbours too), and the sha256 of its output's bytes: a change of the model that must not
change a result bit shows as a changed digest. Numbers go to docs/hip_cpu.md with the machine and date;
nothing here asserts a speed.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DEFAULT_EXAMPLES = ("hip_mfma_gemm", "hiprtc_mfma_gemm", "hip_load_inline_quant")


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the compilers): on a shared host the wall
    time also counts the neighbours."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _child(example: str, shapes: list) -> dict:
    """In this process: import ``example`` (its build) under no_rocm, then time each shape's call."""
    from fuzz.search.strategies import Case
    from reference.emulation import no_rocm

    no_rocm.install()
    sys.path.insert(0, str(EXAMPLES))
    started, cpu = time.perf_counter(), _cpu_seconds()
    module = __import__(example)
    result = {"build_s": time.perf_counter() - started, "build_cpu_s": _cpu_seconds() - cpu, "shapes": {}}
    before = no_rocm.hip_cpu_launches()
    module.custom_kernel(Case(8, 256, 512, seed=3).build()[0])  # lazy setup out of the timings
    for m, n, k in shapes:
        data, _ = Case(m, n, k, seed=1).build()
        started, cpu = time.perf_counter(), _cpu_seconds()
        out = module.custom_kernel(data)
        seconds, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
        digest = hashlib.sha256(out.contiguous().view(-1).view(__import__("torch").uint8).numpy().tobytes()).hexdigest()
        result["shapes"][f"{m}x{n}x{k}"] = {"run_s": seconds, "run_cpu_s": cpu, "sha256": digest[:16]}
    result["launches"] = no_rocm.hip_cpu_launches() - before
    return result


def _run_child(example: str, shapes: list, env: dict, build_only: bool = False) -> dict:
    spec = ",".join(f"{m}x{n}x{k}" for m, n, k in ([] if build_only else shapes))
    done = subprocess.run([sys.executable, "-m", "fuzz.bench.hip_cpu_speed", "--child", example, "--shapes", spec],
                          capture_output=True, text=True, env=env, cwd=str(EXAMPLES.parents[1]))
    if done.returncode != 0:
        raise RuntimeError(f"{example}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _parse_shapes(text: str) -> list:
    return [tuple(int(v) for v in s.split("x")) for s in text.split(",") if s]


def main(argv=None) -> int:
    from fuzz.search.strategies import OFFICIAL_TEST_SHAPES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", nargs="*", default=list(DEFAULT_EXAMPLES))
    parser.add_argument("--shapes", default=",".join(f"{m}x{n}x{k}" for m, n, k in OFFICIAL_TEST_SHAPES))
    parser.add_argument("--json", help="write the results here too")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    shapes = _parse_shapes(args.shapes)
    if args.child:
        print(json.dumps(_child(args.child, shapes)))
        return 0
    results = {}
    for example in args.examples:
        with tempfile.TemporaryDirectory(prefix="hip_cpu_speed_") as scratch:
            env = dict(os.environ, TMPDIR=scratch, TORCH_EXTENSIONS_DIR=os.path.join(scratch, "torch_extensions"))
            cold = _run_child(example, shapes, env, build_only=True)
            warm = _run_child(example, shapes, env)
        results[example] = {"build_cold_s": round(cold["build_s"], 2), "build_cold_cpu_s": round(cold["build_cpu_s"], 2),
                            "build_warm_s": round(warm["build_s"], 2), "launches": warm["launches"],
                            "shapes": {s: {key: round(v, 3) if isinstance(v, float) else v for key, v in timing.items()}
                                       for s, timing in warm["shapes"].items()}}
        print(example, json.dumps(results[example]), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
