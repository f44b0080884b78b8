"""What a report says first: the runner's prediction per popcorn mode, then the latent bugs apart.

Both are read from a report's verdict rows (the JSON of ``VerdictRecord.to_json``), so the serial run, the
xdist merge, the many-file summary and the HTML page say the same:

* ``predict``: per mode, PASS / FAIL / NOT RUN with the reason. ``test`` is the official verdict,
  ``benchmark`` the mode_benchmark verdict, ``leaderboard`` the mode_leaderboard verdict with KernelGuard's
  filter folded in (fuzz/submission/prediction.py runs the two modes). A file that does not load fails
  every mode. A builds_gfx950 FAIL is listed with ``may_block``: the runner fails the file where nothing
  falls back, and its fallback serves where one does (the hip line says what ran here).
* ``latent``: every other FAIL, one entry per failure class, with its smallest input (the shrunk card's
  case) and why the runner does not see it today, derived from the verdict and that case
  (``why_runner_misses``). A stateful or value failure while a mode is predicted to fail may be that
  mode's bug: it is listed with ``may_block`` and says so, not called latent.
"""
from __future__ import annotations

from fuzz.submission.report_text import MODES, MODE_VERDICT

HARNESS_REASONS = {  # verdicts whose hazard the runner's harness cannot reach, whatever the shape
    "aliasing": "the harness checks each output before the next call",
    "stale_in_place": "the harness never writes inputs in place",
    "immutability": "the harness checks against a copy made before the call and never looks at the inputs again",
    "determinism": "the runner never compares two calls",
    "contract_beyond": "beyond the stated contract: the runner never calls it",
    "uninitialised": "depends on what torch.empty returns: the runner may see it by chance",
}
# Stateful verdicts the modes' own programs exercise (shape order, freed and reallocated inputs, reseeded
# rechecks): latent only where the mode predictions passed.
ALLOCATOR_VERDICTS = ("stale_new_shape", "stale_reallocated", "stale_recheck")
PLAIN_INPUTS = dict(layout="contiguous", a_regime="randn", b_regime="randn", a_exponent=0, b_exponent=0,
                    scale_pad_fill=0)


def _rows(verdicts: list) -> dict:
    return {v["verdict"]: v for v in verdicts}


def _first_line(row: dict) -> str:
    return (row.get("summary") or "").splitlines()[0] if row.get("summary") else ""


def predict(verdicts: list) -> dict:
    """mode -> {"status": PASS | FAIL | NOT RUN, "reason": ..., "verdict": the row it comes from}."""
    rows = _rows(verdicts)
    return {mode: _predict_mode(mode, rows) for mode in MODES}


def _predict_mode(mode: str, rows: dict) -> dict:
    name = MODE_VERDICT[mode]
    loads = rows.get("loads")
    if loads is not None and loads["status"] == "FAIL":
        return {"status": "FAIL", "verdict": "loads", "reason": f"the file does not load: {_first_line(loads)}"}
    if loads is not None and loads["status"] == "ERROR":  # the load check itself broke: ours, says nothing of the file
        return {"status": "NOT RUN", "verdict": "loads", "reason": f"the load check itself raised: {_first_line(loads)}"}
    if loads is not None and loads["status"] == "NOT RUN":
        return {"status": "NOT RUN", "verdict": "loads", "reason": _first_line(loads)}
    row = rows.get(name)
    status = None if row is None else row["status"]
    if row is None:
        outcome = {"status": "NOT RUN", "reason": f"not run in this check (the {name} test was not selected)"}
    elif status in ("PASS", "REPORTED"):
        outcome = {"status": "PASS", "reason": _first_line(row)}
    elif status == "FAIL":
        outcome = {"status": "FAIL", "reason": _first_line(row)}
    elif status == "ERROR":
        outcome = {"status": "NOT RUN", "reason": f"the check itself raised: {_first_line(row)}"}
    else:  # NOT RUN, SKIP
        outcome = {"status": "NOT RUN", "reason": _first_line(row) or "skipped"}
    outcome["verdict"] = name
    if mode == "leaderboard":
        _fold_kernelguard(outcome, rows.get("kernelguard"))
    return outcome


def _fold_kernelguard(outcome: dict, guard: dict | None) -> None:
    """The bot's filter before a ranked run: FAIL naming the rule where it filters the file."""
    if guard is None:
        outcome["kernelguard"] = "not screened in this check"
        return
    outcome["kernelguard"] = f"{guard['status']}: {_first_line(guard)}"
    if guard["status"] == "FAIL":
        filtered = f"KernelGuard filters it before a ranked run: {_first_line(guard)}"
        if outcome["status"] == "FAIL":
            outcome["reason"] = f"{outcome['reason']}; and {filtered}"
        else:
            outcome.update(status="FAIL", reason=filtered, verdict="kernelguard")


def blocking(prediction: dict) -> list:
    """The modes predicted to fail, in order."""
    return [mode for mode in MODES if prediction.get(mode, {}).get("status") == "FAIL"]


