"""``mxfp4-fuzz check A.py B.py DIR ...``: many submission files in one command.

Each file is checked by its own ``mxfp4-fuzz check FILE`` process (a fresh interpreter: one file's
crash, hang or monkeypatching never reaches another's verdicts), at most ``jobs`` at a time:

* on a GPU host one check per visible GPU, each child seeing its GPU alone (``CUDA_VISIBLE_DEVICES`` /
  ``HIP_VISIBLE_DEVICES``); ``--jobs`` above the GPU count shares GPUs round-robin, and only then;
* on a CPU host one check per core.

Threads: every child registers as a check (fuzz/host/thread_budget.py), so the cores are split between the
checks running at the moment, this command's and any other's on the host.

Out: a report and a log per file under ``--out-dir``, a summary (file x verdict, tier, seconds) printed
and written as JSON (``SUMMARY_SCHEMA``), a progress line as each file finishes and every
``HEARTBEAT`` seconds while checks run, and the exit code of the worst file (``worst_exit``).

Ctrl-C or SIGTERM: the running checks are ended with their workers (fuzz/host/process_tree.py), the summary
is written with the files done so far and the others marked interrupted, and the exit code is 130.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from fuzz.host import parallel, process_tree, thread_budget

HEARTBEAT = 30.0
STOP_GRACE = 10.0  # seconds an interrupted check has to end its workers and exit before it is SIGKILLed
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C
SUMMARY_VERSION = 1
# Exit codes, worst last: a usage error or an internal error outranks a predicted mode failure (1), which
# outranks "only KernelGuard objects" (7), then "only latent bugs" (8), "a check of ours broke" (9) and
# "nothing failed, something NOT RUN" (6, inconclusive), then a clean run; a child that died or was killed
# counts as an internal error.
# Each child exits by report_text.final_exit_status under the command's --fail-on: the same rule ranks files.
EXIT_SEVERITY = (0, 6, 9, 8, 7, 5, 1, 2, 3, 4)
STATUS_CELL = {"PASS": "pass", "FAIL": "FAIL", "NOT RUN": "not run", "SKIP": "skip", "REPORTED": "reported",
               "ERROR": "ERROR"}
SUMMARY_SCHEMA = {  # what tests check of the summary JSON (fuzz/unit/test_many_files.py)
    "version": int, "tier": str, "jobs": int, "devices": list, "seconds": float, "exit_code": int,
    "interrupted": bool, "files": list,
}
FILE_SCHEMA = {"file": str, "report": str, "log": str, "exit_code": int, "seconds": float, "device": (str, type(None)),
               "tier": (str, type(None)), "verdicts": dict, "failed": list, "error": (str, type(None)),
               "runner": dict, "latent": int}


def submission_files(paths: list[str]) -> list[Path]:
    """The files to check: each named file, and each ``*.py`` in a named folder (not recursive) that
    defines ``custom_kernel`` (helper modules beside the submissions are left out). Raises
    ValueError naming a path that does not exist or a folder without submissions."""
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            inside = [p for p in sorted(path.glob("*.py")) if "def custom_kernel" in p.read_text(errors="replace")]
            if not inside:
                raise ValueError(f"{name}: no submission file in this folder (no *.py defines custom_kernel)")
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            raise ValueError(f"{name}: no such file or folder")
    return list(dict.fromkeys(p.resolve() for p in found))


def visible_devices(environ=os.environ) -> tuple[str, list[str]]:
    """(the variable that selects GPUs here, the ids a child may be given); ("", []) without a GPU."""
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    var, _, ids = parallel.plan(environ, count).partition(":")
    return var, [d for d in ids.split(",") if d]


def default_jobs(files: int, devices: list, cores: int) -> int:
    return max(1, min(files, len(devices) if devices else cores))


@dataclass
class Child:
    path: Path
    report: Path
    log: Path
    device: str | None
    process: subprocess.Popen | None = None
    started: float = 0.0
    seconds: float = 0.0
    exit_code: int | None = None
    summary: dict = field(default_factory=dict)


def report_name(path: Path, taken: set) -> str:
    stem, n = path.stem, 1
    while stem in taken:
        n += 1
        stem = f"{path.stem}-{n}"
    taken.add(stem)
    return stem


def child_command(path: Path, report: Path, options: list[str], extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "fuzz.cli", "check", str(path), "--report", str(report), *options,
            *(["--", *extra] if extra else [])]


def child_env(device_var: str, device: str | None, environ=os.environ) -> dict:
    env = dict(environ)
    if device is not None:
        for var in parallel.DEVICE_VARS:
            env.pop(var, None)
        env[device_var] = device
    env.pop("PYTEST_XDIST_WORKER", None)  # a child is its own check, never an xdist worker
    return env


def read_report(child: Child) -> dict:
    """The file's row of the summary, from its JSON report (or from how its process ended)."""
    row = {"file": str(child.path), "report": str(child.report), "log": str(child.log),
           "exit_code": int(child.exit_code if child.exit_code is not None else 3),
           "seconds": round(child.seconds, 1), "device": child.device, "tier": None, "verdicts": {},
           "failed": [], "error": None, "runner": {}, "latent": 0}
    try:
        report = json.loads(child.report.read_text())
    except (OSError, ValueError) as error:
        tail = child.log.read_text(errors="replace").strip().splitlines()[-3:] if child.log.exists() else []
        row["error"] = f"no report ({type(error).__name__}); exit code {child.exit_code}; " + " | ".join(tail)
        return row
    row["tier"] = report.get("tier")
    row["verdicts"] = {v["verdict"]: v["status"] for v in report.get("verdicts", [])}
    row["failed"] = [v["verdict"] for v in report.get("verdicts", []) if v["status"] in ("FAIL", "ERROR")]
    row["runner"] = {mode: p["status"] for mode, p in (report.get("prediction") or {}).items()}  # per popcorn mode
    row["latent"] = sum(1 for e in report.get("latent") or [] if not e.get("may_block"))
    if report.get("load_error"):
        row["error"] = str(report["load_error"])[:300]
    return row


