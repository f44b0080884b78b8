"""pytest plugin: one JSON line per test outcome, appended as each test finishes, so a run stopped by
a time limit still says what passed, failed and skipped (junit XML is written only at the end).

    MXFP4_FUZZ_RESULTS_LOG=results.jsonl python -m pytest fuzz -p fuzz.bench.results_log

Under pytest-xdist only the controller writes (workers' reports reach it).
"""
from __future__ import annotations

import json
import os

_path = None


def pytest_configure(config):
    global _path
    _path = None if hasattr(config, "workerinput") else os.environ.get("MXFP4_FUZZ_RESULTS_LOG")


def pytest_runtest_logreport(report):
    if not _path or not (report.when == "call" or report.failed or report.skipped):
        return
    entry = {"test": report.nodeid, "when": report.when, "outcome": report.outcome, "seconds": round(report.duration, 2)}
    if report.skipped:
        entry["reason"] = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    elif report.failed:
        entry["text"] = report.longreprtext[-3000:]
    with open(_path, "a") as f:
        f.write(json.dumps(entry) + "\n")


def summarize(path) -> dict:
    """Totals, failures and skip reasons from a results log (same keys as gpu_run.parse_junit)."""
    result = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "failures": [], "skips": {}, "slowest": []}
    entries = [json.loads(line) for line in open(path) if line.strip()]
    for e in entries:
        if e["outcome"] == "passed":
            result["passed"] += 1
        elif e["outcome"] == "skipped":
            result["skipped"] += 1
            result["skips"].setdefault(e.get("reason", "").strip(), []).append(e["test"])
        else:
            result["failed" if e["when"] == "call" else "errors"] += 1
            result["failures"].append({"test": e["test"], "text": e.get("text", "")[-1500:]})
    result["slowest"] = [{"test": e["test"], "seconds": e["seconds"]}
                         for e in sorted(entries, key=lambda e: -e["seconds"])[:15]]
    return result
