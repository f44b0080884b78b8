"""The leaderboard's own gate: KernelGuard, the rule engine the GPU MODE bot screens every submission
with (the ``kernelguard`` package, source github.com/gpu-mode/kernelguard), run on the file, beside our
dynamic verdicts.

The bot's classification decides: ``should_filter`` (a rule whose policy auto-filters, e.g.
POINTER_REPLAY, LAST_CALL_REPLAY) is the ``kernelguard`` verdict FAIL ("the leaderboard would filter
this file"); other matched rules (telemetry and support signals such as CUDA_GRAPH_PYTHON,
WORKSPACE_CACHE, HARDCODED_SHAPES) are REPORTED; no rule is PASS. It is never a correctness verdict:
when it is the only failure the exit code is ``EXIT_FILTERED`` (7), not 1.

Static and dynamic side by side: a rule that claims a cache or a replay is answered by the verdicts that
test exactly that at run time (``DYNAMIC_EVIDENCE``): a stale_* or aliasing FAIL means the cache gives
wrong results (a bug to fix); all of them PASS means the cache is safe and only the rules object (a
restructuring for the leaderboard, not a fix).
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

EXIT_FILTERED = 7
# rules whose claim is state kept between calls: results, pointers, graphs, workspaces, preprocessed inputs
STATEFUL_RULE = re.compile(r"REPLAY|CACHE|CACHING|GRAPH|BANK|PRECOMPUTE|STATE")
DYNAMIC_EVIDENCE = ("stale_in_place", "stale_reallocated", "stale_new_shape", "stale_recheck", "aliasing",
                    "determinism")


class KernelGuardMissing(RuntimeError):
    pass


@dataclass(frozen=True)
class Screening:
    profile: str
    version: str
    classification: str  # hacked | suspicious | low_confidence | default_reference | valid
    should_filter: bool
    filter_reason: str | None
    rules: list = field(default_factory=list)  # [{"rule", "severity", "evidence"}], most severe first

    def to_json(self) -> dict:
        return {"profile": self.profile, "kernelguard": self.version, "classification": self.classification,
                "should_filter": self.should_filter, "filter_reason": self.filter_reason, "rules": list(self.rules)}


def profiles() -> tuple:
    try:
        import kernelguard
    except ImportError:
        return ("default",)
    return tuple(kernelguard.BUILTIN_PROFILES)


_SCREENING = threading.Lock()


def screen(code: str, profile: str = "default") -> Screening:
    """KernelGuard's classification of ``code`` under rule profile ``profile`` (its --api-mode result)."""
    try:
        import kernelguard
    except ImportError as error:
        raise KernelGuardMissing("kernelguard is not installed (python -m pip install kernelguard)") from error
    if profile not in kernelguard.BUILTIN_PROFILES:
        raise ValueError(f"unknown KernelGuard profile {profile!r}; choose one of {', '.join(kernelguard.BUILTIN_PROFILES)}")
    # One screening at a time in a process: KernelGuard's profile is process-wide state, and CPython 3.11's
    # AST-to-object conversion keeps its recursion depth per interpreter (gh-106905), so two threads
    # parsing at once raise "SystemError: AST constructor recursion depth mismatch" (seen in CI).
    with _SCREENING:
        kernelguard.configure_runtime(profile=profile)
        try:
            result = kernelguard.analyze_code(code, compute_structural_hash=False)
        finally:
            kernelguard.configure_runtime()  # the default profile again for anyone else in this process
    order = kernelguard.SEVERITY_ORDER
    rules = sorted(({"rule": m.get("pattern", "?"), "severity": m.get("severity", "?"), "evidence": m.get("evidence", "")}
                    for m in result.get("matched_patterns", [])), key=lambda r: -order.get(r["severity"], 0))
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("kernelguard")
    except PackageNotFoundError:
        found = "?"
    return Screening(profile, found, result.get("classification", "?"), bool(result.get("should_filter")),
                     result.get("filter_reason"), rules)


def dynamic_answer(rules: list, statuses: dict) -> str:
    """What the dynamic verdicts say about the rules that claim state kept between calls ("" if none do)."""
    stateful = [r["rule"] for r in rules if STATEFUL_RULE.search(r["rule"])]
    if not stateful:
        return ""
    seen = {name: statuses[name] for name in DYNAMIC_EVIDENCE if name in statuses}
    if not seen:
        return f"{', '.join(stateful)}: no dynamic verdict ran to test the claim"
    failed = [name for name, status in seen.items() if status == "FAIL"]
    listed = ", ".join(f"{name} {status}" for name, status in seen.items())
    if failed:
        return (f"{', '.join(stateful)}: the state is wrong at run time ({', '.join(failed)} FAIL): a bug to fix, "
                f"not only a rule to satisfy [{listed}]")
    if all(status in ("PASS", "REPORTED") for status in seen.values()):
        return (f"{', '.join(stateful)}: the state gave the fresh result in every dynamic check ({listed}): safe "
                "here, so restructure only for the leaderboard's rules")
    return f"{', '.join(stateful)}: the dynamic checks did not all run [{listed}]"


def verdict(screening: Screening, statuses: dict) -> tuple[str, str]:
    """(status: fail | reported | pass, summary) of the kernelguard verdict."""
    head = f"KernelGuard {screening.version} (profile {screening.profile}): {screening.classification}"
    rules = "; ".join(f"{r['rule']} ({r['severity']}): {r['evidence']}" for r in screening.rules)
    answer = dynamic_answer(screening.rules, statuses)
    tail = "".join(f"; {part}" for part in (rules, answer) if part)
    if screening.should_filter:
        return "fail", f"{head}, the leaderboard would filter this file ({screening.filter_reason}){tail}"
    if screening.rules:
        return "reported", f"{head}, not filtered{tail}"
    return "pass", f"{head}: no rule matched"
