"""The colours of an error map cell, shared by the SVG and the PNG drawings (one legend for both).

Passing cells are one pale green (how close a passing element lies to the range's edge is mostly where
the exact value falls between two bf16 values: noise that would hide the pattern); failing cells go from
orange (just outside) to dark red (a million times the range or more, on a log scale); a cell whose
failures include NaN is purple and one with Inf (and no NaN) is black, whatever its ratio.
"""
from __future__ import annotations

import math

PASS = (199, 233, 192)
FAIL_NEAR = (253, 174, 97)
FAIL_FAR = (103, 0, 13)
NAN = (118, 42, 131)
INF = (0, 0, 0)
FAIL_DECADES = 6.0  # ratios from 1 to 10^6 span the failing ramp
FRAME = (59, 59, 152)  # the map's frame: a colour nothing else in the report uses (tests find the map by it)
TILE_LINE = (33, 102, 172)


def _mix(a, b, t: float) -> tuple:
    t = min(max(t, 0.0), 1.0)
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b))


def cell_color(ratio, fail: int, nan: int, inf: int) -> tuple:
    """(r, g, b) of one cell: ``ratio`` its largest |y - c| / w (None: a non-finite failure)."""
    if fail:
        if nan:
            return NAN
        if inf or ratio is None:
            return INF
        return _mix(FAIL_NEAR, FAIL_FAR, math.log10(max(ratio, 1.0)) / FAIL_DECADES)
    return PASS


def hex_color(rgb: tuple) -> str:
    return "#%02x%02x%02x" % rgb
