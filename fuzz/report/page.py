"""The HTML report: one self-contained page (no network, figures inline) per check, from its JSON report,
and one page for a many-file run (the summary table, then every file's report).

It opens with the runner's prediction per popcorn mode and the latent bugs; then, per failing case, the
failure card and, where the card has one, the error map over (M, N) with the launch tiles drawn over it; then the coverage of shapes (official and benchmark shapes marked) and the
launch configurations each verdict reached, with the official shapes' configurations no fuzzed example ran.
"""
from __future__ import annotations

from html import escape
from pathlib import Path

from fuzz.report import tier_notes
from fuzz.report.figures import coverage_svg, error_map_svg, legend_html

STYLE = """
body { font-family: sans-serif; margin: 16px 24px; color: #222; max-width: 1400px; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 28px; } h3 { font-size: 15px; }
table { border-collapse: collapse; font-size: 13px; }
td, th { border: 1px solid #ccc; padding: 3px 7px; vertical-align: top; text-align: left; }
.wide { overflow-x: auto; } .wide td, .wide th { white-space: nowrap; font-size: 12px; padding: 2px 5px; }
th { background: #f0f0f0; }
.PASS { background: #e5f5e0; } .FAIL, .ERROR { background: #fcbba1; font-weight: bold; }
.NOT-RUN, .SKIP { background: #f0f0f0; color: #666; } .REPORTED { background: #fff7bc; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 8px; font-size: 12px; white-space: pre-wrap; }
.sw { display: inline-block; width: 12px; height: 12px; border: 1px solid #999; margin: 0 4px 0 12px;
      vertical-align: middle; }
.meta { color: #555; font-size: 13px; }
a { color: #1a5e1a; }
"""


MEASURES = {
    "range": "|y - c| / w over the oracle's acceptable range [c - w, c + w] (above 1 fails)",
    "official": "|y - ref| / (0.01 + 0.01 |ref|), the official check's own measure (above 1 fails)",
    "difference": "where the output differs bitwise from the other output of the same values, in half bf16 ulps",
}


def _status_cell(status: str) -> str:
    return f'<td class="{escape(status.replace(" ", "-"))}">{escape(status)}</td>'


def _cells_text(indices: list, size: int, extent: int) -> str:
    """Cell indices as element ranges: [0, 16) [48, 64)."""
    ranges, start, prev = [], None, None
    for i in indices + [None]:
        if start is not None and (i is None or i != prev + 1):
            ranges.append(f"[{start * size}, {min((prev + 1) * size, extent)})")
            start = None
        if i is not None and start is None:
            start = i
        prev = i
    return " ".join(ranges[:12]) + (" ..." if len(ranges) > 12 else "")


def error_map_section(card: dict, title: str) -> str:
    emap = card.get("error_map")
    if not emap:
        return ""
    measure = MEASURES.get(emap.get("measure", "range"), MEASURES["range"])
    rows = _cells_text(emap.get("failing_rows", []), emap["cell"][0], emap["rows"])
    cols = _cells_text(emap.get("failing_cols", []), emap["cell"][1], emap["cols"])
    png = f' <a href="{escape(card["error_map_png"])}">PNG</a>' if card.get("error_map_png") else ""
    return (f'<div class="map"><p class="meta">Error map, {emap["rows"]} x {emap["cols"]}: {escape(measure)}; per '
            f"cell the largest. Failing rows {escape(rows) or 'none'}; failing columns {escape(cols) or 'none'}.{png}</p>"
            f"{error_map_svg(emap, title)}<p class=\"meta\">{legend_html()}</p></div>")


def _card_section(outcome: dict, heading: str, anchor: str) -> str:
    card = outcome.get("card") or {}
    text = outcome.get("card_text") or card.get("summary") or outcome.get("summary", "")
    return (f'<h3 id="{escape(anchor)}">{escape(heading)}</h3>' + error_map_section(card, heading)
            + f"<pre>{escape(text)}</pre>")


def _shapes(report: dict) -> list:
    counts: dict = {}
    for verdict in report.get("verdicts", []):
        for s in verdict.get("shapes", []):
            key = (s["m"], s["n"], s["k"])
            counts[key] = counts.get(key, 0) + s["examples"]
    return [(*key, n) for key, n in sorted(counts.items())]


