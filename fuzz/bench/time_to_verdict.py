"""Time to a full verdict table, per file, and where the seconds went.

    python -m fuzz.bench.time_to_verdict [--files-dir .real_files] [--examples] [--only SUBSTRING ...]
                                         [--jobs N] [--cycle N] [--profile smoke] [--budget S] [--json OUT]
                                         [-- CHECK ARGS]

The files are the manifest's (``fuzz/bench/real_files.json``: real public submissions, each with its
repository, commit, path and sha256) that are present in ``--files-dir`` with the right sha256 — this
script fetches nothing; a file that is absent or differs is listed as such and skipped — plus, with
``--examples``, our own example submissions in ``EXAMPLES``. Each runs as ``mxfp4-fuzz check FILE``
(alone, or ``--jobs N`` at once: files per minute at that level), and its JSON report gives the
verdicts, how many examples each ran, what the budget cut short, and the time profile (plugin.py's
``time_profile``): worker start, the official check, programs (the module executed afresh, inputs
built, the file's calls, inside Triton's interpreter), judging (our oracle and attribution), Hypothesis,
and the seconds of inconclusive examples and of examples the budget ended; on a GPU, each Triton compile of the
check's processes (``compiled``: which kernel, in which process, when). The tier is the machine's.
Nothing here asserts a speed: numbers go to docs/results with the machine and date.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fuzz.submission.progress import COMPILE_LOG_ENV  # one JSON line per compile or cache hit, per process

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = Path(__file__).with_name("real_files.json")
DEFAULT_DIR = ROOT / ".real_files"
# Our examples of each kind a real file is (an own Triton quantizer, HIP on the CPU model, aiter's API, ASM)
EXAMPLES = ("triton_fused_quant_shuffle.py", "triton_quant_uint8_scale.py", "per_group_quant_slow.py",
            "hip_mfma_gemm.py", "hiprtc_mfma_gemm.py", "aiter_public_api.py", "aiter_asm_user.py",
            "aiter_internal_kernel.py", "correct_reference_style.py", "refuses_k_not_256.py")


def gpu_names() -> str:
    """", GPU: <name> x<count>" from nvidia-smi where there is one (timings name the card: an H100 and an
    H200 differ), else ""."""
    try:
        names = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                               text=True, timeout=20).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):
        return ""
    names = [n.strip() for n in names if n.strip()]
    return f", GPU: {names[0]} x{len(names)}" if names else ""


def manifest_files(files_dir: Path) -> tuple[list, list]:
    """([(id, path, entry)] present with the manifest's sha256, [(id, why)] not usable)."""
    entries = json.loads(MANIFEST.read_text())["files"] if MANIFEST.exists() else []
    present, missing = [], []
    for entry in entries:
        path = files_dir / f"{entry['id']}.py"
        if not path.exists():
            missing.append((entry["id"], "absent"))
        elif hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
            missing.append((entry["id"], "sha256 differs from the manifest"))
        else:
            present.append((entry["id"], path, entry))
    return present, missing


def check_one(label: str, path: Path, out: Path, options: list, timeout: float) -> dict:
    report = out / f"{label}.json"
    command = [sys.executable, "-m", "fuzz.cli", "check", str(path), "--report", str(report), *options]
    compile_log = out / f"{label}.compiles"  # every process of the check logs its Triton compiles here
    compile_log.mkdir(exist_ok=True)
    env = {**os.environ, COMPILE_LOG_ENV: str(compile_log)}
    started, launched = time.perf_counter(), time.time()
    with open(out / f"{label}.log", "wb") as log:
        try:
            code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, cwd=ROOT,
                                  env=env).returncode
        except subprocess.TimeoutExpired:
            code = None
    seconds, ended = time.perf_counter() - started, time.time()
    row = {"file": label, "seconds": round(seconds, 1), "exit_code": code}
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError):
        row["error"] = f"no report (see {out / (label + '.log')})"
        return row
    row.update(summarize(data))
    phases = data.get("phases") or {}
    row["where"].update(outside_session(phases, launched, ended))
    row["compiled"] = compiled(compile_log, launched)
    # each stamp in seconds after the command's launch: where the time before the session went
    row["phases"] = {name: round(stamp - launched, 2) for name, stamp in phases.items() if stamp}
    print(f"done        {label}: {seconds:.1f} s, exit {code}", flush=True)  # a run cut off still says this much
    return row


