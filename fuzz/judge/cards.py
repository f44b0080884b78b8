"""Failure cards: everything a user needs about one failing case on one screen, and as JSON.

A card names the minimal case (shape, layout, regimes, seed), the subject and the path it took, the
tier, the rung that failed with its worst element, the attribution lines, what the official 1e-2
check said about the same output, and the command that replays the case.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

from fuzz.judge.attribution import failure_class
from fuzz.judge.error_map import map_problem
from fuzz.search.strategies import Case, FieldError

REPLAY_COMMAND = "python -m pytest fuzz --replay {path}"


@dataclass(frozen=True)
class FailureCard:
    case: Case | None  # None for failures that precede any case (e.g. the submission does not import)
    subject: str  # the subject's name
    path: str  # the kernel path that ran ("" when the subject does not say)
    tier: str  # cpu | nvidia | amd
    check: str  # the rung that failed: stage_a_quant, product, official, split_invariance, ...
    summary: str  # that rung's one-line verdict
    worst: dict | None = None  # the worst element (see verdicts.check_product)
    attribution: list = field(default_factory=list)  # lines from attribution.explain
    official_passed: bool | None = None  # None when the official check was not run
    official_summary: str = ""
    dispatch: dict = field(default_factory=dict)  # the subject's last_dispatch metadata
    corpus_file: str = ""  # where the case is saved, relative to the repository root
    trace: list = field(default_factory=list)  # fuzz.judge.trace lines of the failing call: aiter calls, Triton launches
    failure_class: str = ""  # attribution.failure_class of the findings: what kind of wrong
    error_map: dict | None = None  # where over (M, N) the output is wrong: fuzz.judge.error_map
    error_map_png: str = ""  # the map drawn as a PNG (next to the corpus case or the report)

    @classmethod
    def from_verdicts(cls, case, subject, tier, verdict, official=None, findings=(), corpus_file="", trace=()):
        """A card from the failing ``verdict``, the official verdict on the same output, and the
        attribution findings; the subject's ``name`` and ``last_dispatch`` are read when it has them."""
        dispatch = dict(getattr(subject, "last_dispatch", None) or {})
        return cls(
            case=case,
            subject=getattr(subject, "name", None) or getattr(subject, "__name__", type(subject).__name__),
            path=str(dispatch.get("path", "")),
            tier=tier,
            check=verdict.check,
            summary=verdict.summary,
            worst=verdict.worst,
            attribution=[f.text for f in findings],
            official_passed=None if official is None else official.passed,
            official_summary="" if official is None else official.summary,
            dispatch=dispatch,
            corpus_file=corpus_file,
            trace=list(trace),
            failure_class=failure_class(list(findings)) if findings else "",
            error_map=verdict.error_map,
        )

    @property
    def replay(self) -> str:
        return REPLAY_COMMAND.format(path=self.corpus_file) if self.corpus_file else ""

    def render(self) -> str:
        lines = [f"FAIL {self.check}: subject {self.subject}" + (f", path {self.path}" if self.path else "")
                 + f", tier {self.tier}"]
        if self.case is not None:
            lines.append(f"  case      {self.case.describe()}")
        lines.append(f"  verdict   {self.summary}")
        if self.worst:
            w = self.worst
            lines.append(
                f"  worst     {tuple(w['index'])}: y={w['y']!r} exact={w['exact']!r} range=[{w['lo']!r}, {w['hi']!r}] "
                f"({_number(w['error_over_bound'])} x bound, {_number(w['error_ulps'])} bf16 ulps)"
            )
        if self.official_passed is not None:
            verdict = "passes" if self.official_passed else "fails"
            note = " (so the official check would not catch this)" if self.official_passed else ""
            lines.append(f"  official  {verdict}: {self.official_summary}{note}")
        for i, line in enumerate(self.attribution):
            lines.append(("  why       " if i == 0 else "            ") + line)
        if self.dispatch:
            lines.append("  dispatch  " + ", ".join(f"{k}={v}" for k, v in sorted(self.dispatch.items())))
        for i, line in enumerate(self.trace):
            lines.append(("  trace     " if i == 0 else "            ") + line)
        if self.error_map_png:
            lines.append(f"  map       {self.error_map_png}")
        if self.replay:
            lines.append(f"  replay    {self.replay}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        out = asdict(self)
        out["case"] = None if self.case is None else self.case.to_json()
        return out

    @classmethod
    def from_json(cls, obj) -> "FailureCard":
        """Inverse of to_json; raises FieldError naming the first bad field as 'card.<field>'."""
        if not isinstance(obj, dict):
            raise FieldError("card", f"must be a JSON object, got {type(obj).__name__}")
        names = {f.name for f in fields(cls)}
        for key in obj:
            if key not in names:
                raise FieldError(f"card.{key}", "unknown field")
        required = {"case", "subject", "path", "tier", "check", "summary"}
        missing = sorted(required - set(obj))
        if missing:
            raise FieldError(f"card.{missing[0]}", "missing")
        expected_types = {
            "subject": str, "path": str, "tier": str, "check": str, "summary": str, "official_summary": str,
            "corpus_file": str, "attribution": list, "dispatch": dict, "trace": list, "failure_class": str,
            "error_map_png": str,
        }
        for key, kind in expected_types.items():
            if key in obj and not isinstance(obj[key], kind):
                raise FieldError(f"card.{key}", f"must be {kind.__name__}, got {type(obj[key]).__name__}")
        for key in ("attribution", "trace"):
            if not all(isinstance(line, str) for line in obj.get(key, [])):
                raise FieldError(f"card.{key}", "must be a list of strings")
        if obj.get("worst") is not None and not isinstance(obj["worst"], dict):
            raise FieldError("card.worst", "must be an object or null")
        if obj.get("error_map") is not None:
            problem = map_problem(obj["error_map"])
            if problem:
                raise FieldError("card.error_map", problem)
        if obj.get("official_passed") not in (None, True, False):
            raise FieldError("card.official_passed", "must be true, false or null")
        try:
            case = None if obj["case"] is None else Case.from_json(obj["case"])
        except FieldError as e:
            raise FieldError(f"card.case.{e.field}", e.reason) from None
        return cls(**{**obj, "case": case})


def _number(x) -> str:
    return f"{x:.3g}" if isinstance(x, float) and math.isfinite(x) else str(x)
