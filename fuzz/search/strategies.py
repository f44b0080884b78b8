"""Hypothesis strategies for MXFP4 GEMM fuzz cases.

A strategy draws a small ``Case`` (shape, layout of A, value regime of A and of B with a power-of-two
exponent, a few special-value placements, the fill of B_scale_sh's padding, a seed) and ``Case.build()``
turns it into the task tuple deterministically. Tensors are never drawn element by element, so
shrinking works on the few fields: smaller shapes, the first layout and regime in their lists
(the simplest), exponent 0, fewer specials, pad fill 0, seed 0.

Every draw reports what it picked through ``hypothesis.event`` (see ``--hypothesis-show-statistics``).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields

import torch
from hypothesis import event, example
from hypothesis import strategies as st

from reference import decode_e2m1, e8m0_shuffle, quantize_mxfp4, quantize_weights
from reference.oracle.e2m1 import E2M1_MAGNITUDES, TIE_POINTS
from reference.oracle.gemm import BF16_MAX
from reference.oracle.inputs import E8M0, FP4X2
from reference.oracle.quant import BLOCK

from fuzz.search import input_cache
from fuzz.search.value_streams import LEGACY_STREAM, STREAMS, make_stream

OFFICIAL_TEST_SHAPES = ((8, 2112, 7168), (16, 3072, 1536), (64, 3072, 1536), (256, 2880, 512))
# The runner's benchmark shapes in its order, each with its nominal seed (M, N, K, seed): the runner mixes a
# secret POPCORN_SEED into the seeds, so ours are the nominal ones (fuzz/submission/prediction.py says so).
BENCHMARK_TESTS = (
    (4, 2880, 512, 4565), (16, 2112, 7168, 15), (32, 4096, 512, 457), (32, 2880, 512, 54), (64, 7168, 2048, 687),
    (256, 3072, 1536, 7856),
)
BENCHMARK_SHAPES = tuple((m, n, k) for m, n, k, _ in BENCHMARK_TESTS)
# Rows that miss every power-of-two M tile; drawn often because M tails are where row masks go wrong.
M_TAIL_ROWS = (1, 3, 7, 9, 15, 17, 31, 33, 63, 65)
LAYOUTS = ("contiguous", "transposed", "row_sliced", "offset", "misaligned")
ROW_PITCH_PAD = 64  # row_sliced: elements between the end of a row and the start of the next
ALIGNED_OFFSET = 64  # offset: storage offset in elements (128 bytes, still 16-byte aligned)
# Quiet NaNs only: a signalling NaN is quieted by the CPU's bf16 -> fp32 conversion and may not be on a GPU.
SPECIAL_BITS = {"-0": 0x8000, "nan": 0x7FC0, "-nan": 0xFFC0, "inf": 0x7F80, "-inf": 0xFF80}
SPECIAL_KINDS = tuple(SPECIAL_BITS)
PAD_FILLS = (0, 0xFF, 0x7F, "random")
EXPONENT_RANGE = (-130, 120)
# Production K: real submissions switch to split-K (and size its stripes) on K >= 1536, often >= 2048,
# and on how many output tiles fill the GPU. ``production_shapes`` draws K in this range with thin N and
# small M, so an interpreted call stays about a second on the CPU.
PRODUCTION_K = (1536, 8192)
MAX_DIM = 1 << 16
MAX_SEED = 2**32 - 1


# ---------------------------------------------------------------------------------------------------
# Value regimes: (stream, rows, k, exponent) -> float64 [rows, k] on stream.device, every value exact in
# bf16 or rounded to it by the caller. ``stream`` is a fuzz.search.value_streams stream: the same regime code
# draws from torch's CPU generator or from the device-side counter stream. Listed simplest first: a
# shrinking regime moves toward "randn".


def _signs(gen, shape):
    return gen.randint(0, 2, shape, dtype=torch.float64).mul_(2).sub_(1)


def _pow2(exponents: torch.Tensor) -> torch.Tensor:
    """float64 2^e for integer e in fp64's normal range, built from the bits (exact on every device)."""
    return ((exponents.to(torch.int64) + 1023) << 52).view(torch.float64)