def summarize(data: dict) -> dict:
    """The verdicts and the time profile of one report, in the few numbers the table prints."""
    verdicts = data.get("verdicts", [])
    profile = data.get("time_profile", {"tests": {}})
    tests = profile.get("tests", {})
    worker = {}
    for test in tests.values():
        for kind, seconds in test.get("worker", {}).items():
            worker[kind] = worker.get(kind, 0.0) + seconds

    def total(key, sub=None):
        return round(sum((t.get(key, {}).get(sub, 0.0) if sub else t.get(key, 0.0))
                         for name, t in tests.items() if name != "loads"), 1)

    return {
        "tier": data.get("tier"),
        "statuses": {v["verdict"]: v["status"] for v in verdicts},
        "summaries": {v["verdict"]: v["summary"][:400] for v in verdicts if v["status"] not in ("PASS", "SKIP")},
        "examples": {v["verdict"]: v["examples"] - v["inconclusive"] for v in verdicts},
        "cut_short": [v["verdict"] for v in verdicts if v.get("cut_short")],
        "prediction": {mode: p.get("status") for mode, p in (data.get("prediction") or {}).items()},
        "latent": len(data.get("latent") or []),
        "steered": sum(v.get("steered", 0) for v in verdicts),
        "where": {
            "worker_start": round(profile.get("worker_start", 0.0), 1),
            # the loads verdict waits for the worker to execute the file (no program): not judging
            "loading": round(tests.get("loads", {}).get("seconds", 0.0), 1),
            "official": round(tests.get("official", {}).get("seconds", 0.0), 1),
            "programs": total("program_wall"),
            "module_exec": round(worker.get("reload", 0.0), 1),
            "inputs": round(worker.get("build", 0.0) + worker.get("write", 0.0), 1),
            "calls": round(worker.get("call", 0.0), 1),
            "interpreted": round(worker.get("interpreted", 0.0), 1),
            "compiling": round(worker.get("compiling", 0.0), 1),  # Triton compiles in the check's worker (GPU)
            "compiles": int(worker.get("compiles", 0)),
            "judging": total("judging"),
            "hypothesis": total("hypothesis"),
            "inconclusive": total("checks", "inconclusive"),
            "budget_cut": total("checks", "budget_cut"),
        },
        "total_seconds": data.get("timings", {}).get("total_seconds"),
        # when each test ended and the budget's plan, on the budget's clock: where a check overran its budget
        "ended": {name: t.get("ended") for name, t in tests.items()},
        "budget": {k: (data.get("budget") or {}).get(k) for k in ("seconds", "extended", "deadlines")},
    }


COMPILES_KEPT = 40


def compiled(folder: Path, launched: float) -> list:
    """The Triton compiles (cache misses) of a check's processes, in the order they ended: which process (worker,
    helper), which kernel and specialization, how long, and when it ended, in seconds after the command's
    launch. On a GPU a check is compile-bound: this says which compile made a verdict overrun its share (an H100
    check's correctness example compiled twice at a shape already run, stop 54, with nothing to say which
    kernel). Empty on the CPU tier (the interpreter compiles nothing) and with Triton < 3.4 (no listener)."""
    lines = []
    for log in sorted(folder.glob("*.jsonl")):
        for text in log.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                line = json.loads(text)
            except ValueError:
                continue  # a line cut by a killed process
            if not line.get("hit"):
                lines.append({"at": round(line.get("end", launched) - launched, 2), "role": line.get("role"),
                              "pid": line.get("pid"), "kernel": line.get("kernel"), "seconds": line.get("seconds"),
                              "specialization": str(line.get("specialization", ""))[:160]})
    return sorted(lines, key=lambda line: line["at"])[:COMPILES_KEPT]


def outside_session(phases: dict, launched: float, ended: float) -> dict:
    """The command's seconds outside the verdicts' session, from the report's epoch stamps (plugin.py's
    ``phases``): the interpreter and our imports until cli.main, from there to the session (the worker's
    prelaunch, pytest's start and collection), and after the report (workers closed, the HTML page, the
    interpreter's exit). Empty for a report without stamps."""
    if not phases.get("command") or not phases.get("session") or not phases.get("report"):
        return {}
    return {"startup": round(phases["command"] - launched, 1),
            "to_session": round(phases["session"] - phases["command"], 1),
            "after_report": round(ended - phases["report"], 1)}


COLUMNS = ("startup", "to_session", "after_report", "worker_start", "loading", "official", "programs", "module_exec", "inputs",
           "calls", "interpreted", "compiling", "compiles", "judging", "hypothesis", "inconclusive", "budget_cut")


MODE_MARK = {"PASS": "P", "FAIL": "F", "NOT RUN": "-"}  # the predicted popcorn modes, test/benchmark/leaderboard