def latent(verdicts: list, prediction: dict) -> list:
    """Every FAIL outside the modes, one entry per failure class: verdict, class, summary, the smallest
    case that shows it, and why the runner does not see it (or, with ``may_block``, which predicted mode
    failure it may be)."""
    from fuzz.submission.report_text import RUNNER_VERDICTS

    failing_modes = blocking(prediction)
    entries = []
    for row in verdicts:
        if row["verdict"] in RUNNER_VERDICTS or row["verdict"] == "kernelguard" or row["status"] != "FAIL":
            continue
        failures = row.get("failures") or ([row["failure"]] if row.get("failure") else [{}])
        for failure in failures:
            card = failure.get("card") or {}
            case = card.get("case")
            why, may_block = why_runner_misses(row["verdict"], case, failing_modes)
            entries.append({"verdict": row["verdict"], "failure_class": failure.get("failure_class", ""),
                            "summary": (failure.get("summary") or _first_line(row)).splitlines()[0],
                            "case": case, "why_runner_misses": why, "may_block": may_block})
    return entries


def why_runner_misses(verdict: str, case: dict | None, failing_modes: list) -> tuple[str, bool]:
    """(why the runner does not see this failure today, whether it may be a predicted mode failure)."""
    if verdict in HARNESS_REASONS:
        return HARNESS_REASONS[verdict], False
    if verdict == "builds_gfx950":
        return ("its HIP does not build for gfx950: where the file has no fallback the runner fails it in every "
                "mode; where it has one, the fallback serves (the report's hip line says what ran here)"), True
    if failing_modes:
        return (f"may be the bug behind the predicted {' and '.join(failing_modes)} FAIL: fix that first, then "
                "check again"), True
    if verdict in ALLOCATOR_VERDICTS:
        return "the runner's shape order and allocator did not reach it in the prediction", False
    if case is None:
        return "no failing case recorded", False
    return _case_reasons(case), False


def _case_reasons(case: dict) -> str:
    """Why the runner's shapes and inputs miss a failing case."""
    from fuzz.search.strategies import BENCHMARK_SHAPES, OFFICIAL_TEST_SHAPES

    shapes = OFFICIAL_TEST_SHAPES + BENCHMARK_SHAPES
    m, n, k = case["m"], case["n"], case["k"]
    reasons = []
    if (m, n, k) not in shapes:
        if k % 256 and all(s[2] % 256 == 0 for s in shapes):
            reasons.append("K % 256 != 0: no runner shape has it")
        else:
            for name, value, index in (("M", m, 0), ("N", n, 1), ("K", k, 2)):
                known = sorted({s[index] for s in shapes})
                if value not in known:
                    reasons.append(f"{name} = {value}: no runner shape has it (the runner's: "
                                   f"{', '.join(map(str, known))})")
            if not reasons:
                reasons.append(f"(M, N, K) = ({m}, {n}, {k}) is no runner shape")
    odd = [f"{key} {case.get(key)!r}" for key, plain in PLAIN_INPUTS.items() if case.get(key, plain) != plain]
    if case.get("specials"):
        odd.append(f"{len(case['specials'])} special values")
    if odd:
        reasons.append(f"the runner passes contiguous randn inputs (this case: {', '.join(odd)})")
    if not reasons:
        reasons.append("a runner shape with the runner's kind of inputs: another seed (the runner's secret "
                       "POPCORN_SEED) may show it")
    return "; ".join(reasons)


def outlook(verdicts: list) -> tuple[dict, list]:
    """(prediction, latent) of a report's verdict rows."""
    prediction = predict(verdicts)
    return prediction, latent(verdicts, prediction)


def headline(prediction: dict, latent_entries: list) -> str:
    """One line: which failures block a submission and which are latent."""
    modes = "  ".join(f"{mode} {prediction[mode]['status']}" for mode in MODES)
    stopped = blocking(prediction)
    bugs = [e for e in latent_entries if not e["may_block"]]
    names = ", ".join(dict.fromkeys(e["verdict"] for e in bugs))
    block = f"blocks the submission: {', '.join(stopped)}" if stopped else "nothing blocks the submission"
    hidden = f"latent (the runner does not see them today): {len(bugs)} ({names})" if bugs else "no latent bug found"
    return f"runner      {modes}  |  {block}; {hidden}"


def lines(prediction: dict, latent_entries: list) -> list:
    """The terminal's prediction block: the headline, a line per mode, a line per latent bug."""
    out = [headline(prediction, latent_entries)]
    for mode in MODES:
        p = prediction[mode]
        guard = f" [KernelGuard {p['kernelguard']}]" if mode == "leaderboard" and p["status"] != "FAIL" \
            and p.get("kernelguard") else ""
        out.append(f"  {mode:<11} {p['status']:<8} {p['reason'][:200]}{guard[:120]}")
    for e in latent_entries:
        case = e["case"]
        where = (f"M={case['m']} N={case['n']} K={case['k']} seed={case['seed']}" if case else "no case")
        label = "may block" if e["may_block"] else "latent"
        out.append(f"  {label:<11} {e['verdict']}{'[' + e['failure_class'] + ']' if e['failure_class'] else ''} at "
                   f"{where}: {e['why_runner_misses']}")
    return out
