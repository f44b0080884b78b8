"""The error map of a failing output (fuzz.judge.error_map) and its PNG (fuzz.report.png): the cells a
known bug breaks, and only those, read as failing; the counts agree with the verdict; a corrupt map in a
saved card is refused by name."""
import json

import pytest
import torch

from fuzz.judge.cards import FailureCard
from fuzz.judge.error_map import cell_size, difference_map, launch_tiles, map_problem
from fuzz.judge.verdicts import check_product
from fuzz.report.palette import FRAME, PASS, TILE_LINE
from fuzz.report.png import cell_pixels, encode_png, map_pixels, write_map_png
from fuzz.search.strategies import Case, FieldError
from reference import exact_gemm_from_inputs, round_to_bf16

STRIPE = 16  # the known bug: every fourth 16-column stripe read with a scale one exponent too large


def stripe_columns(n: int) -> list:
    return [j for j in range(n) if (j // STRIPE) % 4 == 1]


def known_bug_output(case: Case) -> tuple:
    """(y, data): the exact product rounded to bf16, with the stripe columns doubled."""
    data, _ = case.build()
    y = round_to_bf16(exact_gemm_from_inputs(data).value, "rne").to(torch.bfloat16)
    y[:, stripe_columns(case.n)] *= 2
    return y, data


@pytest.mark.parametrize("extent, size", [(1, 1), (64, 1), (65, 2), (256, 4), (2880, 64), (7168, 128)])
def test_cells_are_powers_of_two_and_at_most_64_per_axis(extent, size):
    assert cell_size(extent) == size
    assert -(-extent // size) <= 64


def test_the_map_of_a_column_bug_lights_exactly_its_columns():
    case = Case(8, 512, 512, seed=3)
    y, data = known_bug_output(case)
    verdict = check_product(y, data)
    emap = verdict.error_map
    assert not verdict.passed and emap["cell"] == [1, 8]  # 512 columns: 8 per cell
    wrong_cells = sorted({j // 8 for j in stripe_columns(case.n)})
    assert emap["failing_cols"] == wrong_cells
    assert sum(map(sum, emap["fail"])) == verdict.details["failures"]
    for row_ratio, row_fail in zip(emap["ratio"], emap["fail"]):
        for j, (ratio, fail) in enumerate(zip(row_ratio, row_fail)):
            assert (ratio > 1) == (j in wrong_cells) == (fail > 0)  # a doubled nonzero value is far outside
    assert map_problem(emap) == ""


def test_a_passing_output_has_no_map():
    case = Case(4, 64, 64, seed=1)
    data, _ = case.build()
    y = round_to_bf16(exact_gemm_from_inputs(data).value, "rne").to(torch.bfloat16)
    verdict = check_product(y, data)
    assert verdict.passed and verdict.error_map is None


def test_nan_and_inf_are_counted_in_their_cells():
    case = Case(4, 64, 64, seed=2)
    y, data = known_bug_output(case)
    y[1, 3], y[2, 40] = float("nan"), float("inf")
    emap = check_product(y, data).error_map
    assert emap["nan"][1][3] == 1 and emap["inf"][2][40] == 1
    assert sum(map(sum, emap["nan"])) == 1 and sum(map(sum, emap["inf"])) == 1
    assert emap["ratio"][1][3] is None  # a non-finite failure has no finite ratio
    json.dumps(emap, allow_nan=False)  # JSON-safe: no NaN or Infinity literals


def test_difference_map_marks_the_differing_elements_only():
    a = torch.randn(32, 96).to(torch.bfloat16)
    b = a.clone()
    b[5, 70] += 1
    emap = difference_map(b, a)
    assert emap["measure"] == "difference" and emap["cell"] == [1, 2]
    assert emap["failing_rows"] == [5] and emap["failing_cols"] == [35]
    assert difference_map(a, a[:, :10]) is None


def test_launch_tiles_read_the_tile_constexprs():
    launches = [
        {"kernel": "gemm", "constexprs": {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 256}},
        {"kernel": "gemm", "constexprs": {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 256}},
        {"kernel": "quant", "constexprs": {"BLOCK": 32}},  # no tile name: drawn nothing
        {"kernel": "quant_rows", "constexprs": {"BLOCK_M": 32, "SWAP": True}},  # rows only, after both-axis tiles
        {"kernel": "mm", "constexprs": {"BM": 16, "BN": 64}},
    ]
    assert launch_tiles(launches) == [{"kernel": "gemm", "block_m": 32, "block_n": 128},
                                      {"kernel": "mm", "block_m": 16, "block_n": 64},
                                      {"kernel": "quant_rows", "block_m": 32, "block_n": None}]


@pytest.mark.parametrize("change, field_says", [
    (lambda m: m.update(ratio=m["ratio"][:-1]), "ratio must be"),
    (lambda m: m.update(fail=[["x"] * len(m["fail"][0])] * len(m["fail"])), "fail holds"),
    (lambda m: m.update(cell=[3]), "cell must be"),
    (lambda m: m.pop("nan"), "missing 'nan'"),
])
def test_a_corrupt_map_in_a_saved_card_is_refused_by_name(change, field_says):
    case = Case(4, 64, 64, seed=2)
    y, data = known_bug_output(case)
    card = FailureCard.from_verdicts(case, None, "cpu", check_product(y, data)).to_json()
    assert FailureCard.from_json(card).error_map == card["error_map"]
    change(card["error_map"])
    with pytest.raises(FieldError, match=field_says) as error:
        FailureCard.from_json(card)
    assert error.value.field == "card.error_map"


def test_the_png_decodes_to_the_drawn_cells(tmp_path):
    image = pytest.importorskip("PIL.Image", reason="Pillow decodes the PNG independently of our encoder")
    case = Case(8, 512, 512, seed=3)
    y, data = known_bug_output(case)
    emap = {**check_product(y, data).error_map, "tiles": [{"kernel": "k", "block_m": 4, "block_n": 128}]}
    png = write_map_png(emap, tmp_path / "map.png")
    decoded = image.open(png).convert("RGB")
    pixels = map_pixels(emap)
    assert decoded.size == (len(pixels[0]), len(pixels))
    assert [decoded.getpixel((x, y)) for y in range(len(pixels)) for x in range(len(pixels[0]))] == \
        [px for row in pixels for px in row]
    side = cell_pixels(emap)
    assert decoded.getpixel((0, 0)) == FRAME
    for j in range(len(emap["ratio"][0])):
        centre = decoded.getpixel((1 + j * side + side // 2, 1 + side // 2))
        assert (centre != PASS) == (j in emap["failing_cols"]), j
    tile_edge = 1 + round(128 / emap["cell"][1] * side)  # block_n = 128 columns: a vertical line there
    assert decoded.getpixel((tile_edge, 2)) == TILE_LINE


def test_encode_png_is_a_valid_png():
    data = encode_png([[(255, 0, 0), (0, 255, 0)], [(0, 0, 255), (1, 2, 3)]])
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and data.endswith(b"IEND\xaeB`\x82")