def steady_rate(rows: list, jobs: int) -> float:
    """Files a minute that ``jobs`` checks at once would finish in steady state, were each as long as the mean
    check measured here (under the same load): an estimate, not a measurement. With few files and many jobs
    the measured rate is the last, partly filled wave's (the slowest check ends the run): ``--cycle`` with
    many files measures the steady state itself."""
    seconds = [r["seconds"] for r in rows if r.get("seconds")]
    return jobs * 60.0 / (sum(seconds) / len(seconds)) if seconds else 0.0


def table(rows: list) -> list:
    head = f"{'file':<58} {'s':>6} {'exit':>4} {'t/b/l':>5} {'FAIL':>4} {'NRUN':>4} {'cut':>3} " + " ".join(
        f"{c[:7]:>7}" for c in COLUMNS)
    lines = [head]
    for row in rows:
        statuses = row.get("statuses", {}).values()
        where = row.get("where", {})
        predicted = row.get("prediction", {})
        modes = "/".join(MODE_MARK.get(predicted.get(m), "?") for m in ("test", "benchmark", "leaderboard"))
        lines.append(f"{row['file'][:58]:<58} {row['seconds']:>6.1f} {str(row['exit_code']):>4} {modes:>5} "
                     f"{sum(s == 'FAIL' for s in statuses):>4} {sum(s == 'NOT RUN' for s in statuses):>4} "
                     f"{len(row.get('cut_short', [])):>3} " + " ".join(f"{where.get(c, 0.0):>7.1f}" for c in COLUMNS)
                     + (f"  {row['error']}" if "error" in row else ""))
    return lines


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files-dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--examples", action="store_true", help="also our example submissions")
    parser.add_argument("--only", nargs="*", default=None, help="only files whose name contains one of these")
    parser.add_argument("--jobs", type=int, default=1, help="checks at once (each file still timed alone)")
    parser.add_argument("--cycle", type=int, default=None, metavar="N",
                        help="check N files, cycling through the list: files a minute in steady state (with few "
                             "files and many jobs the last, partly filled wave dominates the wall time)")
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--budget", type=float, default=None, help="--budget of each check (default: the tier's)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before a check is killed")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv[:len(argv) - len(extra) - (1 if "--" in argv else 0)])
    present, missing = manifest_files(args.files_dir)
    files = [(f"real:{i}", p) for i, p, _ in present]
    if args.examples:
        files += [(f"ours:{name}", ROOT / "fuzz" / "examples" / name) for name in EXAMPLES]
    if args.only:
        files = [(label, p) for label, p in files if any(s in label for s in args.only)]
    if args.cycle and files:
        files = [(f"{files[i % len(files)][0]}#{i // len(files)}", files[i % len(files)][1]) for i in range(args.cycle)]
    for file_id, why in missing:
        print(f"skipped     {file_id}: {why} in {args.files_dir}")
    if not files:
        print("no file to check: put the manifest's files in --files-dir, or pass --examples")
        return 2
    options = ["--profile", args.profile] + (["--budget", str(args.budget)] if args.budget is not None else [])
    options += (["--", *extra] if extra else [])
    out = Path(tempfile.mkdtemp(prefix="mxfp4-fuzz-ttv-"))
    started = time.perf_counter()
    done, lock = [], threading.Lock()

    gpus = gpu_names()

    def save(rows: list, wall: float, complete: bool) -> None:
        if not args.json:
            return
        per_minute = len(rows) / wall * 60 if wall > 0 else 0.0
        args.json.write_text(json.dumps({
            "machine": f"{platform.node() or 'host'} {platform.machine()}, {os.cpu_count()} cores" + gpus,
            "date": time.strftime("%Y-%m-%d"), "profile": args.profile, "budget": args.budget, "jobs": args.jobs,
            "complete": complete, "wall_seconds": round(wall, 1), "files_per_minute": round(per_minute, 2),
            "files_per_minute_steady_estimate": round(steady_rate(rows, args.jobs), 2),
            "rows": rows, "skipped": [{"id": i, "why": w} for i, w in missing]}, indent=2) + "\n")

    def one(f):
        row = check_one(f[0].replace(":", "_"), f[1], out, options, args.timeout)
        with lock:  # a run killed midway (a device call's limit) keeps the rows it finished
            done.append(row)
            save(list(done), time.perf_counter() - started, complete=False)
        return row

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        rows = list(pool.map(one, files))
    wall = time.perf_counter() - started
    for line in table(rows):
        print(line)
    per_minute = len(rows) / wall * 60 if wall > 0 else 0.0
    print(f"{len(rows)} files in {wall:.0f} s with {args.jobs} at once: {per_minute:.1f} files a minute "
          f"(an estimate of the steady state, {args.jobs} x 60 s / the mean check's seconds measured at this load: "
          f"{steady_rate(rows, args.jobs):.1f}); logs in {out}")
    save(rows, wall, complete=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
