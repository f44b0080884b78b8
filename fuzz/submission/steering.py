"""Draw where the file answers: learn the shapes a submission keeps refusing, and move later verdicts'
cases into the region it accepts, so their examples are conclusive.

Real files raise on purpose for shapes they do not serve (``assert K % 256 == 0``, a table without an
entry for M > 256), and some shapes reach what this tier cannot run (an emulated kernel's limit). Every
such call is an inconclusive example for the verdicts that need a result, and a search that keeps
drawing them spends most of its examples there. ``ShapeEvidence`` records every call's (M, N, K) and
whether it returned or raised (a device fault is neither: it is judged as a failure); ``rules`` explains the refusals with at most ``MAX_RULES`` simple rules that no accepted
call breaks: a divisibility (``K % 256 == 0``) or a bound (``M <= 64``). ``steer`` maps a drawn case
into the region the rules allow.

The refusal itself is contract evidence and stays where it was judged (contract, contract_beyond:
never steered). A drawn case is moved by the rules known when it is first seen, and the same draw is
moved the same way ever after (``Steering``), so Hypothesis replays an example into the same case. Weak spot, stated: a rule is an explanation of what was seen, not a proof of the
file's condition; a file refusing for a reason no simple rule states is not steered.

On a compiled tier a drawn shape nothing has run yet compiles the file's kernels for it first: 1.5 to 2.7 s
on the H100 host (stop 51), where a GPU check's fuzzed verdicts share about 3 s. ``nearest_run_shape`` moves
such a case to the nearest shape a program already ran (the runner's shapes, earlier examples) when the
verdict's time left has no room for a compile, for a file whose calls launch Triton kernels (the session
decides: plugin.SubmissionSession._steered).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

DIVISORS = (2048, 1024, 512, 256, 128, 64, 32, 16)
MIN_REFUSALS = 2  # a rule needs at least this many refusals it explains
MAX_RULES = 2
NEVER_STEERED = ("loads", "official", "contract", "contract_beyond")  # they judge the contract itself
DIMS = ("m", "n", "k")
MINIMUM = {"m": 1, "n": 16, "k": 32}  # Case's own floors (strategies.Case)
MAXIMUM = 16384  # no case is steered past this
TIER_LIMIT = "not run here: "  # how run_records.record_shape_evidence marks a refusal that was this tier's


@dataclass(frozen=True)
class Rule:
    dim: str  # m | n | k
    kind: str  # "multiple" (dim % value == 0) | "at_most" (dim <= value)
    value: int

    def holds(self, shape: tuple) -> bool:
        x = shape[DIMS.index(self.dim)]
        return x % self.value == 0 if self.kind == "multiple" else x <= self.value

    def __str__(self) -> str:
        name = self.dim.upper()
        return f"{name} % {self.value} == 0" if self.kind == "multiple" else f"{name} <= {self.value}"


@dataclass
class ShapeEvidence:
    accepted: set = field(default_factory=set)  # (m, n, k) of calls that returned
    refused: dict = field(default_factory=dict)  # (m, n, k) -> "Type: message" of a clean raise

    def add(self, shape: tuple, refusal: str | None) -> None:
        shape = tuple(int(x) for x in shape)
        if refusal is None:
            self.accepted.add(shape)
        else:
            self.refused.setdefault(shape, refusal)

    def rules(self) -> list:
        """The rules that explain the refusals (greedily, the one explaining most first), none broken
        by an accepted call; empty while fewer than MIN_REFUSALS refusals are explained, or while no call
        was accepted (every call raising says nothing of where the file answers: a rule would be vacuous,
        e.g. "M % 2048 == 0" when a stand-in refused every call)."""
        if not self.accepted:
            return []
        left = {s for s in self.refused if s not in self.accepted}
        chosen: list = []
        while left and len(chosen) < MAX_RULES:
            best, covered = None, set()
            for rule in self._candidates():
                if any(not rule.holds(s) for s in self.accepted):
                    continue
                explains = {s for s in left if not rule.holds(s)}
                # most refusals explained; then the weakest rule (smallest divisor, largest bound)
                if len(explains) > len(covered) or (len(explains) == len(covered) and best is not None and
                                                    explains and _weaker(rule, best)):
                    best, covered = rule, explains
            if best is None or len(covered) < MIN_REFUSALS:
                break
            chosen.append(best)
            left -= covered
        return chosen

    def _candidates(self):
        for dim in DIMS:
            for d in DIVISORS:
                yield Rule(dim, "multiple", d)
            i = DIMS.index(dim)
            for bound in sorted({s[i] for s in self.accepted}):
                yield Rule(dim, "at_most", bound)

    def describe(self, rules: list) -> str:
        """One line for the report: the rules and an example of the refusal."""
        if not rules:
            return ""
        outside = [(s, m) for s, m in self.refused.items() if not all(r.holds(s) for r in rules)]
        shape, message = outside[0]
        # who refused: the file raising, or this tier unable to run what the call reached (record_shape_evidence)
        who = "this tier cannot run" if all(m.startswith(TIER_LIMIT) for _, m in outside) else "the file refuses"
        return (f"{who} shapes outside {' and '.join(map(str, rules))} ({len(self.refused)} calls raised, "
                f"e.g. M={shape[0]} N={shape[1]} K={shape[2]}: {message[:160]}); later verdicts drew inside it")


def _weaker(rule: Rule, other: Rule) -> bool:
    """Between rules that explain the same refusals: the one that moves fewest cases (the smaller
    divisor, the larger bound); a divisibility before a bound (the commoner refusal in real files)."""
    if rule.kind != other.kind:
        return rule.kind == "multiple"
    return rule.value < other.value if rule.kind == "multiple" else rule.value > other.value


def steer(case, rules: list):
    """``case`` moved into the region ``rules`` allow (K rounded up to the divisor, or down where that is
    past the case's floor; M capped), with the specials that no longer fit dropped; ``case`` itself when
    it is inside already."""
    changes = {}
    for rule in rules:
        x = changes.get(rule.dim, getattr(case, rule.dim))
        if rule.kind == "multiple" and x % rule.value:
            up = (x // rule.value + 1) * rule.value
            down = x // rule.value * rule.value
            changes[rule.dim] = up if up <= MAXIMUM or down < MINIMUM[rule.dim] else down
        elif rule.kind == "at_most" and x > rule.value:
            changes[rule.dim] = max(MINIMUM[rule.dim], rule.value)
    if not changes:
        return case
    m, k = changes.get("m", case.m), changes.get("k", case.k)
    specials = tuple(s for s in case.specials if s[0] < m and s[1] < k)
    return dataclasses.replace(case, specials=specials, **changes)


class Steering:
    """The session's steering: each test's drawn cases moved by the rules of the evidence so far, the
    same draw always to the same case."""

    def __init__(self, evidence: ShapeEvidence):
        self.evidence = evidence
        self.moved: dict = {}  # (test, drawn case) -> the case it runs as
        self.used: dict = {}  # test -> rules that moved at least one of its cases (in words)
        self.note = ""

    def __call__(self, test: str, case):
        """(the case to run, whether it was moved)."""
        if test in NEVER_STEERED:
            return case, False
        key = (test, case)
        if key not in self.moved:
            rules = self.evidence.rules()
            moved = steer(case, rules)
            self.moved[key] = moved
            if moved is not case:
                self.used.setdefault(test, set()).update(str(r) for r in rules)
                self.note = self.evidence.describe(rules)
        return self.moved[key], self.moved[key] is not case

    def to_json(self) -> dict:
        return {"note": self.note, "rules": {t: sorted(r) for t, r in self.used.items()}}


# ---------------------------------------------------------------------------------------------------
# Draw where nothing compiles (a compiled tier with little time left)

NEVER_MOVED_FOR_TIME = ("loads", "official", "contract_beyond")  # the runner's own shapes; shapes past the contract


def shape_key(case_json: dict) -> tuple:
    """What decides whether a program at this case compiles anything new: its (M, N, K). The layout is left out
    on purpose: a drawn layout is the case's to keep (correctness and immutability draw them), and whether its
    strides make a new specialization depends on the file (many copy to contiguous first); one that does
    compiles once and overruns its share at most to the budget's end, where a GPU's program is ended."""
    return case_json["m"], case_json["n"], case_json["k"]


def layout_key(case_json: dict) -> tuple:
    """(M, N, K, layout): what a program at this case ran, its strides included. A layout's strides can make a new
    specialization of a file's Triton kernels (a stride of 1 or divisible by 16 is specialized): on the H100, a
    correctness draw moved to a compiled (M, N, K) with its own row_sliced layout still compiled 2.9 s."""
    return (*shape_key(case_json), case_json.get("layout", "contiguous"))


def compiled_layout(case, run_layouts: set):
    """``case`` with its layout made contiguous (the runner's own programs run contiguous inputs) when this
    (M, N, K) never ran with its layout; the case itself otherwise."""
    if case.layout == "contiguous" or layout_key(case.to_json()) in run_layouts:
        return case
    return dataclasses.replace(case, layout="contiguous")


def nearest_run_shape(case, run: set):
    """``case`` moved to the (M, N, K) already run nearest to its own (by the sum of the log ratios), its layout,
    values and seed kept, the specials that no longer fit dropped; None when its own shape ran, or nothing did.
    Only in-contract shapes are candidates for an in-contract case."""
    if shape_key(case.to_json()) in run:
        return None
    candidates = [(m, n, k) for m, n, k in run if not case.in_contract or (n % 64 == 0 and k % 64 == 0)]
    if not candidates:
        return None

    def distance(shape):
        return sum(abs(math.log(a / b)) for a, b in zip(shape, (case.m, case.n, case.k)))

    m, n, k = min(sorted(candidates), key=distance)
    specials = tuple(s for s in case.specials if s[0] < m and s[1] < k)
    return dataclasses.replace(case, m=m, n=n, k=k, specials=specials)


def run_m_beside(m: int, n: int, k: int, other_m: int, run: set):
    """An M other than ``m`` that a program already ran with this N and K, the nearest to ``other_m`` (by log
    ratio), or None: the second shape of a verdict that needs two Ms at one N and K (stale_new_shape). The
    runner's shapes have such pairs: (16 and 64, 3072, 1536), (4, 32 and 256, 2880, 512)."""
    ms = sorted(mm for mm, nn, kk in run if (nn, kk) == (n, k) and mm != m)
    return min(ms, key=lambda mm: abs(math.log(mm / other_m))) if ms else None