def interrupted_child(child: Child, now: float) -> Child:
    """A file the interrupt stopped, or kept from starting: its row says so (with the verdicts its check
    reported before it ended, if it wrote a report) and exits EXIT_INTERRUPTED."""
    child.exit_code = EXIT_INTERRUPTED
    child.seconds = now - child.started if child.process is not None else 0.0
    child.summary = read_report(child)
    child.summary["error"] = (f"interrupted after {child.seconds:.0f} s" if child.process is not None
                              else "interrupted before its check started")
    return child


def worst_exit(codes: list[int]) -> int:
    """The worst of the files' exit codes; a child killed by a signal (negative) counts as 3."""
    rank = {code: i for i, code in enumerate(EXIT_SEVERITY)}
    codes = [3 if c < 0 or c not in rank else c for c in codes]
    return max(codes, key=rank.__getitem__, default=0)


def summary_table(rows: list[dict]) -> str:
    """file x verdict, with tier and seconds; one line per file."""
    verdicts = list(dict.fromkeys(v for row in rows for v in row["verdicts"]))
    name_width = max([len(Path(r["file"]).name) for r in rows] + [4])
    widths = [max(len(v), 8) for v in verdicts]
    runner = "runner t/b/l"  # the prediction per popcorn mode (test, benchmark, leaderboard), then latent bugs
    head = (f"{'file':<{name_width}}  {'tier':<7} {'time':>6}  {runner:<20} {'latent':<6}  "
            + " ".join(f"{v:<{w}}" for v, w in zip(verdicts, widths)))
    lines = [head, "-" * len(head)]
    for row in rows:
        cells = " ".join(f"{STATUS_CELL.get(row['verdicts'].get(v), row['verdicts'].get(v) or '-'):<{w}}"
                         for v, w in zip(verdicts, widths))
        modes = "/".join(STATUS_CELL.get(s, s) for s in row.get("runner", {}).values()) or "-"
        lines.append(f"{Path(row['file']).name:<{name_width}}  {row['tier'] or '-':<7} {row['seconds']:>5.0f}s  "
                     f"{modes:<20} {row.get('latent', 0):<6}  {cells}")
        if row["error"]:
            lines.append(f"{'':<{name_width}}  !! {row['error']}")
    return "\n".join(lines)


def _progress(done: int, total: int, running: list[Child], now: float, finished: Child | None = None) -> str:
    busy = ", ".join(f"{c.path.name} {now - c.started:.0f} s" for c in running)
    if finished is None:
        return f"[{done}/{total}] running: {busy}"
    row = finished.summary
    not_run = bool(row["verdicts"]) and set(row["verdicts"].values()) <= {"NOT RUN", "SKIP"}
    unrun = sum(status == "NOT RUN" for status in row["verdicts"].values())
    failed = (f"FAIL {', '.join(row['failed'])}" if row["failed"] else "NOT RUN" if not_run
              else "error" if row["error"] else "no failure" + (f", {unrun} NOT RUN" if unrun else ""))
    return (f"[{done}/{total}] {finished.path.name}: {failed} ({finished.seconds:.0f} s"
            + (f", GPU {finished.device}" if finished.device is not None else "") + ")"
            + (f" | running: {busy}" if busy else ""))


