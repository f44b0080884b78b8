"""One submission report from several pytest-xdist workers (``mxfp4-fuzz check FILE -- -n 2``).

Each worker fuzzes the verdicts it was given with its own worker process of the submission and hands
its partial report (the schema of ``SubmissionSession.report``) to the controller through xdist's
``workeroutput``. The controller merges them into one report of the same schema, writes it, sets the
exit code and prints the verdict table, as a serial run does:

* the header (file, tier, device, aiter, load) comes from a worker that loaded the file;
* verdicts in test order, one row each (a verdict two workers both recorded keeps the worse row);
* counters (programs, restarts, timeouts, slow programs) add up; the CPU tier's notes are the union;
  ``total_seconds`` is the controller's wall time;
* the kernelguard verdict ran on one worker and answered its rules with that worker's verdicts only:
  its row is answered again here with every worker's (``_answer_kernelguard``).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from fuzz.submission.report_text import build_lines

WORKEROUTPUT_KEY = "mxfp4_fuzz_submission_report"
_HEADER = ("submission", "tier", "device", "aiter", "aiter_detail", "profile", "loaded", "load_error",
           "documents_nondeterminism")
_SUMMED = ("programs_run", "worker_restarts", "timeouts", "slow_programs", "too_slow_programs")
_WORSE_FIRST = ("FAIL", "ERROR", "NOT RUN", "REPORTED", "PASS", "SKIP")


def _rank(verdict: dict) -> int:
    status = verdict["status"]
    return _WORSE_FIRST.index(status) if status in _WORSE_FIRST else len(_WORSE_FIRST)


def merge(partials: list, order: list, total_seconds: float) -> dict:
    """The report of the whole run from the workers' ``partials``; ``order``: verdict names in test order."""
    from fuzz.submission.outlook import outlook
    from fuzz.submission.report_text import official_launches_not_fuzzed

    base = next((p for p in partials if p["loaded"] is not None), partials[0])
    merged = {key: base[key] for key in _HEADER}
    chosen: dict = {}
    for partial in partials:
        for verdict in partial["verdicts"]:
            name = verdict["verdict"]
            if name not in chosen or _rank(verdict) < _rank(chosen[name]):
                chosen[name] = verdict
    position = {name: i for i, name in enumerate(order)}
    merged["verdicts"] = sorted(chosen.values(), key=lambda v: position.get(v["verdict"], len(position)))
    merged["official_launches_not_fuzzed"] = official_launches_not_fuzzed(merged["verdicts"])
    autotune: dict = {}
    for partial in partials:
        for kernel, entry in partial["cpu_tier"]["autotune"].items():
            into = autotune.setdefault(kernel, {"configs": entry["configs"], "checked": []})
            into["checked"] = sorted(set(into["checked"]) | set(entry["checked"]))
    merged["cpu_tier"] = {
        "device_emulated": any(p["cpu_tier"]["device_emulated"] for p in partials),
        "autotune": autotune,
        "compat_shims": {k: v for p in partials for k, v in p["cpu_tier"]["compat_shims"].items()},
        "hip_cpu": {key: sum((p["cpu_tier"].get("hip_cpu") or {}).get(key, 0) for p in partials)
                    for key in ("launches", "calls") if any((p["cpu_tier"].get("hip_cpu") or {}) for p in partials)},
        **{key: {k: v for p in partials for k, v in (p["cpu_tier"].get(key) or {}).items()}
           for key in ("hip_not_run", "hip_code_objects", "aiter_not_run", "torch_version")},
        "hip_fallback": next((p["cpu_tier"].get("hip_fallback") for p in partials if p["cpu_tier"].get("hip_fallback")), ""),
    }
    builds = {json.dumps(b, sort_keys=True): b for p in partials for b in p["hip_builds"]}
    merged["hip_builds"] = list(builds.values())
    timings = dict(base["timings"])
    timings["total_seconds"] = round(total_seconds, 3)
    starts = [p["timings"]["worker_start_seconds"] for p in partials if p["timings"]["worker_start_seconds"] is not None]
    timings["worker_start_seconds"] = max(starts) if starts else None
    for key in _SUMMED:
        timings[key] = sum(p["timings"][key] for p in partials)
    merged["timings"] = timings
    merged["kernelguard"] = next((p["kernelguard"] for p in partials if p.get("kernelguard")), None)
    _answer_kernelguard(merged["verdicts"], merged["kernelguard"])
    prediction, latent = outlook(merged["verdicts"])  # from the merged rows, as a serial run's
    return {"submission": merged["submission"], "prediction": prediction, "latent": latent, **merged}


