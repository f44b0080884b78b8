"""The HTML report (fuzz/report/page.py) as people see it: rendered in headless Chromium, the screenshot
is not blank and the error map of a known bug is lit in the bug's columns and nowhere else."""
import json
from pathlib import Path

import pytest

from fuzz.cli import write_html
from fuzz.judge.cards import FailureCard
from fuzz.judge.verdicts import check_product
from fuzz.report.figures import map_geometry
from fuzz.report.page import report_html, summary_html
from fuzz.report.palette import FRAME, PASS
from fuzz.report.screenshot import find_browser, screenshot
from fuzz.search.strategies import Case
from fuzz.unit.test_error_map import known_bug_output


def known_bug_report(case: Case) -> dict:
    """A report (plugin schema) whose correctness verdict failed with the stripe bug's card."""
    y, data = known_bug_output(case)
    verdict = check_product(y, data)
    card = FailureCard.from_verdicts(case, None, "cpu", verdict)
    outcome = {"verdict": "correctness", "status": "fail", "summary": verdict.summary, "card": card.to_json(),
               "card_text": card.render(), "failure_class": "wrong_values", "program": [], "output_tail": ""}
    return {
        "submission": "/somewhere/stripe_bug.py", "tier": "cpu", "device": "cpu", "aiter": "emulated",
        "aiter_detail": "emulated aiter", "profile": "smoke", "loaded": True, "load_error": None,
        "verdicts": [
            {"verdict": "loads", "status": "PASS", "summary": "loaded", "examples": 1, "seconds": 0.1,
             "launch_configs": [], "shapes": [], "failures": []},
            {"verdict": "correctness", "status": "FAIL", "summary": verdict.summary, "examples": 5, "seconds": 2.0,
             "failure": outcome, "failures": [outcome],
             "launch_configs": [{"config": "gemm[BLOCK_M=16] stripes=1 1 program", "examples": 5}],
             "shapes": [{"m": case.m, "n": case.n, "k": case.k, "examples": 5}]},
        ],
        "official_launches_not_fuzzed": [], "timings": {"total_seconds": 3.0, "programs_run": 6},
    }


def test_the_page_is_self_contained_and_holds_the_card_and_the_map():
    html = report_html(known_bug_report(Case(8, 512, 512, seed=3)))
    assert "<svg" in html and "FAIL product" in html and "stripe_bug.py" in html
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in html
    assert "<script" not in html and "<link" not in html  # nothing fetched, nothing run


def test_the_page_says_what_the_tier_stood_in_for():
    """A verdict that says "its HIP did not run here (the hip lines say why)" finds those lines on the page too."""
    report = known_bug_report(Case(8, 512, 512, seed=3))
    report["cpu_tier"] = {"device_emulated": True, "autotune": {}, "compat_shims": {},
                          "hip_not_run": {"load_inline(mxfp4) at f.py:12": "the CPU model lacks inline asm (s_nop)"},
                          "torch_version": {"torch.version.hip at line 7": "answered '7.1.25421' as the runner's"},
                          "hip_fallback": "its HIP did not run here and its fallback served 3 calls"}
    html = report_html(report)
    section = html.split("What this tier stood in for", 1)[1]
    assert "did not run here: load_inline(mxfp4) at f.py:12" in section and "torch.version.hip at line 7" in section
    assert "its fallback served 3 calls" in section and "CUDA device stood in" in section
    assert "What this tier stood in for" not in report_html(known_bug_report(Case(8, 512, 512, seed=3)))


def test_the_many_file_page_has_the_summary_table_and_each_report():
    report = known_bug_report(Case(8, 512, 512, seed=3))
    summary = {"tier": "cpu", "jobs": 2, "seconds": 9.0, "exit_code": 1, "files": [
        {"file": "/x/stripe_bug.py", "tier": "cpu", "seconds": 5.0, "verdicts": {"loads": "PASS", "correctness": "FAIL"},
         "error": None},
        {"file": "/x/broken.py", "tier": None, "seconds": 1.0, "verdicts": {}, "error": "no report (OSError)"},
    ]}
    html = summary_html(summary, [report, None])
    assert html.count("<svg") >= 2 and "broken.py" in html and "no report (OSError)" in html
    assert 'href="#file-0"' in html and 'id="file-0"' in html


def test_write_html_from_a_report_and_from_none(tmp_path, capsys):
    report = tmp_path / "r.json"
    report.write_text(json.dumps(known_bug_report(Case(4, 64, 64, seed=2))))
    write_html(report, tmp_path / "r.html")
    assert "<svg" in (tmp_path / "r.html").read_text()
    write_html(tmp_path / "missing.json", tmp_path / "none.html")
    assert not (tmp_path / "none.html").exists() and "not written" in capsys.readouterr().err


def _frame_box(image) -> tuple:
    """(left, top, right, bottom) of the error map's frame: the pixels of the frame's own colour."""
    width, height = image.size
    pixels = image.load()
    xs, ys = [], []
    for y in range(height):
        for x in range(width):
            if pixels[x, y] == FRAME:
                xs.append(x)
                ys.append(y)
    assert xs, "no error map frame in the screenshot"
    return min(xs), min(ys), max(xs), max(ys)


@pytest.mark.skipif(find_browser() is None, reason="no Chromium on PATH (Debian: apt-get install chromium; "
                                                   ".ci/run installs it where apt-get can)")
def test_chromium_shows_the_failing_columns_where_they_are(tmp_path):
    image_module = pytest.importorskip("PIL.Image", reason="Pillow reads the screenshot")
    case = Case(8, 512, 512, seed=3)
    report = known_bug_report(case)
    page = tmp_path / "report.html"
    page.write_text(report_html(report))
    shot = image_module.open(screenshot(page, tmp_path / "shot.png", 1200, 1000)).convert("RGB")
    colours = shot.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 20, "the screenshot is blank"
    emap = report["verdicts"][1]["failure"]["card"]["error_map"]
    geometry = map_geometry(emap)
    left, top, right, bottom = _frame_box(shot)
    cols = geometry["cols"]
    assert right - left == pytest.approx(cols * geometry["w"] + 1, abs=3)  # drawn at its own scale
    cell_width = (right - left - 1) / cols
    failing = set(emap["failing_cols"])
    assert failing == {j // emap["cell"][1] for j in range(case.n) if (j // 16) % 4 == 1}
    middle_row = (top + bottom) // 2
    for j in range(cols):
        pixel = shot.getpixel((round(left + 1 + (j + 0.5) * cell_width), middle_row))
        lit = pixel != PASS and pixel[0] > pixel[1]  # the failing ramp is orange to dark red
        assert lit == (j in failing), f"cell column {j}: {pixel}"
