"""Explain a wrong product: which rows, columns, K-groups or K-range account for the error.

``explain`` tests a fixed list of hypotheses against the output, each a vectorised comparison with
a modified exact product, and returns the ones that fit as ``Finding``s:

- the bf16 rounding mode (truncation instead of RNE, or the reverse);
- a known wrong quantizer or layout read (ties rounded up, floor/ceil/rceil scales, B_shuffle read as
  B_q, B_scale_sh read without unshuffling): y fits that variant's exact product everywhere;
- a missing K range: y ~ exact minus the terms k in [k0, k1) (a dropped K tail, a lost K-split);
- one K-group's scale off by 2^j, j in {-2, -1, 1, 2}, in A (per row) or in B (per column);
- where the failures are: row and column ranges, named as M/N tails relative to tile sizes;
- how many failures are NaN or Inf.

``failure_class`` names the kind of wrong from the findings (NaN leak, K terms missing, a partial tile,
...), one exception type per kind in the tests, so each is shrunk and reported on its own.

"Fits" means |y - candidate| <= 2 E + one bf16 ulp, with E the accumulation bound: loose enough for
any correct rounding of the candidate, tight enough to tell a missing 32-group from a present one
unless the group's contribution is itself within the bound.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from reference import accumulation_bound, dequantize_mxfp4, e8m0_unshuffle, exact_gemm, exact_gemm_from_inputs
from reference.oracle.gemm import ExactProduct
from reference.oracle.quant import BLOCK

from fuzz.judge.verdicts import as_f64, bf16_ulp, failure_mask

ROW_TILES = (8, 16, 32, 64)
COLUMN_TILES = (64, 128, 256)
K_TILES = (64, 128, 256)
# Powers of two tried for a wrong group scale, likeliest first; -inf is a group that contributes
# nothing (its terms dropped, or its scale byte decoded as 0).
SCALE_ERRORS = (float("-inf"), -1, 1, -2, 2)
MAX_SPLITS = 16
MAX_RANGES_SHOWN = 6
# Fewest elements a K-range or group-scale hypothesis must fit: with one or two elements, some one of
# the many candidate ranges or groups fits by coincidence.
MIN_EVIDENCE = 8


@dataclass(frozen=True)
class Finding:
    kind: str  # rounding | variant | k_range_missing | group_scale | rows_columns | nonfinite | shape
    text: str
    params: dict = field(default_factory=dict)


def dequantized_operands(data, exact: ExactProduct):
    """(a, b): the exact fp64 values [M, K] and [N, K] the product is made of."""
    _, _, B_q, _, B_scale_sh = data
    a = dequantize_mxfp4(exact.a_q, exact.a_scales)
    b = dequantize_mxfp4(B_q, e8m0_unshuffle(B_scale_sh, B_q.shape[0], exact.k // BLOCK))
    return a, b


def group_contributions(a_rows: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """[R, N, K/32]: the part of each output that each 32-wide K group contributes (fp64, exact)."""
    r, k = a_rows.shape
    g = k // BLOCK
    return torch.einsum("rgk,ngk->rng", a_rows.reshape(r, g, BLOCK), b.reshape(b.shape[0], g, BLOCK))


def _fits(y: torch.Tensor, candidate: torch.Tensor, bound: torch.Tensor) -> torch.Tensor:
    return (y - candidate).abs() <= 2 * bound + bf16_ulp(candidate.abs() + bound)


def ranges(indices: list[int]) -> list[list[int]]:
    """Sorted indices -> maximal half-open runs [start, stop)."""
    runs = []
    for i in indices:
        if runs and runs[-1][1] == i:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    return runs


def _tail_tiles(start: int, size: int, tiles) -> list[int]:
    return [t for t in tiles if size % t and start == size // t * t]


def describe_span(indices: list[int], size: int, noun: str, var: str, tiles) -> str:
    """'all 40 rows', 'rows m >= 32 (the tail past the last full 32-row tile)', 'columns [0, 64) [128, 192)'."""
    if len(indices) == size:
        return f"all {size} {noun}"
    runs = ranges(indices)
    if len(runs) == 1 and runs[0][1] == size:
        start = runs[0][0]
        text = f"{noun} {var} >= {start}"
        tails = _tail_tiles(start, size, tiles)
        if tails:
            text += f" (the tail past the last full tile of {'/'.join(map(str, tails))})"
        return text
    if len(runs) == 1 and runs[0][0] == 0:
        return f"{noun} {var} < {runs[0][1]}"
    shown = " ".join(str(a) if b == a + 1 else f"[{a}, {b})" for a, b in runs[:MAX_RANGES_SHOWN])
    more = f" and {len(runs) - MAX_RANGES_SHOWN} more ranges" if len(runs) > MAX_RANGES_SHOWN else ""
    return f"{noun} {shown}{more}"


def _where(fail: torch.Tensor) -> Finding:
    bad_rows = fail.any(1).nonzero().flatten().tolist()
    bad_cols = fail.any(0).nonzero().flatten().tolist()
    m, n = fail.shape
    block = bool(fail[bad_rows][:, bad_cols].all())
    text = (
        f"{int(fail.sum())} of {fail.numel()} elements wrong: "
        f"{describe_span(bad_rows, m, 'rows', 'm', ROW_TILES)}; {describe_span(bad_cols, n, 'columns', 'n', COLUMN_TILES)}"
    )
    if block and 1 < len(bad_rows) * len(bad_cols) < fail.numel():
        text += "; every element of that block is wrong"
    partial_tile = any(_only_a_tail(indices, size, tiles) for indices, size, tiles in
                       ((bad_rows, m, ROW_TILES), (bad_cols, n, COLUMN_TILES)))
    params = {"rows": ranges(bad_rows), "columns": ranges(bad_cols), "full_block": block,
              "everywhere": bool(fail.all()), "partial_tile": partial_tile}
    return Finding("rows_columns", text, params)


def _only_a_tail(indices: list[int], size: int, tiles) -> bool:
    """The wrong indices are exactly the tail past the last full tile of some tile size."""
    runs = ranges(indices)
    return len(runs) == 1 and runs[0][1] == size and runs[0][0] > 0 and bool(_tail_tiles(runs[0][0], size, tiles))


def _nonfinite(y64: torch.Tensor, fail: torch.Tensor) -> list[Finding]:
    nan, inf = int((fail & torch.isnan(y64)).sum()), int((fail & torch.isinf(y64)).sum())
    if not nan and not inf:
        return []
    total = int(fail.sum())
    text = f"{nan} of the {total} wrong elements are NaN and {inf} are +-Inf where the exact product is finite and safe"
    return [Finding("nonfinite", text, {"nan": nan, "inf": inf})]


def _rounding(y64, exact, bound, rounding) -> list[Finding]:
    other = "rtz" if rounding == "rne" else "rne"
    if failure_mask(y64, exact, bound, other).any():
        return []
    if other == "rtz":
        text = ("bf16 conversion truncates (RTZ) instead of rounding to nearest even: every element fits "
                "the bound once rounded toward zero (errors of at most 1 ulp toward zero)")
    else:
        text = "output rounds to nearest although the subject declared rtz (interpreter truncation): check its rounding"
    return [Finding("rounding", text, {"fits": other})]


def _variants(data, exact) -> list[tuple[str, str, object]]:
    """(name, description, thunk -> ExactProduct) for each known wrong quantizer or layout read."""
    A, _, B_q, B_shuffle, B_scale_sh = data
    n, groups = B_q.shape[0], exact.k // BLOCK
    scales = e8m0_unshuffle(B_scale_sh, n, groups)
    # At the runner's aiter commit, get_triton_quant(QuantType.per_1x32), per_1x32_f4_quant_triton and
    # aiter.utility.fp4_utils.dynamic_mxfp4_quant still round this way; the reference quantizes A with
    # aiter.ops.triton.quant.dynamic_mxfp4_quant (RNE) since reference-kernels 1ad45bb (2026-03-11).
    variants = [("ties_up", "A quantized with ties rounded away from zero (pre-#975 aiter; at the runner's "
                 "commit get_triton_quant(QuantType.per_1x32) and fp4_utils.dynamic_mxfp4_quant still do, "
                 "while the reference uses aiter.ops.triton.quant.dynamic_mxfp4_quant since 2026-03-11; the reference "
                 "of 2026-03-04 to 03-11 quantized A this way, so a runner record of that week passed it)",
                 lambda: exact_gemm(A, B_q, scales, rounding="ties_up"))]
    variants += [(f"scale_{rule}", f"A's scales follow the {rule!r} rule instead of aiter's even rule",
                  lambda rule=rule: exact_gemm(A, B_q, scales, scale_rule=rule)) for rule in ("floor", "ceil", "rceil")]
    if B_shuffle is not None:
        variants.append(("b_shuffle_as_b_q", "B_shuffle read as if it were unshuffled B_q",
                         lambda: exact_gemm(A, B_shuffle, scales)))
    variants.append(("b_scale_not_unshuffled", "B_scale_sh read without undoing e8m0_shuffle",
                     lambda: exact_gemm(A, B_q, B_scale_sh.view(torch.uint8)[:n, :groups])))
    return variants


def _variant_findings(y64, data, exact, splits, unit_roundoff, rounding, underflow) -> list[Finding]:
    found = []
    for name, text, product in _variants(data, exact):
        alternative = product()
        bound = accumulation_bound(alternative, splits, unit_roundoff, underflow)
        if not failure_mask(y64, alternative, bound, rounding).any():
            found.append(Finding("variant", f"output fits exactly: {text}", {"variant": name}))
    return found


def _k_range_names(k0: int, k1: int, k: int) -> list[str]:
    """What a missing [k0, k1) would be: a K tail past whole tiles, the last of S equal K-splits, everything."""
    if k0 == 0 and k1 == k:
        return ["every term missing: the output is ~0"]
    if k1 != k:
        return []
    names = []
    tiles = _tail_tiles(k0, k, K_TILES)
    if tiles:
        names.append(f"K tail dropped: only whole {'/'.join(map(str, tiles))}-wide K tiles summed")
    # Split-K stripes are aligned to a unit (a scale group, or a K tile): stripe = ceil(units / S) units.
    splits = []
    for unit in (BLOCK, *K_TILES):
        units = -(-k // unit)
        splits += [f"{s} ways, stripes of {-(-units // s) * unit}" for s in range(2, MAX_SPLITS + 1)
                   if -(-units // s) * unit * (s - 1) == k0 and f"{s} ways" not in " ".join(splits)]
    if splits:
        names.append(f"the last K-split lost (K split {' or '.join(splits)})")
    return names


def _missing_k_range(y64, exact, bound, fail, a, b, max_elements, chunk=32) -> list[Finding]:
    """Find [k0, k1) (32-aligned) such that y fits exact minus those terms on every sampled element of
    the block spanned by the wrong rows and columns. The correct elements of that block count too: a
    kernel that drops terms drops them there as well (they pass because the terms are small), while
    one wrong element whose error happens to equal some range's sum does not get that range blamed."""
    box = fail.any(1)[:, None] & fail.any(0)[None, :] & torch.isfinite(y64)
    idx = torch.cat([(box & fail).nonzero()[:max_elements], (box & ~fail).nonzero()[:max_elements]])
    if len(idx) < MIN_EVIDENCE:
        return []
    groups = exact.k // BLOCK
    fits = torch.ones((groups + 1, groups + 1), dtype=torch.bool, device=y64.device)
    for part in idx.split(chunk):
        r, c = part[:, 0], part[:, 1]
        per_group = (a[r].view(-1, groups, BLOCK) * b[c].view(-1, groups, BLOCK)).sum(-1)
        prefix = torch.nn.functional.pad(per_group.cumsum(1), (1, 0))  # [E, G+1]
        missing = prefix[:, None, :] - prefix[:, :, None]  # [E, g0, g1] = terms in groups [g0, g1)
        candidate = exact.value[r, c][:, None, None] - missing
        fits &= _fits(y64[r, c][:, None, None], candidate, bound[r, c][:, None, None]).all(0)
    fits &= torch.ones_like(fits).triu(1)  # g1 > g0
    pairs = [(g0 * BLOCK, g1 * BLOCK) for g0, g1 in fits.nonzero().tolist()]
    if not pairs:
        return []
    k0, k1 = min(pairs, key=lambda p: (not _k_range_names(*p, exact.k), p[1] - p[0]))
    names = _k_range_names(k0, k1, exact.k)
    text = f"the terms k in [{k0}, {k1}) are missing (fits {len(idx)} sampled elements of the wrong rows x columns)"
    if names:
        text += ": " + "; ".join(names)
    return [Finding("k_range_missing", text, {"k0": k0, "k1": k1, "names": names})]


