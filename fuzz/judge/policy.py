"""The expected-path policy (kernels/path_policy.json): which path must serve each official benchmark
shape on each tier. A fallback keeps answers correct, so only this check notices when a benchmark
shape quietly moved to a slower path.

    check_policy(dispatcher.last, tier)  # raises PolicyViolation for a benchmark shape on a slower path
"""
from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass

from kernels.dispatch import CallRecord

POLICY_FILE = pathlib.Path(__file__).resolve().parents[2] / "kernels" / "path_policy.json"
TIERS = ("cpu", "nvidia", "amd")


class PolicyViolation(AssertionError):
    """A benchmark shape was served by a slower path than the policy expects."""


@dataclass(frozen=True)
class Policy:
    speed_order: tuple  # fastest first
    benchmark: dict  # (m, n, k) -> {tier: path}
    default: dict  # {tier: path}
    source: str

    def expected(self, shape: tuple, tier: str) -> tuple[str, bool]:
        """(expected path, whether ``shape`` is a benchmark shape)."""
        if tier not in TIERS:
            raise ValueError(f"tier must be one of {TIERS}, got {tier!r}")
        if tuple(shape) in self.benchmark:
            return self.benchmark[tuple(shape)][tier], True
        return self.default[tier], False


def _shape_key(key: str, source: str) -> tuple:
    try:
        m, n, k = (int(x) for x in key.split("x"))
    except ValueError:
        raise ValueError(f"{source}: shape key {key!r} is not MxNxK") from None
    return m, n, k


def load_policy(path: str | pathlib.Path = POLICY_FILE) -> Policy:
    """The policy file, validated: every tier is given and every path named is in speed_order."""
    raw = json.loads(pathlib.Path(path).read_text())
    order = tuple(raw["speed_order"])
    benchmark = {_shape_key(key, str(path)): tiers for key, tiers in raw["benchmark_shapes"].items()}
    for where, tiers in [("default", raw["default"])] + [(f"shape {s}", t) for s, t in benchmark.items()]:
        if set(tiers) != set(TIERS):
            raise ValueError(f"{path}: {where} must name a path for exactly the tiers {TIERS}, got {sorted(tiers)}")
        unknown = [p for p in tiers.values() if p not in order]
        if unknown:
            raise ValueError(f"{path}: {where} names {unknown}, not in speed_order {order}")
    return Policy(order, benchmark, dict(raw["default"]), str(path))


def _rank(policy: Policy, name: str) -> int:
    return policy.speed_order.index(name) if name in policy.speed_order else len(policy.speed_order)


def check_policy(record: CallRecord, tier: str | None = None, policy: Policy | None = None) -> str | None:
    """None when ``record`` was served by the expected path (or a faster one); raises PolicyViolation
    when a benchmark shape was served by a slower path; returns a note for other shapes served slower,
    which a fallback may legitimately do."""
    if tier is None:
        from kernels.platform import detect

        tier = detect().tier
    policy = policy or load_policy()
    want, is_benchmark = policy.expected(record.shape, tier)
    served = record.info.path
    if _rank(policy, served) <= _rank(policy, want):
        return None
    why = "; ".join(f"{name!r} {reason}" for name, reason in record.fallbacks) or "nothing tried before it"
    shape = "(" + ",".join(map(str, record.shape)) + ")"
    unknown = "" if served in policy.speed_order else " (a path the policy does not rank)"
    if is_benchmark:
        raise PolicyViolation(
            f"benchmark shape {shape} served by {served!r}{unknown} after {why}; policy expects {want!r} "
            f"on tier {tier} — a silent perf regression ({policy.source})")
    return f"shape {shape} served by {served!r}{unknown} after {why}; the default policy expects {want!r} on tier {tier}"