def _answer_kernelguard(verdicts: list, screening: dict | None) -> None:
    """The kernelguard row from the bot's screening and the merged statuses of every other verdict."""
    row = next((v for v in verdicts if v["verdict"] == "kernelguard"), None)
    if row is None or screening is None or row["status"] not in ("PASS", "REPORTED", "FAIL"):
        return
    from fuzz.submission.leaderboard_gate import Screening, verdict

    statuses = {v["verdict"]: v["status"] for v in verdicts if v["verdict"] != "kernelguard"}
    status, summary = verdict(Screening(screening["profile"], screening["kernelguard"], screening["classification"],
                                        screening["should_filter"], screening["filter_reason"], screening["rules"]),
                              statuses)
    row["status"], row["summary"] = status.upper(), summary


def summary_lines(report: dict, workers: int, cards: bool) -> list:
    """The terminal summary of a merged report (the serial run's table, from the JSON)."""
    from fuzz.submission.outlook import lines as outlook_lines
    from fuzz.report import tier_notes
    from fuzz.submission.report_text import launch_lines

    t = report["timings"]
    slow = (f", {t['slow_programs']} slow (over the {t['timeout_seconds']:g} s timeout, progressing)"
            if t["slow_programs"] else "") + (f", {t['too_slow_programs']} too slow (NOT RUN)"
                                              if t["too_slow_programs"] else "")
    lines = [f"submission  {report['submission']}",
             f"tier {report['tier']}, {report['aiter_detail'] if report['loaded'] else '-'}; "
             f"{t['programs_run']} programs{slow}, {t['worker_restarts']} worker restarts, "
             f"{t['total_seconds']:.1f} s ({workers} xdist workers, one submission worker each)"]
    lines += outlook_lines(report["prediction"], report["latent"])
    width = max([len(v["verdict"]) for v in report["verdicts"]] + [8])
    for v in report["verdicts"]:
        first = v["summary"].splitlines()[0] if v["summary"] else ""
        lines.append(f"  {v['verdict']:<{width}}  {v['status']:<8}  {first[:150]}")
    if cards:  # every distinct failure's card, as the serial run prints them
        for v in report["verdicts"]:
            for text in [f["card_text"] for f in v["failures"] if f.get("card_text")] or [v["card_text"]]:
                if text:
                    lines += [""] + text.splitlines()
    for build in report["hip_builds"]:
        lines += build_lines(build)
    lines += launch_lines(report["verdicts"])
    lines += tier_notes.lines(report["cpu_tier"])
    return lines


class MergedSubmissionReporter:
    """The controller's side of a ``--submission`` run under xdist: merge, write, exit code, table."""

    def __init__(self, config):
        self.config = config
        self.report_path = Path(config.getoption("--submission-report"))
        self.started = time.perf_counter()
        self.order: list = []
        self.partials: list = []
        self.merged: dict | None = None

    def pytest_xdist_node_collection_finished(self, node, ids):
        from fuzz.submission.report_text import TEST_MODULE, test_name

        if not self.order:
            self.order = [test_name(i) for i in ids
                          if TEST_MODULE in i.split("::")[0]]

    def pytest_testnodedown(self, node, error):
        partial = getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY)
        if partial:
            self.partials.append(partial)

    def pytest_sessionfinish(self, session):
        from fuzz.submission.report_text import final_exit_status

        if not self.partials:
            return
        self.merged = merge(self.partials, self.order, time.perf_counter() - self.started)
        session.exitstatus = final_exit_status(session.exitstatus,
                                               {v["verdict"]: v["status"] for v in self.merged["verdicts"]},
                                               self.config.getoption("--fail-on"))
        self.report_path.write_text(json.dumps(self.merged, indent=2, default=str) + "\n")

    def pytest_terminal_summary(self, terminalreporter):
        if self.merged is None:
            return
        terminalreporter.section("mxfp4-fuzz submission report")
        for line in summary_lines(self.merged, len(self.partials), self.config.getoption("tbstyle") == "no"):
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"report      {self.report_path.resolve()}")