def _one_per_group(gen, rows, k):
    """[rows, k/32, 32] bool: one random element of every 32-group."""
    hot = gen.randint(0, BLOCK, (rows, k // BLOCK, 1))
    return torch.arange(BLOCK, device=gen.device).expand(rows, k // BLOCK, BLOCK) == hot


def _group_exponents(gen, rows, k, exponent, spread):
    """[rows, k/32, 1] powers of two 2^(exponent + d), d uniform in [-spread, spread]."""
    return _pow2(gen.randint(-spread, spread + 1, (rows, k // BLOCK, 1)) + exponent)


def regime_randn(gen, rows, k, exponent):
    """Standard normal times 2^exponent (the official distribution at exponent 0)."""
    return gen.randn((rows, k), dtype=torch.float32).double().mul_(2.0**exponent)


def regime_uniform(gen, rows, k, exponent):
    """Uniform in (-2^exponent, 2^exponent)."""
    return (gen.rand((rows, k)) * 2 - 1) * 2.0**exponent


def regime_sparse(gen, rows, k, exponent):
    """randn * 2^exponent with about 90% of the elements set to zero."""
    keep = gen.rand((rows, k)) < 0.1
    return regime_randn(gen, rows, k, exponent).mul_(keep)


def regime_zero_groups(gen, rows, k, exponent):
    """randn * 2^exponent with about half of the 32-groups all zero; the zeros keep randn's sign, so
    all -0 and mixed-sign zero groups occur (scale byte 0, codes 0x0/0x8)."""
    x = regime_randn(gen, rows, k, exponent).view(rows, k // BLOCK, BLOCK)
    keep = (gen.rand((rows, k // BLOCK, 1)) < 0.5).double()
    return (x * keep).view(rows, k)


def regime_constant_groups(gen, rows, k, exponent):
    """Every 32-group holds one value (randn * 2^exponent) 32 times."""
    per_group = regime_randn(gen, rows, k // BLOCK, exponent)
    return per_group.repeat_interleave(BLOCK, dim=1)


def regime_one_hot(gen, rows, k, exponent):
    """Exactly one non-zero per row, magnitude in [1, 2) * 2^exponent. As B, every output is a single
    product, so the accumulation bound collapses to one bf16 rounding of the exact value."""
    col = gen.randint(0, k, (rows, 1))
    hot = torch.arange(k, device=gen.device).expand(rows, k) == col
    values = (1 + gen.rand((rows, 1))) * _signs(gen, (rows, 1)) * 2.0**exponent
    return hot * values


def regime_grid(gen, rows, k, exponent):
    """Exact MXFP4 values: random e2m1 codes (both signs, -0 included) times a per-group power of two
    within 2^(exponent +- 2), so quantization returns A unchanged."""
    codes = gen.randint(0, 16, (rows, k)).to(torch.uint8)
    values = decode_e2m1(codes).double().view(rows, k // BLOCK, BLOCK)
    return (values * _group_exponents(gen, rows, k, exponent, 2)).view(rows, k)


def regime_outlier(gen, rows, k, exponent):
    """One element per group in [1, 2) * 2^exponent, the rest randn * 2^(exponent - 16): after scaling
    the small ones round to +-0 codes, so the group is one code and 31 signed zeros."""
    small = regime_randn(gen, rows, k, exponent - 16).view(rows, k // BLOCK, BLOCK)
    big = (1 + gen.rand(small.shape)) * _signs(gen, small.shape) * 2.0**exponent
    return torch.where(_one_per_group(gen, rows, k), big, small).view(rows, k)


def regime_ties(gen, rows, k, exponent):
    """Rounding ties: each group has one element of magnitude 6 * 2^s (which makes the group's scale
    exactly 2^s) and the others at e2m1 midpoints (0.25, 0.75, ..., 5) or grid values times 2^s, random
    signs; s within exponent +- 3. RNE and ties-away-from-zero disagree on every midpoint."""
    palette = torch.tensor(TIE_POINTS * 2 + E2M1_MAGNITUDES[1:7], dtype=torch.float64, device=gen.device)
    picks = palette[gen.randint(0, len(palette), (rows, k // BLOCK, BLOCK))]
    picks.masked_fill_(_one_per_group(gen, rows, k), 6.0)
    scale = _group_exponents(gen, rows, k, exponent, 3)
    return picks.mul_(_signs(gen, picks.shape)).mul_(scale).view(rows, k)


def regime_scale_boundary(gen, rows, k, exponent):
    """Group amax with mantissa 1.5 .. 1.7578125 (every bf16 step), straddling 1.75 where the even
    scale rule rounds the exponent up, and where 1.5 < m < 1.75 saturates to 6. The other elements are
    uniform below the amax."""
    g = k // BLOCK
    mantissa = 1.5 + gen.randint(0, 34, (rows, g, 1)).double() / 128
    amax = mantissa * _group_exponents(gen, rows, k, exponent, 3)
    others = (gen.rand((rows, g, BLOCK)) * 2 - 1) * amax
    peak = amax * _signs(gen, (rows, g, 1))
    return torch.where(_one_per_group(gen, rows, k), peak, others).view(rows, k)


def regime_heavy_tailed(gen, rows, k, exponent):
    """Cauchy (ratio of two normals, clipped to +-2^40) times 2^exponent: groups spanning many binades."""
    num = gen.randn((rows, k), dtype=torch.float64)
    den = gen.randn((rows, k), dtype=torch.float64)
    return (num / den).clamp(-(2.0**40), 2.0**40) * 2.0**exponent


def regime_subnormal(gen, rows, k, exponent):
    """bf16 subnormals j * 2^-133 (j = 1..127, random signs); in about half of the groups one element is
    a smallest-binade normal (1..2) * 2^-126. Scale byte 0 either way. Ignores the exponent."""
    x = gen.randint(1, 128, (rows, k), dtype=torch.float64).mul_(2.0**-133)
    x = x.mul_(_signs(gen, (rows, k))).view(rows, k // BLOCK, BLOCK)
    normal = gen.randint(0, 128, x.shape, dtype=torch.float64).div_(128).add_(1).mul_(2.0**-126)
    with_normal = _one_per_group(gen, rows, k) & (gen.rand((rows, k // BLOCK, 1)) < 0.5)
    return torch.where(with_normal, normal.copysign_(x), x).view(rows, k)  # x is never 0: copysign = * sign(x)


def regime_near_max(gen, rows, k, exponent):
    """Magnitudes (1 .. 1.9921875) * 2^(124..127), up to bf16's largest finite value: amax in
    [1.75, 2) * 2^127 hits the even rule's rounding carry (scale byte 254); products overflow fp32.
    Ignores the exponent."""
    mantissa = gen.randint(0, 128, (rows, k), dtype=torch.float64).div_(128).add_(1)
    binade = gen.randint(0, 4, (rows, k), dtype=torch.float64).neg_().add_(127)
    return mantissa.mul_(_pow2(binade)).mul_(_signs(gen, (rows, k)))


def regime_every_class(gen, rows, k, exponent):
    """Every bf16 class in every row: the largest finite magnitude (3.39e38), magnitudes far above 60000
    ((1..2) * 2^16..2^126), ordinary normals, smallest normals, subnormals, zero, Inf and NaN, each with
    a random sign (-0, -Inf and -NaN included). The first 8 elements of each row are one of each class
    (shuffled), the rest random classes. Not a numeric regime (its products overflow and are NaN): for
    the integrity verdicts, where an in-place clamp, NaN scrub, normalisation or cast of an input
    changes some byte. Ignores the exponent."""
    full = dict(dtype=torch.float64, device=gen.device)
    classes = torch.stack([
        torch.full((rows, k), BF16_MAX, **full),
        (1 + gen.rand((rows, k))) * _pow2(gen.randint(16, 127, (rows, k))),
        gen.randn((rows, k), dtype=torch.float64),
        (1 + gen.rand((rows, k))) * 2.0**-126,
        gen.randint(1, 128, (rows, k)).double() * 2.0**-133,
        torch.zeros((rows, k), **full),
        torch.full((rows, k), float("inf"), **full),
        torch.full((rows, k), float("nan"), **full),
    ])  # [C, rows, k]
    count = classes.shape[0]
    pick = gen.randint(0, count, (rows, k))
    first = torch.stack([gen.randperm(count) for _ in range(rows)])
    pick[:, : min(count, k)] = first[:, : min(count, k)]
    values = classes.gather(0, pick[None]).squeeze(0)
    return values * _signs(gen, (rows, k))


REGIMES = {
    "randn": regime_randn,
    "uniform": regime_uniform,
    "sparse": regime_sparse,
    "zero_groups": regime_zero_groups,
    "constant_groups": regime_constant_groups,
    "one_hot": regime_one_hot,
    "grid": regime_grid,
    "outlier": regime_outlier,
    "ties": regime_ties,
    "scale_boundary": regime_scale_boundary,
    "heavy_tailed": regime_heavy_tailed,
    "subnormal": regime_subnormal,
    "near_max": regime_near_max,
}
REGIME_NAMES = tuple(REGIMES)  # the numeric regimes: drawn by default, judged against the oracle
# Regimes for the integrity verdicts only (inputs never written): not judged numerically, not clamped.
INTEGRITY_REGIMES = {"every_class": regime_every_class}
ALL_REGIMES = {**REGIMES, **INTEGRITY_REGIMES}
FIXED_MAGNITUDE_REGIMES = ("subnormal", "near_max", "every_class")  # they ignore the exponent; strategies draw 0


def regime_values(regime: str, stream, rows: int, k: int, exponent: int) -> torch.Tensor:
    """bf16 [rows, k] contiguous on ``stream.device`` (a fuzz.search.value_streams stream): the regime's values,
    clamped to bf16's finite range (so Inf only ever comes from an explicit special), except for the
    integrity regimes, whose Inf and NaN are the point."""
    if regime in INTEGRITY_REGIMES:
        return stream.settle(INTEGRITY_REGIMES[regime](stream, rows, k, exponent).to(torch.bfloat16))
    x = REGIMES[regime](stream, rows, k, exponent)  # a fresh tensor: clamped in place
    return stream.settle(x.clamp_(-BF16_MAX, BF16_MAX).to(torch.bfloat16))


# ---------------------------------------------------------------------------------------------------
# Storage layouts of A: same values, different strides, offsets and alignment. Unused storage is
# filled with quiet NaN so that a kernel reading outside A's elements produces NaN outputs.


def _poisoned(shape, device) -> torch.Tensor:
    return torch.full(shape, SPECIAL_BITS["nan"], dtype=torch.int16, device=device).view(torch.bfloat16)


def lay_out(values: torch.Tensor, layout: str, device="cpu") -> torch.Tensor:
    """A view equal to ``values`` [M, K] stored as ``layout``:

    contiguous  row-major [M, K]
    transposed  a row-major [K, M] tensor, transposed: strides (1, M)
    row_sliced  the first K columns of a [M, K + 64] buffer: strides (K + 64, 1)
    offset      storage offset 64 elements (128 bytes; still 16-byte aligned)
    misaligned  storage offset 1 element: the base address is 2 mod 16 bytes
    """
    m, k = values.shape
    values = values.to(device)
    if layout == "contiguous":
        return values.contiguous()
    if layout == "transposed":
        return values.t().contiguous().t()
    if layout == "row_sliced":
        buffer = _poisoned((m, k + ROW_PITCH_PAD), device)
        buffer[:, :k] = values
        return buffer[:, :k]
    if layout not in ("offset", "misaligned"):
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    start = ALIGNED_OFFSET if layout == "offset" else 1
    buffer = _poisoned((start + m * k + start,), device)  # poison before and after A
    view = buffer[start : start + m * k].view(m, k)
    view.copy_(values)
    return view


def place_specials(values: torch.Tensor, specials) -> torch.Tensor:
    """A copy of bf16 ``values`` with each (row, col, kind) set to that special's exact bit pattern."""
    out = values.clone()
    bits = out.view(torch.int16)
    for row, col, kind in specials:
        pattern = SPECIAL_BITS[kind]
        bits[row, col] = pattern - 0x10000 if pattern >= 0x8000 else pattern
    return out


# ---------------------------------------------------------------------------------------------------
# The case


class FieldError(ValueError):
    """A field of a stored case or card has the wrong type or value; ``field`` names it."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def shape_tails(m: int, n: int, k: int) -> list[str]:
    """Names of the tails a shape takes (for events and card text)."""
    tails = []
    if m == 1:
        tails.append("M=1")
    elif m % 16:
        tails.append("M%16!=0")
    if n % 64:
        tails.append("N%64!=0 (beyond contract)")
    elif n % 128:
        tails.append("N%128!=0")
    if k % 64:
        tails.append("K%64!=0 (beyond contract)")
    elif k % 256:
        tails.append("K%256!=0")
    return tails


def _check_int(name, value, lo, hi, multiple=1):
    if type(value) is not int:  # bool is an int subclass; a JSON true must not pass as 1
        raise FieldError(name, f"must be an int, got {type(value).__name__} {value!r}")
    if not lo <= value <= hi:
        raise FieldError(name, f"must be in [{lo}, {hi}], got {value}")
    if value % multiple:
        raise FieldError(name, f"must be a multiple of {multiple}, got {value}")


def _check_choice(name, value, choices):
    if not isinstance(value, str) or value not in choices:
        raise FieldError(name, f"must be one of {list(choices)}, got {value!r}")


@dataclass(frozen=True)
class Case:
    """One fuzz case; every tensor of the task tuple follows from these fields.

    ``specials`` are (row, col, kind) placements in A, kind in SPECIAL_KINDS. ``a_exponent`` /
    ``b_exponent`` scale the regimes by powers of two. ``scale_pad_fill`` is the byte in B_scale_sh's
    padding (an int) or "random" (bytes from the case's stream). ``stream`` names where the values come
    from (fuzz.search.value_streams): a seed means the same tensors on every tier within one stream.
    """

    m: int
    n: int
    k: int
    layout: str = "contiguous"
    a_regime: str = "randn"
    b_regime: str = "randn"
    a_exponent: int = 0
    b_exponent: int = 0
    specials: tuple = ()
    scale_pad_fill: int | str = 0
    seed: int = 0
    stream: str = LEGACY_STREAM

    def __post_init__(self):
        _check_int("m", self.m, 1, MAX_DIM)
        _check_int("n", self.n, 16, MAX_DIM, 16)
        _check_int("k", self.k, BLOCK, MAX_DIM, BLOCK)
        _check_choice("layout", self.layout, LAYOUTS)
        _check_choice("a_regime", self.a_regime, tuple(ALL_REGIMES))
        _check_choice("b_regime", self.b_regime, tuple(ALL_REGIMES))
        _check_int("a_exponent", self.a_exponent, *EXPONENT_RANGE)
        _check_int("b_exponent", self.b_exponent, *EXPONENT_RANGE)
        _check_int("seed", self.seed, 0, MAX_SEED)
        _check_choice("stream", self.stream, STREAMS)
        if self.scale_pad_fill != "random":
            _check_int("scale_pad_fill", self.scale_pad_fill, 0, 255)
        if not isinstance(self.specials, (list, tuple)):
            raise FieldError("specials", f"must be a list, got {type(self.specials).__name__}")
        specials = []
        for i, s in enumerate(self.specials):
            name = f"specials[{i}]"
            if not isinstance(s, (list, tuple)) or len(s) != 3:
                raise FieldError(name, f"must be [row, col, kind], got {s!r}")
            _check_int(f"{name}.row", s[0], 0, self.m - 1)
            _check_int(f"{name}.col", s[1], 0, self.k - 1)
            _check_choice(f"{name}.kind", s[2], SPECIAL_KINDS)
            specials.append(tuple(s))
        if len({s[:2] for s in specials}) != len(specials):
            raise FieldError("specials", "two specials at the same position")
        object.__setattr__(self, "specials", tuple(specials))

    @property
    def in_contract(self) -> bool:
        return self.n % 64 == 0 and self.k % 64 == 0

    @property
    def cost(self) -> int:
        """Multiply-adds, the measure ``official_examples`` budgets with."""
        return self.m * self.n * self.k

    def to_json(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["specials"] = [list(s) for s in self.specials]
        if self.stream == LEGACY_STREAM:  # cases stored before streams had names: same JSON, same id
            del out["stream"]
        return out

    @classmethod
    def from_json(cls, obj) -> "Case":
        """Strict inverse of to_json: every field present (``stream`` may be absent: the legacy stream),
        none unknown, types and ranges checked (raises FieldError naming the field)."""
        if not isinstance(obj, dict):
            raise FieldError("case", f"must be a JSON object, got {type(obj).__name__}")
        names = [f.name for f in fields(cls)]
        for key in obj:
            if key not in names:
                raise FieldError(key, "unknown field")
        for name in names:
            if name not in obj and name != "stream":
                raise FieldError(name, "missing")
        return cls(**obj)

    def id(self) -> str:
        """Content hash of the canonical JSON: a stable name for corpus files and test ids."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def describe(self) -> str:
        specials = ", ".join(f"{kind}@({r},{c})" for r, c, kind in self.specials) or "none"
        pad = self.scale_pad_fill if self.scale_pad_fill == "random" else f"0x{self.scale_pad_fill:02X}"
        return (
            f"M={self.m} N={self.n} K={self.k} layout={self.layout} "
            f"A={self.a_regime}*2^{self.a_exponent} B={self.b_regime}*2^{self.b_exponent} "
            f"specials={specials} scale_pad={pad} seed={self.seed}"
            + ("" if self.stream == LEGACY_STREAM else f" stream={self.stream}")
        )

    def build(self, device="cpu", quantize_on=None):
        """-> (data, meta). data = (A, B, B_q, B_shuffle, B_scale_sh) as the task passes it; A in this
        case's layout, B quantized by the reference. K % 64 != 0 (beyond the contract) has no
        (16, 16)-shuffled weight: B_shuffle is None there. Values come from the case's stream (the
        mt19937 stream draws on the CPU, the counter stream on ``device``), either way the same tensors on
        every device; B (finite, no NaN) is quantized on ``quantize_on`` (default ``device``), where the
        reference's integer and power-of-two arithmetic gives the same bytes (and is fast on a GPU: a CPU
        copy of a large case quantized on a GPU costs milliseconds, against seconds on the CPU)."""
        stream = make_stream(self.stream, self.seed, device)
        a_values = place_specials(regime_values(self.a_regime, stream, self.m, self.k, self.a_exponent), self.specials)
        quantize_on = device if quantize_on is None else quantize_on
        # a GPU builds B in milliseconds; the cache is for B quantized on the CPU
        cached = str(quantize_on) == "cpu" and input_cache.wanted(self.n, self.k)
        weights = input_cache.load(self.id(), device) if cached else None
        if weights is None:  # B is drawn after A and is the last draw but the padding's: A stays the same
            weights = self._build_weights(stream, quantize_on)
            if cached:
                input_cache.store(self.id(), weights)
        A = lay_out(a_values, self.layout, device)
        data = tuple(t if t is None else t.to(device) for t in weights)
        B_shuffle = data[2]
        meta = {
            "in_contract": self.in_contract,
            "tails": shape_tails(self.m, self.n, self.k),
            "a_stride": list(A.stride()),
            "a_storage_offset": A.storage_offset(),
            "a_16_byte_aligned": A.data_ptr() % 16 == 0,
            "b_shuffle": B_shuffle is not None,
        }
        return (A, *data), meta

    def _build_weights(self, stream, device) -> tuple:
        """(B, B_q, B_shuffle, B_scale_sh) from the stream's draws after A's."""
        B = regime_values(self.b_regime, stream, self.n, self.k, self.b_exponent).to(device)
        fill = 0 if self.scale_pad_fill == "random" else self.scale_pad_fill
        if self.k % 64 == 0:
            _, B, B_q, B_shuffle, B_scale_sh = quantize_weights(None, B, fill)
        else:
            B_q, B_scale = quantize_mxfp4(B)
            B_q, B_shuffle, B_scale_sh = B_q.view(FP4X2), None, e8m0_shuffle(B_scale, fill).view(E8M0)
        if self.scale_pad_fill == "random":
            _randomise_scale_padding(B_scale_sh, self.n, self.k, stream)
        return B, B_q, B_shuffle, B_scale_sh


def _randomise_scale_padding(B_scale_sh: torch.Tensor, n: int, k: int, stream) -> None:
    """Overwrite the padding bytes of a shuffled scale tensor in place with random bytes from ``stream``
    (on the stream's device, whatever B_scale_sh's)."""
    # Shuffling a marker shows where the padding lands in the shuffled order.
    raw = B_scale_sh.view(torch.uint8)
    is_pad = e8m0_shuffle(torch.zeros((n, k // BLOCK), dtype=torch.uint8, device=raw.device), fill=1) == 1
    fill = stream.randint(0, 256, (int(is_pad.sum()),)).to(torch.uint8)
    raw[is_pad] = fill.to(raw.device)


# ---------------------------------------------------------------------------------------------------
# Strategies


def _capped(cap: int, scale: int, multiple: int) -> int:
    return max(multiple, cap * scale // multiple * multiple)


@st.composite
def rows(draw, max_m: int = 40):
    """M in [1, max_m], drawn so that M = 1 and M one off a power-of-two tile come up often.
    Shrinks toward 1."""
    tails = [r for r in M_TAIL_ROWS if r <= max_m]
    return draw(st.one_of(st.integers(1, max_m), st.sampled_from(tails)))


def _event_tails(m, n, k):
    for tail in shape_tails(m, n, k) or ["no tail"]:
        event(f"shape: {tail}")


@st.composite
def in_contract_shapes(draw, max_m: int = 40, max_n: int = 256, max_k: int = 1024, scale: int = 1):
    """(M, N, K) with M >= 1, N % 64 == 0, K % 64 == 0, each at most its cap times ``scale``.
    Three of four K are not multiples of 256 and half of the N are not multiples of 128, so tails
    dominate. Shrinks toward (1, 64, 64)."""
    m = draw(rows(max_m * scale))
    n = 64 * draw(st.integers(1, _capped(max_n, scale, 64) // 64))
    k = 64 * draw(st.integers(1, _capped(max_k, scale, 64) // 64))
    _event_tails(m, n, k)
    return m, n, k


@st.composite
def beyond_contract_shapes(draw, max_m: int = 40, max_n: int = 256, max_k: int = 1024, scale: int = 1):
    """(M, N, K) outside the stated contract but inside what the layouts can express: N % 16 == 0 and
    K % 32 == 0, with N % 64 != 0 or K % 64 != 0 (or both). Shrinks toward (1, 64, 32)."""
    m = draw(rows(max_m * scale))
    n_beyond, k_beyond = draw(
        st.sampled_from([(False, True), (True, False), (True, True)])
    )
    n_units = _capped(max_n, scale, 16) // 16
    k_units = _capped(max_k, scale, 32) // 32
    if n_beyond:
        n = 16 * draw(st.integers(1, n_units).filter(lambda u: u % 4))
    else:
        n = 64 * draw(st.integers(1, max(1, n_units // 4)))
    if k_beyond:
        k = 32 * draw(st.integers(0, (k_units - 1) // 2).map(lambda u: 2 * u + 1))
    else:
        k = 64 * draw(st.integers(1, max(1, k_units // 2)))
    _event_tails(m, n, k)
    return m, n, k


@st.composite
def production_shapes(draw, max_m: int = 16, max_n: int = 128, max_k: int = PRODUCTION_K[1], k_multiple: int = 64):
    """(M, N, K) at production K: either K in [1536, max_k] (a multiple of ``k_multiple``; with 64, three
    of four K are not multiples of 256), N in [64, max_n] and M in [1, max_m] with its tails, or an
    official/benchmark (M, K) pair with N narrowed to at most ``max_n`` (M capped too). Thin N and small
    M keep the interpreter's cost to about a second per call while K reaches the split-K decisions and
    their stripe arithmetic. Shrinks toward (1, 64, 1536): the smallest K that still fails."""
    low = -(-PRODUCTION_K[0] // k_multiple)
    high = max(low, max_k // k_multiple)
    official = sorted({(m, k) for m, _, k in OFFICIAL_TEST_SHAPES + BENCHMARK_SHAPES
                       if k >= PRODUCTION_K[0] and k % k_multiple == 0})
    n = 64 * draw(st.integers(1, max(1, max_n // 64)))
    if draw(st.integers(0, 3)) == 3:  # one in four: an official (M, K) pair
        m, k = draw(st.sampled_from(official))
        m = min(m, max_m)
        event("shape: production K (official M, K pair)")
    else:
        m = draw(rows(max_m))
        k = k_multiple * draw(st.integers(low, high))
        event("shape: production K")
    _event_tails(m, n, k)
    return m, n, k


def with_production_k(small, production, share: int):
    """``small`` shapes, except ``share`` percent drawn from ``production`` (production K). Shrinks
    toward ``small``: a failure that needs production K stays there and shrinks within it."""
    if share <= 0:
        return small
    return st.integers(0, 99).flatmap(lambda roll: production if roll >= 100 - share else small)


def exponents():
    """Power-of-two exponents for a regime: usually within +-8, otherwise over the whole range
    (-130 .. 120) from bf16 subnormals to near overflow. Shrinks toward 0."""
    return st.one_of(st.integers(-8, 8), st.integers(*EXPONENT_RANGE))


@st.composite
def cases(
    draw,
    shapes=None,
    layouts=LAYOUTS,
    a_regimes=REGIME_NAMES,
    b_regimes=REGIME_NAMES,
    max_specials: int = 3,
    pad_fills=PAD_FILLS,
    specials_kinds=SPECIAL_KINDS,
    stream: str = LEGACY_STREAM,
):
    """A ``Case`` (build it with ``case.build()``). ``shapes`` defaults to ``in_contract_shapes()``;
    the other arguments restrict what is drawn; ``stream`` is not drawn (see
    fuzz.search.value_streams.default_stream). Shrinks toward Case(1, 64, 64) with contiguous A,
    randn operands, exponent 0, no specials, pad fill 0 and seed 0."""
    m, n, k = draw(shapes if shapes is not None else in_contract_shapes())
    layout = draw(st.sampled_from(layouts))
    a_regime = draw(st.sampled_from(a_regimes))
    b_regime = draw(st.sampled_from(b_regimes))
    a_exponent = 0 if a_regime in FIXED_MAGNITUDE_REGIMES else draw(exponents())
    b_exponent = 0 if b_regime in FIXED_MAGNITUDE_REGIMES else draw(exponents())
    specials = draw(
        st.lists(
            st.tuples(st.integers(0, m - 1), st.integers(0, k - 1), st.sampled_from(specials_kinds)),
            max_size=max_specials,
            unique_by=lambda s: s[:2],
        )
    )
    pad = draw(st.sampled_from(pad_fills))
    seed = draw(st.integers(0, MAX_SEED))
    event(f"layout: {layout}")
    event(f"A regime: {a_regime}")
    event(f"B regime: {b_regime}")
    event(f"specials: {len(specials)}")
    event(f"scale padding: {pad}")
    return Case(m, n, k, layout, a_regime, b_regime, a_exponent, b_exponent, tuple(specials), pad, seed, stream)


def official_cases(max_cost: float) -> list[Case]:
    """The official test shapes, then the benchmark shapes, as randn cases (seed 0) of at most
    ``max_cost`` multiply-adds."""
    shapes = OFFICIAL_TEST_SHAPES + tuple(s for s in BENCHMARK_SHAPES if s not in OFFICIAL_TEST_SHAPES)
    return [case for case in (Case(m, n, k) for m, n, k in shapes) if case.cost <= max_cost]


def official_examples(max_cost: float, argname: str = "case"):
    """Decorator: ``@example(case=...)`` for each of ``official_cases(max_cost)``, run in that order
    before any generated case (a budget of 0 adds none, e.g. on the CPU interpreter)."""

    def decorate(test):
        # Hypothesis runs explicit examples last-applied first.
        for case in reversed(official_cases(max_cost)):
            test = example(**{argname: case})(test)
        return test

    return decorate

