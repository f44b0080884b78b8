"""Concurrency benchmark: files per minute with 1, 2, 4, 8 independent ``mxfp4-fuzz check`` processes
started together on one host (not the many-file command: independent processes, each finding the others
through the thread budget registry, fuzz/host/thread_budget.py).

    python -m fuzz.bench.concurrency FILE [FILE ...] [--levels 1,2,4,8] [--profile smoke] [--json OUT]
                                     [--unthrottled] [--time-to-verdict] [--timeout S]

At level L, L checks start at once, each on the next file of the list (cycling), and the wall time of the
slowest is the level's time: files per minute = L / wall * 60. ``--unthrottled`` gives every check the
whole host (OMP_NUM_THREADS = cores, no registry), the way checks ran before the budget existed.
``--time-to-verdict`` first checks each file alone and records its wall time. Numbers go to docs/results
with the machine; nothing here asserts a speed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fuzz.host import thread_budget


def run_level(files: list[str], level: int, profile: str, unthrottled: bool, extra: list[str],
              timeout: float | None = None) -> dict:
    out = Path(tempfile.mkdtemp(prefix=f"mxfp4-fuzz-bench-{level}-"))
    env = dict(os.environ)
    if unthrottled:
        cores = str(thread_budget.host_cores())
        env.update({name: cores for name in thread_budget.THREAD_VARS})
        env.pop(thread_budget.MARK_VAR, None)  # the user's value: the registry does not resize it
    else:
        for name in thread_budget.THREAD_VARS:
            env.pop(name, None)
    chosen = [files[i % len(files)] for i in range(level)]
    start = time.perf_counter()
    procs = []
    for i, path in enumerate(chosen):
        command = [sys.executable, "-m", "fuzz.cli", "check", path, "--profile", profile,
                   "--report", str(out / f"{i}.json"), *(["--", *extra] if extra else [])]
        log = open(out / f"{i}.log", "wb")
        procs.append((subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env), log, time.perf_counter()))
    seconds, unfinished = [], 0
    for proc, log, started in procs:
        left = None if timeout is None else max(0.1, timeout - (time.perf_counter() - start))
        try:
            proc.wait(timeout=left)
            seconds.append(round(time.perf_counter() - started, 1))
        except subprocess.TimeoutExpired:  # past the level's limit: killed, counted as not finished
            proc.kill()
            proc.wait()
            unfinished += 1
            seconds.append(None)
        log.close()
    wall = time.perf_counter() - start
    done = level - unfinished
    return {"level": level, "files": [Path(f).name for f in chosen], "wall_seconds": round(wall, 1),
            "check_seconds": seconds, "files_per_minute": round(done / wall * 60, 2), "unfinished": unfinished,
            "timeout_seconds": timeout, "exit_codes": [p.returncode for p, _, _ in procs], "unthrottled": unthrottled}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.bench.concurrency", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--levels", default="1,2,4,8")
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--json", default=None)
    parser.add_argument("--unthrottled", action="store_true")
    parser.add_argument("--time-to-verdict", action="store_true")
    parser.add_argument("--timeout", type=float, default=None, help="seconds a level may run; checks still running are killed")
    args, extra = parser.parse_known_args(argv)
    extra = extra[1:] if extra[:1] == ["--"] else extra
    levels = [int(x) for x in args.levels.split(",") if x.strip()]
    result = {"machine": f"{platform.node()} {platform.machine()}, {thread_budget.host_cores()} cores",
              "python": platform.python_version(), "profile": args.profile, "date": time.strftime("%Y-%m-%d"),
              "levels": [], "time_to_verdict": []}
    try:
        import torch

        result["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
        result["torch"] = torch.__version__
    except Exception:  # the benchmark still runs without torch details
        result["gpu"] = None
    if args.time_to_verdict:
        for path in args.files:
            row = run_level([path], 1, args.profile, False, extra, args.timeout)
            result["time_to_verdict"].append({"file": Path(path).name, "seconds": row["wall_seconds"],
                                              "exit_code": row["exit_codes"][0]})
            print(f"alone  {Path(path).name}: {row['wall_seconds']} s", flush=True)
    for level in levels:
        row = run_level(args.files, level, args.profile, args.unthrottled, extra, args.timeout)
        result["levels"].append(row)
        print(f"level {level}: {row['wall_seconds']} s, {row['files_per_minute']} files/min, checks {row['check_seconds']}",
              flush=True)
    text = json.dumps(result, indent=2)
    if args.json:
        Path(args.json).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