def _group_scale(y, value, bound, fail, a, b, operand, max_rows) -> list[Finding]:
    """Per wrong row of y (rows of A, or of B when called on the transposes): is there a group g and
    j with y[r] fitting value[r] + (2^j - 1) * contribution of g, across the whole row (at least
    MIN_EVIDENCE elements)?"""
    noun, var = ("rows", "m") if operand == "A" else ("columns", "n")
    factors = torch.tensor([2.0**j - 1 for j in SCALE_ERRORS], dtype=torch.float64, device=y.device)
    explained: dict[tuple[int, int], list[int]] = {}
    if y.shape[1] < MIN_EVIDENCE:
        return []
    examined = fail.any(1).nonzero().flatten().tolist()[:max_rows]
    for r in examined:
        contribution = group_contributions(a[r : r + 1], b)[0].T  # [G, N]
        candidate = value[r] + factors[:, None, None] * contribution[None]  # [J, G, N]
        fits = _fits(y[r], candidate, bound[r]).all(-1)
        hits = fits.nonzero().tolist()
        if hits:
            j_index, g = hits[0]
            explained.setdefault((g, SCALE_ERRORS[j_index]), []).append(r)
    findings = []
    for (g, j), hit_rows in sorted(explained.items(), key=lambda item: -len(item[1])):
        span = describe_span(hit_rows, y.shape[0], noun, var, ())
        what = "contributes nothing (dropped, or its scale decoded as 0)" if j == float("-inf") else f"scaled by 2^{j}"
        text = (f"{operand}'s K-group {g} (k in [{g * BLOCK}, {(g + 1) * BLOCK})) {what} explains "
                f"{len(hit_rows)} of {len(examined)} examined wrong {noun}: {span}")
        findings.append(Finding("group_scale", text, {"operand": operand, "group": g, "j": j, noun: ranges(hit_rows)}))
    return findings


