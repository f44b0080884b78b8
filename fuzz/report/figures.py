"""Inline SVG figures of the HTML report: the error map of a failing output and the coverage of shapes.

SVG written by hand rather than a plotting library: both figures are rectangles, lines, circles and a
few labels, a plotting library would add a dependency users' GPU images often lack, and SVG scales
without blur in the page. The PNG of the same map (fuzz/report/png.py) uses the same palette.
"""
from __future__ import annotations

import math
from html import escape

from fuzz.report.palette import FAIL_FAR, FAIL_NEAR, FRAME, INF, NAN, PASS, TILE_LINE, cell_color, hex_color
from fuzz.report.png import tile_edge_cells

MAP_LEFT, MAP_TOP = 56, 30  # room for the row and column labels
MAP_WIDTH, MAP_HEIGHT = 640, 320  # the cells fill about this many pixels across and down


def map_geometry(emap: dict) -> dict:
    """Where the cells lie in the SVG (pixels): x0, y0, cell width and height, columns, rows. Tests use it."""
    rows, cols = len(emap["ratio"]), len(emap["ratio"][0])
    return {"x0": MAP_LEFT, "y0": MAP_TOP, "w": max(4, min(24, MAP_WIDTH // cols)),
            "h": max(4, min(24, MAP_HEIGHT // rows)), "cols": cols, "rows": rows}


def _ticks(cells: int, cell: int, extent: int, pixels: int, apart: int) -> list:
    """(cell index, element index) label positions: at cell edges at least ``apart`` pixels apart, and the end."""
    step = 1
    while step * pixels < apart:
        step *= 2
    ticks = [(i, min(i * cell, extent)) for i in range(0, cells, step)]
    if (cells - ticks[-1][0]) * pixels >= apart:
        ticks.append((cells, extent))
    return ticks


def error_map_svg(emap: dict, title: str = "") -> str:
    g = map_geometry(emap)
    x0, y0, s, t, rows, cols = g["x0"], g["y0"], g["w"], g["h"], g["rows"], g["cols"]
    cm, cn = emap["cell"]
    width, height = max(x0 + cols * s + 16, 720), y0 + rows * t + 40  # room for the note line
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11" role="img">',
           f"<title>{escape(title or 'error map')}</title>"]
    for i in range(rows):
        for j in range(cols):
            ratio, fail, nan, inf = (emap[k][i][j] for k in ("ratio", "fail", "nan", "inf"))
            tip = (f"rows {i * cm}..{min((i + 1) * cm, emap['rows']) - 1}, cols {j * cn}..{min((j + 1) * cn, emap['cols']) - 1}: "
                   f"{fail} failing, max ratio {'non-finite' if ratio is None else ratio}, {nan} NaN, {inf} Inf")
            out.append(f'<rect x="{x0 + j * s}" y="{y0 + i * t}" width="{s}" height="{t}" '
                       f'fill="{hex_color(cell_color(ratio, fail, nan, inf))}"><title>{tip}</title></rect>')
            if fail and (nan or inf) and min(s, t) >= 10:
                out.append(f'<text x="{x0 + j * s + s / 2}" y="{y0 + i * t + t / 2 + min(s, t) * 0.22}" '
                           f'text-anchor="middle" font-size="{min(s, t) * 0.6:.0f}" fill="#ffffff">{"N" if nan else "∞"}</text>')
    for axis, cells in tile_edge_cells(emap):
        if axis == 0:
            at = cells * t
            out.append(f'<line x1="{x0}" x2="{x0 + cols * s}" y1="{y0 + at}" y2="{y0 + at}" '
                       f'stroke="{hex_color(TILE_LINE)}" stroke-width="1.5" stroke-dasharray="4 2"/>')
        else:
            at = cells * s
            out.append(f'<line x1="{x0 + at}" x2="{x0 + at}" y1="{y0}" y2="{y0 + rows * t}" '
                       f'stroke="{hex_color(TILE_LINE)}" stroke-width="1.5" stroke-dasharray="4 2"/>')
    out.append(f'<rect x="{x0 - 1}" y="{y0 - 1}" width="{cols * s + 2}" height="{rows * t + 2}" fill="none" '
               f'stroke="{hex_color(FRAME)}" stroke-width="2"/>')
    for j, n in _ticks(cols, cn, emap["cols"], s, 40):
        out.append(f'<text x="{x0 + j * s}" y="{y0 - 8}" text-anchor="middle">{n}</text>')
    for i, m in _ticks(rows, cm, emap["rows"], t, 16):
        out.append(f'<text x="{x0 - 6}" y="{y0 + i * t + 4}" text-anchor="end">{m}</text>')
    out.append(f'<text x="{x0}" y="{height - 20}">N (columns) across, M (rows) down; one cell = {cm} x {cn} '
               f"elements{_tile_note(emap)}</text>")
    out.append("</svg>")
    return "\n".join(out)


def _tile_note(emap: dict) -> str:
    tiles = emap.get("tiles") or []
    if not tiles:
        return ""
    t = tiles[0]
    size = " x ".join(f"{v} {axis}" for v, axis in ((t["block_m"], "rows"), (t["block_n"], "columns")) if v)
    return f"; dashed: {t['kernel']} tiles of {size}"


def legend_html() -> str:
    swatch = '<span class="sw" style="background:{}"></span>{}'
    return " ".join([
        swatch.format(hex_color(PASS), "passes"),
        swatch.format(hex_color(FAIL_NEAR), "fails, just outside"),
        swatch.format(hex_color(FAIL_FAR), "fails, 10<sup>6</sup> x the range or more"),
        swatch.format(hex_color(NAN), "NaN (N)"),
        swatch.format(hex_color(INF), "Inf (∞)"),
    ])


# -- coverage ---------------------------------------------------------------------------------------

PLOT = 260  # pixels per panel side


def _log_axis(values) -> tuple:
    lo = min(values)
    hi = max(values)
    a, b = math.floor(math.log2(max(lo, 1))), math.ceil(math.log2(max(hi, 2)))
    return a, max(b, a + 1)


def coverage_svg(reached: list, official: list, benchmark: list) -> str:
    """Two log2 panels, (N, M) and (K, M): the shapes fuzzing reached (grey circles, area by examples),
    the official test shapes (red diamonds) and the benchmark shapes (blue squares)."""
    everything = [tuple(s[:3]) for s in reached] + [tuple(s) for s in official + benchmark]
    if not everything:
        return "<p>No shapes recorded.</p>"
    m_axis = _log_axis([s[0] for s in everything])
    panels = [("N", 1, _log_axis([s[1] for s in everything])), ("K", 2, _log_axis([s[2] for s in everything]))]
    pad = 44
    width, height = 2 * (PLOT + pad + 20), PLOT + pad + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="11" role="img"><title>shapes reached</title>']

    def place(v, axis, extent):
        a, b = axis
        return (math.log2(max(v, 1)) - a) / (b - a) * extent

    for p, (name, index, axis) in enumerate(panels):
        ox, oy = pad + p * (PLOT + pad + 20), 10
        out.append(f'<rect x="{ox}" y="{oy}" width="{PLOT}" height="{PLOT}" fill="#fafafa" stroke="#999"/>')
        for e in range(axis[0], axis[1] + 1):
            x = ox + place(2**e, axis, PLOT)
            out.append(f'<line x1="{x}" x2="{x}" y1="{oy}" y2="{oy + PLOT}" stroke="#e3e3e3"/>'
                       f'<text x="{x}" y="{oy + PLOT + 14}" text-anchor="middle">{2**e}</text>')
        for e in range(m_axis[0], m_axis[1] + 1):
            y = oy + PLOT - place(2**e, m_axis, PLOT)
            out.append(f'<line x1="{ox}" x2="{ox + PLOT}" y1="{y}" y2="{y}" stroke="#e3e3e3"/>'
                       f'<text x="{ox - 4}" y="{y + 4}" text-anchor="end">{2**e}</text>')
        out.append(f'<text x="{ox + PLOT / 2}" y="{oy + PLOT + 30}" text-anchor="middle">{name} (log scale)</text>'
                   f'<text x="{ox - 34}" y="{oy + PLOT / 2}" transform="rotate(-90 {ox - 34} {oy + PLOT / 2})" '
                   f'text-anchor="middle">M</text>')
        for s in reached:
            x, y = ox + place(s[index], axis, PLOT), oy + PLOT - place(s[0], m_axis, PLOT)
            r = 2.5 + 1.5 * math.log2(1 + s[3])
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="#555" fill-opacity="0.35">'
                       f'<title>M={s[0]} N={s[1]} K={s[2]}: {s[3]} examples</title></circle>')
        for s in benchmark:
            x, y = ox + place(s[index], axis, PLOT), oy + PLOT - place(s[0], m_axis, PLOT)
            out.append(f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="none" stroke="#2166ac" '
                       f'stroke-width="2"><title>benchmark M={s[0]} N={s[1]} K={s[2]}</title></rect>')
        for s in official:
            x, y = ox + place(s[index], axis, PLOT), oy + PLOT - place(s[0], m_axis, PLOT)
            out.append(f'<path d="M{x:.1f} {y - 6:.1f} L{x + 6:.1f} {y:.1f} L{x:.1f} {y + 6:.1f} L{x - 6:.1f} {y:.1f} Z" '
                       f'fill="none" stroke="#b2182b" stroke-width="2"><title>official M={s[0]} N={s[1]} K={s[2]}</title></path>')
    out.append("</svg>")
    return "\n".join(out)
