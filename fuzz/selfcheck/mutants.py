"""The shipped mutants of kernels/: the historical bug classes of amd-mxfp4-mm submissions, each a
one-place source edit. ``pytest fuzz --mutants`` (or ``python -m fuzz.selfcheck.mutants``) applies each to a
copy of the package and runs the fuzz suite against it; a mutant is killed when the suite fails.
"""
from __future__ import annotations

import pathlib
import shutil
from dataclasses import dataclass
from typing import Callable

REPO = pathlib.Path(__file__).resolve().parents[2]


class StaleMutant(RuntimeError):
    """The text a mutant edits is no longer in kernels/ exactly once: update the mutant."""


@dataclass(frozen=True)
class Mutant:
    name: str
    bug_class: str
    file: str  # relative to the repo root
    old: str
    new: str
    # The tiers on which the mutant is an equivalent mutant: it reproduces a documented behaviour of that
    # platform that the oracle accepts there, so no correct suite can kill it (a skip with the reason,
    # never a survivor). A function of the oracle's tier tables, not a list, so the two cannot disagree.
    equivalent_on: Callable[[str], str | None] | None = None  # tier -> the reason, or None

    def equivalence(self, tier: str) -> str | None:
        return self.equivalent_on(tier) if self.equivalent_on else None

    def apply(self, root: pathlib.Path) -> None:
        path = root / self.file
        text = path.read_text()
        if text.count(self.old) != 1:
            raise StaleMutant(f"mutant {self.name}: {self.old!r} occurs {text.count(self.old)} times in {self.file}")
        path.write_text(text.replace(self.old, self.new))


def _byte0_already_zero(tier: str) -> str | None:
    from fuzz.judge import verdicts

    if "zero" in verdicts.scale_byte0_rules(tier):
        return (f"equivalent on the {tier} tier: its tl.dot_scaled already decodes E8M0 byte 0 as 0 (Triton's "
                "software lowering, measured on the H200), which the oracle accepts there (fuzz/judge/verdicts.py "
                "TIER_SCALE_BYTE0); killable on gfx950, whose MFMA-scale decodes 2^-127")
    return None