def explain(
    y: torch.Tensor,
    data,
    *,
    rounding: str = "rne",
    splits: int = 1,
    unit_roundoff: float = 2.0**-24,
    underflow: str = "ftz",
    exact=None,
    max_rows: int = 16,
    max_elements: int = 256,
) -> list[Finding]:
    """Findings that explain why y fails ``check_product`` with the same arguments (empty when it
    passes). ``max_rows``/``max_elements`` cap the per-row and per-element hypothesis work."""
    exact = exact if exact is not None else exact_gemm_from_inputs(data)
    if not isinstance(y, torch.Tensor) or tuple(y.shape) != tuple(exact.value.shape):
        got = tuple(y.shape) if isinstance(y, torch.Tensor) else type(y).__name__
        return [Finding("shape", f"output is {got}, expected {tuple(exact.value.shape)}")]
    y64 = as_f64(y, exact)
    bound = accumulation_bound(exact, splits, unit_roundoff, underflow)
    fail = failure_mask(y64, exact, bound, rounding)
    if not fail.any():
        return []
    whole = [*_rounding(y64, exact, bound, rounding),
             *_variant_findings(y64, data, exact, splits, unit_roundoff, rounding, underflow)]
    if whole:  # one rule explains every element: the partial hypotheses below would only add coincidences
        return [*whole, _where(fail), *_nonfinite(y64, fail)]
    a, b = dequantized_operands(data, exact)
    return [
        *_missing_k_range(y64, exact, bound, fail, a, b, max_elements),
        *_group_scale(y64, exact.value, bound, fail, a, b, "A", max_rows),
        *_group_scale(y64.T, exact.value.T, bound.T, fail.T, b, a, "B", max_rows),
        _where(fail),
        *_nonfinite(y64, fail),
    ]


