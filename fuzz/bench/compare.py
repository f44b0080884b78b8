"""Compare two benchmark result files (``fuzz.bench.harness.save_results``):

    python -m fuzz.bench.compare OLD.json NEW.json   # exit 1 on a regression

A (path, shape) regressed when its mean time grew by more than the noise of the two runs, or when it
ran in OLD and fails in NEW.

The noise. Each file records per (path, shape) the relative standard deviation s of its per-round
means (``harness.timing_stats``). The relative difference of two independent runs' means then has a
standard deviation of about sqrt(s_old^2 + s_new^2); a slowdown beyond NOISE_SIGMAS = 3 of those is a
regression (for Gaussian noise a false alarm about once in 700 comparisons). s is not divided by
sqrt(rounds): separate runs also differ in clocks, thermal state and neighbours, which consecutive
rounds share, so the per-round spread is the less optimistic estimate. The floor NOISE_FLOOR = 2%
covers what a handful of rounds cannot estimate (a 5-sample standard deviation is often half the true
one) and slow drift between sessions. Entries without a noise estimate (fewer than 3 rounds, e.g. a
``--benchmark-disable`` smoke) are listed but not judged.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass

NOISE_SIGMAS = 3.0
NOISE_FLOOR = 0.02
MIN_ROUNDS_FOR_NOISE = 3  # a standard deviation of fewer means is not worth a verdict
FAILING = ("regression", "broken")


@dataclass
class Row:
    path: str
    shape: tuple
    old_us: float | None
    new_us: float | None
    threshold: float | None
    verdict: str  # ok | faster | regression | broken | unjudged | new | missing | failing (in both)

    @property
    def change(self) -> float | None:
        return self.new_us / self.old_us - 1 if self.old_us and self.new_us else None


def threshold(old: dict, new: dict) -> float | None:
    """Relative slowdown beyond which ``new`` is slower than ``old`` for more than noise."""
    if old.get("noise_rel_std") is None or new.get("noise_rel_std") is None:
        return None
    return max(NOISE_FLOOR, NOISE_SIGMAS * math.hypot(old["noise_rel_std"], new["noise_rel_std"]))


def _by_key(doc: dict) -> dict:
    return {(r["path"], tuple(r["shape"])): r for r in doc["results"]}


def compare(old_doc: dict, new_doc: dict) -> list:
    old, new = _by_key(old_doc), _by_key(new_doc)
    rows = []
    for key in list(old) + [k for k in new if k not in old]:
        o, n = old.get(key), new.get(key)
        o_us = o.get("mean_us") if o else None
        n_us = n.get("mean_us") if n else None
        if n is None:
            verdict, limit = "missing", None
        elif o is None:
            verdict, limit = "new", None
        elif n_us is None:
            verdict, limit = ("broken" if o_us is not None else "failing"), None
        elif o_us is None:
            verdict, limit = "new", None
        else:
            limit = threshold(o, n)
            change = n_us / o_us - 1
            if limit is None:
                verdict = "unjudged"
            elif change > limit:
                verdict = "regression"
            elif change < -limit:
                verdict = "faster"
            else:
                verdict = "ok"
        rows.append(Row(key[0], key[1], o_us, n_us, limit, verdict))
    return rows


def format_rows(rows: list) -> str:
    lines = [f"{'path':<8} {'shape':<16} {'old us':>9} {'new us':>9} {'change':>8} {'limit':>7}  verdict"]
    for r in rows:
        shape = "x".join(map(str, r.shape))
        old = f"{r.old_us:.2f}" if r.old_us else "-"
        new = f"{r.new_us:.2f}" if r.new_us else "-"
        change = f"{r.change:+.1%}" if r.change is not None else "-"
        limit = f"{r.threshold:.1%}" if r.threshold else "-"
        lines.append(f"{r.path:<8} {shape:<16} {old:>9} {new:>9} {change:>8} {limit:>7}  {r.verdict}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.bench.compare", description="exit 1 when NEW regressed against OLD")
    parser.add_argument("old")
    parser.add_argument("new")
    args = parser.parse_args(argv)
    with open(args.old) as f_old, open(args.new) as f_new:
        old_doc, new_doc = json.load(f_old), json.load(f_new)
    devices = {d.get("meta", {}).get("device") for d in (old_doc, new_doc)}
    if len(devices) > 1:
        print(f"warning: comparing different devices {sorted(map(str, devices))}")
    rows = compare(old_doc, new_doc)
    print(format_rows(rows))
    bad = [r for r in rows if r.verdict in FAILING]
    print(f"{len(bad)} regression(s)" if bad else "no regression beyond noise")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
