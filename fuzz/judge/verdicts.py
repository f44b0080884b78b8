"""The verdict ladder: each rung judges one thing and returns a ``Verdict`` (it never raises on a wrong
answer, so a caller can collect every rung's view of one case).

1. ``check_stage_a_quant``: the subject's quantized A, bit for bit.
2. ``check_product``: the output against the exact product and the accumulation bound.
3. ``official_verdict``: GPU MODE's 1e-2 check, reported beside ours.
4. metamorphic relations: ``split_invariance``, ``row_independence``, ``block_scaling``, ``zero_blocks``.

The exact product and its bound are the oracle's (``reference/oracle/``); this module applies them with
the tier's rules (NaN results, E8M0 byte 0, fp32 accumulation rounding) and words the verdicts.

A subject is anything with ``custom_kernel(data)`` (or a plain callable); it may declare ``rounding``
("rne"; "rtz" for a subject that truncates fp32 -> bf16 on purpose).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import torch

from fuzz.judge.error_map import error_map
from reference import (
    accumulation_bound,
    acceptable_range,
    exact_gemm_from_inputs,
    quantize_mxfp4,
    round_to_bf16,
    unpack_e2m1,
)
from reference.oracle.e2m1 import TIE_POINTS
from reference.oracle.gemm import ExactProduct
from reference.oracle.quant import BLOCK, has_top_scale

# Known wrong quantizers a mismatching subject is compared against, to name its mistake.
QUANTIZER_VARIANTS = (
    ("even", "ties_up"),  # pre-#975 aiter: ties rounded away from zero
    ("floor", "rne"),  # OCP MX spec scale
    ("ceil", "rne"),  # torchao CEIL
    ("rceil", "rne"),  # NVIDIA cvt.rp / aiter "RoundUp"
)
FIRST_POSITIONS = 5


@dataclass(frozen=True)
class Verdict:
    """One rung's judgement. ``details`` and ``worst`` hold only JSON-safe values (floats may be
    NaN/Inf). ``applicable`` is False when a metamorphic relation's precondition did not hold for this
    input (then ``passed`` is True and says nothing)."""

    check: str
    passed: bool
    summary: str
    details: dict = field(default_factory=dict)
    worst: dict | None = None
    applicable: bool = True
    error_map: dict | None = None  # check_product's failing output over (M, N): fuzz.judge.error_map

    def render(self) -> str:
        status = "PASS" if self.passed else "FAIL"
        if not self.applicable:
            status = "N/A"
        return f"[{status}] {self.check}: {self.summary}"


# ---------------------------------------------------------------------------------------------------
# Helpers shared with attribution


def call_subject(subject, data) -> torch.Tensor:
    return subject.custom_kernel(data) if hasattr(subject, "custom_kernel") else subject(data)


def subject_rounding(subject) -> str:
    return getattr(subject, "rounding", "rne")


def as_f64(t: torch.Tensor, exact: ExactProduct) -> torch.Tensor:
    """t as fp64 on the exact product's device."""
    return t.detach().to(device=exact.value.device, dtype=torch.float64)


def bf16_ulp(x: torch.Tensor) -> torch.Tensor:
    """fp64 spacing of bf16 numbers at |x| (2^-133 at zero and for subnormals)."""
    x = x.to(torch.float64)
    _, e = torch.frexp(torch.where(torch.isfinite(x), x, torch.zeros_like(x)))
    ulp = torch.exp2((e.to(torch.float64) - 8).clamp(min=-133))
    return torch.where(x == 0, torch.full_like(ulp, 2.0**-133), ulp)


def failure_mask(y64: torch.Tensor, exact: ExactProduct, bound: torch.Tensor, rounding: str) -> torch.Tensor:
    """bool [M, N]: y is outside the acceptable range, unless an fp32 intermediate may overflow there
    and y is +-Inf or NaN."""
    lo, hi = acceptable_range(exact, bound, rounding)
    inside = (y64 >= lo) & (y64 <= hi)
    allowed_nonfinite = exact.overflow_risk & ~torch.isfinite(y64)
    return ~(inside | allowed_nonfinite)


