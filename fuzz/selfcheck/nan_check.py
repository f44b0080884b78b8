"""What this tier's arithmetic does to NaN and Inf elements of A: measured, per quantizer, against the
oracle's NaN rules (reference.oracle.quant: payload, canonical, saturate).

    python -m fuzz.selfcheck.nan_check [--json table.json] [--gemm]     # on any tier; on a GPU it compiles

For every value regime and every special kind the strategies place (quiet NaN of both signs, +-Inf,
-0), one case puts the special at the four placements below in A (a group's first element, a group's
last, mid-row, the last column) and, for NaN, one case fills a whole group with NaN and one mixes NaN
with Inf in a group. Each quantizer on this tier quantizes A; its bytes are compared with
``quantize_mxfp4(A, nan=rule)`` for every rule, and the rules it matches bit for bit on every case are
reported. The tier's own multiply is measured too: ``x * 2^-s`` on the device, classified by the NaN
bits it returns. ``--gemm`` also runs every subject of the suite on each case through
``fuzz.subjects.fuzzing.run_and_judge`` (the verdict a fuzz run gives): there must be no failure.

A rule the quantizer matches but the tier does not accept (fuzz.judge.verdicts.TIER_NAN_RESULTS) is a false
alarm waiting to happen; a quantizer matching no rule is a bug or an undocumented behaviour.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import torch

from fuzz.judge import verdicts
from fuzz.search import strategies
from kernels import platform
from reference.oracle.quant import NAN_RESULTS, block_amax, power_of_two, quantize_mxfp4
from reference.oracle.e8m0 import scale_exponent

M, N, K = 4, 64, 256
PLACEMENTS = ((0, 0), (1, 31), (2, 100), (3, K - 1))
KINDS = strategies.SPECIAL_KINDS


GROUP_KINDS = ("all-NaN group", "NaN+Inf group")
COLUMNS = KINDS + GROUP_KINDS


def cases() -> list:
    """(column, label, Case): every regime x special kind at PLACEMENTS, plus all-NaN and NaN-with-Inf
    groups in every regime."""
    out = []
    for regime in strategies.REGIME_NAMES:
        for kind in KINDS:
            specials = tuple((r, c, kind) for r, c in PLACEMENTS)
            out.append((kind, f"{kind} in {regime}", strategies.Case(M, N, K, a_regime=regime, specials=specials, seed=11)))
        whole_group = tuple((1, c, "nan" if c % 2 else "-nan") for c in range(32, 64))
        out.append((GROUP_KINDS[0], f"all-NaN group in {regime}",
                    strategies.Case(M, N, K, a_regime=regime, specials=whole_group, seed=12)))
        mixed = ((0, 40, "nan"), (0, 41, "inf"), (2, 200, "-nan"), (2, 201, "-inf"))
        out.append((GROUP_KINDS[1], f"NaN+Inf group in {regime}",
                    strategies.Case(M, N, K, a_regime=regime, specials=mixed, seed=13)))
    return out


def quantizers() -> dict:
    """name -> callable(A) -> (packed, scales) for each A quantizer that runs on this tier."""
    from fuzz.subjects.kernel_subjects import all_subjects

    found = {}
    for subject in all_subjects():
        if subject.quantize_a is None or not subject.available()[0]:
            continue
        name = "aiter dynamic_mxfp4_quant" if subject.expected_path in ("asm", "a4w4") else subject.name
        found.setdefault(name, subject.quantize_a)
    return found


def multiply_rule(A: torch.Tensor) -> set:
    """Rules the device's own fp32 multiply x * 2^-s follows on A's NaN elements (empty set: none)."""
    x32 = A.float().contiguous()
    nan = torch.isnan(x32)
    if not nan.any():
        return set(NAN_RESULTS)
    s = scale_exponent(block_amax(x32))
    qx = (x32.reshape(x32.shape[0], -1, 32) * power_of_two(-s)[..., None]).reshape(x32.shape)
    got = qx.view(torch.int32)[nan].cpu()
    bits = x32.view(torch.int32)[nan].cpu()
    rules = set()
    if torch.equal(got, bits | 0x00400000):
        rules.add("payload")
    if bool((got == 0x7FFFFFFF).all()):
        rules.add("canonical")
    return rules


def matching_rules(packed, scales, A) -> set:
    A_cpu = A.detach().cpu()
    got = (packed.detach().cpu().view(torch.uint8), scales.detach().cpu().view(torch.uint8).contiguous())
    return {rule for rule in NAN_RESULTS
            if all(torch.equal(g, w) for g, w in zip(got, quantize_mxfp4(A_cpu, nan=rule)))}


def run(gemm: bool = False) -> dict:
    plat = platform.detect()
    device = plat.device
    table = {"tier": plat.tier, "device": plat.describe(), "torch": torch.__version__,
             "accepted_rules": list(verdicts.nan_results()), "quantizers": {}, "multiply": {}, "gemm": {}}
    if device == "cuda":
        table["gpu"] = torch.cuda.get_device_name(0)
    import triton

    table["triton"] = triton.__version__
    quants = quantizers()
    subjects = []
    if gemm:
        from fuzz.subjects import fuzzing

        subjects = [s for s in fuzzing.SUBJECTS.values() if s.available()[0]]
    for kind, label, case in cases():
        A = case.build(device)[0][0]
        table["multiply"].setdefault(kind, []).append(sorted(multiply_rule(A)))
        for name, quantize in quants.items():
            rules = matching_rules(*quantize(A), A)
            table["quantizers"].setdefault(name, {}).setdefault(kind, []).append(sorted(rules))
            if not rules:
                table.setdefault("unmatched", []).append(f"{name}: {label}")
        for subject in subjects:
            if not subject.places_nan and "nan" in label.lower():
                continue
            from fuzz.subjects import fuzzing

            try:
                card = fuzzing.run_and_judge(subject, case)
                outcome = "pass" if card is None else "FAIL: " + card.render().splitlines()[0]
            except Exception as exc:  # a path that raises is reported, not fatal to the table
                outcome = f"ERROR: {type(exc).__name__}: {exc}"[:300]
            entry = table["gemm"].setdefault(subject.name, {"cases": 0, "failed": []})
            entry["cases"] += 1
            if outcome != "pass":
                entry["failed"].append({"case": label, "outcome": outcome})
    return table


def _common(lists) -> list:
    """Rules matched on every case (the intersection)."""
    sets = [set(x) for x in lists]
    return sorted(set.intersection(*sets)) if sets else []


def render(table: dict) -> str:
    lines = [f"NaN/Inf behaviour on {table['device']} (torch {table['torch']}, triton {table['triton']}); "
             f"the oracle accepts: {', '.join(table['accepted_rules'])}",
             f"{'who':28s} " + " ".join(f"{k:>16s}" for k in COLUMNS)]
    rows = [("fp32 multiply x * 2^-s", table["multiply"])] + list(table["quantizers"].items())
    for name, per_kind in rows:
        cells = []
        for kind in COLUMNS:
            common = _common(per_kind.get(kind, []))
            cells.append("exact" if len(common) == len(NAN_RESULTS) else ",".join(common) or "NONE")
        lines.append(f"{name:28s} " + " ".join(f"{c:>16s}" for c in cells))
    lines.append("(a cell lists the NaN rules matched bit for bit on every case of that column; exact: all "
                 "rules, i.e. bit-exact where no NaN is involved; NONE: some case matched no common rule)")
    lines += [f"    no rule matched: {u}" for u in table.get("unmatched", [])[:10]]
    for name, entry in table["gemm"].items():
        lines.append(f"gemm {name}: {entry['cases']} cases, {len(entry['failed'])} failed")
        for f in entry["failed"][:5]:
            lines.append(f"    {f['case']}: {f['outcome']}")
    return "\n".join(lines)


def verdict(table: dict) -> list:
    """Problems: a quantizer that matches no NaN rule on some case, or one that follows only rules this
    tier does not accept (a false alarm in every fuzz run), or a failing GEMM case."""
    accepted = set(table["accepted_rules"])
    problems = [f"{u}: matches no NaN rule" for u in table.get("unmatched", [])]
    for name, per_kind in table["quantizers"].items():
        for kind, lists in per_kind.items():
            rejected = [x for x in lists if x and not set(x) & accepted]
            if rejected:
                problems.append(f"{name} on {kind}: follows {rejected[0]} in {len(rejected)} cases, "
                                f"the tier accepts {sorted(accepted)}")
    for name, entry in table["gemm"].items():
        problems += [f"gemm {name} {f['case']}: {f['outcome']}" for f in entry["failed"]]
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.selfcheck.nan_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the table here")
    parser.add_argument("--gemm", action="store_true", help="also judge every subject's GEMM on each case")
    parser.add_argument("--aiter", default="auto", choices=("auto", "real", "emulated"))
    args = parser.parse_args(argv)
    from reference.emulation.select import use_aiter

    use_aiter(args.aiter)
    start = time.perf_counter()
    table = run(gemm=args.gemm)
    table["seconds"] = round(time.perf_counter() - start, 1)
    table["problems"] = verdict(table)
    print(render(table))
    for p in table["problems"]:
        print(f"PROBLEM {p}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)
    return 1 if table["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