def _launch_table(report: dict) -> str:
    rows = [(v["verdict"], launch["config"], launch["examples"])
            for v in report.get("verdicts", []) for launch in v.get("launch_configs", [])]
    unfuzzed = report.get("official_launches_not_fuzzed", [])
    if not rows:
        return "<p class=\"meta\">No Triton launches were traced (the file launched no Triton kernel, or ran none on this tier).</p>"
    body = "".join(f"<tr><td>{escape(v)}</td><td><code>{escape(c)}</code></td><td>{n}</td></tr>" for v, c, n in rows)
    missed = ("<p><b>Official shapes' configurations no fuzzed example ran:</b></p><ul>"
              + "".join(f"<li><code>{escape(c)}</code></li>" for c in unfuzzed) + "</ul>") if unfuzzed else (
        "<p class=\"meta\">Fuzzing reached every launch configuration of the official shapes.</p>"
        if any(v == "official" for v, _, _ in rows) else "")
    return ("<table><tr><th>verdict</th><th>launch configuration</th><th>examples</th></tr>" + body + "</table>"
            + missed)


def prediction_section(report: dict) -> str:
    """What the page opens with: the runner's prediction per popcorn mode (the report's ``prediction``), then
    the latent bugs, each with its smallest case and why the runner does not see it (``latent``)."""
    prediction, latent = report.get("prediction") or {}, report.get("latent") or []
    if not prediction:
        return ""
    rows = "".join(f"<tr><td>{escape(mode)}</td>{_status_cell(p['status'])}<td>{escape(p.get('reason', '')[:400])}"
                   + (f"<br><span class=\"meta\">KernelGuard {escape(p['kernelguard'][:300])}</span>"
                      if p.get("kernelguard") else "") + "</td></tr>" for mode, p in prediction.items())
    failing = [mode for mode, p in prediction.items() if p["status"] == "FAIL"]
    hidden = [e for e in latent if not e.get("may_block")]
    headline = (f"blocks the submission: {', '.join(failing)}" if failing else "nothing blocks the submission") + \
        (f"; {len(hidden)} latent bug{'s' if len(hidden) != 1 else ''} the runner does not see today" if hidden
         else "; no latent bug found")
    parts = ["<h2>What the runner would say</h2>", f"<p><b>{escape(headline)}</b></p>",
             "<table><tr><th>popcorn mode</th><th>predicted</th><th>why</th></tr>" + rows + "</table>"]
    if latent:
        items = []
        for e in latent:
            case = e.get("case") or {}
            where = f"M={case.get('m')} N={case.get('n')} K={case.get('k')} seed={case.get('seed')}" if case else "no case"
            label = "may block" if e.get("may_block") else "latent"
            cls = f" [{e['failure_class']}]" if e.get("failure_class") else ""
            items.append(f"<tr><td>{label}</td><td>{escape(e['verdict'] + cls)}</td><td>{escape(where)}</td>"
                         f"<td>{escape(e.get('why_runner_misses', ''))}</td><td>{escape(e.get('summary', '')[:300])}</td></tr>")
        parts.append("<h3>Latent bugs</h3><table><tr><th></th><th>verdict</th><th>smallest case</th>"
                     "<th>why the runner does not see it</th><th>what is wrong</th></tr>" + "".join(items) + "</table>")
    return "\n".join(parts)


