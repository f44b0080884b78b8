"""The official GPU MODE test-mode check, reproduced: the four test shapes, one call each on a clone of
fresh inputs, |y - ref| <= 1e-2 + 1e-2 |ref| with NaN/Inf agreement. ``ref`` is our stand-in for
aiter's ASM kernel (the exact product rounded once), so this is the official check as strong as it
can be. Used for the "ours vs official" mutant table.

    python -m fuzz.judge.official [--json PATH]     # checks kernels.dispatch.custom_kernel
"""
from __future__ import annotations

import argparse
import json

from fuzz.judge import verdicts
from fuzz.search.strategies import OFFICIAL_TEST_SHAPES
from kernels.platform import detect
from reference import exact_gemm_from_inputs, generate_input

SEEDS = (4242, 5236, 1001, 5531)  # one fixed seed per test shape, as task.yml gives


def official_check(custom_kernel, shapes=OFFICIAL_TEST_SHAPES, device=None) -> list[dict]:
    device = device or detect().device
    results = []
    for shape, seed in zip(shapes, SEEDS):
        data = generate_input(*shape, seed=seed, device=device)
        try:
            y = custom_kernel(tuple(t.clone() for t in data))
        except Exception as exc:  # the official harness reports an exception as a failed test
            results.append({"shape": list(shape), "passed": False, "summary": f"raised {type(exc).__name__}: {exc}"})
            continue
        ref = verdicts.official_reference(exact_gemm_from_inputs(tuple(t.cpu() for t in data)))
        v = verdicts.official_verdict(y, ref)
        results.append({"shape": list(shape), "passed": v.passed, "summary": v.summary})
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.judge.official", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    from reference.emulation.select import use_aiter

    use_aiter("auto")  # the fallback paths need aiter: real where it exists, else the emulation
    from kernels.dispatch import custom_kernel

    results = official_check(custom_kernel)
    for r in results:
        print(("PASS " if r["passed"] else "FAIL ") + "x".join(map(str, r["shape"])) + ": " + r["summary"], flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(r["passed"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
