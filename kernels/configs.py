"""Launch configurations for the fused Triton path: a table for the official shapes, an analytic
occupancy model for every other shape, and the split-K stripe alignment.

All functions are pure (shape and CU count in, config out) so their invariants can be property-tested:
tiles divide what they must, every K element is covered by exactly one split, grids are positive.

The table entries are starting points chosen with the same model's reasoning (MI355X: 256 CUs), not
timings from an MI355X: we have none. Benchmarks on the user's machine are the way to tune them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

MI355X_CUS = 256
MIN_BLOCK_K = 256  # the shuffled-scale tile covers 8 scale columns = 256 K elements
OFFICIAL_SHAPES = (
    (8, 2112, 7168), (16, 3072, 1536), (64, 3072, 1536), (256, 2880, 512),  # tests
    (4, 2880, 512), (16, 2112, 7168), (32, 4096, 512), (32, 2880, 512), (64, 7168, 2048), (256, 3072, 1536),  # benchmarks
)


@dataclass(frozen=True)
class FusedConfig:
    block_m: int
    block_n: int
    block_k: int
    splits: int = 1  # K stripes; > 1 writes fp32 partials that a fold reduces
    split_k: int = 0  # K elements per stripe (a multiple of block_k); 0 = the whole K
    group_m: int = 1
    num_warps: int = 4
    num_stages: int = 2
    cache_modifier: str = ""  # "" or ".cg" for the weight stream

    def grid(self, m: int, n: int) -> tuple:
        """(output tiles, K stripes): program (t, s) computes stripe s of tile t."""
        return (math.ceil(m / self.block_m) * math.ceil(n / self.block_n), self.splits)

    def stripes(self, k: int):
        """[(k_start, k_end)] of each split; they tile [0, k) exactly."""
        step = self.split_k or k
        return [(s * step, min((s + 1) * step, k)) for s in range(self.splits)]

    def compile_key(self) -> tuple:
        """What the fused kernel is compiled for: tile sizes, warps, stages, cache modifier and whether
        K is striped. Configs with equal keys share compiled kernels (the stripe count and length are
        runtime values); see kernels.fused for the few variants a key may compile."""
        return (self.block_m, self.block_n, self.block_k, self.splits > 1, self.num_warps, self.num_stages,
                self.cache_modifier)

    def describe(self) -> str:
        return f"BM{self.block_m}xBN{self.block_n}xBK{self.block_k} splits={self.splits} w{self.num_warps}"


def _pow2_at_least(x: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, 1 << max(0, (x - 1).bit_length())))


def align_splits(k: int, block_k: int, splits: int):
    """Stripe length (a multiple of block_k) and the number of non-empty stripes for a requested split."""
    blocks = math.ceil(k / block_k)
    splits = max(1, min(splits, blocks))
    per_split = math.ceil(blocks / splits) * block_k
    return per_split, math.ceil(k / per_split)


def model_config(m: int, n: int, k: int, num_cus: int = MI355X_CUS) -> FusedConfig:
    """Analytic choice: small M -> small row tiles; too few tiles to fill the CUs -> narrower N tiles,
    then split K so that tiles x splits is about one wave of CUs."""
    block_m = _pow2_at_least(m, 16, 64)
    block_n = 128
    tiles = math.ceil(m / block_m) * math.ceil(n / block_n)
    if tiles < num_cus // 2:
        block_n = 64
        tiles = math.ceil(m / block_m) * math.ceil(n / block_n)
    block_k = 512 if k >= 4096 else MIN_BLOCK_K
    want = max(1, min(num_cus // max(tiles, 1), k // 1024))
    split_k, splits = align_splits(k, block_k, want)
    return FusedConfig(
        block_m=block_m,
        block_n=block_n,
        block_k=block_k,
        splits=splits,
        split_k=split_k if splits > 1 else 0,
        num_warps=4 if block_m * block_n <= 64 * 64 else 8,
        cache_modifier=".cg" if splits > 1 else "",
    )


# Official shapes: the model's choice with hand adjustments where its reasoning is too coarse.
TUNED = {
    (16, 2112, 7168): FusedConfig(16, 64, 512, splits=7, split_k=1024, cache_modifier=".cg"),
    (8, 2112, 7168): FusedConfig(16, 64, 512, splits=7, split_k=1024, cache_modifier=".cg"),
    (64, 7168, 2048): FusedConfig(32, 128, 256, splits=2, split_k=1024, num_warps=4),
    (256, 3072, 1536): FusedConfig(64, 128, 256, num_warps=8),
}


def choose(m: int, n: int, k: int, num_cus: int = MI355X_CUS) -> FusedConfig:
    """The config for a shape: the tuned entry if there is one, else the model; K tails shrink block_k
    only down to 256 (the kernel masks the tail)."""
    cfg = TUNED.get((m, n, k)) or model_config(m, n, k, num_cus)
    if cfg.block_k > MIN_BLOCK_K and k < cfg.block_k:
        cfg = replace(cfg, block_k=MIN_BLOCK_K)
    return cfg


def validate(cfg: FusedConfig, m: int, n: int, k: int) -> None:
    """Raise ValueError if cfg cannot run (m, n, k); the property tests call this on every choice."""
    problems = []
    if cfg.block_k < MIN_BLOCK_K or cfg.block_k & (cfg.block_k - 1):
        problems.append(f"block_k={cfg.block_k} must be a power of two >= {MIN_BLOCK_K}")
    if cfg.block_n % 32 or cfg.block_n & (cfg.block_n - 1):
        problems.append(f"block_n={cfg.block_n} must be a power of two and a multiple of 32")
    if cfg.block_m < 16 or cfg.block_m & (cfg.block_m - 1):
        problems.append(f"block_m={cfg.block_m} must be a power of two >= 16")
    if cfg.splits > 1:
        if cfg.split_k % cfg.block_k:
            problems.append(f"split_k={cfg.split_k} must be a multiple of block_k={cfg.block_k}")
        if (cfg.splits - 1) * cfg.split_k >= k or cfg.splits * cfg.split_k < k:
            problems.append(f"splits={cfg.splits} x split_k={cfg.split_k} does not tile K={k} with no empty stripe")
    if problems:
        raise ValueError(f"config {cfg.describe()} invalid for (M={m}, N={n}, K={k}): " + "; ".join(problems))