def report_body(report: dict, anchor: str = "", only: tuple = ()) -> str:
    """The page body of one report (also a section of the many-file page); ``only``: the verdicts whose
    failures it shows (all when empty; the docs' screenshots show one)."""
    from fuzz.search.strategies import BENCHMARK_SHAPES, OFFICIAL_TEST_SHAPES

    timings = report.get("timings", {})
    meta = (f"tier <b>{escape(str(report.get('tier')))}</b>, device {escape(str(report.get('device')))}, aiter "
            f"{escape(str(report.get('aiter_detail') or report.get('aiter')))}, profile {escape(str(report.get('profile')))}, "
            f"{timings.get('total_seconds', '?')} s, {timings.get('programs_run', '?')} programs")
    parts = [f'<h1 id="{escape(anchor)}">{escape(Path(str(report.get("submission", "?"))).name)}</h1>',
             f'<p class="meta">{escape(str(report.get("submission", "")))}<br>{meta}</p>']
    parts.append(prediction_section(report))
    stood_in = tier_notes.lines(report.get("cpu_tier") or {})
    if stood_in:  # what the verdicts below rest on: HIP on the CPU model or not run, torch.version, the device
        parts.append("<h2>What this tier stood in for</h2><pre>" + escape("\n".join(stood_in)) + "</pre>")
    if report.get("load_error"):
        parts.append(f"<pre>{escape(str(report['load_error']))}</pre>")
    verdicts = report.get("verdicts", [])
    parts.append("<table><tr><th>verdict</th><th>status</th><th>examples</th><th>s</th><th>summary</th></tr>"
                 + "".join(f"<tr><td>{escape(v['verdict'])}</td>{_status_cell(v['status'])}<td>{v.get('examples', '')}</td>"
                           f"<td>{v.get('seconds', '')}</td><td>{escape(v.get('summary', '')[:400])}</td></tr>"
                           for v in verdicts) + "</table>")
    failing = [v for v in verdicts if v["status"] in ("FAIL", "ERROR") and (not only or v["verdict"] in only)]
    if failing:
        parts.append("<h2>Failures</h2>")
    for v in failing:
        outcomes = v.get("failures") or ([v["failure"]] if v.get("failure") else [])
        if not outcomes:
            parts.append(f"<h3>{escape(v['verdict'])}</h3><pre>{escape(v.get('error_text') or v.get('summary', ''))}</pre>")
        for i, outcome in enumerate(outcomes):
            cls = outcome.get("failure_class")
            heading = f"{v['verdict']}" + (f" [{cls}]" if cls else "") + (f" ({i + 1} of {len(outcomes)})" if len(outcomes) > 1 else "")
            parts.append(_card_section(outcome, heading, f"{anchor}{v['verdict']}-{cls or 'failure'}"))
            larger = (v.get("largest_failures") or {}).get(cls or "")
            if larger and (larger.get("card") or {}).get("error_map"):
                emap = larger["card"]["error_map"]
                parts.append(f'<p class="meta">The largest failing output seen while searching for it ({emap["rows"]} x '
                             f'{emap["cols"]}, before shrinking), where a layout pattern shows:</p>'
                             + error_map_section(larger["card"], heading + " (largest)")
                             + f"<details><summary>its card</summary><pre>{escape(larger.get('card_text', ''))}</pre></details>")
    parts.append("<h2>Coverage</h2><p class=\"meta\">Shapes the verdicts' programs ran (grey, area by examples), "
                 "the official test shapes (red diamonds) and the benchmark shapes (blue squares). On the CPU tier the "
                 "official check runs the runner's shapes with N narrowed.</p>")
    parts.append(coverage_svg(_shapes(report), list(OFFICIAL_TEST_SHAPES), list(BENCHMARK_SHAPES)))
    parts.append("<h3>Launch configurations</h3>" + _launch_table(report))
    return "\n".join(parts)


def page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n")


def report_html(report: dict, only: tuple = ()) -> str:
    return page(f"mxfp4-fuzz: {Path(str(report.get('submission', '?'))).name}", report_body(report, only=only))


def summary_html(summary: dict, reports: list) -> str:
    """The many-file page: ``summary`` (fuzz.submission.many's JSON) and each file's report (None where
    the file left none)."""
    rows = summary.get("files", [])
    verdicts = list(dict.fromkeys(v for row in rows for v in row["verdicts"]))
    head = ("<tr><th>file</th><th>tier</th><th>s</th><th>runner: test</th><th>benchmark</th><th>leaderboard</th>"
            "<th>latent</th>" + "".join(f"<th>{escape(v)}</th>" for v in verdicts) + "</tr>")
    body = []
    for i, row in enumerate(rows):
        name = Path(row["file"]).name
        runner = row.get("runner") or {}
        cells = "".join(_status_cell(runner[m]) if m in runner else "<td>-</td>" for m in ("test", "benchmark", "leaderboard"))
        cells += f"<td>{row.get('latent', '-')}</td>"
        cells += "".join(_status_cell(row["verdicts"][v]) if v in row["verdicts"] else "<td>-</td>" for v in verdicts)
        error = f'<tr><td colspan="{7 + len(verdicts)}">{escape(row["error"])}</td></tr>' if row.get("error") else ""
        body.append(f'<tr><td><a href="#file-{i}">{escape(name)}</a></td><td>{escape(str(row.get("tier")))}</td>'
                    f'<td>{row.get("seconds")}</td>{cells}</tr>{error}')
    parts = [f"<h1>mxfp4-fuzz: {len(rows)} files</h1>",
             f'<p class="meta">tier {escape(str(summary.get("tier")))}, {summary.get("jobs")} at a time, '
             f'{summary.get("seconds")} s, exit code {summary.get("exit_code")}</p>',
             f'<div class="wide"><table>{head}{"".join(body)}</table></div>']
    for i, (row, report) in enumerate(zip(rows, reports)):
        parts.append('<hr>')
        if report is None:
            parts.append(f'<h1 id="file-{i}">{escape(Path(row["file"]).name)}</h1><p>No report: '
                         f'{escape(str(row.get("error")))}</p>')
        else:
            parts.append(report_body(report, anchor=f"file-{i}"))
    return page(f"mxfp4-fuzz: {len(rows)} files", "\n".join(parts))


def write_report_html(report: dict, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report_html(report), encoding="utf-8")
    return path
