"""A PNG of an error map, written with zlib and struct (8-bit RGB, no filter): the map beside a corpus
case or a report, for a terminal user to open. One pixel block per cell, the launch tiles' edges drawn."""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

from fuzz.report.palette import FRAME, TILE_LINE, cell_color

MAX_SIDE = 512  # pixels: cells are drawn at most this wide in all


def encode_png(pixels: list) -> bytes:
    """PNG bytes of ``pixels``: rows of (r, g, b) tuples, all rows the same length."""
    height, width = len(pixels), len(pixels[0])
    raw = b"".join(b"\x00" + bytes(v for px in row for v in px) for row in pixels)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def cell_pixels(emap: dict) -> int:
    """Pixels per cell side: as large as fits MAX_SIDE, at least 2."""
    cells = max(len(emap["ratio"]), len(emap["ratio"][0]))
    return max(2, min(16, MAX_SIDE // cells))


def map_pixels(emap: dict) -> list:
    """The pixel rows of ``emap``: a one-pixel frame, then one square block per cell, with the first launch
    tile's edges (fuzz.judge.error_map.launch_tiles) drawn in TILE_LINE where they fall between cells."""
    px = cell_pixels(emap)
    rows, cols = len(emap["ratio"]), len(emap["ratio"][0])
    width, height = cols * px + 2, rows * px + 2
    image = [[FRAME] * width for _ in range(height)]
    for i in range(rows):
        for j in range(cols):
            color = cell_color(emap["ratio"][i][j], emap["fail"][i][j], emap["nan"][i][j], emap["inf"][i][j])
            for y in range(1 + i * px, 1 + (i + 1) * px):
                image[y][1 + j * px:1 + (j + 1) * px] = [color] * px
    for y_edge, x_edge in tile_edges(emap, px):
        if y_edge is not None:
            image[1 + y_edge][1:width - 1] = [TILE_LINE] * (width - 2)
        else:
            for y in range(1, height - 1):
                image[y][1 + x_edge] = TILE_LINE
    return image


def tile_edge_cells(emap: dict):
    """(axis, position in cells) of the first tile's inner edges, axis 0 rows and 1 columns, where a tile
    spans at least two cells (finer tiles would paint the whole map). The PNG and the SVG both draw these."""
    if not emap.get("tiles"):
        return
    tile = emap["tiles"][0]
    cm, cn = emap["cell"]
    cells = (len(emap["ratio"]), len(emap["ratio"][0]) if emap["ratio"] else 0)
    for size, cell, extent, axis in ((tile["block_m"], cm, emap["rows"], 0), (tile["block_n"], cn, emap["cols"], 1)):
        if size is None or size < 2 * cell:
            continue
        for edge in range(size, extent, size):
            if edge / cell < cells[axis]:
                yield axis, edge / cell


def tile_edges(emap: dict, px: int):
    """(row pixel, None) and (None, column pixel) of ``tile_edge_cells`` at ``px`` pixels a cell."""
    for axis, at in tile_edge_cells(emap):
        pixel = round(at * px)
        yield (pixel, None) if axis == 0 else (None, pixel)


def write_map_png(emap: dict, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode_png(map_pixels(emap)))
    return path
