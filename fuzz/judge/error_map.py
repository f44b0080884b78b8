"""The error map of one failing output: where over (M, N) it is wrong, and by how much, in a small grid.

Layout bugs show as patterns (every 16th column, one tile in four, rows past 32) that a list of bad
indices hides; the report draws this grid (fuzz/report/). Each element gets

    ratio = |y - c| / w,   [c - w, c + w] = the acceptable range of ``check_product``

so ratio <= 1 is exactly "inside the oracle's range". Why not |y - exact| / bound: the accumulation bound
alone is far below half a bf16 ulp, so every correctly rounded element would read as thousands of bounds
off; the acceptable range is that bound widened by the bf16 rounding, the judgement the verdict made. Where
the range is a single bf16 value (w = 0) half a bf16 ulp stands in for w. The verdict's failure mask (which
also knows the tier's NaN rules and where overflow allows Inf) has the last word: a failing element reads
above 1, a passing one at most 1.

Large outputs are shown per cell: a power-of-two number of rows by a power-of-two number of columns, so
that power-of-two launch tiles start on cell edges. A cell holds the largest ratio of its elements, how
many failed, and how many are NaN or Inf.
"""
from __future__ import annotations

import math
import re

import torch

MAX_CELLS = 64  # per axis: a 64 x 64 grid shows a 16-column stripe of a 1024-wide output
ABOVE_ONE = math.nextafter(1.0, 2.0)
# Constexpr names that size a launch's output tile (a heuristic over the names real kernels use:
# BLOCK_M, BLOCK_SIZE_M, TILE_M, BM; the N axis likewise); a kernel naming its tile otherwise draws none.
TILE_NAMES = {axis: re.compile(rf"^(?:(?:BLOCK|TILE)(?:_SIZE)?_?{axis}|B{axis})$", re.IGNORECASE) for axis in "MN"}