def check_many(paths: list[str], options: list[str], extra: list[str], out_dir: str, jobs: int | None,
               summary_path: str | None, print_line=print, html: str | None = None) -> int:
    files = submission_files(paths)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    device_var, devices = visible_devices()
    cores = thread_budget.host_cores()
    jobs = jobs or default_jobs(len(files), devices, cores)
    taken: set = set()
    queue = []
    for path in files:
        stem = report_name(path, taken)
        queue.append(Child(path, out / f"{stem}.json", out / f"{stem}.log", None))
        for stale in (queue[-1].report, queue[-1].log):
            if stale.exists():
                stale.unlink()
    where = (f"{len(devices)} GPU(s) ({device_var}={','.join(devices)}), " if devices else "no GPU, ") + f"{cores} cores"
    print_line(f"mxfp4-fuzz: {len(files)} files, {jobs} at a time; {where}; reports in {out}")
    start = time.perf_counter()
    running: list[Child] = []
    finished: list[Child] = []
    free = list(devices)  # GPUs no check holds; with more jobs than GPUs they are shared round-robin
    turn = 0
    last_beat = start
    interrupted = False
    try:
        while queue or running:
            while queue and len(running) < jobs:
                child = queue.pop(0)
                if devices:
                    child.device = free.pop(0) if free else devices[turn % len(devices)]
                    turn += 1
                child.started = time.perf_counter()
                running.append(child)  # before it starts: an interrupt from here on finds it
                with open(child.log, "wb") as log:
                    child.process = subprocess.Popen(child_command(child.path, child.report, options, extra),
                                                     stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                     env=child_env(device_var, child.device))
            time.sleep(0.2)
            now = time.perf_counter()
            for child in list(running):
                code = child.process.poll()
                if code is None:
                    continue
                running.remove(child)
                child.exit_code, child.seconds = code, now - child.started
                child.summary = read_report(child)
                finished.append(child)
                if child.device is not None and child.device not in free and \
                        not any(c.device == child.device for c in running):
                    free.append(child.device)
                print_line(_progress(len(finished), len(files), running, now, child))
            if running and now - last_beat >= HEARTBEAT:
                last_beat = now
                print_line(_progress(len(finished), len(files), running, now))
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (fuzz/cli.py raises it): end the checks, keep what is done
        interrupted = True
        print_line(f"interrupted: ending {len(running)} running check(s) and their workers")
        process_tree.end_descendants([c.process for c in running if c.process is not None], STOP_GRACE)
        now = time.perf_counter()
        for child in running + queue:
            finished.append(interrupted_child(child, now))
    order = {path: i for i, path in enumerate(files)}
    rows = [c.summary for c in sorted(finished, key=lambda c: order[c.path])]
    code = EXIT_INTERRUPTED if interrupted else worst_exit([r["exit_code"] for r in rows])
    summary = {"version": SUMMARY_VERSION, "tier": _tier(rows), "jobs": jobs, "devices": devices,
               "seconds": round(time.perf_counter() - start, 1), "exit_code": code, "interrupted": interrupted,
               "files": rows}
    print_line("")
    print_line(summary_table(rows))
    if interrupted:
        done = sum(1 for r in rows if not (r["error"] or "").startswith("interrupted"))
        print_line(f"interrupted after {summary['seconds']:.0f} s: {done} of {len(rows)} files done, the others "
                   f"marked interrupted; exit code {code}")
    else:
        print_line(f"{len(rows)} files in {summary['seconds']:.0f} s, {len(rows) / max(summary['seconds'], 1e-9) * 60:.1f} "
                   f"files per minute; exit code {code} (the worst file's)")
    target = Path(summary_path) if summary_path else out / "summary.json"
    target.write_text(json.dumps(summary, indent=2))
    print_line(f"summary     {target}")
    if html:
        print_line(f"html        {write_summary_html(summary, Path(html))}")
    return code


def write_summary_html(summary: dict, path: Path) -> Path:
    """The many-file page: the summary table and every file's report (a file without a readable report
    shows its summary row's error)."""
    from fuzz.report.page import summary_html

    reports = []
    for row in summary["files"]:
        try:
            reports.append(json.loads(Path(row["report"]).read_text()))
        except (OSError, ValueError):
            reports.append(None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(summary_html(summary, reports), encoding="utf-8")
    return path.resolve()


def _tier(rows: list[dict]) -> str:
    tiers = sorted({r["tier"] for r in rows if r["tier"]})
    return ",".join(tiers) if tiers else "unknown"
