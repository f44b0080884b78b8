"""Where a case's random values come from: a seed and a stream name mean the same tensors on every tier.

``mt19937``  torch's CPU generator, the stream every case used before streams had names (and still
             the default: a stored case without a ``stream`` field means this one). Serial: on a GPU
             machine drawing B dominated a fuzz example (30 of 59 ms on the H200, 2026-12-01).
``counter``  a counter-based integer hash evaluated elementwise on the case's device: element i of draw
             d is hash(seed, d, i). Integer arithmetic only (int64 holding 32-bit words, products below
             2^63), so CPU and GPU give the same bits; a GPU draws millions of values in a few launches.

Both expose the few primitives the value regimes use (``randint``, ``rand``, ``randn``, ``randperm``)
and a ``device``; the regimes are written once against this interface. The counter stream's floats
are exact functions of the integers (a power-of-two scaling, and for ``randn`` a lookup and linear
interpolation in a normal quantile table computed once on the CPU and rounded to fp32, so a libm's last
bit cannot change a case), which is what makes them device-independent.
"""
from __future__ import annotations

import math

import torch

STREAMS = ("mt19937", "counter")
LEGACY_STREAM = "mt19937"

_WORD = 0xFFFFFFFF
# Odd multipliers below 2^31, so that a 32-bit word times one stays below 2^63 in int64.
_MIX1, _MIX2 = 0x7FEB352D, 0x2C1B3C6D
QUANTILE_STEPS = 1 << 16  # randn: the table has QUANTILE_STEPS + 1 normal quantiles


def make_stream(name: str, seed: int, device="cpu"):
    if name == "mt19937":
        return Mt19937Stream(seed)
    if name == "counter":
        return CounterStream(seed, device)
    raise ValueError(f"stream must be one of {STREAMS}, got {name!r}")


def runner_case_stream(tier: str) -> str:
    """The stream the runner's own shapes (official, benchmark, leaderboard, with the runner's seeds) draw from
    on ``tier``: mt19937 on the CPU tier, as always; the counter stream on a GPU, where it draws on the device
    (mt19937 draws on the host: 3 to 5 s of a GPU check went to drawing and moving the runner's inputs)."""
    return LEGACY_STREAM if tier == "cpu" else "counter"


def default_stream(device) -> str:
    """The stream new cases draw from on ``device``: the counter stream where drawing on the host
    would dominate (a GPU); mt19937 on the CPU, where the hash's many elementwise passes cost more
    than the generator."""
    return LEGACY_STREAM if torch.device(device).type == "cpu" else "counter"


class Mt19937Stream:
    """torch's CPU generator, called exactly as the regimes always did (the corpus depends on it)."""

    device = torch.device("cpu")

    def __init__(self, seed: int):
        self.generator = torch.Generator().manual_seed(seed)

    def randint(self, low: int, high: int, shape, dtype=torch.int64) -> torch.Tensor:
        return torch.randint(low, high, shape, generator=self.generator, dtype=dtype)

    def rand(self, shape) -> torch.Tensor:
        return torch.rand(shape, generator=self.generator, dtype=torch.float64)

    def randn(self, shape, dtype=torch.float64) -> torch.Tensor:
        return torch.randn(shape, generator=self.generator, dtype=dtype)

    def randperm(self, n: int) -> torch.Tensor:
        return torch.randperm(n, generator=self.generator)

    def settle(self, values: torch.Tensor) -> torch.Tensor:
        """The regime's bf16 values as stored (CPU arithmetic: NaN bits as the CPU left them)."""
        return values


def _mix32(x):
    """A bijection on 32-bit words (xorshift-multiply); ``x`` is an int64 tensor or a Python int."""
    x = x ^ (x >> 16)
    x = (x * _MIX1) & _WORD
    x = x ^ (x >> 15)
    x = (x * _MIX2) & _WORD
    return x ^ (x >> 16)


_quantile_tables: dict = {}


def normal_quantiles(device) -> torch.Tensor:
    """float64 [QUANTILE_STEPS + 1]: the standard normal's quantiles at (j + 1/2) / (QUANTILE_STEPS + 1),
    rounded to fp32 (|q| <= 4.33), computed on the CPU and copied, so every device holds the same bits."""
    device = torch.device(device)
    table = _quantile_tables.get(device)
    if table is None:
        p = (torch.arange(QUANTILE_STEPS + 1, dtype=torch.float64) + 0.5) / (QUANTILE_STEPS + 1)
        table = _quantile_tables[device] = torch.special.ndtri(p).float().double().to(device)
    return table


class CounterStream:
    """Element i of the d-th draw is _mix32(_mix32(i ^ key1) + key2), the keys derived from (seed, d)."""

    def __init__(self, seed: int, device="cpu"):
        self.seed = seed
        self.device = torch.device(device)
        self.draws = 0

    def words(self, shape) -> torch.Tensor:
        """int64 ``shape`` of uniform 32-bit words (the next draw)."""
        key1 = _mix32((self.seed ^ _mix32(self.draws * 2 + 1)) & _WORD)
        key2 = _mix32((key1 + 0x9E3779B9) & _WORD)
        self.draws += 1
        i = torch.arange(math.prod(shape), dtype=torch.int64, device=self.device)
        return _mix32((_mix32(i ^ key1) + key2) & _WORD).view(shape)

    def randint(self, low: int, high: int, shape, dtype=torch.int64) -> torch.Tensor:
        span = high - low
        if not 0 < span <= 1 << 31:
            raise ValueError(f"randint needs 0 < high - low <= 2^31, got [{low}, {high})")
        return ((self.words(shape) * span) >> 32).add_(low).to(dtype)  # multiply-shift: no modulo bias

    def rand(self, shape) -> torch.Tensor:
        """float64 in [0, 1) on a 2^-32 grid (exact)."""
        return self.words(shape).double().mul_(2.0**-32)

    def randn(self, shape, dtype=torch.float64) -> torch.Tensor:
        """Normal(0, 1) by inverse CDF: a table quantile and a linear step toward the next with a 16-bit
        fraction, in separate float64 operations (no fused multiply-add on any device)."""
        w = self.words(shape)
        index = w >> 16
        table = normal_quantiles(self.device)
        low, high = table[index], table[index + 1]
        step = (high - low).mul_((w & 0xFFFF).double().mul_(2.0**-16))
        return low.add_(step).to(dtype)

    def randperm(self, n: int) -> torch.Tensor:
        """A permutation of 0..n-1: the order of n distinct words (the hash is a bijection)."""
        return torch.argsort(self.words((n,)))

    def settle(self, values: torch.Tensor) -> torch.Tensor:
        """bf16 ``values`` with every NaN made 0x7FC0. A GPU's arithmetic canonicalises a NaN it
        multiplies or converts (sign and payload lost), a CPU's does not; only the NaN bits differ, so
        fixing them makes the stream device-independent. A -NaN input comes from a case's specials."""
        return values.view(torch.int16).masked_fill(torch.isnan(values), 0x7FC0).view(torch.bfloat16)