def cell_size(extent: int, max_cells: int = MAX_CELLS) -> int:
    """The smallest power of two that cuts ``extent`` into at most ``max_cells`` cells."""
    size = 1
    while -(-extent // size) > max_cells:
        size *= 2
    return size


def element_ratios(y64: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, fail: torch.Tensor) -> torch.Tensor:
    """fp64 [M, N]: |y - c| / w over the acceptable range [lo, hi] (see the module's docstring); +Inf
    where y is not finite and failed."""
    centre, half = (lo + hi) / 2, (hi - lo) / 2
    frexp_of = torch.where(torch.isfinite(centre), centre, torch.zeros_like(centre))
    half_ulp = torch.ldexp(torch.ones_like(centre), torch.frexp(frexp_of)[1] - 9).clamp(min=2.0**-134)
    ratio = (y64 - centre).abs() / torch.where(half > 0, half, half_ulp)
    ratio = torch.where(torch.isfinite(y64), ratio, torch.full_like(ratio, math.inf))
    return torch.where(fail, ratio.clamp(min=ABOVE_ONE), ratio.nan_to_num(nan=0.0).clamp(max=1.0))


def _cells(values: torch.Tensor, cm: int, cn: int, reduce: str) -> torch.Tensor:
    rows, cols = values.shape
    padded = torch.zeros((-(-rows // cm) * cm, -(-cols // cn) * cn), dtype=values.dtype)
    padded[:rows, :cols] = values
    blocks = padded.reshape(padded.shape[0] // cm, cm, padded.shape[1] // cn, cn)
    return blocks.amax(dim=(1, 3)) if reduce == "max" else blocks.sum(dim=(1, 3))


def _sig3(x: float) -> float | None:
    """Three significant digits for the report; None for +Inf (JSON has no Infinity)."""
    if not math.isfinite(x):
        return None
    return float(f"{x:.3g}")


def error_map(y64: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, fail: torch.Tensor,
              max_cells: int = MAX_CELLS) -> dict:
    """The JSON-safe map of one judged output: ``rows``/``cols`` (the output's shape), ``cell`` ([rows,
    cols] per cell), and per cell (row-major lists of lists) ``ratio`` (largest; None: an Inf/NaN element
    failed there), ``fail``, ``nan`` and ``inf`` counts. Its ``failing_rows``/``failing_cols`` are the
    cell rows/columns with a failure (what a reader, or a test, looks for first)."""
    y64, lo, hi, fail = (t.detach().cpu() for t in (y64, lo, hi, fail))
    rows, cols = y64.shape
    cm, cn = cell_size(rows, max_cells), cell_size(cols, max_cells)
    ratio = _cells(element_ratios(y64, lo, hi, fail), cm, cn, "max")
    counts = {name: _cells(mask.to(torch.int64), cm, cn, "sum")
              for name, mask in (("fail", fail), ("nan", torch.isnan(y64)), ("inf", torch.isinf(y64)))}
    failing = counts["fail"] > 0
    return {
        "rows": rows, "cols": cols, "cell": [cm, cn],
        "ratio": [[_sig3(v) for v in row] for row in ratio.tolist()],
        **{name: grid.tolist() for name, grid in counts.items()},
        "failing_rows": failing.any(dim=1).nonzero().flatten().tolist(),
        "failing_cols": failing.any(dim=0).nonzero().flatten().tolist(),
        "tiles": [],
        "measure": "range",  # ratio over the acceptable range; "difference": see difference_map
    }


def launch_tiles(launches: list) -> list:
    """The output tiles of Triton launches (worker ``launches_config`` entries): kernel, block_m, block_n
    (None for an axis the kernel does not tile: a quantizer of A's rows has only an M tile), distinct, for
    launches with an M or an N tile constexpr (see TILE_NAMES), the ones tiling both axes first."""
    tiles = {}
    for launch in launches:
        sizes = {}
        for name, value in launch.get("constexprs", {}).items():
            for axis, pattern in TILE_NAMES.items():
                if pattern.match(name) and isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    sizes.setdefault(axis, value)
        if sizes:
            tile = {"kernel": launch.get("kernel", "?"), "block_m": sizes.get("M"), "block_n": sizes.get("N")}
            tiles.setdefault(tuple(tile.values()), tile)
    return sorted(tiles.values(), key=lambda t: (t["block_m"] is None) + (t["block_n"] is None))


def map_problem(obj) -> str:
    """Why ``obj`` is not an error map as ``error_map`` writes it ("" when it is one): a saved card's map
    is drawn by the report, so a corrupt one is refused by name, not drawn as garbage."""
    if not isinstance(obj, dict):
        return f"must be an object or null, got {type(obj).__name__}"
    missing = [key for key in ("rows", "cols", "cell", "ratio", "fail", "nan", "inf") if key not in obj]
    if missing:
        return f"missing {missing[0]!r}"
    if not all(isinstance(obj[k], int) and not isinstance(obj[k], bool) and obj[k] > 0 for k in ("rows", "cols")):
        return "rows and cols must be positive integers"
    cell = obj["cell"]
    if not (isinstance(cell, list) and len(cell) == 2
            and all(isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in cell)):
        return "cell must be [rows, cols], two positive integers"
    shape = (-(-obj["rows"] // cell[0]), -(-obj["cols"] // cell[1]))
    for key in ("ratio", "fail", "nan", "inf"):
        grid = obj[key]
        if not (isinstance(grid, list) and len(grid) == shape[0]
                and all(isinstance(row, list) and len(row) == shape[1] for row in grid)):
            return f"{key} must be a {shape[0]} x {shape[1]} grid"
        allowed = (int, float, type(None)) if key == "ratio" else (int,)
        if not all(isinstance(v, allowed) and not isinstance(v, bool) for row in grid for v in row):
            return f"{key} holds a value that is not a number"
    for key in ("tiles", "failing_rows", "failing_cols"):
        if key in obj and not isinstance(obj[key], list):
            return f"{key} must be a list"
    return ""


def difference_map(y: torch.Tensor, other: torch.Tensor, max_cells: int = MAX_CELLS) -> dict | None:
    """The map of where ``y`` differs bitwise from ``other`` (two outputs of the same values: a second
    call, a fresh module), in half bf16 ulps of ``other``: any difference reads above 1. None when the two
    are not 2-D outputs of one shape and dtype (nothing to draw)."""
    y, other = y.detach().cpu(), other.detach().cpu()
    if y.dim() != 2 or y.shape != other.shape or y.dtype != other.dtype or y.numel() == 0:
        return None
    y64, o64 = y.double(), other.double()
    differ = y.view(torch.int16) != other.view(torch.int16) if y.element_size() == 2 else \
        ~((y64 == o64) | (torch.isnan(y64) & torch.isnan(o64)))
    return {**error_map(y64, o64, o64, differ, max_cells), "measure": "difference"}