MUTANTS = (
    Mutant("ties_up", "e2m1 ties rounded away from zero (pre-#975 aiter)", "kernels/triton_blocks.py",
           "(bits + 0xC1000000 + 0x1FFFFF + odd_mantissa) >> 22", "(bits + 0xC1000000 + 0x200000) >> 22"),
    Mutant("floor_scale", "FLOOR (OCP) scale rule instead of aiter's EVEN", "kernels/triton_blocks.py",
           "rounded = (amax.to(tl.uint32, bitcast=True) + 0x200000) & 0xFF800000",
           "rounded = amax.to(tl.uint32, bitcast=True) & 0xFF800000"),
    Mutant("byte0_as_zero", "E8M0 byte 0 decoded as 0 (tiny blocks vanish)", "kernels/fused.py",
           "acc = tl.dot_scaled(a_q, a_s, \"e2m1\", b_q, b_s, \"e2m1\", acc)",
           "a_q = tl.where(tl.reshape(tl.broadcast_to(a_s[:, :, None], (BLOCK_M, BLOCK_K // 32, 16)), (BLOCK_M, BLOCK_K // 2)) == 0, 0, a_q)\n"
           "        acc = tl.dot_scaled(a_q, a_s, \"e2m1\", b_q, b_s, \"e2m1\", acc)",
           equivalent_on=_byte0_already_zero),
    Mutant("k_tail_dropped", "last partial K block dropped when K % BLOCK_K != 0", "kernels/fused.py",
           "for k0 in range(k_begin, k_end, BLOCK_K):", "for k0 in range(k_begin, k_end - BLOCK_K + 1, BLOCK_K):"),
    Mutant("split_bytes_for_elements", "split-K stripe start in bytes where elements are meant", "kernels/fused.py",
           "k_begin = pid_s * SPLIT_K", "k_begin = pid_s * (SPLIT_K // 2)"),
    Mutant("last_split_not_folded", "the fold skips the last K stripe", "kernels/fused.py",
           "return fold_partials(out, backend=fold_backend)", "return fold_partials(out[:-1], backend=fold_backend)"),
    Mutant("uninitialised_partials", "a split-K workspace slice that no program writes is folded", "kernels/fused.py",
           "out = torch.empty((cfg.splits, m, n), dtype=torch.float32, device=A.device)",
           "out = torch.empty((cfg.splits + 1, m, n), dtype=torch.float32, device=A.device)"),
    Mutant("scale_permutation_swapped", "two axes swapped in the scale unshuffle", "kernels/triton_blocks.py",
           "ordered = tl.permute(chunks, (0, 5, 3, 1, 4, 2))", "ordered = tl.permute(chunks, (0, 5, 3, 1, 2, 4))"),
    Mutant("weight_permutation_swapped", "16x16 weight tile read transposed", "kernels/triton_blocks.py",
           "rows = tl.reshape(tl.permute(tiles, (0, 2, 1, 3)), (BLOCK_N, BLOCK_K // 2))",
           "rows = tl.reshape(tl.permute(tiles, (0, 3, 1, 2)), (BLOCK_N, BLOCK_K // 2))"),
    Mutant("bf16_truncation", "fp32 -> bf16 truncated instead of rounded to nearest even", "kernels/triton_blocks.py",
           "rounded = (w + 0x7FFF + ((w >> 16) & 1)) >> 16", "rounded = w >> 16"),
    Mutant("stale_data_ptr_cache", "quantized-A cache keyed on data_ptr alone", "kernels/asm.py",
           "if self._ref is not None and self._ref() is A and self._key == self._key_of(A):",
           "if self._key is not None and self._key[4] == A.untyped_storage().data_ptr():"),
    Mutant("aliased_output", "one output buffer per shape, returned on every call", "kernels/fused.py",
           "out = torch.empty((m, n), dtype=torch.bfloat16, device=A.device)",
           "out = _OUT_CACHE.setdefault((m, n), torch.empty((m, n), dtype=torch.bfloat16, device=A.device))"),
    Mutant("fallback_hides_broken_fast_path", "the fused path raises on N % 128 != 0 and a slower path serves it",
           "kernels/fused.py", "    A, _, _, B_shuffle, B_scale_sh = data\n    n = B_shuffle.shape[0]\n",
           "    A, _, _, B_shuffle, B_scale_sh = data\n    n = B_shuffle.shape[0]\n"
           "    if n % 128:\n        raise RuntimeError('tile config missing')\n"),
)


# What a mutant run executes: the fuzz tests over kernels/ (not the unit tests, which test the
# reference and the emulation, not the kernels).
RUN_FIRST = ("[dispatch]",)
MUTANT_TESTS = ("fuzz/test_paths.py", "fuzz/test_integrity.py", "fuzz/test_policy.py")
COPIED = ("kernels", "reference", "fuzz", "conftest.py", "pyproject.toml")
# Before judging the suite: the mutated package must import and serve a plain in-contract shape
# (N % 128 == 0, K % 256 == 0, no split) from the fused path.
# On the tier's device: compiled Triton cannot read CPU tensors (this probe once built them on the CPU, so
# on the H200 every mutant was "stillborn").
VIABILITY_PROBE = (
    "from kernels import dispatch\n"
    "from kernels.platform import detect\n"
    "from reference import generate_input\n"
    "dispatch.custom_kernel(generate_input(2, 128, 256, seed=0, device=detect().device))\n"
    "assert dispatch.default_dispatcher.last.info.path == 'fused', dispatch.default_dispatcher.last\n"
)


@dataclass
class MutantResult:
    mutant: str
    killed: bool
    seconds: float
    killed_by: str  # the first failing test's id
    card: str  # the failure card (minimal case) of the first failure, when there is one

    def row(self) -> str:
        verdict = "killed" if self.killed else "SURVIVED"
        return f"{self.mutant:34s} {verdict:9s} {self.seconds:7.1f}s  {self.killed_by}"