# What each tier's arithmetic makes of a NaN element of A when a quantizer scales it (x * 2^-s), as
# reference.oracle.quant's ``nan`` rules; the first is what the tier's own arithmetic does. A subject whose
# output matches any of its tier's rules passes: these are documented hardware behaviours, not bugs.
# NaN in an output element whose exact product is finite fails under every rule.
TIER_NAN_RESULTS = {
    # numpy/x86 keep the payload (quiet NaN -> code 0x3, sign kept); a submission's gfx950 inline asm
    # runs on our instruction model there, which saturates (+-6: an assumption, see gfx950_asm.py).
    "cpu": ("payload", "saturate"),
    # PTX ISA: fp32 arithmetic on a NaN operand returns the canonical NaN 0x7FFFFFFF (code 0x4, +2 x scale,
    # whatever the sign); measured for Triton and torch on an H200 on 2026-11-30 (python -m fuzz.selfcheck.nan_check).
    # A quantizer that scales NaNs without arithmetic (bit operations, like the example submission)
    # keeps the payload. canonical_max: aiter's quantizer takes an all-NaN group's amax with tl.max, which
    # is canonical too (scale byte 0); measured on the H200 on 2026-12-01 through the emulated aiter.
    "nvidia": ("canonical", "payload", "canonical_max"),
    # AMD's ISA guides: in IEEE mode (the default for compute kernels) arithmetic quiets and propagates
    # NaN inputs, i.e. keeps the payload; gfx950's v_cvt_scalef32_pk_fp4_* maps NaN to +-6 per AMD's
    # software models (assumed). Not measured by us: python -m fuzz.selfcheck.nan_check on an MI355X says.
    "amd": ("payload", "saturate"),
}
# What E8M0 scale byte 0 multiplies by in a product computed on each tier (reference.oracle.gemm's ``byte0``).
# On NVIDIA GPUs without MX matrix instructions (sm_90: H200/H100) Triton lowers ``tl.dot_scaled`` in
# software (DecomposeScaledBlocked: scaleTo16 shifts the byte into a bf16 exponent field), so byte 0 is
# +0.0, not 2^-127: a block whose scale byte is 0 (A or B: all-zero or subnormal blocks) contributes
# nothing. Measured on an H200 on 2026-11-30 (subnormal and 2^-127-scaled operands). The interpreter and
# gfx950's MFMA-scale decode 2^-127.
TIER_SCALE_BYTE0 = {"cpu": ("ocp",), "nvidia": ("ocp", "zero"), "amd": ("ocp",)}
BYTE0_TEXT = {"ocp": "E8M0 byte 0 = 2^-127", "zero": "E8M0 byte 0 = 0 (Triton's software tl.dot_scaled)"}
NAN_RULE_TEXT = {
    "payload": "payload kept (quiet NaN -> +-1.5 x scale)",
    "canonical": "canonical NaN 0x7FFFFFFF (-> +2 x scale)",
    "canonical_max": "canonical NaN, an all-NaN group's amax too (-> +2 x 2^-127)",
    "saturate": "saturated (-> +-6 x scale)",
}


def nan_results(tier: str | None = None) -> tuple:
    """The NaN rules a subject on ``tier`` (default: this machine's) may follow; see TIER_NAN_RESULTS."""
    if tier is None:
        from kernels.platform import detect

        tier = detect().tier
    return TIER_NAN_RESULTS[tier]


def scale_byte0_rules(tier: str | None = None) -> tuple:
    """The meanings of E8M0 byte 0 a product on ``tier`` may use; see TIER_SCALE_BYTE0."""
    return TIER_SCALE_BYTE0[tier_name(tier)]