# What kind of wrong a failing output is, from its findings: one name per kind of bug, so that a test
# raising a distinct exception type per class gets each class shrunk and reported separately by
# Hypothesis (one bug does not hide another in the same verdict). Checked in this order.
FAILURE_CLASSES = {
    "nonfinite": "NaN or Inf where the exact product is finite",
    "rounding": "the bf16 conversion rounds the wrong way",
    "wrong_variant": "a known wrong quantizer or layout read",
    "k_terms_missing": "K terms missing (a K tail, a lost split-K stripe)",
    "group_scale": "one K-group's scale off by a power of two",
    "partial_tile": "only the rows or columns of a partial tile are wrong",
    "wrong_everywhere": "every element wrong",
    "wrong_values": "wrong values",
}


_EXCEPTION_TYPES: dict = {}


def failure_exception(failure_class: str, base: type, suffix: str = "") -> type:
    """The subclass of ``base`` for one failure class (``KTermsMissing`` + ``suffix``, default the base's
    name): Hypothesis
    tells failures apart by exception type, so each class is shrunk and reported on its own and one bug
    does not hide another in the same test. ``base`` itself for an empty class."""
    if not failure_class:
        return base
    key = (base, failure_class)
    if key not in _EXCEPTION_TYPES:
        name = "".join(part.title() for part in failure_class.split("_")) + (suffix or base.__name__)
        _EXCEPTION_TYPES[key] = type(name, (base,), {"__module__": base.__module__})
    return _EXCEPTION_TYPES[key]


def failure_class(findings: list[Finding]) -> str:
    """The FAILURE_CLASSES name of the findings ``explain`` returned for a failing output."""
    kinds = {f.kind: f for f in findings}
    for kind, name in (("nonfinite", "nonfinite"), ("rounding", "rounding"), ("variant", "wrong_variant"),
                       ("k_range_missing", "k_terms_missing"), ("group_scale", "group_scale")):
        if kind in kinds:
            return name
    where = kinds.get("rows_columns")
    if where is not None and where.params.get("partial_tile"):
        return "partial_tile"
    if where is not None and where.params.get("everywhere"):
        return "wrong_everywhere"
    return "wrong_values"