def mutated_repo(mutant: Mutant, root: pathlib.Path) -> pathlib.Path:
    """A copy of the repository (what a test run needs) at root, with the mutant applied."""
    for name in COPIED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.json"))
        else:
            shutil.copy2(src, root / name)
    (root / "fuzz" / "corpus").mkdir(exist_ok=True)
    shutil.copy2(REPO / "kernels" / "path_policy.json", root / "kernels" / "path_policy.json")
    mutant.apply(root)
    if mutant.name == "aliased_output":
        fused = root / "kernels" / "fused.py"
        fused.write_text(fused.read_text().replace("QUANTIZERS = (", "_OUT_CACHE = {}\nQUANTIZERS = (", 1))
    return root


def official_verdict_of(mutant: Mutant, timeout: float = 900) -> dict:
    """The official 4-shape test-mode check on the mutated kernels (python -m fuzz.judge.official)."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant.name}-") as tmp:
        root = mutated_repo(mutant, pathlib.Path(tmp))
        proc = subprocess.run([sys.executable, "-m", "fuzz.judge.official"], cwd=root, capture_output=True, text=True,
                              timeout=timeout)
        return {"mutant": mutant.name, "caught": proc.returncode != 0, "output": (proc.stdout + proc.stderr)[-2000:]}


def run_mutant(mutant: Mutant, profile: str = "smoke", timeout: float = 900) -> MutantResult:
    """Apply the mutant to a copy of the repository and run the fuzz tests there until the first failure."""
    import subprocess
    import sys
    import tempfile
    import time

    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant.name}-") as tmp:
        root = mutated_repo(mutant, pathlib.Path(tmp))
        viable = subprocess.run([sys.executable, "-c", VIABILITY_PROBE], cwd=root, capture_output=True, text=True,
                                timeout=timeout)
        if viable.returncode != 0:  # a mutant that cannot even run proves nothing about the suite
            return MutantResult(mutant.name, False, 0.0, "stillborn: the mutated fused path fails on a plain shape",
                                viable.stderr[-3000:])
        tests = [t for t in MUTANT_TESTS if (root / t).exists()]
        # A kill needs one failing example, not a minimal one: no shrinking (it was most of a mutant's time). The
        # tests over the dispatcher first: it serves every path, so it meets most bugs first; the rest follow.
        cmd = [sys.executable, "-m", "pytest", *tests, "-x", "-q", "-p", "no:cacheprovider", "--profile", profile,
               "-o", "addopts=", "--tb=short", "--no-shrink", *(f"--run-first={t}" for t in RUN_FIRST)]
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout)
            out, rc = proc.stdout + proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as exc:
            out, rc = (exc.stdout or "") if isinstance(exc.stdout, str) else "", -1
        seconds = time.perf_counter() - start
        failed = [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("FAILED ")]
        card = out[out.find("FAIL "):][:3000] if "FAIL " in out else out[-3000:]
        return MutantResult(mutant.name, rc == 1 and bool(failed), seconds, failed[0] if failed else f"rc={rc}", card)


def main(argv=None) -> int:
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m fuzz.selfcheck.mutants", description="Mutation self-check of the fuzz suite.")
    parser.add_argument("--only", action="append", help="run only these mutants (repeatable)")
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--official", action="store_true",
                        help="run the official 4-shape 1e-2 check on each mutant instead of the fuzz suite")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    if args.official:
        rows = [official_verdict_of(m) for m in chosen]
        for r in rows:
            print(f"{r['mutant']:34s} {'caught' if r['caught'] else 'missed'}", flush=True)
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
        return 0
    from kernels.platform import detect

    results = []
    for m in chosen:
        equivalent = m.equivalence(detect().tier)
        if equivalent:
            print(f"{m.name:34s} {'skipped':9s} {equivalent}", flush=True)
            continue
        r = run_mutant(m, args.profile)
        results.append(r)
        print(r.row(), flush=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps([r.__dict__ for r in results], indent=1))
    return 0 if all(r.killed for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