def tier_name(tier: str | None) -> str:
    if tier is None:
        from kernels.platform import detect

        return detect().tier
    return tier


def _describe_nan_rules(rules) -> str:
    return "; ".join(f"{r}: {NAN_RULE_TEXT[r]}" for r in rules)


def official_reference(exact: ExactProduct) -> torch.Tensor:
    """The exact product rounded once (RNE) to bf16: ``reference.reference_output`` without computing
    the product again."""
    return round_to_bf16(exact.value, "rne").to(torch.bfloat16)


def _shape_problem(y, shape) -> str | None:
    if not isinstance(y, torch.Tensor):
        return f"output is a {type(y).__name__}, not a torch.Tensor"
    if tuple(y.shape) != tuple(shape):
        return f"output shape {tuple(y.shape)} != expected {tuple(shape)}"
    if y.dtype != torch.bfloat16:
        return f"output dtype {y.dtype} != torch.bfloat16"
    return None


def _index(flat: int, cols: int) -> list[int]:
    return [flat // cols, flat % cols]


# ---------------------------------------------------------------------------------------------------
# Rung 1: the quantized A


def check_stage_a_quant(subject_packed: torch.Tensor, subject_scales: torch.Tensor, A: torch.Tensor,
                        tier: str | None = None) -> Verdict:
    """The subject's A quantization (packed codes [M, K/2], scale bytes [M, K/32] in logical row-major
    order, any 1-byte dtype) must equal ``quantize_mxfp4(A, nan=rule)`` bit for bit for one of the
    tier's NaN rules (``nan_results``; they differ only where A has NaNs).

    Reports mismatching codes and scale bytes separately with their first positions; how many code
    mismatches sit at e2m1 ties (|x / scale| exactly a midpoint) or inside a group whose scale is
    already wrong; and which known wrong quantizer (ties-up rounding, floor/ceil/rceil scale rules) the
    subject matches exactly, if any.
    """
    A = A.detach().cpu()
    rules = nan_results(tier)
    has_nan = bool(torch.isnan(A).any())
    m, k = A.shape
    expected = {rule: quantize_mxfp4(A, nan=rule) for rule in (rules if has_nan else rules[:1])}
    packed, scales = expected[rules[0]]
    for name, got, want in (("packed", subject_packed, packed), ("scales", subject_scales, scales)):
        if not isinstance(got, torch.Tensor) or got.element_size() != 1 or tuple(got.shape) != tuple(want.shape):
            shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            return Verdict("stage_a_quant", False, f"{name}: got {shape}, expected 1-byte {tuple(want.shape)}")
    got_packed = subject_packed.detach().cpu().view(torch.uint8)
    got_scales = subject_scales.detach().cpu().view(torch.uint8)
    for rule, (want_packed, want_scales) in expected.items():
        if torch.equal(got_packed, want_packed) and torch.equal(got_scales, want_scales):
            note = f"; A's NaNs: {NAN_RULE_TEXT[rule]}" if has_nan else ""
            return Verdict("stage_a_quant", True, f"{m}x{k} codes and {scales.numel()} scale bytes bit-exact{note}",
                           {"nan_rule": rule} if has_nan else {})
    got_codes, want_codes = unpack_e2m1(got_packed), unpack_e2m1(packed)
    code_bad = got_codes != want_codes
    scale_bad = got_scales != scales
    n_codes, n_scales = int(code_bad.sum()), int(scale_bad.sum())
    x = A.to(torch.float64)
    qx = x * torch.exp2(127.0 - scales.to(torch.float64)).repeat_interleave(BLOCK, dim=1)
    at_tie = torch.isin(qx.abs(), torch.tensor(TIE_POINTS, dtype=torch.float64))
    in_bad_group = scale_bad.repeat_interleave(BLOCK, dim=1)
    first_codes = [
        {"row": r, "col": c, "x": x[r, c].item(), "got": int(got_codes[r, c]), "expected": int(want_codes[r, c])}
        for r, c in code_bad.nonzero().tolist()[:FIRST_POSITIONS]
    ]
    first_scales = [
        {"row": r, "group": g, "got": int(got_scales[r, g]), "expected": int(scales[r, g])}
        for r, g in scale_bad.nonzero().tolist()[:FIRST_POSITIONS]
    ]
    matches = [
        f"quantize_mxfp4(scale_rule={rule!r}, rounding={rounding!r})"
        for rule, rounding in QUANTIZER_VARIANTS
        if all(torch.equal(g, w) for g, w in zip((got_packed, got_scales), quantize_mxfp4(A, rule, rounding, rules[0])))
    ]
    details = {
        "code_mismatches": n_codes,
        "scale_mismatches": n_scales,
        "code_mismatches_at_ties": int((code_bad & at_tie).sum()),
        "code_mismatches_in_bad_scale_groups": int((code_bad & in_bad_group).sum()),
        "first_code_mismatches": first_codes,
        "first_scale_mismatches": first_scales,
        "matches_variant": matches,
        "nan_rules": list(expected),
    }
    summary = (
        f"{n_codes} of {m * k} codes and {n_scales} of {scales.numel()} scale bytes differ; "
        f"{details['code_mismatches_at_ties']} code mismatches at e2m1 ties, "
        f"{details['code_mismatches_in_bad_scale_groups']} in groups with a wrong scale"
    )
    if matches:
        summary += f"; matches {matches[0]} exactly"
    if has_nan:
        summary += f" (A has NaNs; compared with the {rules[0]} rule, none of the {tier_name(tier)} tier's matched: " \
                   f"{_describe_nan_rules(expected)})"
    return Verdict("stage_a_quant", False, summary, details)


# ---------------------------------------------------------------------------------------------------
# Rung 2: the product against the bound


def _error_ulp(y64: torch.Tensor, exact_value: torch.Tensor) -> torch.Tensor:
    """The bf16 ulp errors are counted in: at the larger of |y| and |exact| (an exact product of 0
    must not make a small error look like 10^40 ulps)."""
    return bf16_ulp(torch.maximum(y64.abs().nan_to_num(0.0), exact_value.abs()))


def _element_report(i, j, y64, exact, bound, lo, hi) -> dict:
    yv, ev, bv = y64[i, j].item(), exact.value[i, j].item(), bound[i, j].item()
    ulp = _error_ulp(y64[i, j], exact.value[i, j]).item()
    err = yv - ev
    outside = max(lo[i, j].item() - yv, yv - hi[i, j].item(), 0.0) if math.isfinite(yv) else math.inf
    return {
        "index": [i, j],
        "y": yv,
        "exact": ev,
        "lo": lo[i, j].item(),
        "hi": hi[i, j].item(),
        "bound": bv,
        "error": err,
        "error_over_bound": abs(err) / bv,
        "error_ulps": abs(err) / ulp,
        "outside_ulps": outside / ulp,
    }


def accumulation_model() -> dict:
    """How this tier's fp32 accumulation may round, as check_product's keyword arguments.

    The interpreter runs numpy: IEEE adds, round to nearest, denormals kept (u = 2^-24, gradual
    underflow). GPU matrix units may accumulate with truncation and flush denormals: u = 2^-23 (any
    faithful rounding) and flush-to-zero, the conservative model where the hardware is not documented.
    """
    from kernels.platform import detect

    if detect().interpreter:
        return {"unit_roundoff": 2.0**-24, "underflow": "gradual"}
    return {"unit_roundoff": 2.0**-23, "underflow": "ftz"}


def check_product(
    y: torch.Tensor,
    data,
    splits: int = 1,
    rounding: str = "rne",
    unit_roundoff: float = 2.0**-24,
    underflow: str = "ftz",
    exact: ExactProduct | None = None,
    tier: str | None = None,
    bf16_atomic_adds: int = 0,
) -> Verdict:
    """y must be bf16 [M, N] and lie in ``acceptable_range`` (exact +- accumulation_bound for
    ``splits`` fp32 partials, rounded with the subject's ``rounding``: "rne" on every tier, the CPU
    tier's interpreter included since reference.emulation.triton_interpreter patches its conversions;
    "rtz" is a different range, not a wider one, for attribution). Where an fp32 intermediate may overflow,
    +-Inf and NaN are allowed; elsewhere a non-finite y is a failure. Where A has NaNs, an element passes
    if it is acceptable under any of the tier's NaN rules (``nan_results``), and the summary says so.
    ``exact`` (computed with any rule, on any device) saves recomputing the product. ``worst`` is the
    element furthest outside its range (or, when all pass, the one closest to its bound's edge).
    ``bf16_atomic_adds``: how many bf16 atomic adds built each element (``accumulation_bound``)."""
    exact = exact if exact is not None else exact_gemm_from_inputs(data, nan=nan_results(tier)[0])
    problem = _shape_problem(y, exact.value.shape)
    if problem:
        return Verdict("product", False, problem)
    y64 = as_f64(y, exact)
    bound = accumulation_bound(exact, splits, unit_roundoff, underflow, bf16_atomic_adds)
    lo, hi = acceptable_range(exact, bound, rounding)
    fail = failure_mask(y64, exact, bound, rounding)
    # Documented behaviours of this tier's arithmetic (NaN rules, the meaning of scale byte 0): an element
    # acceptable under any combination passes. Computed only where the first judgement failed.
    nan_rules = nan_results(tier) if bool(torch.isnan(data[0]).any()) else nan_results(tier)[:1]
    byte0_rules = scale_byte0_rules(tier)
    # 2^-127, A's scale in a block with s = 127, is 0 where the quantizer's exp2 flushes subnormals (gfx950, NVIDIA)
    scale127_rules = ("kept", "flushed") if bool(fail.any()) and has_top_scale(data[0]) else ("kept",)
    if len(scale127_rules) > 1 and bool(torch.isinf(data[0]).any()):
        nan_rules = nan_results(tier)  # flushed, an Inf times 0 is a NaN the tier's rules quantize
    nan_note, matched = "", None
    if fail.any() and len(nan_rules) * len(byte0_rules) * len(scale127_rules) > 1:
        on_device = tuple(t if t is None else t.to(exact.value.device) for t in data)
        matched = []
        for nan_rule in nan_rules:
            for byte0 in byte0_rules:
                for scale127 in scale127_rules:
                    alt = exact_gemm_from_inputs(on_device, nan=nan_rule, byte0=byte0, scale127=scale127)
                    alt_fail = failure_mask(y64, alt, accumulation_bound(alt, splits, unit_roundoff, underflow,
                                                                         bf16_atomic_adds), rounding)
                    if bool((fail & ~alt_fail).any()):
                        matched.append(f"{nan_rule}/{byte0}" + ("/flushed" if scale127 == "flushed" else ""))
                    fail &= alt_fail
    if len(nan_rules) > 1:
        nan_note = (f" (A has NaNs: each element judged under the {tier_name(tier)} tier's NaN rules, "
                    f"{_describe_nan_rules(nan_rules)}; 'worst' uses the first)")
    if matched is not None and any(m.endswith("/flushed") for m in matched):
        nan_note += (" (A's blocks with scale 2^127 judged also with 2^-127 flushed to 0, as the quantizer's exp2 "
                     "computes it on gfx950 and NVIDIA: their finite elements quantize to 0)")
    if matched is not None and len(byte0_rules) > 1:
        nan_note += (f" (the {tier_name(tier)} tier's products may read "
                     + " or ".join(BYTE0_TEXT[b] for b in byte0_rules) + ")")
    n_fail = int(fail.sum())
    nan, inf = torch.isnan(y64), torch.isinf(y64)
    details = {
        "splits": splits,
        "rounding": rounding,
        "unit_roundoff": unit_roundoff,
        "underflow": underflow,
        "bf16_atomic_adds": bf16_atomic_adds,
        "failures": n_fail,
        "unexpected_nan": int((fail & nan).sum()),
        "unexpected_inf": int((fail & inf).sum()),
        "overflow_risk": int(exact.overflow_risk.sum()),
        "alternatives_matched": matched,
    }
    finite = torch.isfinite(y64)
    if n_fail:
        outside = torch.maximum(lo - y64, y64 - hi).clamp(min=0) / _error_ulp(y64, exact.value)
        score = torch.where(finite, outside, torch.full_like(outside, math.inf))
        score = torch.where(fail, score, torch.full_like(score, -1.0))
    else:
        score = torch.where(finite, (y64 - exact.value).abs() / bound, torch.full_like(y64, -1.0))
    worst = _element_report(*_index(int(score.argmax()), y64.shape[1]), y64, exact, bound, lo, hi)
    where = f"worst at {tuple(worst['index'])}: y={worst['y']!r} exact={worst['exact']!r} bound={worst['bound']:.3g}"
    if n_fail:
        summary = (
            f"{n_fail} of {y64.numel()} elements outside the acceptable range "
            f"({details['unexpected_nan']} NaN, {details['unexpected_inf']} Inf); {where} "
            f"({worst['error_over_bound']:.3g} x bound, {worst['outside_ulps']:.3g} bf16 ulps outside){nan_note}"
        )
    else:
        summary = f"all {y64.numel()} elements within the bound; {where} ({worst['error_over_bound']:.3g} x bound){nan_note}"
    where_wrong = error_map(y64, lo, hi, fail) if n_fail else None
    return Verdict("product", n_fail == 0, summary, details, worst, error_map=where_wrong)


# ---------------------------------------------------------------------------------------------------
# Rung 3: the official check


def official_verdict(y: torch.Tensor, y_ref: torch.Tensor, rtol: float = 1e-2, atol: float = 1e-2) -> Verdict:
    """GPU MODE's check: |y - ref| <= atol + rtol * |ref| in fp32, NaN/+Inf/-Inf agreeing exactly.

    The real ``ref`` is aiter's ASM kernel ``gemm_a4w4``; here the caller passes our stand-in, the exact
    product rounded once to bf16 (``official_reference``). Reported beside ``check_product`` so that
    "passes the official check but is wrong" is visible.
    """
    problem = _shape_problem(y, y_ref.shape)
    if problem:
        return Verdict("official", False, problem)
    got, ref = y.detach().cpu().float(), y_ref.detach().cpu().float()
    diff = (got - ref).abs()
    too_far = diff > atol + rtol * ref.abs()  # NaN differences (matching NaN/Inf) compare False
    special_mismatch = (
        (torch.isnan(got) ^ torch.isnan(ref))
        | (torch.isposinf(got) ^ torch.isposinf(ref))
        | (torch.isneginf(got) ^ torch.isneginf(ref))
    )
    bad = too_far | special_mismatch
    n_bad = int(bad.sum())
    finite = torch.isfinite(diff)
    max_error = diff[finite].max().item() if finite.any() else 0.0
    first = [
        {"index": [i, j], "y": got[i, j].item(), "ref": ref[i, j].item()}
        for i, j in bad.nonzero().tolist()[:FIRST_POSITIONS]
    ]
    nonfinite = int((bad & special_mismatch).sum())
    details = {"rtol": rtol, "atol": atol, "mismatches": n_bad, "max_error": max_error, "first_mismatches": first,
               "special_mismatches": nonfinite}
    if n_bad:
        # max error is over the finite differences: say how many failures are NaN/Inf where ref is not
        special = f" ({nonfinite} NaN/Inf where the reference is not)" if nonfinite else ""
        summary = (f"{n_bad} of {got.numel()} elements fail |y-ref| <= {atol}+{rtol}|ref|{special}; "
                   f"max error {max_error:.3g}" + (" over the finite ones" if nonfinite else ""))
    else:
        summary = f"passes |y-ref| <= {atol}+{rtol}|ref| (max error {max_error:.3g})"
    where_wrong = None
    if n_bad:  # the map in the official check's own measure: |y - ref| / (atol + rtol |ref|)
        tol = (atol + rtol * ref.abs()).double()
        where_wrong = {**error_map(got.double(), ref.double() - tol, ref.double() + tol, bad), "measure": "official"}
    return Verdict("official", n_bad == 0, summary, details, error_map=where_wrong)


# ---------------------------------------------------------------------------------------------------
# Rung 4: metamorphic relations


def _bitwise_equal(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x.detach().cpu().view(torch.int16) == y.detach().cpu().view(torch.int16)


def split_invariance(
    y_split: torch.Tensor, y_nosplit: torch.Tensor, data, splits: int, rounding: str = "rne", exact=None
) -> Verdict:
    """A split-K result (``splits`` fp32 partials) and the unsplit result of the same subject must each
    lie within their bound. Whether they are bitwise equal is reported, not required: summing partials
    reassociates the additions."""
    exact = exact if exact is not None else exact_gemm_from_inputs(data)
    split = check_product(y_split, data, splits=splits, rounding=rounding, exact=exact)
    whole = check_product(y_nosplit, data, splits=1, rounding=rounding, exact=exact)
    details = {"split": split.summary, "nosplit": whole.summary}
    if split.passed and whole.passed:
        differ = int((~_bitwise_equal(y_split, y_nosplit)).sum())
        diff = (as_f64(y_split, exact) - as_f64(y_nosplit, exact)).abs()
        diff_ulps = (diff / bf16_ulp(exact.value)).nan_to_num(0.0)
        details.update(bitwise_differences=differ, max_difference_ulps=diff_ulps.max().item())
        summary = (
            f"split={splits} and unsplit both within the bound; {differ} elements differ bitwise "
            f"(max {details['max_difference_ulps']:.3g} ulps)"
        )
        return Verdict("split_invariance", True, summary, details)
    which, v = ("split", split) if not split.passed else ("unsplit", whole)
    return Verdict("split_invariance", False, f"{which} result: {v.summary}", details, v.worst)


def _row_exact(exact: ExactProduct, r: int) -> ExactProduct:
    rows = slice(r, r + 1)
    return replace(
        exact, value=exact.value[rows], abs_sum=exact.abs_sum[rows], overflow_risk=exact.overflow_risk[rows],
        a_q=exact.a_q[rows], a_scales=exact.a_scales[rows],
    )


def row_independence(subject, data, rows, y: torch.Tensor | None = None, exact=None) -> Verdict:
    """Each listed row m computed alone (A[m:m+1], same storage) and row m of the batch must both lie
    within the bound. Bitwise equality is reported, not required: a kernel may pick a different tile
    configuration, and so a different summation order, for M = 1."""
    rounding = subject_rounding(subject)
    exact = exact if exact is not None else exact_gemm_from_inputs(data)
    y = y if y is not None else call_subject(subject, data)
    batch = check_product(y, data, rounding=rounding, exact=exact)
    if not batch.passed:
        return Verdict("row_independence", False, f"batch result: {batch.summary}", {}, batch.worst)
    A, *rest = data
    failing, differing = [], []
    for r in rows:
        single = call_subject(subject, (A[r : r + 1], *rest))
        v = check_product(single, (A[r : r + 1], *rest), rounding=rounding, exact=_row_exact(exact, r))
        if not v.passed:
            failing.append((r, v))
        elif not bool(_bitwise_equal(single, y[r : r + 1]).all()):
            differing.append(r)
    details = {"rows": list(rows), "rows_failing_alone": [r for r, _ in failing], "rows_differing_bitwise": differing}
    if failing:
        r, v = failing[0]
        return Verdict("row_independence", False, f"row {r} computed alone: {v.summary}", details, v.worst)
    summary = f"{len(details['rows'])} rows within the bound alone; {len(differing)} differ bitwise from the batch"
    return Verdict("row_independence", True, summary, details)


def _copy_like(A: torch.Tensor) -> torch.Tensor:
    """A copy with A's strides (so a transposed or row-sliced A stays so)."""
    out = torch.empty_strided(A.shape, A.stride(), dtype=A.dtype, device=A.device)
    out.copy_(A)
    return out


def _perturbed(name, subject, data, new_A, rows, precondition, exact) -> Verdict:
    """Run the subject on the original and on the perturbed data (A changed only in ``rows``); both
    outputs must be within the bound. How many elements of the other rows changed bitwise is reported:
    a deterministic kernel whose rows are independent changes none."""
    rounding = subject_rounding(subject)
    exact = exact if exact is not None else exact_gemm_from_inputs(data)
    new_data = (new_A, *data[1:])
    y, y_new = call_subject(subject, data), call_subject(subject, new_data)
    before = check_product(y, data, rounding=rounding, exact=exact)
    after = check_product(y_new, new_data, rounding=rounding)
    details = {"precondition": precondition, "before": before.summary, "after": after.summary}
    if not (before.passed and after.passed):
        v = after if before.passed else before
        which = "perturbed input" if before.passed else "original input"
        return Verdict(name, False, f"{which}: {v.summary}", details, v.worst)
    others = torch.ones(y.shape[0], dtype=torch.bool, device=y.device)
    others[list(rows)] = False
    details["other_rows_changed"] = int((~_bitwise_equal(y[others], y_new[others])).sum())
    summary = f"both within the bound; {details['other_rows_changed']} elements of unperturbed rows changed bitwise"
    return Verdict(name, True, summary, details)


def block_scaling(subject, data, row: int, group: int, j: int, exact=None) -> Verdict:
    """Scale A's 32-block (row, group) by 2^j, which scales exactly that block's contribution by 2^j.
    The rung first confirms the relation holds for this input (the block's codes unchanged and its
    scale byte moved by exactly j: no clamping, no bf16 under/overflow); then the subject must stay
    within the bound on both inputs. Aimed at scale handling: large j reaches scale bytes that ordinary
    data never produces."""
    A = data[0]
    cols = slice(group * BLOCK, (group + 1) * BLOCK)
    new_A = _copy_like(A)
    new_A[row, cols] = (A[row, cols].double() * 2.0**j).to(A.dtype)
    before_q, before_s = quantize_mxfp4(A[row : row + 1, cols])
    after_q, after_s = quantize_mxfp4(new_A[row : row + 1, cols])
    exact_shift = torch.equal(before_q, after_q) and int(after_s) - int(before_s) == j
    exact_values = torch.equal(new_A[row, cols].double(), A[row, cols].double() * 2.0**j)
    precondition = f"block ({row}, {group}) scaled by 2^{j}: codes kept and scale byte +{j}"
    if not (exact_shift and exact_values):
        return Verdict("block_scaling", True, f"not applicable: {precondition} does not hold here",
                       {"precondition": precondition}, applicable=False)
    return _perturbed("block_scaling", subject, data, new_A, [row], precondition, exact)


def zero_blocks(subject, data, blocks, exact=None) -> Verdict:
    """Zero A's 32-blocks ``blocks`` (list of (row, group)): each zeroed block quantizes to scale byte 0
    and +0 codes, so its terms leave the sum. The subject must stay within the bound on both inputs."""
    new_A = _copy_like(data[0])
    for row, group in blocks:
        new_A[row, group * BLOCK : (group + 1) * BLOCK] = 0
    precondition = f"blocks {list(blocks)} zeroed"
    return _perturbed("zero_blocks", subject, data, new_A, sorted({r for r, _ in blocks}), precondition, exact)
